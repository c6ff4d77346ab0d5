"""``replay case validate``: a case is well formed and fits the world it names.

Checks, in order: the format (side-effect rules name only event kinds and fields the world
records); the snapshot (every hash); T and the base commit agree with the
snapshot; the ticket and the scripted people exist in the world; the gold patch applies at the
base commit; the hidden tests apply on top of it and contain every listed test.
"""

from __future__ import annotations

import dataclasses
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from replay.base import gitrepo
from replay.base.case import Case, EndStateRule, load_case
from replay.base.errors import CaseError, InputError, SnapshotError, ToolError
from replay.base.snapshot import Snapshot, load_snapshot


@dataclass(frozen=True)
class Validated:
    case: Case
    snapshot: Snapshot
    checks: list[str]
    warnings: list[str] = dataclasses.field(default_factory=list)
    """What is allowed but most likely not meant (a value cut by a comment, a ticket with no
    text): the case still validates; ``case validate`` prints each."""


def validate_case(path: Path) -> Validated:
    """Run every check; raise :class:`CaseError` or :class:`SnapshotError` at the first failure."""
    case = load_case(path)
    ends = sum(isinstance(r, EndStateRule) for r in case.side_effects)
    checks = [
        f"format (schema {case.schema_})",
        f"{len(case.side_effects)} side-effect rule(s): every kind and field is one the world "
        "records (replay/base/eventkinds.py)"
        + (
            f"; {ends} on the end state, each naming what it holds (replay/base/endstate.py)"
            if ends
            else ""
        ),
    ]
    try:
        snapshot = load_snapshot(case.snapshot)
    except SnapshotError:
        raise
    except InputError as exc:
        raise SnapshotError(exc.path, exc.problem, exc.field) from exc
    checks.append(f"snapshot {case.snapshot.name}: every part matches its hash")

    if case.at != snapshot.at:
        raise CaseError(
            path, f"{case.at.isoformat()} is not the snapshot's T ({snapshot.at.isoformat()})", "at"
        )
    repo = next((r for r in snapshot.manifest.repositories if r.name == case.repository.name), None)
    if repo is None:
        raise CaseError(
            path, f"the snapshot has no repository {case.repository.name!r}", "repository.name"
        )
    if repo.base_commit != case.repository.base_commit:
        raise CaseError(
            path,
            f"{case.repository.base_commit} is not the snapshot's base commit ({repo.base_commit})",
            "repository.base_commit",
        )
    checks.append("T and base commit agree with the snapshot")

    _check_ticket(path, case, snapshot)
    checks.append(f"ticket {case.ticket.ref} exists in {case.ticket.service}")
    _check_humans(path, case, snapshot)
    if case.humans:
        checks.append(f"{len(case.humans)} scripted reply(ies): people and threads exist")

    if case.provenance is not None:
        prov = case.provenance
        if not prov.license_file.is_file():
            raise CaseError(path, f"file not found: {prov.license_file}", "provenance.license_file")
        if prov.fixed_at < case.at:
            raise CaseError(
                path,
                f"the fix ({prov.fixed_at.isoformat()}) is before T ({case.at.isoformat()}): "
                "the world at T would already hold it",
                "provenance.fixed_at",
            )
        checks.append(
            f"provenance: {prov.repository} at {prov.fix_commit[:12]}, {prov.license} "
            f"({prov.license_file.name} beside the case)"
        )
    for field, patch in (
        ("gold.patch", case.gold.patch),
        ("hidden_tests.patch", case.hidden_tests.patch),
    ):
        if not patch.is_file():
            raise CaseError(path, f"file not found: {patch}", field)
    with tempfile.TemporaryDirectory(prefix="replay-validate-") as tmp:
        work = snapshot.restore(repo.name, Path(tmp) / "repo")
        _apply(path, work, case.gold.patch, "gold.patch")
        checks.append("gold patch applies at the base commit")
        _apply(path, work, case.hidden_tests.patch, "hidden_tests.patch")
        checks.append("hidden tests apply on top of the gold patch")
        _check_test_ids(path, work, case)
        checks.append(
            f"hidden tests hold all {len(case.hidden_tests.fail_to_pass)} FAIL_TO_PASS and "
            f"{len(case.hidden_tests.pass_to_pass)} PASS_TO_PASS tests"
        )
    return Validated(
        case, snapshot, checks, [*cut_by_comments(path), *_empty_ticket(case, snapshot)]
    )


_CUT = re.compile(
    r"^(?P<lead>\s*(?:- )?(?P<key>[\w.-]+):\s+)(?P<value>[^'\"\s#|>][^#]*?)\s+#(?=\w)"
)


def cut_by_comments(path: Path) -> list[str]:
    """Plain YAML values that a ``#`` right before a word cuts short: YAML reads `` #7`` as
    the start of a comment, so ``description: ... whose body references #7 (e.g. "Fixes #7").``
    is the text up to ``references`` (issue 35: a demo case's rule read so). A comment meant
    as one has a space after its ``#``."""
    found = []
    for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
        cut = _CUT.match(line)
        if cut is not None:
            value = cut["value"] if len(cut["value"]) <= 60 else "..." + cut["value"][-50:]
            found.append(
                f"{path}:{number}: {cut['key']}: the text from ' #' on is a YAML comment, so "
                f"the value ends at {value!r}: quote the whole value"
            )
    return found


