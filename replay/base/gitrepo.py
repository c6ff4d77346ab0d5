"""The few git operations the project needs, with errors translated once.

Commands run as subprocesses with an environment we control entirely (a fixed identity, the
user's global and system configuration ignored, no prompts), so that the same inputs give the
same objects; history is read through GitPython's object model.
"""

from __future__ import annotations

import fcntl
import os
import re
import subprocess
import tempfile
import uuid
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

import git

from replay.base.errors import ToolError

IDENTITY = {
    "GIT_AUTHOR_NAME": "replay",
    "GIT_AUTHOR_EMAIL": "replay@localhost",
    "GIT_COMMITTER_NAME": "replay",
    "GIT_COMMITTER_EMAIL": "replay@localhost",
}


CONFIG = (
    # Single-threaded packing: delta search across threads makes packs differ from run to
    # run (see bundle_create for the one place this does not reach).
    ("pack.threads", "1"),
    # No automatic gc or maintenance: after a fetch, commit or push, git starts one detached
    # in the background, which goes on writing into a scratch repository while its temporary
    # directory is removed ("Directory not empty"; a gateway failed to start so). The shared
    # stores are repacked explicitly (store_add); every other repository here is short-lived.
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
)
"""Configuration every git command run here gets, above any repository's own (the
command-line level, through ``GIT_CONFIG_COUNT``)."""


def clean_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """An environment for git that ignores the user's configuration, never prompts and never
    starts an automatic gc (:data:`CONFIG`)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        {
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_TERMINAL_PROMPT": "0",
            "LC_ALL": "C",
            "GIT_CONFIG_COUNT": str(len(CONFIG)),
            **IDENTITY,
        }
    )
    for i, (key, value) in enumerate(CONFIG):
        env[f"GIT_CONFIG_KEY_{i}"] = key
        env[f"GIT_CONFIG_VALUE_{i}"] = value
    env.update(extra or {})
    return env


def run(
    cwd: Path, *args: str, env: Mapping[str, str] | None = None, input: str | None = None
) -> str:
    """Run ``git args...`` in ``cwd`` and return its standard output (stripped)."""
    out = run_exact(cwd, *args, env=env, input=input)
    return out.replace("\r\n", "\n").replace("\r", "\n").strip()  # universal newlines


def run_exact(
    cwd: Path, *args: str, env: Mapping[str, str] | None = None, input: str | None = None
) -> str:
    """Run ``git args...`` in ``cwd`` and return its standard output byte for byte (UTF-8,
    undecodable bytes kept as surrogates): no newline translation, so a diff of a file that
    holds a carriage return stays a diff that applies. ``input`` goes to its standard input."""
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=cwd,
            env=clean_env(env),
            capture_output=True,
            check=False,
            input=None if input is None else input.encode(),
            stdin=subprocess.DEVNULL if input is None else None,
        )
    except FileNotFoundError as exc:
        raise ToolError("git is not installed (the project needs git on PATH)") from exc
    if done.returncode != 0:
        stderr = " ".join(done.stderr.decode(errors="replace").split())
        raise ToolError(f"git {' '.join(args)} failed in {cwd}: {stderr}")
    return done.stdout.decode("utf-8", "surrogateescape")


def init(path: Path, *, bare: bool = False, branch: str = "main") -> Path:
    path.mkdir(parents=True, exist_ok=True)
    run(path, "init", "-q", f"--initial-branch={branch}", *(["--bare"] if bare else []))
    return path


def bundle_create(
    repo: Path,
    out: Path,
    commit: str,
    ref: str,
    *,
    tags: Mapping[str, str] | None = None,
    pin: bool = True,
) -> None:
    """Write a bundle holding exactly ``commit``'s history, under the single ref ``ref``, and
    the tags ``tags`` (``{name: object}``, each on that history: :func:`tags_at`).

    Packing is single-threaded (see :func:`clean_env`) so the same history gives the same bytes.
    ``pin=False`` when a ref of ``repo`` already names ``commit`` (a shared store's
    ``refs/replay/<sha>``): then ``repo`` is only read, never written. A tag object is
    fetched by its id, which a ref of ``repo`` must name (its tag, or a store's
    ``refs/replay/<id>``).
    """
    # Unique names, so that two processes bundling from one repository at once do not
    # move each other's ref or rename each other's half-written file.
    tag = f"{os.getpid()}-{uuid.uuid4().hex}"
    pinned = f"refs/replay-bundle/{tag}"
    if pin:
        run(repo, "update-ref", pinned, commit)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_name(f".{out.name}.{tag}.tmp")
        # A fresh repository holding only commit's history, so nothing later can ride along.
        with _scratch_repo() as scratch:
            # Objects arrive loose (no unpack limit), so the bundle's pack is computed here,
            # single-threaded, rather than reusing the deltas of the pack upload-pack sent:
            # git drops GIT_CONFIG_* for the other repository's upload-pack, which therefore
            # packs with as many threads as there are cores, differently each time.
            _fetch(scratch, repo, [f"{commit}:refs/heads/{ref}"], loose=True)
            add_tags(scratch, repo, tags or {})
            try:
                names = [f"refs/tags/{name}" for name in sorted(tags or {})]
                run(scratch, "bundle", "create", str(tmp), f"refs/heads/{ref}", *names)
                tmp.replace(out)
            finally:
                tmp.unlink(missing_ok=True)
    finally:
        if pin:
            run(repo, "update-ref", "-d", pinned)


def add_tags(dest: Path, source: Path, tags: Mapping[str, str]) -> None:
    """``tags`` (``{name: object}``) as ``refs/tags/<name>`` in ``dest``: a lightweight tag's
    commit is there already (on the history fetched), a tag object is fetched from ``source``
    by its id (which a ref of ``source`` names: its tag, or a store's ``refs/replay/<id>``)."""
    have = object_types(dest, tags.values())
    wanted = [f"{sha}:refs/tags/{name}" for name, sha in sorted(tags.items()) if sha not in have]
    if wanted:
        _fetch(dest, source, wanted, loose=True)
    present = [
        f"update refs/tags/{name} {sha}" for name, sha in sorted(tags.items()) if sha in have
    ]
    if present:
        run(dest, "update-ref", "--stdin", input="\n".join(present) + "\n")


@contextmanager
def _scratch_repo() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="replay-git-") as tmp:
        yield init(Path(tmp) / "r", bare=True)


