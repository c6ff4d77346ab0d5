"""The leak audit: proof that a snapshot holds nothing from after its T, nor the answer.

Two layers. :func:`dated_after` needs nothing but the snapshot: every timestamp in the world
state, every commit reachable in every bundle, the refs the bundles carry. :func:`audit` adds
what only a deeper look finds: every git object in every bundle (unreachable ones included),
the refs, reflogs and ``ORIG_HEAD``-style pointers of the repository a restore produces, and,
given the case, the answer itself (the gold diff's added lines, the hidden tests' new names,
the fix pull request) in the repository, the fake states and the docs cache, and any release of
the package under test that T did not know. :func:`audit_cached` memoises by snapshot hash.

A repository kept in the shared git store is audited through the bundle a restore is made
from (:meth:`Snapshot.bundle`), never the store itself: the store may hold commits of later
snapshots of the same repository, which no restore of this one can carry.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import tempfile
import tomllib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from replay.base import gitrepo
from replay.base.blobs import BlobStore
from replay.base.case import Case, load_case
from replay.base.errors import ToolError
from replay.base.manifest import MANIFEST, RepositoryPart
from replay.base.sharedgit import bundle_refs
from replay.base.snapshot import Snapshot, load_snapshot, sha256_file

AUDIT_VERSION = 2
"""Bumped whenever the audit learns a new check, so cached verdicts are recomputed."""
CACHE_ENV = "REPLAY_AUDIT_CACHE"
MIN_MARKER = 16
"""Added lines shorter than this (``return x``, ``}``) are too common to prove a leak."""
_POINTERS = ("ORIG_HEAD", "FETCH_HEAD", "MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD")

_STAMP_KEYS = ("_at", "_time")


@dataclass(frozen=True)
class Finding:
    """One leak: where it is, and what was found there."""

    location: str
    """A part of the snapshot (``github.json:issues[2].comments[1].body``, a bundle, a blob)."""
    problem: str

    def __str__(self) -> str:
        return f"{self.location}: {self.problem}"


# ----------------------------------------------------------------------------- timestamps


def _walk(value: Any, path: str) -> Iterator[tuple[str, Any, Any]]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield path, key, item
            yield from _walk(item, f"{path}.{key}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _walk(item, f"{path}[{i}]")


def _as_time(key: str, value: Any) -> datetime | None:
    if value is None:
        return None
    if key in ("ts", "thread_ts") and isinstance(value, str):
        return datetime.fromtimestamp(float(value), tz=UTC)
    if key == "created" and isinstance(value, int):
        return datetime.fromtimestamp(value, tz=UTC)
    if key.endswith(_STAMP_KEYS) and isinstance(value, str):
        return datetime.fromisoformat(value)
    return None


def dated_after(snapshot: Snapshot) -> list[str]:
    """Every place in the snapshot that is dated after T, as readable lines (empty: clean)."""
    at = snapshot.at
    found: list[str] = []
    for svc, name in sorted(snapshot.manifest.services.items()):
        state = getattr(snapshot, svc).model_dump(mode="json")
        for path, key, value in _walk(state, name):
            when = _as_time(key, value)
            if when is not None and when > at:
                found.append(f"{path}.{key} = {value} is after T")
    for f in snapshot.registry.python:
        if f.upload_time > at:
            found.append(f"registry: {f.filename} uploaded {f.upload_time} is after T")
    for page in snapshot.docs.pages:
        if page.fetched_at > at:
            found.append(f"docs: {page.url} was fetched {page.fetched_at}, after T")
    for v in snapshot.registry.npm:
        if v.publish_time > at:
            found.append(f"registry: {v.package}@{v.version} published after T")
    with tempfile.TemporaryDirectory(prefix="replay-audit-") as tmp:
        for repo in snapshot.manifest.repositories:
            bundle = snapshot.bundle(repo.name)
            heads = gitrepo.bundle_heads(bundle)
            wanted = bundle_refs(repo)
            if heads != wanted:
                found.append(f"{repo.location}: carries refs {heads}, expected only {wanted}")
            dest = Path(tmp) / repo.name
            gitrepo.checkout_from_bundle(
                bundle, repo.base_commit, dest, repo.default_branch, repo.tags
            )
            for sha, when in gitrepo.commit_dates(dest, repo.default_branch):
                if when > at:
                    found.append(f"{repo.location}: commit {sha[:12]} dated {when} is after T")
            found += [f"{repo.location}: {line}" for line in _late_tags(dest, repo, at)]
            for i, sub in enumerate(repo.submodules):
                probe = gitrepo.init(Path(tmp) / "submodules" / repo.name / str(i), bare=True)
                bundle = snapshot.submodule_bundle(sub)
                gitrepo.run(probe, "fetch", "-q", "--no-tags", str(bundle), sub.commit)
                for sha, when in gitrepo.commit_dates(probe, sub.commit):
                    if when > at:
                        found.append(
                            f"submodule {sub.path} ({sub.objects}@{sub.commit}): commit "
                            f"{sha[:12]} dated {when} is after T"
                        )
    return found


def _late_tags(repo: Path, part: RepositoryPart, at: datetime) -> list[str]:
    """The tags of a restore that name something outside the base's history, or are a tag
    object dated after T (its date, tagger and message are from the future)."""
    found = []
    outside = gitrepo.run(
        repo, "for-each-ref", f"--no-merged={part.base_commit}", "--format=%(refname)",
        "refs/tags",
    )  # fmt: skip
    found += [f"tag {ref} names a commit outside the base's history" for ref in outside.split()]
    dated = gitrepo.run(
        repo, "for-each-ref", "--format=%(refname) %(objecttype) %(taggerdate:unix)", "refs/tags"
    )
    for line in dated.splitlines():
        # A lightweight tag (or a tag object without a tagger) has no date, and the output's
        # last line comes without its trailing space: "refs/tags/v1 commit".
        ref, kind, stamp = [*line.split(" ", 2), "", ""][:3]
        when = datetime.fromtimestamp(int(stamp), UTC) if kind == "tag" and stamp else None
        if when is not None and when > at:
            found.append(f"tag {ref} is a tag object dated {when.isoformat()}, after T")
    return found


# ----------------------------------------------------------------------------- the answer


@dataclass(frozen=True)
class Answer:
    """What a leak of this case's answer would look like."""

    markers: tuple[str, ...]
    """Gold added lines and new hidden-test names that the base tree does not already hold."""
    fix_pr: int | None
    """The fix pull request's number on the fake GitHub, if the gold says one was opened."""
    fix_title: str | None
    fix_branch: str | None


