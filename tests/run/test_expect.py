"""``replay run --expect``: only the five outcomes are accepted, before any run starts."""

from __future__ import annotations

import pytest

from replay.base.outcomes import Outcome
from replay.cli.run import _expectations
from tests.cli_helpers import run_cli


def test_expectations_parse_into_outcomes() -> None:
    assert _expectations(["pass", "cheat=model_fail"]) == {
        "*": Outcome.PASS,
        "cheat": Outcome.MODEL_FAIL,
    }


def test_an_unknown_outcome_is_a_usage_error_before_any_run(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # A typo would otherwise expect an outcome no run can have, and fail every run after
    # minutes of work (or, compared as a string, mislead).
    done = run_cli(capsys, "run", "no-such-case.yaml", "--expect", "gold=passed")
    assert done.code == 2, done
    assert "'passed' is not an outcome" in done.err
    assert all(o.value in done.err for o in Outcome)  # the box may wrap the list
