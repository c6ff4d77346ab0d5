"""A case's strength: the share of plausible wrong fixes its hidden tests reject.

Calibration shows a case can be passed (the gold patch passes) and is not passed by doing
nothing (the idle run fails); it does not show that a wrong or partial fix fails. Here the
gold patch is turned into wrong fixes (mutants of its lines, partial fixes, overfits to the
ticket's examples), each graded exactly as a run's diff is, and the case is strong when its
hidden tests reject enough of them and accept no partial fix. ``docs/strength.md`` says how
and why.
"""

from __future__ import annotations

from replay.strength.engine import (
    Graded,
    Ready,
    StrengthOptions,
    grade_diff,
    judge,
    measure_strength,
    ready_image,
)
from replay.strength.model import STRENGTH_VERSION, CaseStrength, WrongFixResult
from replay.strength.render import report_lines
from replay.strength.tree import StrengthError

__all__ = [
    "STRENGTH_VERSION",
    "CaseStrength",
    "Graded",
    "Ready",
    "StrengthError",
    "StrengthOptions",
    "WrongFixResult",
    "grade_diff",
    "judge",
    "measure_strength",
    "ready_image",
    "report_lines",
]
