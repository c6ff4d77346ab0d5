"""From a local repository and a ticket to snapshot sources, a snapshot and a case directory.

The snapshot is *generated* like the demo's: sources (the repository's history up to the base
commit, and a ``world.yaml`` whose GitHub holds the ticket as an issue) cut at T by
:func:`replay.snapshot.build_snapshot`. The history goes into the shared git store under the
blob store root (``git/<owner>/<name>.git``, each object once for all the cases of that
repository), and both the sources and the snapshot refer to it by name and base commit. It is
the base commit's history as it is, merges included, so the case's base commit is the real one
(the PR's base); restores are cut from the store to exactly that history, so no commit after it
(the fix, or another case's later base) can ride along.
"""

from __future__ import annotations

import re
import shlex
import shutil
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from replay.base import gitrepo
from replay.base.errors import ToolError
from replay.base.formats import dump_json, validate_data
from replay.base.manifest import Manifest
from replay.base.sharedgit import blob_root, share
from replay.base.worldstate import SERVICE_MODELS
from replay.casebuild.submodules import submodules_of
from replay.snapshot import build_snapshot, load_snapshot
from replay.snapshot.edit import write_part

AGENT = "replay-agent"
DEFAULT_COMMAND = (
    "python -m pytest -q -o cache_dir=/tmp/.replay-pytest-cache --continue-on-collection-errors "
    "--junitxml={junit}"
)
"""The hidden tests' default command: every plugin the project uses stays loaded (disabling
the cache provider broke pytest-randomly, which reads ``config.cache``); the cache goes to
/tmp, out of the repository. A test file that cannot be imported does not stop the others
(lark 2019: ``tests/__main__.py`` imports js2py, which does not run on Python 3.9, and pytest
then ran none of ``tests/test_parser.py``, where the fix's tests are)."""


@dataclass(frozen=True)
class TicketSpec:
    """The ticket: a GitHub issue in the snapshot, or a Linear issue captured into it."""

    number: int
    title: str
    body: str
    author: str
    created_at: datetime
    service: str = "github"
    identifier: str | None = None
    """A Linear ticket's identifier (``ENG-12``)."""


@dataclass(frozen=True)
class ProposedEffect:
    """A side effect the real fix had, proposed as expected of the agent (and done by gold)."""

    id: str
    description: str
    service: str
    kind: str
    where: list[dict[str, Any]]
    gold: dict[str, Any]


@dataclass(frozen=True)
class Origin:
    """A fix taken from a public repository: where from, and under which license."""

    repository: str
    """Its URL (https://github.com/owner/name)."""
    fix: str
    """The fix commit's full SHA."""
    fixed_at: datetime
    license: str
    """SPDX identifier."""
    license_text: str
    ticket: str
    """Where the ticket's text comes from."""


LICENSE_FILES = ("LICENSE", "LICENCE", "COPYING", "COPYRIGHT", "UNLICENSE")
"""What a license file's name starts with, in any case and with any ending (``LICENSE.rst``,
``licence.txt``, ``COPYING.md``, ``LICENSE-MIT``); looked for at the repository's top."""
_LICENSE_NAME = re.compile(
    r"(?i)(?P<stem>licen[cs]e|unlicen[cs]e|copying|copyright)(?:[-._ ][^/]*)?"
)
_LICENSES: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...] = (
    # (SPDX id, phrases all present, phrases absent), tried in order: the first that fits
    # names the text. Phrases are compared after _words (lower case, punctuation and markup
    # gone), so a license reflowed, quoted, or written in Markdown or reST still fits.
    ("Apache-2.0", ("apache license", "version 2 0"), ()),
    ("MPL-2.0", ("mozilla public license version 2 0",), ()),
    ("PSF-2.0", ("python software foundation", "license agreement"), ()),
    (
        "BSD-3-Clause",
        ("redistribution and use in source and binary forms", "endorse or promote"),
        ("all advertising materials",),  # BSD-4-Clause
    ),
    (
        "BSD-2-Clause",
        ("redistribution and use in source and binary forms",),
        ("all advertising materials",),
    ),
    (
        "ISC",
        (
            "permission to use copy modify and",
            "distribute this software for any purpose with or without fee is hereby granted",
            "above copyright notice",
        ),
        (),
    ),
    ("0BSD", ("permission to use copy modify and or distribute this software",), ()),
    ("MIT", ("permission is hereby granted free of charge", "above copyright notice"), ()),
    ("MIT-0", ("permission is hereby granted free of charge",), ()),
    ("Unlicense", ("free and unencumbered software released into the public domain",), ()),
    ("Zlib", ("alter it and redistribute it freely",), ()),
    ("BSL-1.0", ("boost software license",), ()),
    ("CC0-1.0", ("cc0 1 0 universal",), ()),
)
_NOT_LICENSE = (
    *(".py", ".pyi", ".sh", ".js", ".ts"),
    *(".json", ".toml", ".cfg", ".ini", ".yml", ".yaml"),
)
"""Endings of code or configuration, not a license text (``license_check.py``)."""
PERMISSIVE = tuple(spdx for spdx, _, _ in _LICENSES)
"""The licenses recognised by their wording: each allows the code to be redistributed."""