def bundle_heads(bundle: Path) -> dict[str, str]:
    """The refs a bundle carries, as ``{ref: sha}``; verifies the bundle is readable."""
    out = run(bundle.parent, "bundle", "list-heads", str(bundle))
    heads: dict[str, str] = {}
    for line in out.splitlines():
        sha, _, ref = line.partition(" ")
        heads[ref] = sha
    return heads


def checkout_from_bundle(
    bundle: Path, commit: str, dest: Path, branch: str, tags: Mapping[str, str] | None = None
) -> Path:
    """A fresh working repository at ``dest`` holding only ``commit``'s history and the tags
    ``tags`` (``{name: object}``, a snapshot's: :attr:`RepositoryPart.tags`).

    No remote, no reflog from elsewhere, no tag but those named: the objects come from the
    bundle alone.
    """
    init(dest, branch=branch)
    # HEAD already names the unborn branch, hence --update-head-ok.
    run(
        dest,
        "fetch",
        "-q",
        "--no-tags",
        "--update-head-ok",
        str(bundle),
        f"{commit}:refs/heads/{branch}",
        *(f"{sha}:refs/tags/{name}" for name, sha in sorted((tags or {}).items())),
    )
    run(dest, "reset", "-q", "--hard", branch)
    # Neither names anything but the base commit here, but a cut repository holds no such
    # pointers at all (the audit checks for them).
    for name in ("FETCH_HEAD", "ORIG_HEAD"):
        (dest / ".git" / name).unlink(missing_ok=True)
    return dest


# ----------------------------------------------------------------------------- submodules


def gitlinks(repo: Path, rev: str) -> dict[str, str]:
    """The submodules ``rev``'s tree pins: ``{path: commit}`` (its gitlinks)."""
    out = run_exact(repo, "ls-tree", "-r", "-z", rev)
    links = {}
    for entry in out.split("\0"):
        meta, _, path = entry.partition("\t")
        mode, _, rest = meta.partition(" ")
        if mode == "160000":
            links[path] = rest.split(" ")[-1]
    return links


def gitmodules(repo: Path, rev: str) -> dict[str, dict[str, str]]:
    """``rev``'s ``.gitmodules``: ``{name: {"path": ..., "url": ..., ...}}`` (empty: none)."""
    try:
        out = run_exact(repo, "config", "-z", "--blob", f"{rev}:.gitmodules", "--list")
    except ToolError:
        return {}  # no .gitmodules at rev
    found: dict[str, dict[str, str]] = {}
    for entry in out.split("\0"):
        key, _, value = entry.partition("\n")
        if key.startswith("submodule."):
            name, _, var = key.removeprefix("submodule.").rpartition(".")
            found.setdefault(name, {})[var] = value
    return found