def _added(patch: str) -> list[str]:
    return [
        line[1:].strip()
        for line in patch.splitlines()
        if line.startswith("+") and not line.startswith("+++")
    ]


_DEF = re.compile(r"^(?:async\s+)?def\s+(\w+)|^class\s+(\w+)")


PROSE = re.compile(
    r"(?i)(?:^|/)(?:change(?:log|s)|news|history|release[-_]?notes|authors|contributors)"
    r"(?:\.[^/]*)?$|\.(?:md|rst|txt|adoc)$"
)
"""Files of prose: a changelog, the docs. Their lines restate the ticket (yapf 2023's
``CHANGELOG.md`` entry is its issue's title, seventh held-out corpus), so the world quoting
them gives nothing away; the answer is the code the fix changes."""


def _added_code(patch: str) -> list[str]:
    """:func:`_added`, less the lines of files :data:`PROSE` matches."""
    out: list[str] = []
    prose = False
    for line in patch.splitlines():
        if line.startswith("+++ "):
            path = line[4:].strip().removeprefix("b/")
            prose = bool(PROSE.search(path))
        elif line.startswith("+") and not prose:
            out.append(line[1:].strip())
    return out


def gold_lines(gold: str) -> set[str]:
    """The gold patch's added lines of code (not of prose: :data:`PROSE`), stripped, long
    enough to prove a leak."""
    return {line for line in _added_code(gold) if len(line) >= MIN_MARKER}


