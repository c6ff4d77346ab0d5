"""Loading a snapshot directory: every part present, every hash checked, every file valid."""

from __future__ import annotations

import hashlib
import os
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from replay.base import gitrepo
from replay.base import sharedgit as shared
from replay.base.blobs import ENV as BLOBS_ENV
from replay.base.errors import InputError, SnapshotError
from replay.base.formats import load_model, parse_json, validate_data
from replay.base.manifest import (
    MANIFEST,
    DocsIndex,
    Manifest,
    RegistryIndex,
    RepositoryPart,
    Submodule,
)
from replay.base.worldstate import SERVICE_MODELS, GitHubState, LinearState, SlackState


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@dataclass(frozen=True)
class Snapshot:
    """A verified snapshot: the manifest and the parsed world state of each service."""

    path: Path
    manifest: Manifest
    github: GitHubState
    linear: LinearState
    slack: SlackState
    registry: RegistryIndex
    docs: DocsIndex
    blobs: Path
    """The blob store root its shared parts (git stores, package files) are read from."""

    @property
    def at(self) -> datetime:
        return self.manifest.at

    def part(self, name: str) -> Path:
        return self.path / name

    def repository(self, repo: str) -> RepositoryPart:
        for r in self.manifest.repositories:
            if r.name == repo:
                return r
        known = ", ".join(r.name for r in self.manifest.repositories)
        raise SnapshotError(self.path / MANIFEST, f"no repository {repo!r} (has: {known})")

    def bundle(self, repo: str) -> Path:
        """A bundle of exactly ``repo``'s base history: what every restore is made from.

        The snapshot's own bundle part, or one cut from the shared store (and cached there).
        """
        part = self.repository(repo)
        if part.bundle is not None:
            return self.part(part.bundle)
        return shared.materialise(self.blobs, part, self.path / MANIFEST)

    def restore(self, repo: str, dest: Path) -> Path:
        """A fresh working repository of ``repo`` at ``dest``, as a workspace gets it: the
        base commit checked out on the default branch, with the snapshot's tags and its
        submodules checked out at their pinned commits."""
        part = self.repository(repo)
        gitrepo.checkout_from_bundle(
            self.bundle(repo), part.base_commit, dest, part.default_branch, part.tags
        )
        for sub in part.submodules:
            bundle = self.submodule_bundle(sub)
            gitrepo.add_submodule(dest, sub.path, sub.name, sub.url, bundle, sub.commit)
        return dest

    def submodule_bundle(self, sub: Submodule) -> Path:
        """A bundle of exactly the history of the commit a submodule is pinned at."""
        return shared.materialise(self.blobs, sub.as_part(), self.path / MANIFEST)


def list_files(root: Path) -> list[str]:
    """Every regular file under ``root`` except the manifest, as sorted relative paths.

    (What ``root.rglob("*")`` filtered by ``is_file()`` gives: files, symlinks to files,
    dot-files; symlinked directories are not entered.)
    """
    found: list[str] = []
    _scan(os.fspath(root), "", found)
    found.sort()
    return found


def _scan(directory: str, prefix: str, found: list[str]) -> None:
    try:
        with os.scandir(directory) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    _scan(entry.path, f"{prefix}{entry.name}/", found)
                elif entry.is_file():
                    name = prefix + entry.name
                    if name != MANIFEST:
                        found.append(name)
    except PermissionError:
        pass  # as rglob: an unreadable directory lists nothing


# ---------------------------------------------------------------- each content hashed once
#
# A part's sha256 is taken from its bytes once, and reused while the file is provably the one
# that was hashed: the same device, inode, size, mtime and ctime (ctime cannot be set back by
# any tool: an edit in place, a copy over it, a rename onto it or a restored mtime all change
# one of them). A file whose timestamps are within RACY_NS of the moment it was hashed could
# still change within the filesystem's timestamp granularity without changing them (git's
# "racily clean" files): it is hashed again on every load until it is older than that.

RACY_NS = 2_000_000_000
"""Changes this close to a hash are not trusted to show in the timestamps (FAT's 2 s is the
coarsest granularity in common use; Linux's own filesystems tick in milliseconds)."""

_Stamp = tuple[int, int, int, int, int]