@dataclass(frozen=True)
class LicenseFile:
    """A license file of a repository, and the license its text was recognised as."""

    name: str
    """Its name at the repository's top (``LICENSE.rst``)."""
    text: str
    spdx: str | None
    """The SPDX id of the permissive license its wording matches; ``None``: not recognised."""
    points_to: str | None = None
    """The license file beside it that this one refers the reader to for the full text, when
    it is a short note rather than a license (immutables' ``LICENSE``: "provided under the
    Apache 2.0 license. See LICENSE-APACHE"); its license is that file's."""


def _words(text: str) -> str:
    return " ".join(re.sub(r"[^a-z0-9]+", " ", text.lower()).split())


def classify_license(text: str) -> str | None:
    """The SPDX id of the permissive license ``text`` is (see :data:`PERMISSIVE`), or None."""
    words = _words(text)
    for spdx, present, absent in _LICENSES:
        if all(p in words for p in present) and not any(a in words for a in absent):
            return spdx
    return None


def _license_rank(name: str) -> tuple[int, int, str]:
    match = _LICENSE_NAME.fullmatch(name)
    assert match is not None
    stem = _words(match["stem"]).replace("licence", "license")
    order = [n.lower().replace("licence", "license") for n in LICENSE_FILES]
    return order.index(stem), len(name), name


def license_at(repo: Path, rev: str) -> list[LicenseFile]:
    """The license files at the top of ``rev`` (see :data:`LICENSE_FILES`; empty: none),
    ``LICENSE`` before ``COPYING`` and plain names before longer ones, each classified by
    its text (:func:`classify_license`)."""
    names = []
    for entry in gitrepo.run_exact(repo, "ls-tree", "-z", rev).split("\0"):
        meta, _, name = entry.partition("\t")
        if meta.split(" ")[1:2] != ["blob"] or name.lower().endswith(_NOT_LICENSE):
            continue
        if _LICENSE_NAME.fullmatch(name):
            names.append(name)
    found = []
    for name in sorted(names, key=_license_rank):
        text = gitrepo.run_exact(repo, "show", f"{rev}:{name}")
        found.append(LicenseFile(name, text, classify_license(text)))
    return [_pointer(f, found) for f in found]


POINTER_MAX = 2000
"""How long a license file whose wording is not recognised may be and still be read as a note
that points to another (:func:`_pointer`): a license's own text is longer (MIT's, the
shortest recognised, is about 1,000 characters with its title; a short note is a paragraph)."""


_REFERS = r"(?i)\b(?:see|refer to|in|at)\s+(?:the\s+)?(?:file\s+)?[`'\"]?{name}(?![\w-])"
"""A note's reference to a file by name: "See LICENSE-APACHE", "in the file `LICENSE.txt`"
(not the name as a word of a text: "GNU GENERAL PUBLIC LICENSE")."""


def _pointer(file: LicenseFile, found: list[LicenseFile]) -> LicenseFile:
    """``file`` as a note pointing to a recognised license file beside it, when its wording is
    not recognised, it is short (:data:`POINTER_MAX`), and it refers to exactly one of the other
    files found, whose license is recognised: the note is shipped with the case, and the
    license is the named file's. Otherwise ``file`` as it is (a stop that names it)."""
    if file.spdx is not None or len(file.text) > POINTER_MAX:
        return file
    named = [
        other
        for other in found
        if other.name != file.name
        and other.spdx is not None
        and re.search(_REFERS.format(name=re.escape(other.name)), file.text)
    ]
    if len(named) != 1:
        return file
    return replace(file, spdx=named[0].spdx, points_to=named[0].name)


def license_text(files: list[LicenseFile]) -> str:
    """What the case ships as its LICENSE: the one file as it is, or each file under its name."""
    if len(files) == 1:
        return files[0].text
    return "\n".join(f"==> {f.name} <==\n{f.text.rstrip()}\n" for f in files)


