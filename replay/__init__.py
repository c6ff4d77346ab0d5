"""replay: a frozen-internet replay sandbox for evaluating coding agents.

The public surface: the case and snapshot formats and the functions that load them, the
results store, and the project's errors. Everything else lives in modules named for what
they hold.
"""

from __future__ import annotations

__version__ = "0.1.0"

from replay.case import Case, SideEffectRule, load_case
from replay.errors import CaseError, InputError, ReplayError, SnapshotError, SourcesError, ToolError
from replay.snapshot import Manifest, Snapshot, build_snapshot, load_snapshot

__all__ = [
    "Case",
    "CaseError",
    "InputError",
    "Manifest",
    "ReplayError",
    "SideEffectRule",
    "Snapshot",
    "SnapshotError",
    "SourcesError",
    "ToolError",
    "__version__",
    "build_snapshot",
    "load_case",
    "load_snapshot",
]