def add_submodule(dest: Path, path: str, name: str, url: str, bundle: Path, commit: str) -> None:
    """Check out the submodule ``name`` at ``path`` of the working repository ``dest``, at
    ``commit``, from ``bundle``, as ``git submodule update --init`` leaves it: its git
    directory in ``.git/modules/<name>`` (reached by relative paths, so the repository can
    be copied elsewhere), HEAD detached at ``commit``, its URL in ``.git/config``. No remote,
    ref or reflog from elsewhere."""
    gitdir = dest / ".git" / "modules" / name
    work = dest / path
    init(gitdir, bare=True)
    run(gitdir, "config", "core.bare", "false")
    run(gitdir, "config", "core.worktree", os.path.relpath(work, gitdir))
    run(gitdir, "config", "core.logAllRefUpdates", "false")
    run(gitdir, "fetch", "-q", "--no-tags", "--no-write-fetch-head", str(bundle), commit)
    run(gitdir, "update-ref", "--no-deref", "HEAD", commit)
    work.mkdir(parents=True, exist_ok=True)
    (work / ".git").write_text(f"gitdir: {os.path.relpath(gitdir, work)}\n")
    run(work, "reset", "-q", "--hard", commit)
    run(dest, "config", f"submodule.{name}.url", url)
    run(dest, "config", f"submodule.{name}.active", "true")


# ----------------------------------------------------------------------------- tags

TAG_NAME = re.compile(r"(?!.*(?:\.\.|//|/\.|@\{|\.lock/|\.lock$))[\w+=,@-][\w.+=,@/-]*(?<![/.])")
"""Tag names kept: git's rules (``git check-ref-format``) with fewer characters, so that a
name is safe in a path, a refspec and a shell word; another tag is left out."""


def object_types(repo: Path, shas: Iterable[str]) -> dict[str, str]:
    """``{sha: type}`` of the objects among ``shas`` that ``repo`` holds."""
    wanted = sorted(set(shas))
    if not wanted:
        return {}
    out = run(
        repo, "cat-file", "--batch-check=%(objectname) %(objecttype)", input="\n".join(wanted)
    )
    found = {}
    for line in out.splitlines():
        sha, _, kind = line.partition(" ")
        if kind != "missing":
            found[sha] = kind
    return found


def tags_on(repo: Path, commit: str) -> dict[str, str]:
    """The tags of ``repo`` on ``commit``'s history (naming it or an ancestor, through any tag
    objects), as ``{name: the object the tag names}``; names :data:`TAG_NAME` refuses are
    left out."""
    out = run(
        repo, "for-each-ref", f"--merged={commit}", "--format=%(objectname) %(refname:strip=2)",
        "refs/tags",
    )  # fmt: skip
    pairs = (line.split(" ", 1) for line in out.splitlines())
    return {name: sha for sha, name in pairs if TAG_NAME.fullmatch(name)}


def tags_at(repo: Path, commit: str, at: datetime, tags: Mapping[str, str]) -> dict[str, str]:
    """The tags of ``tags`` (``{name: object}``, in ``repo``) a cut at ``commit`` and T keeps:
    those that name a commit of ``commit``'s history (through any tag objects) and no tag
    object dated after T, whose date, tagger and message would carry the future. A
    lightweight tag names a commit of the history, dated before T already."""
    history = set(run(repo, "rev-list", commit).split())
    kept: dict[str, str] = {}
    with git.Repo(repo) as objects:
        for name, sha in sorted(tags.items()):
            try:
                obj = objects.rev_parse(sha)
                late = False
                while isinstance(obj, git.TagObject):
                    late = late or obj.tagged_date > at.timestamp()
                    obj = obj.object
            except (ValueError, git.BadName, git.BadObject) as exc:
                raise ToolError(f"tag {name}: {repo} does not hold {sha}") from exc
            if not late and obj.hexsha in history:
                kept[name] = sha
    return kept


def commit_count(repo: Path, rev: str = "HEAD") -> int:
    return int(run(repo, "rev-list", "--count", rev))


def commit_dates(repo: Path, rev: str = "HEAD") -> list[tuple[str, datetime]]:
    """``(sha, committer date)`` for every commit reachable from ``rev``, newest first."""
    return [(c.hexsha, c.committed_datetime) for c in git.Repo(repo).iter_commits(rev)]


