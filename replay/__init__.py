"""replay: a frozen-internet replay sandbox for evaluating coding agents.

The public surface: the case and snapshot formats and the functions that load them, and the
project's errors, all from the base layer (``replay.base``). They are loaded when first asked
for (PEP 562), since every import of any part of the project runs this file: the command
line's help must not wait for the formats' models. Building snapshots is
``replay.snapshot.build_snapshot``; the results store is ``replay.results``. Everything else
lives in modules named for what they hold.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS = {
    "Case": "replay.base.case",
    "EndStateRule": "replay.base.case",
    "SideEffectRule": "replay.base.case",
    "load_case": "replay.base.case",
    "CaseError": "replay.base.errors",
    "InputError": "replay.base.errors",
    "ReplayError": "replay.base.errors",
    "SnapshotError": "replay.base.errors",
    "SourcesError": "replay.base.errors",
    "ToolError": "replay.base.errors",
    "Manifest": "replay.base.manifest",
    "Snapshot": "replay.base.snapshot",
    "load_snapshot": "replay.base.snapshot",
}

if TYPE_CHECKING:
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


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'replay' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


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
