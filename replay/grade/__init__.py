"""Grading a run end to end: the wire, hidden tests (JUnit XML and exit status), side effects,
the outcome, and the typed ``grade.json`` (:class:`Grade`) that every reader goes through."""

from __future__ import annotations

from replay.grade.grader import RunToGrade, grade_run
from replay.grade.junit import GuardRecord, TestVerdict, judge, parse_junit
from replay.grade.model import GRADE_VERSION, Grade, load_grade, parse_grade
from replay.grade.outcome import Evidence, classify
from replay.grade.sideeffects import SideEffectVerdict, judge_side_effects
from replay.grade.wire import WireSummary, summarize_wire

__all__ = [
    "GRADE_VERSION",
    "Evidence",
    "Grade",
    "GuardRecord",
    "RunToGrade",
    "SideEffectVerdict",
    "TestVerdict",
    "WireSummary",
    "classify",
    "grade_run",
    "judge",
    "judge_side_effects",
    "load_grade",
    "parse_grade",
    "parse_junit",
    "summarize_wire",
]
