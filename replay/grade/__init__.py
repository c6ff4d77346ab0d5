"""Grading a run: hidden tests (JUnit XML and exit status), side effects, and the outcome."""

from __future__ import annotations

from replay.grade.junit import GuardReport, TestVerdict, judge, parse_junit
from replay.grade.outcome import Evidence, Outcome, classify
from replay.grade.sideeffects import SideEffectVerdict, judge_side_effects

__all__ = [
    "Evidence",
    "GuardReport",
    "Outcome",
    "SideEffectVerdict",
    "TestVerdict",
    "classify",
    "judge",
    "judge_side_effects",
    "parse_junit",
]
