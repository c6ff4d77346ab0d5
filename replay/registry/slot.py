"""Writing a snapshot's registry slot: ``registry/index.json`` and its hash in the manifest."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from replay.base.blobs import BlobError, BlobStore
from replay.base.formats import dump_json
from replay.base.manifest import MANIFEST, RegistryIndex
from replay.base.snapshot import load_snapshot, sha256_file

INDEX = "registry/index.json"


def _write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def dump_index(index: RegistryIndex) -> str:
    return dump_json(index.model_dump(mode="json", by_alias=True))


def read_index(snapshot_dir: Path) -> RegistryIndex:
    """The snapshot's registry index (the snapshot is verified first)."""
    return load_snapshot(snapshot_dir).registry


def write_index(snapshot_dir: Path, index: RegistryIndex) -> Path:
    """Replace the snapshot's registry index and record its hash in the manifest.

    The snapshot is verified before anything is written; the index is written before the
    manifest, each atomically, so an interrupted write leaves a snapshot that fails its
    hash check rather than one that silently lies.
    """
    snapshot = load_snapshot(snapshot_dir)
    name = snapshot.manifest.registry or INDEX
    _write_atomic(snapshot_dir / name, dump_index(index))
    parts = dict(snapshot.manifest.parts)
    parts[name] = sha256_file(snapshot_dir / name)
    manifest = snapshot.manifest.model_copy(update={"registry": name, "parts": parts})
    _write_atomic(
        snapshot_dir / MANIFEST, dump_json(manifest.model_dump(mode="json", by_alias=True))
    )
    return snapshot_dir / name


def check_blobs(index: RegistryIndex, blobs: BlobStore) -> list[str]:
    """One line per file the index names whose blob is missing or corrupt (empty: all good)."""
    wanted: dict[str, str] = {}
    for f in index.python:
        wanted.setdefault(f.sha256, f.filename)
        if f.metadata_sha256:
            wanted.setdefault(f.metadata_sha256, f"{f.filename}.metadata")
    for v in index.npm:
        wanted.setdefault(v.tarball_sha256, f"{v.package}@{v.version}")
    problems = []
    for sha, what in sorted(wanted.items(), key=lambda kv: kv[1]):
        try:
            blobs.verified_path(sha)
        except BlobError as exc:
            problems.append(f"registry: {what}: {exc}")
    return problems


__all__ = ["INDEX", "check_blobs", "dump_index", "read_index", "write_index"]
