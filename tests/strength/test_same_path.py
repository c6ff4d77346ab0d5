"""A wrong fix is graded exactly as a run's diff is (the real Docker engine).

A spoof trajectory is replayed end to end (``replay run --stub spoof-conftest``: the agent
turns the failing tests green with a conftest instead of fixing), and its final diff is then
graded as strength grades a mutant: the same verdict, the same tests failing, the same test
infrastructure put back.
"""

from __future__ import annotations

from pathlib import Path

from replay.base.case import load_case
from replay.base.outcomes import Outcome
from replay.grade import load_grade
from replay.run.runner import RunOptions, run_case
from replay.runtime import get_runtime
from replay.strength import Ready, grade_diff, ready_image

ROOT = Path(__file__).resolve().parents[2]
CARET = ROOT / "cases" / "demo-caret-zero" / "case.yaml"


def test_a_spoof_diff_graded_as_a_mutant_is_rejected_as_its_run_is(tmp_path: Path) -> None:
    (run,) = run_case(
        CARET, RunOptions(out=tmp_path / "runs", db=str(tmp_path / "r.db"), stub="spoof-conftest")
    )
    grade = load_grade(run.run_dir / "grade.json")
    assert grade.tests is not None
    assert run.outcome == Outcome.MODEL_FAIL and not grade.tests.resolved
    diff = (run.run_dir / "diff.patch").read_text()
    assert "conftest.py" in diff, "the spoof is in the diff"

    case = load_case(CARET)
    runtime = get_runtime("docker")
    try:
        ready = Ready(runtime, case, ready_image(case, runtime))
        graded = grade_diff(ready, diff)
    finally:
        runtime.close()

    assert ready.image == grade.image, "the same environment image as the run's grading"

    assert graded.verdict == "rejected"
    assert graded.applied == grade.tests.applied
    assert graded.restored == [r.path for r in grade.tests.restored] == ["conftest.py"]
    statuses = {**grade.tests.fail_to_pass, **grade.tests.pass_to_pass}
    failing = {t: s for t, s in statuses.items() if s != "passed"}
    assert failing, "the run's hidden tests failed"
    assert graded.not_passed_count == len(failing)
    assert graded.not_passed.items() <= failing.items()
