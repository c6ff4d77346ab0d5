"""``replay batch``: run a stored plan of cases x candidates x runs, resumably."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from replay.cli.common import out

app = typer.Typer(help="Batches: cases x candidates x runs, resumable.", no_args_is_help=True)


def default_jobs() -> int:
    """One run per core, and no more than one per 3 GiB of memory (a run holds a world, a
    sandbox and a grading container)."""
    cores = os.cpu_count() or 1
    try:
        mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        return cores
    return max(1, min(cores, mem // (3 << 30)))


@app.command("run")
def batch_run(
    ctx: typer.Context,
    plan_file: Annotated[Path, typer.Argument(help="The batch plan (YAML).")],
    jobs: Annotated[
        int | None, typer.Option(min=1, help="Runs at once (default: from cores and memory).")
    ] = None,
    starts: Annotated[
        float, typer.Option(min=0.01, help="Run starts per second at most (halved on errors).")
    ] = 1.0,
    out_dir: Annotated[Path, typer.Option("--out", help="Where run directories go.")] = Path(
        ".replay/runs"
    ),
    executor: Annotated[
        str, typer.Option(help="local (this machine) or ray (the cluster at --address).")
    ] = "local",
    address: Annotated[
        str | None, typer.Option(help="The Ray cluster's head, HOST:PORT (--executor ray).")
    ] = None,
) -> None:
    """Run what the plan has not finished: finished runs are never redone, a dead process's
    runs are taken over, infrastructure failures are retried up to the plan's limit."""
    from replay.batch.engine import BatchProgress, execute, progress, quarantined
    from replay.batch.plan import load_plan
    from replay.doctor import require_key
    from replay.results import Store
    from replay.run.runner import RunOptions

    plan = load_plan(plan_file)
    for candidate in plan.spec.candidates:
        if candidate.stub is None and candidate.model_upstream is None:
            require_key(candidate.harness)  # before anything is stored: one line, exit 2
    for line in plan.skipped:  # retired cases (the plan's include_retired runs them)
        out.print(line, markup=False)
    store = Store.open(ctx.obj.db)
    try:
        before = progress(store, plan)
        with Progress(
            TextColumn(f"batch {plan.spec.name}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[outcomes]}"),
            TimeRemainingColumn(),
            console=out,
        ) as bar:
            task = bar.add_task("runs", total=before.total, completed=before.finished,
                                outcomes=_counts(before.outcomes))  # fmt: skip

            def on_change(now: BatchProgress) -> None:
                bar.update(task, completed=now.finished, outcomes=_counts(now.outcomes))

            if executor == "ray":
                from replay.batch.ray_executor import execute_ray

                if address is None:
                    raise typer.BadParameter("--executor ray needs --address")
                result = execute_ray(
                    store,
                    plan,
                    address=address,
                    db=store.url,
                    out=out_dir.resolve(),
                    on_change=on_change,
                )
            elif executor == "local":
                result = execute(
                    store,
                    plan,
                    RunOptions(out=out_dir, db=ctx.obj.db),
                    jobs=jobs or default_jobs(),
                    starts_per_second=starts,
                    on_change=on_change,
                )
            else:
                raise typer.BadParameter("local or ray", param_hint="--executor")
        after = progress(store, plan)
        stuck = quarantined(store, plan)
    finally:
        store.close()
    out.print(
        f"batch {plan.spec.name}: ran {result.ran}, {after.finished}/{after.total} finished "
        f"({_counts(after.outcomes)}); {after.tokens} tokens, ${after.cost_usd:.2f}",
        markup=False,
    )
    if result.collected:
        out.print(
            f"removed {result.collected} leftover(s) of this batch's dead processes "
            "(containers, networks, volumes, run directories, world processes)",
            markup=False,
        )
    if stuck:
        # Never retried, by this run or a rerun: what to fix (or retire) is named here.
        out.print(
            f"quarantined {len(stuck)} run(s) that crashed the runner twice (not retried; "
            "`replay batch status` shows their errors):",
            markup=False,
        )
        for row in stuck:
            last = (row.error or "").strip().splitlines()[-1:] or ["?"]
            out.print(f"  {row.case_id} {row.candidate} run {row.index}: {last[0]}", markup=False)
    if result.stopped:
        out.print(f"stopped submitting runs: {result.stopped}", markup=False)
    if after.finished < after.total and not result.stopped:
        raise typer.Exit(1)


@app.command("status")
def batch_status(
    ctx: typer.Context,
    plan_file: Annotated[Path, typer.Argument(help="The batch plan (YAML).")],
) -> None:
    """Progress of a batch: finished runs by outcome, running, left, tokens and cost."""
    from replay.batch.engine import failures, progress
    from replay.batch.plan import load_plan
    from replay.results import Store

    plan = load_plan(plan_file)
    store = Store.open(ctx.obj.db)
    try:
        prog = progress(store, plan)
        failed = failures(store, plan)
    finally:
        store.close()
    table = Table("batch", "planned", "finished", "running", "left", "outcomes", "tokens",
                  "cost", box=None)  # fmt: skip
    table.add_row(
        plan.spec.name,
        str(prog.total),
        str(prog.finished),
        str(prog.running),
        str(prog.total - prog.finished - prog.running),
        _counts(prog.outcomes),
        str(prog.tokens),
        f"${prog.cost_usd:.2f}",
    )
    out.print(table)
    if failed:
        # Why runs failed before they could be graded: what to fix before a rerun retries.
        errors = Table("case", "candidate", "run", "state", "tries", "error", box=None)
        for row in failed:
            last = (row.error or "").strip().splitlines()[-1:] or [""]
            errors.add_row(
                row.case_id, row.candidate, str(row.index), row.state, str(row.tries), last[0]
            )
        out.print(errors)


def _counts(outcomes: Mapping[str, int]) -> str:
    items = sorted(outcomes.items())
    return ", ".join(f"{k} {v}" for k, v in items) or "-"
