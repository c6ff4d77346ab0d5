"""A test command that crashes before running any test (no JUnit report) is named, with the
end of its output, in the grading; against the real Docker engine, on the demo case's
environment image."""

from __future__ import annotations

import uuid

from replay.base.case import load_case
from replay.grade.hidden_tests import grade_hidden_tests
from replay.runtime.base import Runtime
from tests.run.conftest import CARET


def test_a_test_command_that_writes_no_report_is_named_with_its_last_lines(
    caret_env: tuple[Runtime, str],
) -> None:
    runtime, image = caret_env
    case = load_case(CARET)
    command = "python -m pytest -q -p replay_no_such_plugin --junitxml={junit}"
    broken = case.model_copy(
        update={
            "hidden_tests": case.hidden_tests.model_copy(update={"command": command, "repeat": 2})
        }
    )
    gold = case.gold.patch.read_text()
    grading = grade_hidden_tests(runtime, image, broken, gold, f"output-{uuid.uuid4().hex[:8]}")
    assert grading.reports == [None, None] and not grading.verdict.resolved
    assert grading.unreported is not None
    assert grading.unreported.startswith(f"the test command `{command}` wrote no JUnit report")
    assert "No module named 'replay_no_such_plugin'" in grading.unreported
    assert all("replay_no_such_plugin" in out for out in grading.outputs)
    # The same case with its own command reports its tests: nothing is said.
    fine = grade_hidden_tests(runtime, image, case, gold, f"output-{uuid.uuid4().hex[:8]}")
    assert fine.verdict.resolved and fine.unreported is None
