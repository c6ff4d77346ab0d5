"""The table ``replay run`` ends with: per case and model (or trajectory), one row per run."""

from __future__ import annotations

from collections.abc import Sequence

from rich.table import Table

from replay.run.runner import RunResult


def _tests(grade: dict[str, object]) -> str:
    tests = grade.get("tests")
    if not isinstance(tests, dict):
        return "-"
    f2p, p2p = tests["fail_to_pass"], tests["pass_to_pass"]
    passed = sum(v == "passed" for v in f2p.values()), sum(v == "passed" for v in p2p.values())
    flaky = " flaky" if tests.get("flaky") else ""
    flaky += " spoofed" if tests.get("spoofed") else ""
    return f"F2P {passed[0]}/{len(f2p)} P2P {passed[1]}/{len(p2p)}{flaky}{_restored(tests)}"


def _restored(tests: dict[str, object]) -> str:
    """Test infrastructure the run changed, graded as the case has it (named, not judged)."""
    restored = tests.get("restored")
    if not isinstance(restored, list) or not restored:
        return ""
    paths = [f"{r['path']} ({r['action']})" for r in restored if isinstance(r, dict)]
    shown = ", ".join(paths[:3]) + (f" +{len(paths) - 3} more" if len(paths) > 3 else "")
    return f"; test setup as in the case: {shown}"


def _effects(grade: dict[str, object]) -> str:
    side = grade["side_effects"]
    assert isinstance(side, dict)
    return "ok" if side["ok"] else "violated: " + ", ".join(side["violated"])


def _wire(grade: dict[str, object]) -> str:
    wire = grade["wire"]
    assert isinstance(wire, dict)
    state = "healthy" if wire["healthy"] else "FAILED"
    return f"{state}, {wire['logical_calls']} calls, {grade['model_wait_s']}s waiting"


def summary_table(results: Sequence[RunResult]) -> Table:
    table = Table(
        "case",
        "model",
        "run",
        "verdict",
        "tests",
        "side effects",
        "attempts",
        "people",
        "tokens",
        "cost",
        "wire",
        "time",
        box=None,
        pad_edge=False,
    )
    for r in results:
        g = r.grade
        attempts = g["attempts"]
        tokens = g["tokens"]
        cost = "n/a" if g["cost_usd"] is None else f"${g['cost_usd']:.4f}"
        table.add_row(
            r.case_id,
            str(g["model"]),
            str(r.attempt),
            r.outcome,
            _tests(g),
            _effects(g),
            f"{attempts['pushes']} push, {attempts['prs_opened']} PR",
            str(g["interventions"]),
            f"{tokens['input']}+{tokens['output']}",
            cost,
            _wire(g),
            f"{g['seconds']['total']:.0f}s",
        )
    return table