@dataclass(frozen=True)
class _Hashed:
    stamp: _Stamp
    digest: str
    at: int
    """time.time_ns() just before the bytes were read."""


_hashed: dict[str, _Hashed] = {}
_hashed_lock = threading.Lock()
_HASHED_MAX = 4096


def _stamp(st: os.stat_result) -> _Stamp:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _known_digest(path: str) -> str | None:
    """The sha256 of ``path`` hashed earlier, if the file is provably unchanged since."""
    seen = _hashed.get(path)
    if seen is None:
        return None
    st = os.stat(path)
    stamp = _stamp(st)
    if stamp != seen.stamp or max(st.st_mtime_ns, st.st_ctime_ns) + RACY_NS >= seen.at:
        return None
    return seen.digest


def _hash(path: str, keep: bool) -> tuple[bytes | None, str]:
    """The sha256 of ``path`` (and, with ``keep``, its bytes: else it is streamed),
    remembered for :func:`_known_digest`."""
    at = time.time_ns()
    with open(path, "rb") as fh:
        before = _stamp(os.fstat(fh.fileno()))
        data: bytes | None = None
        if keep:
            data = read = fh.read()
            digest = hashlib.sha256(read).hexdigest()
        else:
            digest = hashlib.file_digest(fh, "sha256").hexdigest()
    if _stamp(os.stat(path)) == before:  # not changed while it was read
        with _hashed_lock:
            if len(_hashed) >= _HASHED_MAX:
                _hashed.clear()
            _hashed[path] = _Hashed(before, digest, at)
    return data, digest


def _read_parts(root: Path, manifest: Manifest, parsed: frozenset[str]) -> dict[str, bytes]:
    """Check every part against the manifest: present, hashed as listed, nothing unlisted.

    Each part is read once: its hash is taken from the bytes read, and the bytes of the
    parts named in ``parsed`` are returned for parsing.
    """
    where = root / MANIFEST
    present = set(list_files(root))
    kept: dict[str, bytes] = {}
    for name, digest in sorted(manifest.parts.items()):
        if name not in present:
            raise SnapshotError(root / name, "missing: listed in the manifest but not present")
        path = root / name
        if name in parsed:
            data, actual = _hash(str(path), keep=True)
            assert data is not None
            kept[name] = data
        else:
            actual = _known_digest(str(path)) or _hash(str(path), keep=False)[1]
        if actual != digest:
            raise SnapshotError(
                path,
                f"hash mismatch: manifest says sha256 {digest[:12]}..., file has {actual[:12]}...",
            )
    extra = sorted(present - set(manifest.parts))
    if extra:
        raise SnapshotError(root / extra[0], "not listed in the manifest's parts")
    referenced = [r.bundle for r in manifest.repositories if r.bundle is not None]
    referenced += list(manifest.services.values())
    referenced += [p for p in (manifest.registry, manifest.docs) if p]
    for name in referenced:
        if name not in manifest.parts:
            raise SnapshotError(where, f"{name} is referenced but has no hash in parts", "parts")
    return kept


def verify_parts(root: Path, manifest: Manifest) -> None:
    """Raise :class:`SnapshotError` unless every part is present, unaltered and listed."""
    _read_parts(root, manifest, frozenset())


def _unchanged(snapshot: Snapshot) -> bool:
    """Whether the files of a snapshot loaded earlier are still exactly its parts: the
    directory lists no file more or less, and each part still has its manifest's sha256
    (remembered while its file is provably unchanged, else hashed from its bytes again)."""
    root = str(snapshot.path)
    parts = snapshot.manifest.parts
    try:
        if list_files(snapshot.path) != sorted(parts):
            return False
        for name, digest in parts.items():
            path = os.path.join(root, name)
            if (_known_digest(path) or _hash(path, keep=False)[1]) != digest:
                return False
    except OSError:
        return False
    return True


# ------------------------------------------------------------- parsed once per manifest

_LOADED_MAX = 16
_LOADED_BYTES = 64 << 20
"""At most this many bytes of parsed JSON kept parsed (the least recently loaded go first);
a snapshot larger than that alone is parsed on every load."""
_loaded: OrderedDict[tuple[str, str, str], tuple[Snapshot, int]] = OrderedDict()
_loaded_lock = threading.Lock()