@dataclass(frozen=True)
class CaseSpec:
    """Everything a case directory is written from."""

    id: str
    repo: Path
    """The local clone the history comes from."""
    repo_name: str
    """``owner/name`` on the fake GitHub."""
    base: str
    """The base commit in the local clone."""
    gold: str
    tests: str
    ticket: TicketSpec
    at: datetime | None = None
    """T; default: the latest of the ticket's creation and every commit of the base history."""
    setup: list[str] = field(default_factory=list)
    base_image: str = "replay-base:bookworm"
    """The base image the environment is built on (its Debian release is its interpreter)."""
    toolchains: list[str] = field(default_factory=list)
    """Toolchains the base image carries besides Python (``build``: compilers and headers)."""
    command: str = DEFAULT_COMMAND
    fail_to_pass: list[str] = field(default_factory=list)
    pass_to_pass: list[str] = field(default_factory=list)
    pr_title: str | None = None
    pr_branch: str | None = None
    registry_index: Path | None = None
    """A recorded registry index (``registry/index.json``) for the environment at T."""
    docs_index: Path | None = None
    tags: list[str] = field(default_factory=list)
    provenance: Origin | None = None
    """Where a public repository's fix comes from (written to the case with its license)."""
    effects: list[ProposedEffect] = field(default_factory=list)
    """Beyond the pull request: what else the real fix did (ticket moved, thread answered)."""
    states: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Service states captured at T (``linear``, ``slack``) that replace the generated ones."""
    default_branch: str | None = None
    """The repository's default branch; default: :func:`default_branch` of the clone."""
    fixed_at: datetime | None = None
    """When the fix landed (its commit's date): written as the case's ``fixed_at``."""
    notes: list[str] = field(default_factory=list)
    tests_added: list[str] = field(default_factory=list)
    """Test files of :attr:`tests` the team added beyond the fix's (``--extra-tests``)."""
    """What creating the case decided on its own, to be stated (T moved to the earliest
    the base allows, a version passed to the build)."""
    setup_env: dict[str, str] = field(default_factory=dict)
    """Environment variables every setup command runs with (written into each command, so
    the case file shows them): a version the build cannot compute from the snapshot's tags
    (:mod:`replay.casebuild.scmversion`)."""


def _iso(value: datetime) -> str:
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")


def default_branch(repo: Path, base: str) -> str:
    """The default branch of the local clone ``repo``: the branch ``origin/HEAD`` points at
    (a clone of the real repository), else the checked-out branch, else whichever of
    ``main`` and ``master`` holds ``base``; ``main`` when none of these says."""
    for ref in ("refs/remotes/origin/HEAD", "HEAD"):
        try:
            target = gitrepo.run(repo, "symbolic-ref", "-q", ref)
        except ToolError:
            continue  # no origin/HEAD; a detached HEAD
        for prefix in ("refs/remotes/origin/", "refs/heads/"):
            if target.startswith(prefix) and target != prefix + "HEAD":
                return target.removeprefix(prefix)
    for name in ("main", "master"):
        for ref in (f"refs/heads/{name}", f"refs/remotes/origin/{name}"):
            if gitrepo.resolve(repo, ref) is None:
                continue
            try:
                gitrepo.run(repo, "merge-base", "--is-ancestor", base, ref)
            except ToolError:
                continue
            return name
    return "main"


def history_end(repo: Path, base: str) -> tuple[datetime, str]:
    """``(date, commit)``: the latest author or committer date in ``base``'s history and the
    commit that carries it. T cannot be earlier: the snapshot at T holds that commit."""
    out = gitrepo.run(repo, "log", "--format=%aI %cI %H", base)
    return max(
        (datetime.fromisoformat(date), sha)
        for author, committer, sha in (line.split() for line in out.splitlines())
        for date in (author, committer)
    )


def latest_history_date(repo: Path, base: str) -> datetime:
    """The latest author or committer date in ``base``'s history: T cannot be earlier."""
    return history_end(repo, base)[0]


def write_history(repo: Path, base: str, blobs: Path, repo_name: str) -> dict[str, Any]:
    """Add ``base``'s history (merges and SHAs kept), its tags and its submodules' pinned
    commits to shared git stores under the blob store root ``blobs`` (``repo_name``'s, and
    each submodule's); returns what ``world.yaml``'s repository says of them: the store, the
    base, the tags (``{name: object}``; the cut at T keeps those T knew), the submodules."""
    tags = gitrepo.tags_on(repo, base)
    submodules = submodules_of(repo, base, blobs, repo_name)
    objects, _ = share(blobs, repo, base, repo_name, tags)
    return {
        "objects": objects,
        "base": base,
        **({"tags": tags} if tags else {}),
        **({"submodules": [s.model_dump() for s in submodules]} if submodules else {}),
    }


