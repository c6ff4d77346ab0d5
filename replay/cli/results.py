"""``replay results``: the results store (the report, the runs)."""

from __future__ import annotations

import math
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from replay.cli.common import out

app = typer.Typer(help="The results store.", no_args_is_help=True)


@app.command("report")
def results_report(ctx: typer.Context) -> None:
    """Quality over healthy runs of calibrated cases, with reliability and cost beside it."""
    from replay.results import Store
    from replay.results.report import build_report
    from replay.results.stats import format_pass_k

    store = Store.open(ctx.obj.db)
    try:
        report = build_report(store)
    finally:
        store.close()
    table = Table(
        "case",
        "harness",
        "model",
        "runs",
        "pass rate (healthy)",
        "95% CI",
        "pass@k | pass^k (k = 1..healthy)",
        "reliability",
        "tokens",
        "cost",
        box=None,
    )
    for row in report.rows:
        st = row.stats
        rate = "n/a" if st.pass_rate is None else f"{st.passes}/{st.healthy} = {st.pass_rate:.2f}"
        table.add_row(
            f"{row.case_id}@{row.case_digest[:8]}",
            row.harness,
            row.model,
            str(st.runs),
            rate,
            f"{st.interval[0]:.2f}-{st.interval[1]:.2f}",
            format_pass_k(st),
            row.reliability,
            str(row.tokens),
            "n/a" if row.cost_usd is None else f"${row.cost_usd:.2f}",
        )
    if report.rows:
        # A wide table: give it room even when the output is not a terminal.
        Console(highlight=False, width=max(out.width, 220)).print(table)
    else:
        out.print("no runs of calibrated cases with a real model yet")
    for (harness, model), est in report.overall.items():
        se = (
            "SE n/a (one case)"
            if math.isnan(est.se)
            else f"SE {est.se:.2f}, 95% CI {est.interval[0]:.2f}-{est.interval[1]:.2f}"
        )
        out.print(
            f"{harness} / {model}: mean pass rate {est.mean:.2f} over {est.cases} "
            f"case{'' if est.cases == 1 else 's'} "
            f"({se}; clustered by case)",
            markup=False,
        )
    for case_id, why in sorted(report.left_out.items()):
        out.print(f"left out: {case_id}: {why}")


@app.command("list")
def results_list(
    ctx: typer.Context,
    case: Annotated[str | None, typer.Option(help="Only runs of this case.")] = None,
) -> None:
    """List the runs in the results store."""
    from replay.results import Store

    store = Store.open(ctx.obj.db)
    try:
        runs = store.runs(case)
    finally:
        store.close()
    table = Table("run", "case", "harness", "model", "attempt", "outcome", box=None)
    for run in runs:
        table.add_row(
            run.id[:8], run.case_id, run.harness, run.model, str(run.attempt), run.outcome or "-"
        )
    out.print(table if runs else "no runs")