def _parse_part(path: Path, data: bytes, model: type[Any]) -> Any:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(path, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    return validate_data(path, parse_json(path, text), model)


def load_snapshot(path: Path | str, blobs: Path | str | None = None) -> Snapshot:
    """Read and verify a snapshot directory.

    Shared parts are read from the blob store root ``blobs`` (default: ``$REPLAY_BLOBS`` or
    snapshots/blobs); a repository kept there must have its base commit in its store.
    Raises :class:`SnapshotError` for a missing or altered part and :class:`InputError` for a
    malformed file, each naming the file and the problem.

    Every call checks every part. A snapshot is parsed once per manifest (keyed by the
    manifest's own sha256, which pins every part's) and the result handed to the later calls
    whose parts still match it; each part is hashed once per content (see :data:`RACY_NS`).
    Anything that does not match is loaded afresh and reported as before. The result may be
    shared between callers: treat it as read-only (its models are frozen).
    """
    root = Path(path).resolve()
    if not root.is_dir():
        raise SnapshotError(root, "not a snapshot directory (no such directory)")
    store_root = _store_root(blobs)
    where = root / MANIFEST
    try:
        raw: bytes | None = where.read_bytes()
    except OSError:
        raw = None  # reported by load_model below, as it always was
    key = (str(root), hashlib.sha256(raw).hexdigest() if raw is not None else "", str(store_root))
    if raw is not None:
        with _loaded_lock:
            entry = _loaded.get(key)
            hit = entry[0] if entry is not None else None
        if hit is not None and _unchanged(hit):
            _check_stores(root, hit.manifest, store_root)
            return hit
    try:
        manifest = (
            _parse_part(where, raw, Manifest) if raw is not None else load_model(where, Manifest)
        )
    except InputError as exc:
        raise SnapshotError(exc.path, exc.problem, exc.field) from exc
    parsed = set(manifest.services.values())
    parsed.update(p for p in (manifest.registry, manifest.docs) if p)
    data = _read_parts(root, manifest, frozenset(parsed))
    _check_stores(root, manifest, store_root)
    missing = {"github", "linear", "slack"} - set(manifest.services)
    if missing:
        raise SnapshotError(root / MANIFEST, f"no state for {sorted(missing)}", "services")
    states = {
        svc: _parse_part(root / name, data[name], SERVICE_MODELS[svc])
        for svc, name in manifest.services.items()
    }
    registry = (
        _parse_part(root / manifest.registry, data[manifest.registry], RegistryIndex)
        if manifest.registry
        else RegistryIndex(schema=1)
    )
    docs = (
        _parse_part(root / manifest.docs, data[manifest.docs], DocsIndex)
        if manifest.docs
        else DocsIndex(schema=1)
    )
    snapshot = Snapshot(
        root,
        manifest,
        states["github"],
        states["linear"],
        states["slack"],
        registry,
        docs,
        store_root,
    )
    if raw is not None:  # the manifest and every part parsed from the very bytes hashed
        with _loaded_lock:
            _loaded[key] = (snapshot, len(raw) + sum(len(b) for b in data.values()))
            _loaded.move_to_end(key)
            while len(_loaded) > _LOADED_MAX or sum(n for _, n in _loaded.values()) > _LOADED_BYTES:
                _loaded.popitem(last=False)
    return snapshot


_store_roots: dict[tuple[str, str | None, str | None], Path] = {}


def _store_root(blobs: Path | str | None) -> Path:
    """:func:`replay.base.sharedgit.blob_root`, resolved once per working directory and
    whatever names the root (``blobs``, else ``$REPLAY_BLOBS``, else the package's default)."""
    key = (os.getcwd(), None if blobs is None else os.fspath(blobs), os.environ.get(BLOBS_ENV))
    found = _store_roots.get(key)
    if found is None:
        found = shared.blob_root(blobs)
        if len(_store_roots) < 256:
            _store_roots[key] = found
    return found


def _check_stores(root: Path, manifest: Manifest, store_root: Path) -> None:
    for repo in manifest.repositories:
        if repo.objects is not None:
            shared.check(store_root, repo, root / MANIFEST)
        for sub in repo.submodules:
            shared.check(store_root, sub.as_part(), root / MANIFEST)


__all__ = ["Snapshot", "list_files", "load_snapshot", "sha256_file", "verify_parts"]
