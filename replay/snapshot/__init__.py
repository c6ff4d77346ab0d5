"""Snapshots: the world as it stood at T, in a directory whose every part is hashed.

The format (manifest, services' state) and its loader are the base layer's
(``replay.base.manifest``, ``replay.base.worldstate``, ``replay.base.snapshot``); this package
builds, audits, edits and inspects snapshots.
"""

from __future__ import annotations

from replay.base.manifest import Manifest
from replay.base.snapshot import Snapshot, load_snapshot
from replay.snapshot.build import build_snapshot

__all__ = ["Manifest", "Snapshot", "build_snapshot", "load_snapshot"]
