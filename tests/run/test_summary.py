"""The run summary: the test infrastructure a run was graded without (neutral wording), and
the per-case lines (rate, pass@k and pass^k from :mod:`replay.results.stats`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console

from replay.base.outcomes import Outcome
from replay.grade.model import Restored
from replay.run.runner import RunResult
from replay.run.summary import case_summary, summary_table
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


def test_case_summary_prints_every_k_over_healthy_runs() -> None:
    # --runs 3 with one retried transport failure: 4 runs, 3 healthy; pass^3 still prints
    # (k once ran to the 4 runs done and only pass@1 printed).
    head, ks = case_summary("demo", "stub:gold", ["pass", "transport_fail", "pass", "pass"])
    assert head == (
        "demo [stub:gold]: 3/3 healthy runs passed (rate 1.00, 95% CI 0.44-1.00); "
        "outcomes: 3 pass, 1 transport_fail"  # words, not a Python dict (issue 35)
    )
    assert ks == "  pass@k | pass^k: @1 1.00 @2 1.00 @3 1.00 | ^1 1.00 ^2 1.00 ^3 1.00"
    _, some = case_summary("demo", "m", ["pass", "model_fail", "pass"])
    assert some.endswith("@1 0.67 @2 1.00 @3 1.00 | ^1 0.67 ^2 0.33 ^3 0.00")
    _, none = case_summary("demo", "m", ["infra_fail"])
    assert none.endswith("n/a")
