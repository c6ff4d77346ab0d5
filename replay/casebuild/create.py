"""``replay case create``: a case from a fix commit (or range) in a local repository.

Base commit = the fix's first parent (or the given base). The fix's test changes become the
hidden tests and the rest the gold patch. T defaults to just before the work started: the
ticket's creation or one second before the fix's first commit, whichever is earlier, unless
the base's history ends later (rebased or late-merged work): then T is the earliest the base
allows, and creating the case says so.
FAIL_TO_PASS and PASS_TO_PASS are then measured in the environment image
(:mod:`replay.casebuild.testlists`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import re
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from replay.base import gitrepo
from replay.base.blobs import BlobStore
from replay.base.case import load_case, read_patch
from replay.base.errors import InputError, ReplayError, ToolError
from replay.base.sharedgit import blob_root
from replay.capture.common import iso
from replay.casebuild.casedir import (
    DEFAULT_COMMAND,
    LICENSE_FILES,
    PERMISSIVE,
    CaseSpec,
    Origin,
    ProposedEffect,
    TicketSpec,
    history_end,
    license_at,
    license_text,
    write_case_dir,
)
from replay.casebuild.declared import Addition, declared_for
from replay.casebuild.environment import (
    Wanted,
    add_packages,
    env_builder,
    export_tree,
    plan_environment,
    settle,
    system_packages,
    write_registry_source,
)
from replay.casebuild.extensions import DROP_EXTENSIONS, fallback_command
from replay.casebuild.patches import (
    file_diffs,
    holds_test_modules,
    is_test_path,
    split_fix,
    suite_of,
    test_targets,
)
from replay.casebuild.scmversion import pretend
from replay.casebuild.testlists import (
    MIN_REPEATS,
    MeasureError,
    Measurement,
    TestLists,
    measure,
    plugins_for,
    write_command,
    write_lists,
)
from replay.images.audit import (
    audit_images,
    case_project_names,
    fix_contexts,
    propose_base_image,
)
from replay.images.base import Release, parse_base_tag
from replay.images.system import lacking
from replay.runtime.base import Runtime

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class FixSource:
    repo: Path
    fix: str
    """The fix commit (the PR's merge or squash commit, or its last commit)."""
    repo_name: str
    ticket_title: str
    ticket_body: str
    issue_number: int = 1
    ticket_author: str = "reporter"
    ticket_created: datetime | None = None
    base: str | None = None
    """Default: the fix's first parent."""
    at: datetime | None = None
    setup: list[str] = field(default_factory=list)
    command: str | None = None
    registry_index: Path | None = None
    docs_index: Path | None = None
    ticket_service: str = "github"
    ticket_identifier: str | None = None
    upstream: str | None = None
    """The public repository's URL: the case then records its provenance and license."""
    license: str | None = None
    """The repository's SPDX license id, when its license file is not recognised."""
    ticket_source: str = "the issue the fix closed"
    """A Linear ticket's identifier; the ticket is then that Linear issue, not a GitHub one."""
    effects: tuple[ProposedEffect, ...] = ()
    states: dict[str, dict[str, Any]] = field(default_factory=dict)
    wanted: Wanted = field(default_factory=Wanted)
    """Test requirements and extras: the interpreter, registry and setup are then derived
    as of T (:mod:`replay.casebuild.environment`)."""
    notes: tuple[str, ...] = ()
    """What reading the fix decided on its own (T moved), stated when the case is created."""
    extra_tests: Path | None = None
    """A patch against the fix commit that adds or changes test files only: tests the team
    wrote so the case rejects wrong fixes its own tests let through (``--extra-tests``)."""


_MERGE_PR = re.compile(r"^Merge pull request #\d+ from ")


def _date(repo: Path, rev: str) -> datetime:
    return datetime.fromisoformat(gitrepo.run(repo, "log", "-1", "--format=%aI", rev))


def spec_from_fix(case_id: str, src: FixSource) -> CaseSpec:
    """Everything but the measured test lists, read off the fix."""
    repo = src.repo.resolve()
    fix = gitrepo.run(repo, "rev-parse", "--verify", f"{src.fix}^{{commit}}")
    base = gitrepo.run(repo, "rev-parse", "--verify", f"{src.base or fix + '^'}^{{commit}}")
    diff = gitrepo.run_exact(repo, "diff", "--binary", "--full-index", base, fix)
    gold, tests = split_fix(diff)
    added: list[str] = []
    if src.extra_tests is not None:
        tests, added = with_extra_tests(repo, base, fix, src.extra_tests)
    if not tests.strip():
        raise InputError(repo, f"{src.fix}: the fix changes no test file; nothing to grade with")
    if not gold.strip():
        raise InputError(repo, f"{src.fix}: the fix changes only tests; there is no gold patch")
    created, at, moved = pick_at(repo, base, fix, src.ticket_created, src.at)
    pretended = pretend(repo, base, at)

    def holds_tests(directory: str) -> bool:
        names = gitrepo.run(repo, "ls-tree", "-r", "--name-only", fix, "--", directory)
        return holds_test_modules(names.splitlines())

    targets = test_targets(tests, holds_tests)
    rootdir = " --rootdir=." if _rootdir_below(repo, fix, targets) else ""
    command = src.command or f"{DEFAULT_COMMAND}{rootdir} {' '.join(targets)}".strip()
    subject = gitrepo.run(repo, "log", "-1", "--format=%s", fix)
    if _MERGE_PR.match(subject):  # GitHub's merge button: the PR's title is the body's first line
        subject = gitrepo.run(repo, "log", "-1", "--format=%b", fix).partition("\n")[0] or subject
    return CaseSpec(
        provenance=_origin(repo, fix, src),
        id=case_id,
        repo=repo,
        repo_name=src.repo_name,
        base=base,
        gold=gold,
        tests=tests,
        ticket=TicketSpec(
            src.issue_number,
            src.ticket_title,
            src.ticket_body,
            src.ticket_author,
            min(created, at),
            service=src.ticket_service,
            identifier=src.ticket_identifier,
        ),
        at=at,
        setup=src.setup,
        command=command,
        pr_title=subject,
        registry_index=src.registry_index,
        docs_index=src.docs_index,
        effects=list(src.effects),
        states=dict(src.states),
        fixed_at=datetime.fromisoformat(gitrepo.run(repo, "log", "-1", "--format=%cI", fix)),
        notes=[
            *src.notes,
            *(n for n in (moved, pretended and pretended.note) if n),
            *(
                [f"the hidden tests hold the team's extra tests too: {', '.join(added)}"]
                if added
                else []
            ),
        ],
        setup_env=pretended.variables if pretended else {},
        tests_added=added,
    )


def with_extra_tests(repo: Path, base: str, fix: str, extra: Path) -> tuple[str, list[str]]:
    """The hidden tests with the team's extra tests: the test changes from ``base`` to the
    fix commit with ``extra`` (a patch against the fix commit, e.g. ``git diff`` in a
    checkout of it) applied on top, and the files ``extra`` touches. A patch that does not
    apply there, holds no file diff, or changes anything but test files is an InputError."""
    option = "--extra-tests"
    if not extra.is_file():
        raise InputError(extra, "no such file (a patch of tests against the fix commit)", option)
    diffs = file_diffs(extra.read_bytes().decode("utf-8", "surrogateescape"))
    if not diffs:
        raise InputError(
            extra, "holds no file diff; make it with git diff in a checkout of the fix", option
        )
    product = [d.path for d in diffs if not is_test_path(d.path)]
    if product:
        raise InputError(
            extra,
            f"changes files that are not tests ({', '.join(product)}); extra tests may add or "
            "change test files only (the gold patch stays the fix's)",
            option,
        )
    with tempfile.TemporaryDirectory(prefix="replay-extra-tests-") as scratch:
        index = {"GIT_INDEX_FILE": str(Path(scratch) / "index")}
        gitrepo.run(repo, "read-tree", fix, env=index)
        try:
            gitrepo.run(repo, "apply", "--cached", "--binary", str(extra.resolve()), env=index)
        except ToolError as exc:
            said = str(exc).partition(": ")[2] or str(exc)
            raise InputError(
                extra, f"does not apply at the fix commit {fix[:12]} ({said})", option
            ) from exc
        tree = gitrepo.run(repo, "write-tree", env=index)
    combined = gitrepo.run_exact(repo, "diff", "--binary", "--full-index", base, tree)
    return split_fix(combined)[1], sorted({d.path for d in diffs})


_SPDX = re.compile(r"[A-Za-z0-9][A-Za-z0-9.+()-]*(?: (?:AND|OR|WITH) [A-Za-z0-9.+()-]+)*")


_ROOT_MARKERS = frozenset({"pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg", "setup.py"})


def _rootdir_below(repo: Path, rev: str, targets: list[str]) -> bool:
    """Whether pytest, given ``targets``, could take a directory below the repository's as its
    rootdir: one between the targets' common directory and the top holds a file pytest reads
    for it (asn1crypto's ``tests/setup.py``, fifth corpus). The test ids would then be
    relative to that directory (``test_core.py::CoreTests::...``), naming no file of the
    tree, and every measured test was left out of the lists; ``--rootdir=.`` keeps them
    relative to the top."""
    if not targets:
        return False
    paths = [t.split("::")[0].rstrip("/") for t in targets]
    parts = [p.split("/")[:-1] if p.endswith(".py") else p.split("/") for p in paths]
    common: list[str] = []
    for names in zip(*parts, strict=False):
        if len(set(names)) != 1:
            break
        common.append(names[0])
    while common:
        listed = gitrepo.run(repo, "ls-tree", "--name-only", rev, "--", "/".join(common) + "/")
        if any(line.rsplit("/", 1)[-1] in _ROOT_MARKERS for line in listed.splitlines()):
            return True
        common.pop()
    return False


def _origin(repo: Path, fix: str, src: FixSource) -> Origin | None:
    """The public repository's provenance and license, read at the fix. A license file whose
    text is not one of :data:`PERMISSIVE` stops the case unless ``--license`` names it."""
    if src.upstream is None:
        return None
    if not re.fullmatch(r"https://\S+", src.upstream):
        raise InputError(Path(src.upstream), "--upstream is the repository's https:// URL")
    if src.license is not None and not _SPDX.fullmatch(src.license):
        raise InputError(
            "--license", f"{src.license!r} is not an SPDX license id: give the repository's "
            "license as SPDX names it (MIT, BSD-3-Clause, Apache-2.0, 'MIT OR Apache-2.0')",
        )  # fmt: skip
    files = license_at(repo, fix)
    if not files:
        raise InputError(
            repo, f"--upstream: no license file ({'*, '.join(LICENSE_FILES)}* at the top, "
            f"any case) at the fix {fix[:12]}: a public repository's code is shipped in a "
            "case only with the license that allows it; leave out --upstream only if the "
            "repository is not public",
        )  # fmt: skip
    unknown = [f.name for f in files if f.spdx is None]
    if unknown and src.license is None:
        raise InputError(
            repo, f"--upstream: {', '.join(unknown)} at the fix {fix[:12]} is not a license "
            f"recognised as permissive ({', '.join(PERMISSIVE)}): read it, and if it allows "
            "redistribution give --license with its SPDX id",
        )  # fmt: skip
    spdx = src.license or " AND ".join(dict.fromkeys(f.spdx for f in files if f.spdx))
    return Origin(
        repository=src.upstream,
        fix=fix,
        fixed_at=datetime.fromisoformat(gitrepo.run(repo, "log", "-1", "--format=%cI", fix)),
        license=spdx,
        license_text=license_text(files),
        ticket=src.ticket_source,
    )


def pick_at(
    repo: Path, base: str, fix: str, created: datetime | None, at: datetime | None
) -> tuple[datetime, datetime, str | None]:
    """``(ticket created, T, why T moved)``: T defaults to the ticket's creation or one second
    before the fix's first commit, whichever is earlier (the ticket must exist at T, the work
    must not), but never before the base's history ends (:func:`history_end`: the snapshot at
    T holds all of it). Work rebased or merged late keeps its author dates while the base
    carries later committer dates: T is then the earliest the base allows, and the third
    item says so. A given T (``--at``) earlier than that is refused, naming it."""
    commits = gitrepo.run(repo, "rev-list", "--reverse", f"{base}..{fix}").split()
    if not commits:
        raise InputError(repo, f"{fix[:12]} adds no commit to {base[:12]}: there is no fix")
    first = min(_date(repo, c) for c in commits)
    created = created or first
    end, last = history_end(repo, base)
    if at is not None:
        if at < end:
            raise InputError(
                repo,
                f"choosing T: --at {iso(at)} is before the base commit's history ends "
                f"({last[:12]} is dated {iso(end)}), and the snapshot at T must hold all of "
                f"it; give --at {iso(end)} or later, or leave --at out (T is then the "
                "earliest the base allows)",
                "--at",
            )
        return created, at, None
    wanted = min(created, first - timedelta(seconds=1))
    if wanted >= end:
        return created, wanted, None
    return (
        created,
        end,
        (
            f"T is {iso(end)}, not {iso(wanted)} (just before the fix's work started): the base "
            f"commit's history ends later ({last[:12]} is dated {iso(end)}; work rebased or "
            "merged after the fix began), so that is the earliest T the base allows"
        ),
    )


STEPS = ("history", "environment", "measure", "image-audit")
"""The steps of ``case create``, in order: the fix read off the history (base, T, the split of
tests and gold, the license); the case written (its history, tags and submodules kept in the
shared git store) with its environment derived as of T and built; the test lists measured in
it; the image audit over it."""


STEP_SAYS = {
    "history": "history: the base, the gold patch and the hidden tests from the fix",
    "environment": "environment: the interpreter and requirements as of T, the image built",
    "measure": "measure: the hidden tests without and with the gold patch",
    "image-audit": "image audit: the environment image searched for the answer",
}
"""What each of :data:`STEPS` does, as the live display says it."""


@contextlib.contextmanager
def step(name: str) -> Iterator[None]:
    """Mark a :class:`ReplayError` raised inside with the step it stopped (``exc.step``), so a
    stop can be reported by where it happened as well as why."""
    try:
        yield
    except ReplayError as exc:
        if getattr(exc, "step", None) is None:
            exc.step = name  # type: ignore[attr-defined]
        raise


def step_of(exc: BaseException) -> str | None:
    """The step of ``case create`` that raised ``exc`` (None when it was not one of them)."""
    found = getattr(exc, "step", None)
    return found if isinstance(found, str) else None


def create_case(
    case_id: str,
    src: FixSource,
    out: Path,
    runtime: Runtime,
    repeats: int = MIN_REPEATS,
    say: Callable[[str], None] = log.warning,
    added: int = 0,
    progress: Callable[[str], None] | None = None,
) -> tuple[Path, TestLists]:
    """Write the case under ``out`` and measure its test lists in the environment image; an
    error says which of :data:`STEPS` it stopped (:func:`step_of`). What creating it decided
    on its own (:attr:`CaseSpec.notes`) is stated through ``say``.

    When the environment was derived from test requirements (``src.wanted``) and the tests
    cannot import a module that one of the project's own declarations installs
    (:func:`replay.casebuild.declared.declared_for`), the case is made again with that
    declaration added, at most :data:`MAX_ADDED` times (``added`` counts them).

    ``progress`` is told each step as it starts, in words (:data:`STEP_SAYS`)."""

    def phase(name: str) -> None:
        if progress is not None:
            progress(STEP_SAYS[name])

    phase("history")
    with step("history"):
        spec = spec_from_fix(case_id, src)
    for note in spec.notes:
        say(note)
    phase("environment")
    with step("environment"):
        if not (src.wanted or src.wanted.python):
            path, _ = write_case_dir(spec, out)
        else:
            path = _create_with_environment(spec, src, out, runtime)
    phase("measure")
    with step("measure"):
        measured = measure(path, runtime, repeats)
        lists, left_out = named_tests(path, measured.lists)
        if left_out:
            shown = ", ".join(left_out[:4]) + (
                f" and {len(left_out) - 4} more" if left_out[4:] else ""
            )
            say(
                f"left out of the test lists, as items a pytest plugin adds per file (they "
                f"check the files, not the code's behaviour): {shown}"
            )
        if not lists.fail_to_pass:
            lists = _with_what_the_tests_lack(path, measured, runtime, repeats, say) or lists
        if not lists.fail_to_pass:
            lists = _on_the_fallback(path, runtime, repeats, say) or lists
        if not lists.fail_to_pass and measured.fails_with_gold() and src.command is None:
            lists = _in_its_suite(path, spec.tests, runtime, repeats, say) or lists
        if not lists.fail_to_pass:
            missing = measured.missing_modules()
            addition = _declared_addition(spec, src, missing, added)
            if addition is not None:
                say(
                    f"the tests cannot import {addition.module}, which {addition.where} "
                    f"installs: making the case again with "
                    f"{' '.join(addition.requires) or 'the extra ' + addition.extras[0]} "
                    "added to the test requirements, as the project's developers install it"
                )
                wanted = dataclasses.replace(
                    src.wanted,
                    requires=(*src.wanted.requires, *addition.requires),
                    extras=(*src.wanted.extras, *addition.extras),
                )
                again = dataclasses.replace(src, wanted=wanted)
                return create_case(case_id, again, out, runtime, repeats, say, added + 1, progress)
            options = measured.unknown_options()
            plugins = [p for p in plugins_for(options) if p not in src.wanted.requires]
            if plugins and _may_add(src, added):
                say(
                    f"pytest refused {' '.join(options)}, which the project's pytest "
                    f"configuration asks for and {', '.join(plugins)} adds: making the case "
                    "again with it added to the test requirements, as the project's "
                    "developers ran their tests"
                )
                wanted = dataclasses.replace(src.wanted, requires=(*src.wanted.requires, *plugins))
                again = dataclasses.replace(src, wanted=wanted)
                return create_case(case_id, again, out, runtime, repeats, say, added + 1, progress)
            logs = measured.write_logs(path.parent / "logs")
            if measured.lists.fail_to_pass:
                raise MeasureError(
                    f"{path}: the tests that fail before the gold patch and pass after it "
                    f"({', '.join(measured.lists.fail_to_pass[:3])}...) name no test function "
                    "of the tree and were left out: the test runner named them relative to "
                    "another directory, or a plugin made them; give the command that runs them "
                    f"from the top (--command); full logs: {logs}"
                )
            measured = dataclasses.replace(measured, lists=lists)
            told = measured.explain(spec.command, logs)
            if missing and _may_add(src, added):
                told += (
                    "\n  the project's extras, dependency groups and requirements files name no "
                    f"distribution that installs {', '.join(missing)}"
                )
            raise MeasureError(f"{path}: {told}")
    write_lists(path, lists)
    phase("image-audit")
    with step("image-audit"):
        try:
            _check_images(path, runtime)
        except LeakError as exc:
            clean = _clean_release(exc, src)
            if clean is None:
                raise
            say(
                f"the image audit found the answer in {exc.current}; {exc.proposed} holds "
                f"none of it: making the case again on Debian {clean.name} (Python "
                f"{clean.python_version}), as --python {clean.python_version} would"
            )
            wanted = dataclasses.replace(src.wanted, python=clean.python_version)
            again = dataclasses.replace(src, wanted=wanted)
            return create_case(case_id, again, out, runtime, repeats, say, added, progress)
    return path, lists


MAX_ADDED = 3
"""How many of the project's declarations ``case create`` adds, one per new build, for modules
the tests cannot import (starlette's tests import from several)."""


def _may_add(src: FixSource, added: int) -> bool:
    """Whether ``case create`` may add a declaration of the project's: its environment was
    derived from test requirements (not a setup the user wrote) and fewer than
    :data:`MAX_ADDED` were added."""
    return bool(src.wanted) and not src.setup and added < MAX_ADDED


def _declared_addition(
    spec: CaseSpec, src: FixSource, missing: list[str], added: int
) -> Addition | None:
    """The project's declaration that installs one of the ``missing`` modules, when the case
    may still take one (:func:`_may_add`)."""
    if not missing or not _may_add(src, added):
        return None
    with tempfile.TemporaryDirectory(prefix="replay-declared-") as tmp:
        checkout = export_tree(spec.repo, spec.base, Path(tmp) / "tree")
        return declared_for(checkout, missing, src.wanted.requires, src.wanted.extras)


def _clean_release(exc: LeakError, src: FixSource) -> Release | None:
    """The release to make the case on again after an image-audit stop: that of the clean
    base image the audit proposes, when ``case create`` chose the interpreter itself (no
    ``--python``, the environment derived from the test requirements). None otherwise: an
    interpreter the user named is kept, and the stop says what to do."""
    if exc.proposed is None or src.wanted.python is not None or not src.wanted:
        return None
    parsed = parse_base_tag(exc.proposed)
    return None if parsed is None else parsed[0]


def _on_the_fallback(
    path: Path, runtime: Runtime, repeats: int, say: Callable[[str], None]
) -> TestLists | None:
    """The lists measured on the project's pure-Python fallback, with the case's command set
    to take it (:func:`replay.casebuild.extensions.fallback_command`), when that shows the
    fix; else None, the case as it was."""
    case = load_case(path)
    command = fallback_command(case)
    if command is None:
        return None
    write_command(path, command)
    lists, _ = named_tests(path, measure(path, runtime, repeats).lists)
    if not lists.fail_to_pass:
        write_command(path, case.hidden_tests.command)
        return None
    say(
        "the fix changes only pure-Python code that the project's compiled extension stands in "
        "for, and its tests show it only without the extension: the hidden tests run on the "
        f"fallback (`{DROP_EXTENSIONS}` first, no rebuild)"
    )
    return lists


def _with_what_the_tests_lack(
    path: Path,
    measured: Measurement,
    runtime: Runtime,
    repeats: int,
    say: Callable[[str], None],
) -> TestLists | None:
    """The lists measured again with the Debian packages holding what the tests looked for
    on the system and did not find (:func:`replay.images.system.lacking`: a locale, a
    command), when that shows the fix; else None, the case as it was. agate 2024 (eighth
    held-out corpus): its tests set a German locale, which the base image lacks, and errored
    on both sides."""
    before = path.read_text()
    image = load_case(path).environment.base_image
    release = parse_base_tag(image)
    outputs = [text for run in (measured.before, measured.after) for text in run.outputs]
    needs = lacking("\n".join(outputs))
    if release is None or not needs:
        return None
    holding = system_packages(needs, release[0], say, image)
    fresh = add_packages(path, holding.values(), toolchain=None)
    if not fresh:
        return None
    said = "; ".join(f"{w}: {p}" for w, p in holding.items() if p in fresh)
    looked = (
        f"the tests looked for what the image lacks, which Debian {release[0].name}'s index of "
        f"package contents names ({said}): added to the base image "
        f"({load_case(path).environment.base_image}), and the tests measured again"
    )
    lists, _ = named_tests(path, measure(path, runtime, repeats).lists)
    if not lists.fail_to_pass:
        path.write_text(before)
        say(f"{looked}; the fix still does not show, so the case is as it was without them")
        return None
    say(looked)
    return lists


def _in_its_suite(
    path: Path, tests: str, runtime: Runtime, repeats: int, say: Callable[[str], None]
) -> TestLists | None:
    """The lists measured with the command running the test directories the fix's test files
    live in (:func:`suite_of`), when that shows the fix; else None, the case as it was. A
    test may rely on what the suite's earlier modules did (pyfilesystem2 2019, eighth
    held-out corpus: ``tests/test_imports.py`` pops ``fs`` from ``sys.modules``, imported by
    the modules pytest runs before it; alone it fails on both sides)."""
    case = load_case(path)
    command = case.hidden_tests.command
    named = test_targets(tests)
    targets, dirs = " ".join(named), suite_of(named)
    if not targets or not dirs or not command.endswith(" " + targets):
        return None
    wider = command[: -len(targets)] + " ".join(dirs)
    if wider == command:
        return None
    write_command(path, wider)
    lists, _ = named_tests(path, measure(path, runtime, repeats).lists)
    if not lists.fail_to_pass:
        write_command(path, command)
        return None
    say(
        f"the fix's tests fail on both sides when run alone ({targets}) and show the fix among "
        f"the rest of their suite: the hidden tests run {' '.join(dirs)}, as the project's "
        "suite runs them"
    )
    return lists


def named_tests(path: Path, lists: TestLists) -> tuple[TestLists, list[str]]:
    """``lists`` less the ids that name no test function in the tree under test (the base,
    the gold patch and the hidden tests), and those ids: items a pytest plugin adds per file
    (pytest-mypy's ``::mypy``, pytest-checkdocs' ``::project``), which the case file's
    validation refuses (:func:`replay.validate.test_id_problem`)."""
    from replay.snapshot import load_snapshot
    from replay.validate import test_id_problem

    case = load_case(path)
    snapshot = load_snapshot(case.snapshot)
    with tempfile.TemporaryDirectory(prefix="replay-lists-") as tmp:
        work = snapshot.restore(case.repository.name, Path(tmp) / "repo")
        for patch in (case.gold.patch, case.hidden_tests.patch):
            gitrepo.run(work, "apply", "--binary", str(patch))
        left_out = [
            t
            for t in [*lists.fail_to_pass, *lists.pass_to_pass]
            if test_id_problem(work, t) is not None
        ]
    if not left_out:
        return lists, []
    gone = set(left_out)
    kept = dataclasses.replace(
        lists,
        fail_to_pass=[t for t in lists.fail_to_pass if t not in gone],
        pass_to_pass=[t for t in lists.pass_to_pass if t not in gone],
    )
    return kept, left_out


class LeakError(ReplayError):
    """The environment image holds the case's answer (a later copy of the fixed code)."""

    def __init__(self, message: str, current: str = "", proposed: str | None = None) -> None:
        super().__init__(message)
        self.current = current
        """The base image the case was made on."""
        self.proposed = proposed
        """A base image built here that holds none of the hits (None: none found)."""


def _check_images(path: Path, runtime: Runtime) -> None:
    """The image audit over the environment image just built: a leak stops the case (it stays
    on disk to be fixed), naming each hit and a base image that carries none."""
    case = load_case(path)
    result = audit_images(case, runtime)
    if not result.leaks:
        return
    proposal = propose_base_image(
        runtime,
        [h.marker for h in result.leaks],
        case.environment.base_image,
        audit=case.audit,
        contexts=fix_contexts(read_patch(case.gold.patch)),
        names=case_project_names(case),
    )
    lines = [
        f"{path}: the environment image holds the answer (a copy of the fix's lines); the case "
        "is written, but it counts only once each hit is gone or declared in audit.accepted "
        "(`replay case audit` checks it):"
    ]
    lines += [f"  LEAK {hit}" for hit in result.leaks]
    clean = proposal.proposed if proposal.proposed != case.environment.base_image else None
    if clean is not None:
        lines.append(
            f"  {proposal.proposed} holds none of it: create the case on it "
            "(--python with its interpreter), or declare each hit in audit.accepted with a reason"
        )
    else:
        searched = ", ".join(sorted(proposal.scans)) or "none"
        lines.append(
            f"  no base image built here is clean (searched: {searched}; not built: "
            f"{', '.join(proposal.missing) or 'none'}): declare each hit in audit.accepted "
            "with a reason if it is no leak"
        )
    raise LeakError("\n".join(lines), case.environment.base_image, clean)


def _create_with_environment(spec: CaseSpec, src: FixSource, out: Path, runtime: Runtime) -> Path:
    """Write the case with its interpreter, registry and setup derived as of T, then settle
    the environment (record what pip at T asks for and the registry lacks)."""
    if src.registry_index is not None:
        raise InputError(
            out, "--registry-index and --requires/--extra/--python: give one or the other"
        )
    at = spec.at
    assert at is not None  # spec_from_fix always picks T
    blobs = BlobStore(blob_root(None))
    planned = plan_environment(spec.repo, spec.base, at, src.wanted, blobs, src.fix)
    log.info(
        "interpreter: %s (Python %s), requires-python %s",
        planned.release.name,
        planned.release.python_version,
        planned.requires_python or "not declared",
    )
    for note in planned.notes:
        log.info("%s", note)
    with tempfile.TemporaryDirectory(prefix="replay-registry-") as tmp:
        index = write_registry_source(Path(tmp) / "index.json", planned.files)
        command = spec.command
        if planned.rebuild and src.command is None:
            command = f"{planned.rebuild} && {command}"
        spec = dataclasses.replace(
            spec,
            registry_index=index,
            setup=spec.setup or planned.setup,
            base_image=planned.base_image,
            toolchains=list(planned.toolchains),
            command=command,
        )
        path, _ = write_case_dir(spec, out)
    settle(
        path,
        env_builder(runtime),
        at,
        planned.release,
        blobs,
        src.wanted.index_url,
        say=log.info,
    )
    return path


__all__ = [
    "STEPS",
    "FixSource",
    "LeakError",
    "create_case",
    "spec_from_fix",
    "step_of",
]
