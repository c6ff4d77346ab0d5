"""Loading a snapshot directory: every part present, every hash checked, every file valid."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from replay.base import sharedgit as shared
from replay.base.errors import InputError, SnapshotError
from replay.base.formats import load_model, parse_json, read_text, validate_data
from replay.base.manifest import (
    MANIFEST,
    DocsIndex,
    Manifest,
    RegistryIndex,
    RepositoryPart,
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


def list_files(root: Path) -> list[str]:
    """Every regular file under ``root`` except the manifest, as sorted relative paths."""
    return sorted(
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if p.is_file() and p.relative_to(root).as_posix() != MANIFEST
    )


def verify_parts(root: Path, manifest: Manifest) -> None:
    where = root / MANIFEST
    present = set(list_files(root))
    for name, digest in sorted(manifest.parts.items()):
        if name not in present:
            raise SnapshotError(root / name, "missing: listed in the manifest but not present")
        actual = sha256_file(root / name)
        if actual != digest:
            raise SnapshotError(
                root / name,
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


def _load_part(root: Path, name: str, model: type[Any]) -> Any:
    path = root / name
    return validate_data(path, parse_json(path, read_text(path)), model)


def load_snapshot(path: Path | str, blobs: Path | str | None = None) -> Snapshot:
    """Read and verify a snapshot directory.

    Shared parts are read from the blob store root ``blobs`` (default: ``$REPLAY_BLOBS`` or
    snapshots/blobs); a repository kept there must have its base commit in its store.
    Raises :class:`SnapshotError` for a missing or altered part and :class:`InputError` for a
    malformed file, each naming the file and the problem.
    """
    root = Path(path).resolve()
    if not root.is_dir():
        raise SnapshotError(root, "not a snapshot directory (no such directory)")
    try:
        manifest = load_model(root / MANIFEST, Manifest)
    except InputError as exc:
        raise SnapshotError(exc.path, exc.problem, exc.field) from exc
    verify_parts(root, manifest)
    store_root = shared.blob_root(blobs)
    for repo in manifest.repositories:
        if repo.objects is not None:
            shared.check(store_root, repo, root / MANIFEST)
    missing = {"github", "linear", "slack"} - set(manifest.services)
    if missing:
        raise SnapshotError(root / MANIFEST, f"no state for {sorted(missing)}", "services")
    states = {
        svc: _load_part(root, name, SERVICE_MODELS[svc]) for svc, name in manifest.services.items()
    }
    registry = (
        _load_part(root, manifest.registry, RegistryIndex)
        if manifest.registry
        else RegistryIndex(schema=1)
    )
    docs = _load_part(root, manifest.docs, DocsIndex) if manifest.docs else DocsIndex(schema=1)
    return Snapshot(
        root,
        manifest,
        states["github"],
        states["linear"],
        states["slack"],
        registry,
        docs,
        store_root,
    )


__all__ = ["Snapshot", "list_files", "load_snapshot", "sha256_file", "verify_parts"]
