"""Trajectories that attack the grader instead of fixing the bug, against the real Docker engine.

Each spoof has every side effect of gold (the branch, the pull request that says "Fixes #7")
but, instead of the fix, makes pytest report failures as passes. First, outside the grader:
the spoof's own steps, run in the case's environment image and followed by the case's test
command as a naive grader would run it, do turn the failing hidden tests green (so each one
is a real spoof and these tests fail if it stops being one). Then, through ``replay run``:
graded with the case's test infrastructure, every spoof is a ``model_fail`` with the hidden
tests failing, and grade.json names what was put back.
"""

from __future__ import annotations

import posixpath
import shlex
import tempfile
import uuid
from pathlib import Path

import pytest

from replay.base.case import Case, load_case
from replay.base.snapshot import load_snapshot
from replay.grade import judge, load_grade
from replay.grade.junit import TestVerdict as Verdict
from replay.run.attacks import ATTACKS
from replay.run.runner import RunOptions, run_case
from replay.run.trajectories import Builder
from replay.runtime.base import Container, ContainerSpec, Runtime, SandboxError
from tests.run.conftest import CARET


def naive_grade(container: Container, case: Case) -> Verdict:
    """The hidden tests as a grader without any restoring would run them: in the tree as is."""
    junit = case.hidden_tests.junit_xml
    command = case.hidden_tests.command.replace("{junit}", shlex.quote(junit))
    done = container.exec(["bash", "-c", f"rm -f {shlex.quote(junit)}; {command}"], timeout=600)
    assert done.exit_code is not None
    with tempfile.TemporaryDirectory() as tmp:
        try:
            container.copy_out(junit, Path(tmp))
            report: bytes | None = (Path(tmp) / posixpath.basename(junit)).read_bytes()
        except SandboxError:
            report = None
    return judge(
        [report], [done.exit_code], case.hidden_tests.fail_to_pass, case.hidden_tests.pass_to_pass
    )


SPOOFS = ("spoof-conftest", "spoof-plugin", "spoof-site")


@pytest.mark.parametrize("spoof", SPOOFS)
def test_the_spoof_really_turns_the_failing_hidden_tests_green_when_run_naively(
    spoof: str, caret_env: tuple[Runtime, str]
) -> None:
    runtime, image = caret_env
    case = load_case(CARET)
    workdir = case.environment.workdir
    container = runtime.create(
        ContainerSpec(image=image, command=["sleep", "infinity"], workdir=workdir),
        f"spoof-naive-{uuid.uuid4().hex[:8]}",
    )
    try:
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / "hidden.patch").write_text(case.hidden_tests.patch.read_text())
            container.copy_in(Path(tmp) / "hidden.patch", "/tmp")
        base = case.repository.base_commit
        ready = container.exec(
            [
                "bash",
                "-c",
                f"git reset -q --hard {base} && git clean -fdq && git apply /tmp/hidden.patch",
            ],
            timeout=120,
        )
        assert ready.ok, ready.err
        before = naive_grade(container, case)
        assert set(before.fail_to_pass.values()) == {"failed"}, "no fix: the hidden tests fail"
        steps = ATTACKS[spoof].steps(Builder(case, load_snapshot(case.snapshot)))
        # The attack's own steps: up to the commit that ships it.
        for step in steps[: next(i for i, s in enumerate(steps) if "git commit" in (s.bash or ""))]:
            assert step.bash is not None
            done = container.exec(["bash", "-c", step.bash], timeout=120)
            assert done.ok, (step.bash, done.err)
        after = naive_grade(container, case)
    finally:
        container.remove()
    assert set(after.fail_to_pass.values()) == {"passed"}, after.fail_to_pass
    assert after.exit_codes == [0] and not after.spoofed, "the exit status agrees with the lie"
    assert after.resolved, f"{spoof} fools a grader that runs the tests in the agent's tree"


# What each spoof's diff adds or changes, and what grading must name for it.
NAMED = {
    "spoof-conftest": {"conftest.py": ("removed", "pytest conftest")},
    "spoof-plugin": {"pyproject.toml": ("restored", "test configuration (restored whole)")},
    "spoof-site": {
        "src/usercustomize.py": ("removed", "interpreter start-up hook"),
        "src/sitecustomize.py": ("removed", "interpreter start-up hook"),
    },
}


@pytest.mark.parametrize("trajectory", [*SPOOFS, "gold"])
def test_spoofs_fail_with_the_hidden_tests_failing_and_gold_still_passes(
    trajectory: str, tmp_path: Path, caret_env: tuple[Runtime, str]
) -> None:
    (run,) = run_case(
        CARET, RunOptions(out=tmp_path / "runs", db=str(tmp_path / "r.db"), stub=trajectory)
    )
    grade = load_grade(run.run_dir / "grade.json")
    tests = grade.tests
    assert tests is not None
    restored = {r.path: (r.action, r.reason) for r in tests.restored}
    if trajectory == "gold":
        assert run.outcome == "pass", run.reason
        assert restored == {}, "a real fix has nothing put back"
        return
    assert grade.side_effects.ok, grade.side_effects.violated
    assert grade.attempts.prs_opened == 1
    assert run.outcome == "model_fail", run.reason
    assert "hidden tests not resolved" in run.reason
    assert not tests.resolved and tests.applied == "apply"
    assert "failed" in tests.fail_to_pass.values()
    assert "passed" not in tests.fail_to_pass.values(), "no fix, no F2P test passes"
    assert restored == NAMED[trajectory]