def _empty_ticket(case: Case, snapshot: Snapshot) -> list[str]:
    """A ticket whose text is empty: the agent is given "(no description)"."""
    ref = case.ticket.ref
    body: str | None = "?"
    if case.ticket.service == "github":
        repo, _, number = ref.partition("#")
        items = [*snapshot.github.issues, *snapshot.github.pulls]
        body = next((i.body for i in items if i.repo == repo and i.number == int(number)), "?")
    elif case.ticket.service == "linear":
        body = next((i.description for i in snapshot.linear.issues if i.identifier == ref), "?")
    if body is None or not body.strip():
        return [
            f"ticket {ref} has no description: the agent is given its title alone and "
            '"(no description)" (case create takes the text from --body, or the fix\'s message)'
        ]
    return []


def _apply(case_file: Path, work: Path, patch: Path, field: str) -> None:
    try:
        gitrepo.run(work, "apply", "--check", str(patch))
        gitrepo.run(work, "apply", str(patch))
    except ToolError as exc:
        detail = str(exc).split(": ", 1)[-1]
        raise CaseError(case_file, f"does not apply at the base commit: {detail}", field) from exc


def _check_ticket(path: Path, case: Case, snapshot: Snapshot) -> None:
    ref = case.ticket.ref
    if case.ticket.service == "github":
        repo, _, number = ref.partition("#")
        found = any(i.repo == repo and i.number == int(number) for i in snapshot.github.issues)
        found = found or any(
            p.repo == repo and p.number == int(number) for p in snapshot.github.pulls
        )
    elif case.ticket.service == "linear":
        found = any(i.identifier == ref for i in snapshot.linear.issues)
    else:
        found = _slack_thread(snapshot, ref)
    if not found:
        raise CaseError(
            path, f"{ref} is not in the snapshot's {case.ticket.service} state", "ticket.ref"
        )


def _slack_thread(snapshot: Snapshot, ref: str) -> bool:
    channel, _, ts = ref.lstrip("#").partition("/")
    return any(
        ch.name == channel and any(m.ts == ts for m in ch.messages)
        for ch in snapshot.slack.channels
    )


def _check_humans(path: Path, case: Case, snapshot: Snapshot) -> None:
    people = {u.id for u in snapshot.slack.users}
    linear_people = {u.id for u in snapshot.linear.users}
    linear_issues = {i.identifier for i in snapshot.linear.issues}
    for i, reply in enumerate(case.humans):
        if reply.service == "linear":
            if reply.person not in linear_people:
                raise CaseError(path, f"no Linear user {reply.person!r}", f"humans[{i}].person")
            if reply.thread not in linear_issues:
                raise CaseError(path, f"no Linear issue {reply.thread!r}", f"humans[{i}].thread")
        if reply.service == "slack":
            if reply.person not in people:
                raise CaseError(path, f"no Slack user {reply.person!r}", f"humans[{i}].person")
            if not re.match(r"^#[\w.-]+/\d+\.\d+$", reply.thread) or not _slack_thread(
                snapshot, reply.thread
            ):
                raise CaseError(path, f"no Slack thread {reply.thread!r}", f"humans[{i}].thread")


def test_id_problem(work: Path, test_id: str) -> str | None:
    """Why ``test_id`` names no test function of the tree ``work`` (its file missing, or no
    ``def`` of its name there), or None when it names one. An item a pytest plugin adds per
    file (pytest-mypy's ``::mypy``, pytest-flake8's ``::flake8``, pytest-checkdocs'
    ``::project``) names none: it checks the files, not the code's behaviour. A test inside a
    class needs only its file: the class and its tests may be made when the file loads."""
    file, _, rest = test_id.partition("::")
    # The parameter part ([...]) is the parameter as written and may hold "::".
    *classes, name = rest.split("[", 1)[0].split("::")
    target = work / file
    if not target.is_file():
        # JUnit names a test by a dotted classname, read back as a module path up to the
        # first capitalised part (replay.grade.junit); a class named in lower case
        # (Python-Markdown's ``testAtomicString``) reads as one more directory. The test's
        # file is then the longest such prefix that is a file, the rest its classes.
        parts = file.removesuffix(".py").split("/")
        found = next(
            (
                i
                for i in range(len(parts) - 1, 0, -1)
                if (work / f"{'/'.join(parts[:i])}.py").is_file()
            ),
            None,
        )
        if found is None:
            return f"no file {file} after the hidden tests"
        target = work / f"{'/'.join(parts[:found])}.py"
        classes = [*parts[found:], *classes]
        file = target.relative_to(work).as_posix()
    if not name:
        return None
    if classes:
        # A test of a class: pytest collected it from a class of that file, and classes and
        # their tests are often made when the file is loaded, with no ``def`` or ``class``
        # to read (jsonschema's ``TestDraft7Format = DRAFT7.to_unittest_testcase(...)``,
        # mistune's ``globals()['TestPlugin_' + name] = TestPlugin`` with methods set from
        # fixture files). A plugin's per-file item is never inside a class.
        return None
    if _binds(target.read_text(errors="replace"), name):
        return None
    return f"no test {name} in {file}"


def _binds(text: str, name: str) -> bool:
    """Whether the Python source ``text`` binds ``name``: ``def``, ``class``, or an
    assignment at the start of a line."""
    n = re.escape(name)
    found = re.search(rf"\b(?:def|class)\s+{n}\b|^[ \t]*{n}\s*(?::[^=\n]*)?=(?!=)", text, re.M)
    return found is not None


def _check_test_ids(path: Path, work: Path, case: Case) -> None:
    tests = case.hidden_tests
    for field, ids in (("fail_to_pass", tests.fail_to_pass), ("pass_to_pass", tests.pass_to_pass)):
        for i, test_id in enumerate(ids):
            problem = test_id_problem(work, test_id)
            if problem is not None:
                raise CaseError(path, f"{test_id}: {problem}", f"hidden_tests.{field}[{i}]")
