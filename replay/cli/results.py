"""``replay results``: the results store (the report, the runs)."""

from __future__ import annotations

import math
from datetime import UTC, datetime, time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from replay.cli.common import out

if TYPE_CHECKING:
    from replay.base.case import LoadedCase
    from replay.results.models import RunRow
    from replay.results.report import Report

app = typer.Typer(help="The results store.", no_args_is_help=True)


def _date(value: str | None, option: str) -> datetime | None:
    from replay.cases.age import parse_date

    if value is None:
        return None
    try:
        return parse_date(value)
    except ValueError:
        raise typer.BadParameter(
            f"{value!r} is not a date (YYYY-MM-DD) or an ISO 8601 time", param_hint=option
        ) from None


def _when(at: datetime) -> str:
    """A date, with its time when it is not midnight UTC."""
    return f"{at:%Y-%m-%d}" if at.timetz() == time(0, tzinfo=UTC) else at.isoformat()


def _case_files(cases: list[Path] | None) -> tuple[list[Path], str]:
    """The case files the report reads tags and fix dates from, and where they came from:
    the files and directories given (a directory: its ``case.yaml``, else its
    ``*/case.yaml``), else ``./cases`` when there is one."""
    sources = cases or ([Path("cases")] if Path("cases").is_dir() else [])
    files: list[Path] = []
    for source in sources:
        if source.is_dir():
            own = source / "case.yaml"
            files += [own] if own.is_file() else sorted(source.glob("*/case.yaml"))
        elif source.is_file():
            files.append(source)
        else:
            raise typer.BadParameter(f"{source}: no such case file or directory")
    shown = ", ".join(str(s) for s in sources) or "none given, and no ./cases"
    return files, shown