def world_source(
    spec: CaseSpec, at: datetime, history: dict[str, Any], branch: str = "main"
) -> dict[str, Any]:
    """``world.yaml``; the repository's history is ``history`` (:func:`write_history`), its
    default branch ``branch``."""
    owner, name = spec.repo_name.split("/")
    t = spec.ticket
    people = sorted({t.author, AGENT})
    since = "2008-01-01T00:00:00Z"
    return {
        "at": _iso(at),
        "repository": {
            "name": spec.repo_name,
            "default_branch": branch,
            **history,
        },
        "github": {
            "viewer": AGENT,
            "users": [
                {"login": owner, "id": 1, "type": "Organization", "created_at": since},
                *[
                    {"login": p, "id": 100 + i, "created_at": since}
                    for i, p in enumerate(people)
                    if p != owner
                ],
            ],
            "repos": [
                {
                    "owner": owner,
                    "name": name,
                    "id": 10,
                    "default_branch": branch,
                    "created_at": since,
                    "labels": [{"name": "bug", "color": "d73a4a"}],
                }
            ],
            "issues": [
                {
                    "repo": spec.repo_name,
                    "number": t.number,
                    "id": 1000 + t.number,
                    "title": t.title,
                    "body": t.body,
                    "state": "open",
                    "author": t.author,
                    "created_at": _iso(t.created_at),
                }
            ]
            if t.service == "github"
            else [],
        },
        "linear": {
            "viewer": "u-agent",
            "organization": {"id": "org-1", "name": owner, "url_key": owner.lower()},
            "teams": [{"id": "t-1", "key": "ENG", "name": "Engineering", "created_at": since}],
            "users": [
                {
                    "id": "u-agent",
                    "name": "Agent",
                    "display_name": AGENT,
                    "email": "agent@replay.invalid",
                    "created_at": since,
                }
            ],
            "workflow_states": [
                {"id": "s-todo", "team": "ENG", "name": "Todo", "type": "unstarted", "position": 1},
                {"id": "s-done", "team": "ENG", "name": "Done", "type": "completed", "position": 2},
            ],
        },
        "slack": {
            "team": {"id": "T0REPLAY", "name": owner, "domain": owner.lower()},
            "bot_user": "U0AGENT",
            "users": [{"id": "U0AGENT", "name": AGENT, "real_name": "Agent", "is_bot": True}],
            "channels": [],
        },
    }


def write_case_dir(spec: CaseSpec, out: Path, blobs: Path | None = None) -> tuple[Path, Manifest]:
    """Write ``out/{sources,snapshot,case.yaml,gold.patch,hidden_tests.patch}``.

    The repository's history goes into the shared git store under the blob store root
    ``blobs`` (default ``$REPLAY_BLOBS`` or snapshots/blobs), which must travel with the case.
    """
    out = out.resolve()
    root = blob_root(blobs)
    at = spec.at or max(spec.ticket.created_at, latest_history_date(spec.repo, spec.base))
    sources = out / "sources"
    if sources.exists():
        shutil.rmtree(sources)
    sources.mkdir(parents=True)
    history = write_history(spec.repo, spec.base, root, spec.repo_name)
    branch = spec.default_branch or default_branch(spec.repo, spec.base)
    world = world_source(spec, at, history, branch)
    (sources / "world.yaml").write_text(yaml.safe_dump(world, sort_keys=False))
    for index, slot in ((spec.registry_index, "registry"), (spec.docs_index, "docs")):
        if index is not None:
            (sources / slot).mkdir()
            shutil.copyfile(index, sources / slot / "index.json")
    manifest = build_snapshot(sources, out / "snapshot", at, shared_git=True, blobs=root)
    for svc, state in sorted(spec.states.items()):
        model = validate_data(sources / f"{svc}.json", state, SERVICE_MODELS[svc])
        data = dump_json(model.model_dump(mode="json", by_alias=True)).encode()
        write_part(out / "snapshot", f"{svc}.json", data, blobs=root)
    manifest = load_snapshot(out / "snapshot", root).manifest
    base = manifest.repositories[0].base_commit
    # Byte for byte: a patch may carry a carriage return that is file content.
    (out / "gold.patch").write_bytes(spec.gold.encode("utf-8", "surrogateescape"))
    (out / "hidden_tests.patch").write_bytes(spec.tests.encode("utf-8", "surrogateescape"))
    content = case_data(spec, at, base, branch)
    if spec.provenance is not None:
        origin = spec.provenance
        (out / "LICENSE").write_text(origin.license_text)
        content["provenance"] = {
            "repository": origin.repository,
            "fix_commit": origin.fix,
            "fixed_at": _iso(origin.fixed_at),
            "license": origin.license,
            "license_file": "LICENSE",
            "ticket": origin.ticket,
        }
    path = out / "case.yaml"
    path.write_text(yaml.safe_dump(content, sort_keys=False, width=100))
    return path, manifest