# ----------------------------------------------------------------------------- shared stores

STORE_REFS = "refs/replay/"
"""Each commit added to a shared store keeps the ref ``refs/replay/<sha>``, so gc never
drops it, and it can be fetched by name without writing to the store."""


def resolve(repo: Path, ref: str) -> str | None:
    """The object ``ref`` names in ``repo``, or None (no such ref, or no repository)."""
    try:
        return run(repo, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}") or None
    except ToolError:
        return None


def store_has(store: Path, commit: str) -> bool:
    """Whether the bare repository ``store`` exists and holds the commit ``commit``."""
    if not (store / "HEAD").is_file():
        return False
    try:
        run(store, "cat-file", "-e", f"{commit}^{{commit}}")
    except ToolError:
        return False
    return True


@contextmanager
def _locked(store: Path) -> Iterator[None]:
    """Hold ``<store>.lock`` (beside the store, outside git's own lock files) exclusively."""
    lock = store.with_name(store.name + ".lock")
    lock.parent.mkdir(parents=True, exist_ok=True)
    with lock.open("a") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def store_add(store: Path, source: Path, commit: str, tags: Mapping[str, str] | None = None) -> str:
    """Add ``commit``'s history from the repository ``source`` to the shared bare ``store``,
    with the objects of ``tags`` (``{name: object}``, tags of ``source`` on that history).

    Creates the store if missing. Only objects and one ref per stored commit or tag object
    (:data:`STORE_REFS`) go in: no branches, tag names or reflogs (which tags a snapshot
    keeps is its manifest's to say). After a fetch the store is repacked into a single pack,
    so each object is held once (a fetched pack also carries copies of the delta bases it
    leans on). Several processes may add to one store at once: they take turns on
    ``<store>.lock``. Returns the commit's full SHA.
    """
    sha = run(source, "rev-parse", "--verify", f"{commit}^{{commit}}")
    ref = STORE_REFS + sha
    with _locked(store):
        if not (store / "HEAD").is_file():
            init(store, bare=True)
        fetched = False
        if resolve(store, ref) == sha:
            pass
        elif store_has(store, sha):
            # The history is there already (a later commit of the same line was stored).
            run(store, "update-ref", ref, sha)
        else:
            pinned = f"refs/replay-store/{os.getpid()}-{uuid.uuid4().hex}"
            run(source, "update-ref", pinned, sha)
            try:
                # No automatic gc in the middle (CONFIG): the repack below is the only one.
                _fetch(store, source, [f"{sha}:{ref}"])
            finally:
                run(source, "update-ref", "-d", pinned)
            fetched = True
        # A lightweight tag's commit is on the history, now stored; a tag object is fetched
        # by its id, which its tag names in ``source``.
        wanted = sorted(
            set((tags or {}).values()) - set(object_types(store, (tags or {}).values()))
        )
        if wanted:
            _fetch(store, source, [f"{t}:{STORE_REFS}{t}" for t in wanted])
            fetched = True
        if fetched:
            stats = dict(
                line.split(": ", 1) for line in run(store, "count-objects", "-v").splitlines()
            )
            if int(stats["count"]) or int(stats["packs"]) > 1:
                run(store, "repack", "-a", "-d", "-q")
    return sha


def _fetch(dest: Path, source: Path, refspecs: list[str], *, loose: bool = False) -> None:
    """Fetch ``refspecs`` from ``source``: no tags followed, no FETCH_HEAD; with ``loose``
    every object is unpacked (no pack kept from the other side)."""
    unpack = ["-c", "transfer.unpackLimit=2147483647"] if loose else []
    fetch = ["fetch", "-q", "--no-tags", "--no-write-fetch-head", str(source), *refspecs]
    try:
        run(dest, *unpack, *fetch)
    except ToolError as exc:
        missing = MISSING_OBJECT.search(str(exc))
        if missing is None:
            raise
        raise ToolError(
            f"the repository {source} lacks object {missing[1]}, which the history to copy "
            "holds (an incomplete clone or mirror; `git fsck --connectivity-only` there names "
            "every object missing): the history cannot be copied whole. Fetch the repository "
            f"again from its origin and create the case again (git said: {exc})"
        ) from exc


MISSING_OBJECT = re.compile(r"(?:unable to read|missing (?:blob|tree|commit)) ([0-9a-f]{40})")
"""How git names an object a repository should hold and does not."""
