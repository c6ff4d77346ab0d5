"""Snapshots: the world as it stood at T, in a directory whose every part is hashed."""

from __future__ import annotations

from replay.snapshot.build import build_snapshot
from replay.snapshot.load import Snapshot, load_snapshot
from replay.snapshot.manifest import Manifest

__all__ = ["Manifest", "Snapshot", "build_snapshot", "load_snapshot"]
