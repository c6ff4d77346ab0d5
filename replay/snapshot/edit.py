"""Changing a snapshot in place: write one part, then re-record its hash in the manifest.

Used by the recorders (registry, docs) that fill a snapshot's slots after it was cut. The
snapshot is verified first, so a corrupt one is never re-hashed into looking valid.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from replay.base.formats import dump_json
from replay.base.manifest import MANIFEST
from replay.base.snapshot import load_snapshot, sha256_file

Slot = Literal["registry", "docs"]


def write_part(
    root: Path, name: str, data: bytes, slot: Slot | None = None, *, blobs: Path | None = None
) -> None:
    """Write ``name`` under the snapshot ``root`` and record it (as ``slot``'s index if given).

    ``blobs``: the blob store root the snapshot's shared parts are in (default: the default).
    """
    root = root.resolve()
    snapshot = load_snapshot(root, blobs)
    target = root / name
    target.parent.mkdir(parents=True, exist_ok=True)
    _atomic_write(target, data)
    manifest = snapshot.manifest.model_dump(mode="json", by_alias=True)
    manifest["parts"][name] = sha256_file(target)
    if slot is not None:
        old = manifest.get(slot)
        if old and old != name:
            manifest["parts"].pop(old, None)
            (root / old).unlink(missing_ok=True)
        manifest[slot] = name
    _atomic_write(root / MANIFEST, dump_json(manifest).encode())
    load_snapshot(root, blobs)  # the result must verify, or we made a broken snapshot


def _atomic_write(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)