def test_names(tests: str) -> set[str]:
    """The names of the functions and classes the hidden tests' patch adds (8+ characters)."""
    names: set[str] = set()
    for line in _added(tests):
        m = _DEF.match(line)
        name = m and (m.group(1) or m.group(2))
        if name and len(name) >= 8:
            names.add(name)
    return names


def answer_of(case: Case, base_text: str) -> Answer:
    """The case's answer, minus whatever the base tree (``base_text``) already contains."""
    gold = case.gold.patch.read_text(encoding="utf-8", errors="replace")
    tests = case.hidden_tests.patch.read_text(encoding="utf-8", errors="replace")
    markers = {m for m in gold_lines(gold) | test_names(tests) if m not in base_text}
    pr = title = branch = None
    for effect in case.gold.side_effects:
        if effect.kind == "github.pull_request.opened":
            number = effect.data.get("number")
            pr = number if isinstance(number, int) else None
            title = str(effect.data["title"]) if effect.data.get("title") else None
            branch = str(effect.data["head_ref"]) if effect.data.get("head_ref") else None
    return Answer(tuple(sorted(markers)), pr, title, branch)


def _hits(text: str, markers: Iterable[str]) -> list[str]:
    return [m for m in markers if m in text]


def _quote(marker: str) -> str:
    return marker if len(marker) <= 60 else marker[:57] + "..."


# ----------------------------------------------------------------------------- git


