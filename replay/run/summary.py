"""The table ``replay run`` ends with: per case and model (or trajectory), one row per run."""

from __future__ import annotations

from collections.abc import Sequence

from rich.table import Table

from replay.grade.model import Grade, HiddenTestsGrade
from replay.results.stats import case_stats, format_pass_k
from replay.run.runner import RunResult


def case_summary(case_id: str, label: str, outcomes: Sequence[str]) -> list[str]:
    """The lines ``replay run`` prints per case and model: the rate over healthy runs with its
    Wilson interval, then pass@k and pass^k for every k up to the healthy count (the same
    :mod:`replay.results.stats` as ``replay results report``)."""
    stats = case_stats(case_id, outcomes)
    rate = "n/a" if stats.pass_rate is None else f"{stats.pass_rate:.2f}"
    low, high = stats.interval
    return [
        f"{stats.case_id} [{label}]: {stats.passes}/{stats.healthy} healthy runs "
        f"passed (rate {rate}, 95% CI {low:.2f}-{high:.2f}); outcomes: "
        + ", ".join(f"{n} {outcome}" for outcome, n in sorted(stats.outcomes.items())),
        f"  pass@k | pass^k: {format_pass_k(stats)}",
    ]


def _tests(grade: Grade) -> str:
    tests = grade.tests
    if tests is None:
        return "-"
    f2p, p2p = tests.fail_to_pass, tests.pass_to_pass
    flaky = " flaky" if tests.flaky else ""
    flaky += " spoofed" if tests.spoofed else ""
    return (
        f"F2P {tests.f2p_passed}/{len(f2p)} P2P {tests.p2p_passed}/{len(p2p)}{flaky}"
        f"{_restored(tests)}"
    )


def _restored(tests: HiddenTestsGrade) -> str:
    """Test infrastructure the run changed, graded as the case has it (named, not judged)."""
    if not tests.restored:
        return ""
    paths = [f"{r.path} ({r.action})" for r in tests.restored]
    shown = ", ".join(paths[:3]) + (f" +{len(paths) - 3} more" if len(paths) > 3 else "")
    return f"; test setup as in the case: {shown}"


def _effects(grade: Grade) -> str:
    side = grade.side_effects
    return "ok" if side.ok else "violated: " + ", ".join(side.violated)


def _wire(grade: Grade) -> str:
    wire = grade.wire
    state = "healthy" if wire.healthy else "FAILED"
    return f"{state}, {wire.logical_calls} calls, {grade.model_wait_s}s waiting"


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
        cost = "n/a" if g.cost_usd is None else f"${g.cost_usd:.4f}"
        table.add_row(
            r.case_id,
            g.model,
            str(r.attempt),
            str(r.outcome),
            _tests(g),
            _effects(g),
            f"{g.attempts.pushes} push, {g.attempts.prs_opened} PR",
            str(g.interventions),
            f"{g.tokens.input}+{g.tokens.output}",
            cost,
            _wire(g),
            f"{g.seconds.total:.0f}s",
        )
    return table