@app.command("report")
def results_report(
    ctx: typer.Context,
    cases: Annotated[
        list[Path] | None,
        typer.Argument(
            help="Case files or directories the tags, fix dates and retirements come from "
            "(default: ./cases).",
            show_default=False,
        ),
    ] = None,
    as_of: Annotated[
        str | None,
        typer.Option(
            help="Measure case age at this date (YYYY-MM-DD) instead of at each run's start."
        ),
    ] = None,
    training_cutoff: Annotated[
        str | None,
        typer.Option(
            help="The model's training cutoff (YYYY-MM-DD): split results by whether each "
            "case's fix came after it (clean) or before it (may be in its training data)."
        ),
    ] = None,
) -> None:
    """Quality over healthy runs of calibrated cases, with reliability and cost beside it,
    then by tag, by case age and (given a cutoff) by the side of the training cutoff."""
    from replay.base.case import read_case
    from replay.results import Store
    from replay.results.report import build_report
    from replay.results.stats import format_pass_k

    at, cutoff = _date(as_of, "--as-of"), _date(training_cutoff, "--training-cutoff")
    files, shown = _case_files(cases)
    loaded = [read_case(f) for f in files]
    store = Store.open(ctx.obj.db)
    try:
        report = build_report(store, loaded, as_of=at, training_cutoff=cutoff)
    finally:
        store.close()
    strengths = _strengths(loaded)
    table = Table(
        "case",
        "strength",
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
            strengths.get((row.case_id, row.case_digest), "not measured"),
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
        out.print(
            "no runs of calibrated cases with a real model yet: calibrate the cases "
            "(replay case calibrate CASE...), then run them with a model (replay run CASE... "
            "--model M, or replay compare)",
            markup=False,
        )
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
    _print_breakdown(report, loaded, shown, at, cutoff)
    for case_id, why in sorted(report.left_out.items()):
        out.print(f"left out: {case_id}: {why}", markup=False)


def _strengths(loaded: list[LoadedCase]) -> dict[tuple[str, str], str]:
    """Each case version's strength as the report shows it (``96%``, ``81% weak``), by case
    id and digest: only a version's own measurement (``replay case strength --record``)."""
    from replay.base.case import case_digest
    from replay.strength.record import recorded_strength

    shown: dict[tuple[str, str], str] = {}
    for case in loaded:
        measured = recorded_strength(case)
        if measured is None or measured.strength is None:
            continue
        shown[(case.id, case_digest(case))] = measured.label()
    return shown


def _print_breakdown(
    report: Report,
    loaded: list[LoadedCase],
    shown: str,
    at: datetime | None,
    cutoff: datetime | None,
) -> None:
    if not report.breakdown:
        return
    out.print(f"tags and fix dates from {len(loaded)} case file(s): {shown}", markup=False)
    seen_at = f"{at:%Y-%m-%d}" if at else "each run's start"
    titles = {
        "tag": "by tag (a case counts under each of its tags)",
        "age": f"by case age (fix to {seen_at})",
        "training cutoff": f"by training cutoff {_when(cutoff)}" if cutoff else "",
    }
    notes = {
        "training cutoff": "  after-cutoff: fixed after it, not in the model's training data "
        "(clean); before-cutoff: the public fix may be in it",
    }
    wide = Console(highlight=False, width=max(out.width, 160))
    for dimension, title in titles.items():
        rows = [g for g in report.breakdown if g.dimension == dimension]
        if not rows:
            continue
        table = Table(
            dimension, "harness", "model", "cases", "pass rate (healthy)", "95% CI", box=None
        )
        for g in rows:
            table.add_row(
                g.group,
                g.harness,
                g.model,
                str(g.cases),
                f"{g.passes}/{g.healthy} = {g.pass_rate:.2f}",
                f"{g.interval[0]:.2f}-{g.interval[1]:.2f} ({g.method})",
            )
        out.print(title, markup=False)
        if dimension in notes:
            out.print(notes[dimension], markup=False)
        wide.print(table)
    out.print("each group stands alone: groups overlap and are never added up", markup=False)


@app.command("list")
def results_list(
    ctx: typer.Context,
    case: Annotated[str | None, typer.Option(help="Only runs of this case.")] = None,
    outcome: Annotated[
        str | None, typer.Option(help="Only runs with this outcome (pass, model_fail, ...).")
    ] = None,
    harness: Annotated[str | None, typer.Option(help="Only runs of this harness.")] = None,
    model: Annotated[
        str | None, typer.Option(help="Only runs of this model (stub:gold for a stub).")
    ] = None,
    since: Annotated[
        str | None, typer.Option(help="Only runs started on or after this date (YYYY-MM-DD).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per run.")] = False,
) -> None:
    """List the runs in the results store: when, what, how it ended and why, cost, time and
    where its files are; ``results show RUN`` takes the short id."""
    import json

    from replay.base.outcomes import Outcome
    from replay.results import Store

    if outcome is not None and outcome not in {o.value for o in Outcome}:
        raise typer.BadParameter(
            f"one of {', '.join(o.value for o in Outcome)}", param_hint="--outcome"
        )
    start = _date(since, "--since")
    store = Store.open(ctx.obj.db)
    try:
        runs = [
            r
            for r in store.runs(case)
            if (outcome is None or r.outcome == outcome)
            and (harness is None or r.harness == harness)
            and (model is None or r.model == model)
            and (start is None or r.started_at.replace(tzinfo=UTC) >= start)
        ]
        rows = [_listed(r) for r in runs]
    finally:
        store.close()
    if as_json:
        for row in rows:
            out.print(json.dumps(row), markup=False, highlight=False, soft_wrap=True)
        return
    if not rows:
        out.print("no runs" + (" match" if (case or outcome or harness or model or since) else ""))
        return
    table = Table(
        "run", "started", "case", "harness", "model", "outcome", "why", "cost", "time", "dir",
        box=None,
    )  # fmt: skip
    for row in rows:
        cost, took = _cost_and_time(row)
        why = row["reason"] or "-"
        why = why if len(why) <= 60 else why[:57] + "..."
        table.add_row(
            row["run"], row["started"][:16].replace("T", " "), row["case"], row["harness"],
            row["model"], row["outcome"] or row["status"], why, cost, took, row["dir"] or "-",
        )  # fmt: skip
    Console(highlight=False, width=max(out.width, 200)).print(table)


def _cost_and_time(row: dict[str, Any]) -> tuple[str, str]:
    cost = "-" if row["cost_usd"] is None else f"${row['cost_usd']:.4f}"
    return cost, "-" if row["seconds"] is None else f"{row['seconds']:.0f}s"


def _listed(run: RunRow) -> dict[str, Any]:
    """One run as ``results list`` shows it (and ``--json`` writes it)."""
    detail = run.grade.detail if run.grade is not None else {}
    return {
        "run": run.id[:8],
        "id": run.id,
        "started": run.started_at.replace(tzinfo=UTC).isoformat(),
        "case": run.case_id,
        "harness": run.harness,
        "model": run.model,
        "attempt": run.attempt,
        "status": run.status,
        "outcome": run.outcome,
        "reason": detail.get("reason") or run.stop_reason,
        "cost_usd": run.cost_usd,
        "seconds": run.wall_time_s,
        "dir": run.run_dir,
    }


@app.command("show")
def results_show(
    ctx: typer.Context,
    run: Annotated[str, typer.Argument(help="A run's id, or its first characters (8 will do).")],
) -> None:
    """One run: its verdict and why, its hidden tests and side-effect rules, cost and time,
    and its files."""
    from replay.results import Store

    store = Store.open(ctx.obj.db)
    try:
        found = store.find_run(run)
        row = _listed(found)
        detail = found.grade.detail if found.grade is not None else {}
    finally:
        store.close()
    out.print(f"run {row['id']}  {row['case']}  {row['harness']} / {row['model']}", markup=False)
    out.print(f"  {row['outcome'] or row['status']}: {row['reason'] or '-'}", markup=False)
    tests = detail.get("tests") or {}
    for label, key in (("FAIL_TO_PASS", "fail_to_pass"), ("PASS_TO_PASS", "pass_to_pass")):
        statuses: dict[str, str] = tests.get(key) or {}
        bad = sorted(name for name, status in statuses.items() if status != "passed")
        passed = len(statuses) - len(bad)
        out.print(f"  {label}: {passed}/{len(statuses)} passed", markup=False)
        for name in bad:
            out.print(f"    {statuses[name]:<8} {name}", markup=False)
    for rule in (detail.get("side_effects") or {}).get("rules", []):
        mark = "ok" if rule.get("ok") else "BROKEN"
        said = f"  rule {rule.get('rule')}: {mark}, {rule.get('count', '?')} matched"
        what = str(rule.get("description") or "")
        out.print(said + (f": {what}" if what else ""), markup=False)
    cost, took = _cost_and_time(row)
    out.print(f"  started {row['started']}, took {took}, cost {cost}", markup=False)
    if row["dir"]:
        out.print(
            f"  files: {row['dir']} (transcript.jsonl, diff.patch, grade.json, events.db)",
            markup=False,
        )


@app.command("comparisons")
def results_comparisons(ctx: typer.Context) -> None:
    """The comparisons fixed in the store: name, arms, when its rule was fixed."""
    from replay.results import Store

    store = Store.open(ctx.obj.db)
    try:
        rows = store.comparisons()
    finally:
        store.close()
    if not rows:
        out.print("no comparisons (replay compare fixes one with its first run)")
        return
    table = Table("comparison", "arm A", "arm B", "fixed", box=None)
    for row in rows:
        table.add_row(row.name, row.arm_a, row.arm_b, f"{row.fixed_at:%Y-%m-%d %H:%M} UTC")
    out.print(table)


@app.command("drop-comparison")
def results_drop_comparison(
    ctx: typer.Context, name: Annotated[str, typer.Argument(help="The comparison's name.")]
) -> None:
    """Forget a comparison (its arms and rule), so that the name can be fixed anew. The runs
    stay: a comparison of the same candidates uses them again."""
    from replay.results import Store

    store = Store.open(ctx.obj.db)
    try:
        store.drop_comparison(name)
    finally:
        store.close()
    out.print(f"dropped comparison {name}; its runs stay under their candidates", markup=False)


@app.command("rename-comparison")
def results_rename_comparison(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="The comparison's name.")],
    new: Annotated[str, typer.Argument(help="Its new name.")],
) -> None:
    """Rename a comparison (its arms, rule and when it was fixed stay)."""
    from replay.results import Store

    store = Store.open(ctx.obj.db)
    try:
        store.rename_comparison(name, new)
    finally:
        store.close()
    out.print(f"renamed comparison {name} to {new}", markup=False)
