"""A diff cannot void its own grading: what its code does under the hidden tests is its own.

Before, a limit the hidden tests hit under the agent's code (memory, processes, time) and
hidden tests that would not go in on top of the agent's diff were grading errors, so the run
became ``infra_fail`` and left the quality figures: a losing agent could cancel its run by
writing a thread bomb into the product code.
Both are now failed hidden tests, named in ``Grading.stopped`` (when the hidden tests do not go
in, the grader first checks that they go on the base commit: a broken case stays a grading
error and is never blamed on the agent). Against the real Docker engine,
on the demo case's environment image.
"""

from __future__ import annotations

import uuid

import pytest

from replay.base.case import load_case
from replay.grade.hidden_tests import GradingError, grade_hidden_tests
from replay.runtime.base import ContainerSpec, Runtime
from tests.run.conftest import CARET

THREAD_BOMB = """
import threading as _t, time as _time
for _ in range(4000):
    _t.Thread(target=_time.sleep, args=(120,), daemon=True).start()
"""


def agent_diff(runtime: Runtime, image: str, script: str) -> str:
    """The diff an agent would leave after running ``script`` in the workspace."""
    case = load_case(CARET)
    container = runtime.create(
        ContainerSpec(image=image, command=["sleep", "600"], workdir=case.environment.workdir),
        f"voids-{uuid.uuid4().hex[:8]}",
    )
    try:
        done = container.exec(
            [
                "bash",
                "-c",
                f"set -e\n{script}\ngit add -A\n"
                f"git diff --cached --binary {case.repository.base_commit}",
            ],
            timeout=120,
        )
        assert done.ok, done.err
        return done.out
    finally:
        container.remove()


def test_a_thread_bomb_in_the_product_code_fails_the_tests_and_is_not_infra(
    caret_env: tuple[Runtime, str],
) -> None:
    runtime, image = caret_env
    case = load_case(CARET)
    diff = agent_diff(runtime, image, f"cat >> src/semverkit/__init__.py <<'PY'\n{THREAD_BOMB}\nPY")
    assert "_t.Thread" in diff
    grading = grade_hidden_tests(runtime, image, case, diff, f"voids-{uuid.uuid4().hex[:8]}")
    assert grading.stopped == "the hidden tests hit the pids limit", grading.stopped
    assert not grading.verdict.resolved
    assert grading.verdict.f2p_passed == 0


def test_a_case_whose_hidden_tests_do_not_apply_at_base_is_still_a_grading_error(
    caret_env: tuple[Runtime, str], tmp_path: pytest.TempPathFactory
) -> None:
    """With nothing of the agent's in the tree, the failure is the case's, not the agent's."""
    runtime, image = caret_env
    case = load_case(CARET)
    broken = tmp_path / "hidden.patch"  # type: ignore[operator]
    broken.write_text(
        "diff --git a/tests/nowhere.py b/tests/nowhere.py\n"
        "--- a/tests/nowhere.py\n+++ b/tests/nowhere.py\n@@ -1 +1 @@\n-old\n+new\n"
    )
    bad = case.model_copy(
        update={"hidden_tests": case.hidden_tests.model_copy(update={"patch": broken})}
    )
    with pytest.raises(GradingError, match="did not apply"):
        grade_hidden_tests(runtime, image, bad, "", f"voids-{uuid.uuid4().hex[:8]}")
    # With a diff of the agent's in the tree too: checked against the base commit, still the
    # case's failure (the agent is not blamed for a broken case).
    diff = agent_diff(runtime, image, "echo '# note' >> README.md")
    with pytest.raises(GradingError, match="did not apply"):
        grade_hidden_tests(runtime, image, bad, diff, f"voids-{uuid.uuid4().hex[:8]}")
