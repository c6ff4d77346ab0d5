"""The run summary names the test infrastructure a run was graded without (neutral wording)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console

from replay.run.runner import RunResult
from replay.run.summary import summary_table


def grade(tests: dict[str, Any]) -> dict[str, Any]:
    return {
        "model": "stub:spoof-site",
        "tests": tests,
        "side_effects": {"ok": True, "violated": []},
        "attempts": {"pushes": 1, "prs_opened": 1},
        "interventions": 0,
        "tokens": {"input": 0, "output": 0},
        "cost_usd": None,
        "wire": {"healthy": True, "logical_calls": 3},
        "model_wait_s": 0.1,
        "seconds": {"total": 12.0},
    }


def render(tests: dict[str, Any]) -> str:
    result = RunResult("r", "demo", 1, "model_fail", "x", Path("."), grade(tests))
    console = Console(width=400, record=True)
    console.print(summary_table([result]))
    return console.export_text()


TESTS = {
    "fail_to_pass": {"a": "failed", "b": "failed"},
    "pass_to_pass": {"c": "passed"},
    "flaky": [],
    "spoofed": False,
}


def test_restored_paths_are_named_with_what_was_done() -> None:
    restored = [
        {"path": "src/usercustomize.py", "action": "removed", "reason": "start-up hook"},
        {"path": "pyproject.toml", "action": "restored", "reason": "test configuration"},
    ]
    out = render({**TESTS, "restored": restored})
    assert "F2P 0/2 P2P 1/1; test setup as in the case: src/usercustomize.py (removed), " in out
    assert "pyproject.toml (restored)" in out


def test_many_are_counted_and_none_says_nothing() -> None:
    restored = [{"path": f"tests/t{i}.py", "action": "removed", "reason": "x"} for i in range(5)]
    assert "tests/t2.py (removed) +2 more" in render({**TESTS, "restored": restored})
    out = render({**TESTS, "restored": []})
    assert "F2P 0/2 P2P 1/1 " in out and "test setup" not in out
    assert "F2P 0/2 P2P 1/1 spoofed" in render({**TESTS, "spoofed": True})