def _git(repo: Path, *args: str, data: bytes | None = None) -> bytes:
    done = subprocess.run(
        ["git", *args],
        cwd=repo,
        env=gitrepo.clean_env(),
        input=data,
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        raise ToolError(f"git {' '.join(args)} failed in {repo}: {done.stderr!r}")
    return done.stdout


def all_objects(repo: Path) -> dict[str, str]:
    """Every object in the repository, loose or packed, reachable or not: ``{sha: type}``."""
    out = _git(
        repo,
        "cat-file",
        "--batch-all-objects",
        "--unordered",
        "--batch-check=%(objectname) %(objecttype)",
    )
    objects: dict[str, str] = {}
    for line in out.decode().splitlines():
        sha, _, kind = line.partition(" ")
        objects[sha] = kind
    return objects


def reachable(repo: Path, *revs: str) -> set[str]:
    if not revs:
        return set()
    out = _git(repo, "rev-list", "--objects", *revs, "--")
    return {line.split(" ", 1)[0] for line in out.decode().splitlines() if line}


def read_objects(repo: Path, shas: Iterable[str]) -> Iterator[tuple[str, str, bytes]]:
    """``(sha, type, content)`` for each object, through one ``cat-file --batch``."""
    wanted = list(shas)
    if not wanted:
        return
    out = _git(repo, "cat-file", "--batch", data="".join(f"{s}\n" for s in wanted).encode())
    pos = 0
    for _ in wanted:
        header_end = out.index(b"\n", pos)
        sha, kind, size = out[pos:header_end].decode().split(" ")
        start = header_end + 1
        yield sha, kind, out[start : start + int(size)]
        pos = start + int(size) + 1


def _commit_time(content: bytes) -> datetime | None:
    """A commit's committer date, or a tag object's tagger date."""
    for line in content.split(b"\n"):
        if line.startswith((b"committer ", b"tagger ")):
            stamp = line.rsplit(b" ", 2)[-2]
            return datetime.fromtimestamp(int(stamp), tz=UTC)
        if not line:
            break
    return None


def _tree_text(repo: Path, commit: str) -> str:
    out = _git(repo, "ls-tree", "-r", commit).decode()
    blobs = [line.split()[2] for line in out.splitlines() if line.split()[1] == "blob"]
    return "\n".join(c.decode("utf-8", "replace") for _, _, c in read_objects(repo, blobs))


def audit_objects(
    repo: Path,
    base: str,
    at: datetime,
    where: str,
    answer: Answer | None,
    tags: Iterable[str] = (),
) -> list[Finding]:
    """Objects beyond ``base``'s history and the objects ``tags`` name in ``repo``: later
    commits or tag objects, anything unreachable."""
    found: list[Finding] = []
    objects = all_objects(repo)
    keep = reachable(repo, base, *(t for t in tags if t in objects)) if base in objects else set()
    if base not in objects:
        found.append(Finding(where, f"does not hold the base commit {base}"))
    extra = sorted(set(objects) - keep)
    for sha, kind, content in read_objects(repo, extra):
        detail = f"{kind} {sha[:12]} is not in the base commit's history"
        if kind == "commit":
            when = _commit_time(content)
            if when is not None and when > at:
                detail += f" (committed {when.isoformat()}, after T)"
        if answer is not None:
            hits = _hits(content.decode("utf-8", "replace"), answer.markers)
            if hits:
                detail += f"; holds the answer: {_quote(hits[0])!r}"
        found.append(Finding(where, detail))
    for sha, kind, content in read_objects(repo, sorted(keep)):
        if kind in ("commit", "tag"):
            when = _commit_time(content)
            if when is not None and when > at:
                done = "committed" if kind == "commit" else "tagged"
                found.append(Finding(where, f"{kind} {sha[:12]} {done} {when}, after T"))
    return found


def audit_repository(
    repo: Path,
    base: str,
    branch: str,
    at: datetime,
    answer: Answer | None = None,
    tags: Mapping[str, str] | None = None,
) -> list[Finding]:
    """Audit a working repository as an agent would get it (a restore, an image's checkout).

    Checks refs (remotes, notes, stash, anything but ``branch`` and the snapshot's ``tags``),
    reflogs, the ``ORIG_HEAD`` family, ``packed-refs`` and every object in the object store.
    """
    found: list[Finding] = []
    gitdir = Path(_git(repo, "rev-parse", "--absolute-git-dir").decode().strip())
    refs = _git(repo, "for-each-ref", "--format=%(refname) %(objectname)").decode()
    allowed = {f"refs/heads/{branch}": base}
    allowed.update({f"refs/tags/{name}": sha for name, sha in (tags or {}).items()})
    for line in refs.splitlines():
        name, _, sha = line.partition(" ")
        if allowed.get(name) != sha:
            found.append(
                Finding(
                    f"{gitdir}:{name}",
                    f"ref names {sha[:12]}; only {branch} at base and the snapshot's tags",
                )
            )
    for name in _POINTERS:
        if (gitdir / name).exists():
            text = (gitdir / name).read_text(errors="replace").strip()
            found.append(Finding(f"{gitdir}/{name}", f"present ({text[:60]})"))
    logs = gitdir / "logs"
    keep = reachable(repo, base)
    for log in sorted(p for p in logs.rglob("*") if p.is_file()) if logs.is_dir() else []:
        for line in log.read_text(errors="replace").splitlines():
            parts = line.split(" ", 2)
            for sha in parts[:2]:
                if sha.strip("0") and sha not in keep:
                    found.append(Finding(f"{log.relative_to(gitdir)}", f"reflog names {sha[:12]}"))
    found += audit_objects(repo, base, at, str(gitdir), answer, (tags or {}).values())
    return found


def audit_bundle(
    bundle: Path, part: RepositoryPart, at: datetime, scratch: Path, answer: Answer | None
) -> tuple[list[Finding], str]:
    """Unbundle into a scratch repository and list every object the bundle's pack holds.

    ``bundle`` is what restores of ``part`` are made from (:meth:`Snapshot.bundle`); findings
    are located at ``part.location`` (the bundle part, or the shared store and base).
    """
    found: list[Finding] = []
    heads = gitrepo.bundle_heads(bundle)
    wanted = bundle_refs(part)
    for ref, sha in sorted(heads.items()):
        if wanted.get(ref) != sha:
            found.append(Finding(f"{part.location}:{ref}", f"bundle carries ref -> {sha[:12]}"))
    repo = gitrepo.init(scratch / "unbundled" / part.name, bare=True)
    _git(repo, "bundle", "unbundle", str(bundle))
    base_text = ""
    if part.base_commit in all_objects(repo):
        base_text = _tree_text(repo, part.base_commit)
    found += audit_objects(repo, part.base_commit, at, part.location, answer, part.tags.values())
    restored = scratch / "restored" / part.name
    gitrepo.checkout_from_bundle(bundle, part.base_commit, restored, part.default_branch, part.tags)
    found += [
        Finding(f"restore of {part.location}: {f.location}", f.problem)
        for f in audit_repository(
            restored, part.base_commit, part.default_branch, at, tags=part.tags
        )
        if "is not in the base commit's history" not in f.problem
    ]
    return found, base_text


# ----------------------------------------------------------------------------- the rest


def _strings(value: Any, path: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(item, f"{path}.{key}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _strings(item, f"{path}[{i}]")


def audit_states(snapshot: Snapshot, answer: Answer) -> list[Finding]:
    found: list[Finding] = []
    for svc, name in sorted(snapshot.manifest.services.items()):
        state = getattr(snapshot, svc).model_dump(mode="json")
        for path, text in _strings(state, name):
            for marker in _hits(text, answer.markers):
                found.append(Finding(path, f"quotes the answer: {_quote(marker)!r}"))
    for i, pull in enumerate(snapshot.github.pulls):
        same = (
            pull.number == answer.fix_pr
            or (answer.fix_title is not None and pull.title == answer.fix_title)
            or (answer.fix_branch is not None and pull.head_ref == answer.fix_branch)
        )
        if same:
            found.append(
                Finding(f"{snapshot.manifest.services['github']}:pulls[{i}]", "is the fix PR")
            )
    return found


def _project_of(base_text_files: dict[str, str]) -> tuple[str, Version | None] | None:
    text = base_text_files.get("pyproject.toml")
    if text is None:
        return None
    try:
        project = tomllib.loads(text).get("project", {})
    except tomllib.TOMLDecodeError:
        return None
    name = project.get("name")
    if not isinstance(name, str):
        return None
    try:
        version = Version(str(project["version"])) if "version" in project else None
    except InvalidVersion:
        version = None
    return canonicalize_name(name), version


def audit_registry(snapshot: Snapshot, project: tuple[str, Version | None] | None) -> list[Finding]:
    """Releases of the package under test that T did not know (newer, or uploaded after T)."""
    if project is None:
        return []
    name, version = project
    found: list[Finding] = []
    where = snapshot.manifest.registry or "registry"
    for f in snapshot.registry.python:
        if canonicalize_name(f.project) != name:
            continue
        try:
            newer = version is not None and Version(f.version) > version
        except InvalidVersion:
            newer = False
        if f.upload_time > snapshot.at or newer:
            found.append(
                Finding(
                    f"{where}:{f.filename}",
                    f"a release of the package under test ({name} {f.version}, uploaded "
                    f"{f.upload_time.isoformat()}) that the base commit ({version}) predates",
                )
            )
    return found


def audit_docs(snapshot: Snapshot, answer: Answer, blobs: BlobStore) -> list[Finding]:
    found: list[Finding] = []
    for page in snapshot.docs.pages:
        path = blobs.path(page.sha256)
        if not path.is_file():
            continue
        text = path.read_bytes().decode("utf-8", "replace")
        for marker in _hits(text, answer.markers):
            found.append(Finding(f"docs:{page.url}", f"quotes the answer: {_quote(marker)!r}"))
    return found


def audit(
    snapshot: Snapshot, case: Case | None = None, blobs: BlobStore | None = None
) -> list[Finding]:
    """Every leak in ``snapshot`` (empty: clean); with ``case``, the answer is looked for too."""
    found = [Finding("snapshot", line) for line in dated_after(snapshot)]
    answer = Answer((), None, None, None)
    project = None
    with tempfile.TemporaryDirectory(prefix="replay-audit-") as tmp:
        for part in snapshot.manifest.repositories:
            bundle = snapshot.bundle(part.name)
            if case is not None and part.name == case.repository.name:
                # The answer is what the base tree does not hold yet: read the base first.
                probe = gitrepo.init(Path(tmp) / "probe" / part.name, bare=True)
                _git(probe, "bundle", "unbundle", str(bundle))
                if part.base_commit in all_objects(probe):
                    answer = answer_of(case, _tree_text(probe, part.base_commit))
                    files = _files_at(probe, part.base_commit, ("pyproject.toml",))
                    project = _project_of(files)
            more, _ = audit_bundle(bundle, part, snapshot.at, Path(tmp), answer)
            found += more
            for i, sub in enumerate(part.submodules):
                bundle = snapshot.submodule_bundle(sub)
                scratch = Path(tmp) / "submodules" / str(i)
                more, _ = audit_bundle(bundle, sub.as_part(), snapshot.at, scratch, answer)
                found += [Finding(f"submodule {sub.path}: {f.location}", f.problem) for f in more]
    if case is not None:
        found += audit_states(snapshot, answer)
        found += audit_registry(snapshot, project)
        found += audit_docs(snapshot, answer, blobs or BlobStore(snapshot.blobs))
    return found


def base_text(case: Case) -> str:
    """Every file of the case's repository at its base commit, read from the snapshot's bundle."""
    snapshot = load_snapshot(case.snapshot)
    with tempfile.TemporaryDirectory(prefix="replay-audit-") as tmp:
        probe = gitrepo.init(Path(tmp) / "probe", bare=True)
        _git(probe, "bundle", "unbundle", str(snapshot.bundle(case.repository.name)))
        if case.repository.base_commit not in all_objects(probe):
            raise ToolError(
                f"the snapshot's bundle of {case.repository.name} does not hold the base commit"
            )
        return _tree_text(probe, case.repository.base_commit)


def _files_at(repo: Path, commit: str, names: tuple[str, ...]) -> dict[str, str]:
    files: dict[str, str] = {}
    for name in names:
        done = subprocess.run(
            ["git", "show", f"{commit}:{name}"],
            cwd=repo,
            env=gitrepo.clean_env(),
            capture_output=True,
            check=False,
        )
        if done.returncode == 0:
            files[name] = done.stdout.decode("utf-8", "replace")
    return files


# ----------------------------------------------------------------------------- caching


def cache_dir() -> Path:
    """Where audit verdicts are remembered (``$REPLAY_AUDIT_CACHE``, else the user's cache)."""
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env)
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "replay" / "audit"


def audit_key(snapshot_path: Path, case: Case | None) -> str:
    """The snapshot's hash (its manifest hashes every part) plus the case's answer files."""
    digest = hashlib.sha256(f"audit-v{AUDIT_VERSION}\n".encode())
    digest.update(sha256_file(Path(snapshot_path) / MANIFEST).encode())
    if case is not None:
        for path in (case.gold.patch, case.hidden_tests.patch):
            digest.update(sha256_file(path).encode())
        digest.update(
            json.dumps([e.model_dump(mode="json") for e in case.gold.side_effects]).encode()
        )
        digest.update(case.repository.name.encode())
    return digest.hexdigest()


def audit_cached(snapshot: Path | str, case: Case | Path | str | None = None) -> list[Finding]:
    """:func:`audit`, remembered by snapshot hash (and case answer): runs call this first.

    ``case`` is a loaded case (a run's, read once) or a case file.
    """
    snap_path = Path(snapshot)
    if case is not None and not isinstance(case, Case):
        case = load_case(Path(case))
    key = audit_key(snap_path, case)
    cache = cache_dir() / f"{key}.json"
    if cache.is_file():
        try:
            rows = json.loads(cache.read_text())
            return [Finding(**row) for row in rows]
        except (ValueError, TypeError):
            pass  # a damaged cache entry is recomputed
    loaded = load_snapshot(snap_path)
    found = audit(loaded, case)
    cache.parent.mkdir(parents=True, exist_ok=True)
    tmp = cache.with_name(cache.name + f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps([asdict(f) for f in found]))
    tmp.replace(cache)
    return found


__all__ = [
    "Answer",
    "Finding",
    "answer_of",
    "audit",
    "audit_cached",
    "audit_repository",
    "base_text",
    "cache_dir",
    "dated_after",
    "gold_lines",
    "test_names",
]
