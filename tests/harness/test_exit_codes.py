"""A harness's exit status means what its spec declares, and only that, to the grader."""

from __future__ import annotations

import pytest

from replay.base.outcomes import Outcome
from replay.grade import Grade, RunToGrade
from replay.grade.hidden_tests import Grading
from replay.harness.spec import ExitCodes, load_harness
from tests.grade.test_grader import hidden, passing, regrade, run

__all__ = ["hidden", "run"]

TRANSPORT_CLAIM = "the harness reported a transport failure the gateway never saw"
PROTOCOL_CLAIM = "the harness reported a protocol failure the gateway never saw"


def graded(
    run: RunToGrade, hidden: list[Grading | Exception], status: int, codes: ExitCodes
) -> Grade:
    """``run`` ended by a harness exiting ``status``, with ``codes`` declared (tests pass)."""
    hidden.append(passing(run.case))
    return regrade(run, harness_exit=status, exit_codes=codes)


def test_the_reference_specs_codes_drive_the_classification(
    run: RunToGrade, hidden: list[Grading | Exception]
) -> None:
    codes = load_harness("reference")[0].exit_codes
    transport = graded(run, hidden, 4, codes)
    assert transport.outcome is Outcome.PASS and transport.harness_claims == [TRANSPORT_CLAIM]
    protocol = graded(run, hidden, 5, codes)
    assert protocol.outcome is Outcome.PASS and protocol.harness_claims == [PROTOCOL_CLAIM]
    plain = graded(run, hidden, 3, codes)
    assert plain.outcome is Outcome.PASS and plain.harness_claims == []


@pytest.mark.parametrize("harness", ["mini-swe-agent"])
def test_a_spec_that_declares_nothing_claims_nothing(
    harness: str, run: RunToGrade, hidden: list[Grading | Exception]
) -> None:
    codes = load_harness(harness)[0].exit_codes
    for status in (4, 5):
        grade = graded(run, hidden, status, codes)
        assert grade.outcome is Outcome.PASS and grade.harness_claims == [], status


def test_other_codes_mean_what_the_spec_says(
    run: RunToGrade, hidden: list[Grading | Exception]
) -> None:
    codes = ExitCodes(transport=70, protocol=71)
    assert graded(run, hidden, 70, codes).harness_claims == [TRANSPORT_CLAIM]
    assert graded(run, hidden, 71, codes).harness_claims == [PROTOCOL_CLAIM]
    for status in (4, 5):
        grade = graded(run, hidden, status, codes)
        assert grade.outcome is Outcome.PASS and grade.harness_claims == [], status
