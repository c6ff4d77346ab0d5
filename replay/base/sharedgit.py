"""Shared git object stores: each repository's history stored once, for every snapshot of it.

A snapshot's repository given as ``objects`` lives in a bare repository under the blob store
root, ``git/<owner>/<name>.git``, which holds the histories of every snapshot cut from that
repository (so later commits than this snapshot's base too). The store never reaches a
restore: :func:`materialise` cuts from it a bundle of exactly the base commit's history and
the tags the snapshot keeps (:func:`replay.base.gitrepo.bundle_create`, deterministic), cached
under ``git-bundles/<owner>/<name>/<base>/<branch>[-<tags digest>].bundle`` beside it, and
everything downstream
(restores, the fakes' git server, the leak audit) reads that bundle, as it reads a
snapshot's own bundle. The blob store must therefore travel with such a snapshot.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Mapping
from pathlib import Path

from replay.base import gitrepo
from replay.base.blobs import default_root
from replay.base.errors import SnapshotError, ToolError
from replay.base.manifest import RepositoryPart

BUNDLES = "git-bundles"


def blob_root(blobs: Path | str | None = None) -> Path:
    """``blobs``, else the blob store's default root (``$REPLAY_BLOBS`` or snapshots/blobs)."""
    if blobs is not None:
        return Path(blobs).resolve()
    return default_root().resolve()


def store_name(repo: str) -> str:
    """The store of the repository ``owner/name``, relative to the blob store root."""
    owner, name = repo.split("/")
    return f"git/{owner}/{name}.git"


def share(
    root: Path, source: Path, commit: str, repo: str, tags: Mapping[str, str] | None = None
) -> tuple[str, str]:
    """Add ``commit``'s history in ``source`` to ``repo``'s store under ``root``, with the
    objects of ``tags`` (``{name: object}``, tags of ``source`` on that history).

    Returns ``(objects, sha)``: the store's name for the manifest and the commit's full SHA.
    """
    name = store_name(repo)
    return name, gitrepo.store_add(root / name, source, commit, tags)


def check(root: Path, part: RepositoryPart, manifest: Path) -> None:
    """Raise :class:`SnapshotError` unless ``part``'s store holds its base commit.

    Git object ids are content hashes: a store holding the commit holds exactly its history.
    """
    assert part.objects is not None
    store = root / part.objects
    if gitrepo.store_has(store, part.base_commit):
        return
    if (store / "HEAD").is_file():
        problem = f"the shared git store {store} does not hold base commit {part.base_commit}"
    else:
        problem = f"no shared git store {store} (for base commit {part.base_commit})"
    raise SnapshotError(
        manifest,
        f"{part.name}: {problem}; the blob store (--blobs, $REPLAY_BLOBS) must travel "
        "with the snapshot",
        "repositories",
    )


def bundle_path(root: Path, part: RepositoryPart) -> Path:
    """Where the bundle of ``part``'s base history (and tags) is cached under the blob store
    root: snapshots of one base at different T may keep different tags."""
    assert part.objects is not None
    repo = part.objects.removeprefix("git/").removesuffix(".git")
    name = part.default_branch
    if part.tags:
        listed = "".join(f"{tag} {sha}\n" for tag, sha in sorted(part.tags.items()))
        name += "-" + hashlib.sha256(listed.encode()).hexdigest()[:16]
    return root / BUNDLES / repo / part.base_commit / f"{name}.bundle"


def materialise(root: Path, part: RepositoryPart, manifest: Path) -> Path:
    """A bundle of exactly ``part``'s base history on its default branch and its tags, cut
    from the store.

    Made once per store, base commit and tags, written atomically; a cached bundle whose refs
    are not exactly the base on the default branch and the tags is made again.
    """
    check(root, part, manifest)
    assert part.objects is not None
    store = root / part.objects
    out = bundle_path(root, part)
    wanted = bundle_refs(part)
    if out.is_file():
        try:
            if gitrepo.bundle_heads(out) == wanted:
                return out
        except ToolError:
            pass  # unreadable: made again below
    # The store's refs/replay/<sha> makes the commit fetchable without writing to the store.
    pinned = gitrepo.resolve(store, gitrepo.STORE_REFS + part.base_commit) == part.base_commit
    try:
        gitrepo.bundle_create(
            store, out, part.base_commit, part.default_branch, tags=part.tags, pin=not pinned
        )
    except ToolError as exc:
        raise SnapshotError(
            manifest,
            f"{part.name}: cannot cut base commit {part.base_commit}'s history from the shared "
            f"git store {store}: {exc}",
            "repositories",
        ) from exc
    return out


def bundle_refs(part: RepositoryPart) -> dict[str, str]:
    """The refs a restore's bundle of ``part`` carries, exactly: ``{ref: object}``."""
    return {
        f"refs/heads/{part.default_branch}": part.base_commit,
        **{f"refs/tags/{name}": sha for name, sha in part.tags.items()},
    }


def prune_bundles(root: Path, older_than: float) -> list[Path]:
    """Remove the cached bundles under ``root`` not written for ``older_than`` seconds.

    They are only a cache: :func:`materialise` makes one again from its store when a snapshot
    needs it. The age spares the bundle a run that is starting now has just been given.
    """
    cache = root / BUNDLES
    if not cache.is_dir():
        return []
    now = time.time()
    removed = []
    for path in sorted(cache.rglob("*.bundle")):
        if now - path.stat().st_mtime >= older_than:
            path.unlink(missing_ok=True)
            removed.append(path)
    for folder in sorted((d for d in cache.rglob("*") if d.is_dir()), reverse=True):
        if not any(folder.iterdir()):
            folder.rmdir()
    return removed


__all__ = [
    "BUNDLES",
    "blob_root",
    "bundle_path",
    "bundle_refs",
    "check",
    "materialise",
    "prune_bundles",
    "share",
    "store_name",
]