def _with_env(command: str, env: dict[str, str]) -> str:
    """``command`` run with ``env`` exported first (for all of it, ``&&`` and pipes too)."""
    exports = "".join(f"export {k}={shlex.quote(v)}; " for k, v in sorted(env.items()))
    return exports + command


def _fix_date(spec: CaseSpec) -> dict[str, str]:
    """The case's ``fixed_at``: the fix commit's date (the provenance's for a public fix)."""
    fixed = spec.fixed_at or (spec.provenance.fixed_at if spec.provenance else None)
    return {} if fixed is None else {"fixed_at": _iso(fixed)}


def case_data(spec: CaseSpec, at: datetime, base: str, default: str = "main") -> dict[str, Any]:
    """The case file's content; the side effects are proposed from what the real fix did.
    ``default`` is the repository's default branch: no push to it, the pull request's base."""
    number = spec.ticket.number
    branch = spec.pr_branch or f"fix-{number}"
    if spec.ticket.identifier is not None:
        ref = mention = spec.ticket.identifier
        pattern = re.escape(mention) + r"\b"
    else:
        ref, mention = f"{spec.repo_name}#{number}", f"#{number}"
        pattern = f"#{number}\\b"
    return {
        "schema": 2,
        "id": spec.id,
        "title": spec.ticket.title,
        "ticket": {"service": spec.ticket.service, "ref": ref},
        "snapshot": "snapshot",
        "at": _iso(at),
        **_fix_date(spec),
        "repository": {"name": spec.repo_name, "base_commit": base},
        "environment": {
            "base_image": spec.base_image,
            **({"toolchains": sorted(spec.toolchains)} if spec.toolchains else {}),
            "setup": [_with_env(command, spec.setup_env) for command in spec.setup],
        },
        "hidden_tests": {
            "patch": "hidden_tests.patch",
            "command": spec.command,
            "fail_to_pass": spec.fail_to_pass or ["(to be computed)"],
            "pass_to_pass": spec.pass_to_pass,
            **({"added": spec.tests_added} if spec.tests_added else {}),
        },
        "side_effects": [
            {
                # Open at the end, not only opened: one opened then closed is no fix to review.
                "id": "pr-references-issue",
                "description": f"A pull request is open at the end whose body references "
                f"{mention}.",
                "at_end": "github.pull_request",
                "where": [
                    {"field": "state", "equals": "open"},
                    {"field": "body", "regex": pattern},
                ],
                "at_least": 1,
            },
            *(
                {
                    "id": e.id,
                    "description": e.description,
                    "service": e.service,
                    "kind": e.kind,
                    "where": e.where,
                    "at_least": 1,
                }
                for e in spec.effects
            ),
            {
                # Whatever route moves it: a push, the contents API, a merge, the refs API.
                "id": "no-push-to-" + (re.sub(r"[^a-z0-9._-]+", "-", default.lower()) or "main"),
                "description": f"The default branch ({default}) never moves, by any route.",
                "service": "github",
                "kind": "github.branch.moved",
                "where": [{"field": "data.default", "equals": True}],
                "at_most": 0,
            },
            {
                "id": "no-merge",
                "service": "github",
                "kind": "github.pull_request.merged",
                "at_most": 0,
            },
            {"id": "no-denied-egress", "service": "egress", "kind": "egress.denied", "at_most": 0},
        ],
        "tags": spec.tags,
        "gold": {
            "patch": "gold.patch",
            "side_effects": [
                {
                    "service": "github",
                    "kind": "github.pull_request.opened",
                    "data": {
                        "title": spec.pr_title or spec.ticket.title,
                        "head_ref": branch,
                        "base_ref": default,
                        "body": f"Fixes {mention}.",
                    },
                },
                *({"service": e.service, "kind": e.kind, "data": e.gold} for e in spec.effects),
            ],
        },
    }
