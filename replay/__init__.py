"""replay: a frozen-internet replay sandbox for evaluating coding agents.

The public surface: the case and snapshot formats and the functions that load them, and the
project's errors, all from the base layer (``replay.base``), since every import of the base
runs this file. Building snapshots is ``replay.snapshot.build_snapshot``; the results store is
``replay.results``. Everything else lives in modules named for what they hold.
"""

from __future__ import annotations

__version__ = "0.1.0"

from replay.base.case import Case, EndStateRule, SideEffectRule, load_case
from replay.base.errors import (
    CaseError,
    InputError,
    ReplayError,
    SnapshotError,
    SourcesError,
    ToolError,
)
from replay.base.manifest import Manifest
from replay.base.snapshot import Snapshot, load_snapshot

__all__ = [
    "Case",
    "CaseError",
    "EndStateRule",
    "InputError",
    "Manifest",
    "ReplayError",
    "SideEffectRule",
    "Snapshot",
    "SnapshotError",
    "SourcesError",
    "ToolError",
    "__version__",
    "load_case",
    "load_snapshot",
]
