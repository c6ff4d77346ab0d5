"""The run summary names the test infrastructure a run was graded without (neutral wording)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console

from replay.base.outcomes import Outcome
from replay.grade.model import Restored
from replay.run.runner import RunResult
from replay.run.summary import summary_table
from tests.grade.samples import grade, hidden_tests_grade


def render(**tests: Any) -> str:
    result = RunResult(
        "r", "demo", 1, Outcome.MODEL_FAIL, "x", Path("."), grade(tests=hidden_tests_grade(**tests))
    )
    console = Console(width=400, record=True)
    console.print(summary_table([result]))
    return console.export_text()


def test_restored_paths_are_named_with_what_was_done() -> None:
    restored = [
        Restored(path="src/usercustomize.py", action="removed", reason="start-up hook"),
        Restored(path="pyproject.toml", action="restored", reason="test configuration"),
    ]
    out = render(restored=restored)
    assert "F2P 0/2 P2P 1/1; test setup as in the case: src/usercustomize.py (removed), " in out
    assert "pyproject.toml (restored)" in out


def test_many_are_counted_and_none_says_nothing() -> None:
    restored = [Restored(path=f"tests/t{i}.py", action="removed", reason="x") for i in range(5)]
    assert "tests/t2.py (removed) +2 more" in render(restored=restored)
    out = render(restored=[])
    assert "F2P 0/2 P2P 1/1 " in out and "test setup" not in out
    assert "F2P 0/2 P2P 1/1 spoofed" in render(spoofed=True, restored=[])
