"""``replay compare``: should we switch from candidate A to candidate B?"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from replay.cli.common import out


def compare(
    ctx: typer.Context,
    cases: Annotated[list[Path], typer.Argument(help="Case files (case.yaml).")],
    a: Annotated[
        str,
        typer.Option(
            "--a",
            help="Arm A, the incumbent: a candidate YAML file, or inline "
            "name=...,harness=...,model=...[,stub=...].",
        ),
    ],
    b: Annotated[str, typer.Option("--b", help="Arm B, the challenger (as --a).")],
    rule_file: Annotated[
        Path | None,
        typer.Option(
            "--rule", help="The decision rule (YAML), fixed with the comparison's first run."
        ),
    ] = None,
    name: Annotated[
        str | None, typer.Option(help="The comparison's name (default: A-vs-B).")
    ] = None,
    runs: Annotated[
        int, typer.Option(min=1, help="Healthy runs per case and arm; what is missing is run.")
    ] = 3,
    run_missing: Annotated[
        bool, typer.Option("--run/--no-run", help="Run what is missing, or only report.")
    ] = True,
    calibrate_runs: Annotated[
        int,
        typer.Option(
            "--calibrate",
            min=0,
            help="Calibrate cases that have no calibration of their current version first, "
            "with this many gold and idle runs each (0: leave them out).",
        ),
    ] = 0,
    out_dir: Annotated[Path, typer.Option("--out", help="Where run directories go.")] = Path(
        ".replay/runs"
    ),
    json_path: Annotated[
        Path | None, typer.Option("--json", help="Write the comparison as JSON here.")
    ] = None,
    junit_path: Annotated[
        Path | None, typer.Option("--junit", help="Write JUnit XML here (for CI systems).")
    ] = None,
    html_path: Annotated[
        Path | None, typer.Option("--html", help="Write the static HTML report here.")
    ] = None,
    expect: Annotated[
        str | None,
        typer.Option(help="Exit 1 unless the verdict is this: ship, dont_ship, inconclusive."),
    ] = None,
    include_retired: Annotated[
        bool, typer.Option(help="Compare on retired cases too (replay case retire).")
    ] = False,
    min_strength: Annotated[
        float | None,
        typer.Option(
            min=0.0,
            max=1.0,
            help="Leave out cases whose strength recorded at their current version (replay "
            "case strength --record) is under this, or never measured (default: the rule's "
            "min_strength, else none).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Compare two candidates on the same calibrated cases, against the noise floor, under a
    decision rule fixed before the runs: ship, don't ship, or inconclusive."""
    from dataclasses import replace

    from replay.base.case import LoadedCase, read_case
    from replay.cases.retired import partition_retired, skip_line
    from replay.cli.progress import PhaseDisplay
    from replay.compare.candidate import parse_candidate
    from replay.compare.engine import build_document, fix_comparison, plan_missing
    from replay.compare.engine import run_missing as run_plan
    from replay.compare.rule import load_rule
    from replay.compare.terminal import (
        DECISIONS,
        arms_table,
        cases_table,
        cutoff_table,
        lines,
        run_links,
        tags_table,
        unhealthy,
        verdict_line,
    )
    from replay.results import Store
    from replay.run.runner import RunOptions
    from replay.world import keep_warm

    if expect is not None and expect not in DECISIONS:
        raise typer.BadParameter(f"one of {', '.join(DECISIONS)}", param_hint="--expect")
    arms = {"A": parse_candidate(a), "B": parse_candidate(b)}
    if run_missing:
        from replay.doctor import require_key

        for arm in arms.values():
            if arm.stub is None and arm.model_upstream is None:
                require_key(arm.harness)
    rule, rule_text = load_rule(rule_file)
    loaded = [read_case(path) for path in cases]
    retired: list[dict[str, str]] = []
    if not include_retired:
        loaded, gone = partition_retired(loaded)
        for case, retirement in gone:
            out.print(skip_line(case.id, retirement), markup=False)
            why = f"retired {retirement.at:%Y-%m-%d}: {retirement.reason}"
            retired.append({"case_id": case.id, "why": why})
    minimum = min_strength if min_strength is not None else rule.min_strength
    if minimum is not None:
        from replay.strength.record import against_minimum

        kept: list[LoadedCase] = []
        for case in loaded:
            keep, said = against_minimum(case, minimum)
            if keep:
                kept.append(case)
                if said:
                    out.print(f"keeping {case.id}: {said}", markup=False)
                continue
            out.print(f"skipping {case.id}: {said}", markup=False)
            retired.append({"case_id": case.id, "why": said or ""})
        loaded = kept
    base = RunOptions(out=out_dir, db=ctx.obj.db)
    store = Store.open(ctx.obj.db)
    try:
        comparison = fix_comparison(
            store, name or f"{arms['A'].name}-vs-{arms['B'].name}", arms["A"], arms["B"], rule_text
        )
        # The runs of one case share its world, reset between them (replay.world.warm).
        with keep_warm(), PhaseDisplay(out) as display:
            base = replace(base, progress=display)
            if calibrate_runs:
                _calibrate_missing(store, loaded, base, calibrate_runs)
            if run_missing:
                plan = plan_missing(store, loaded, arms, runs)
                needed = sum(item.runs for item in plan)
                out.print(f"{needed} run(s) to make, in {len(plan)} group(s)", markup=False)
                for item in plan:
                    display.label = f" [arm {item.arm}: {arms[item.arm].name}]"
                    out.print(
                        f"running {item.runs} more run(s) of {item.case_id} for arm {item.arm}",
                        markup=False,
                    )
                    run_plan([item], loaded, arms, base)
        doc = build_document(store, loaded, arms, rule, comparison)
        # Retired and weak cases are left out of both arms alike, and said so in every report.
        doc["left_out"] = sorted([*doc["left_out"], *retired], key=lambda x: x["case_id"])
    finally:
        store.close()
    wide = Console(highlight=False, width=max(out.width, 220))
    # The verdict first (what the person came for), then the figures it rests on; it is said
    # again last, after the runs' files, where a log's tail shows it.
    out.print(verdict_line(doc), markup=False)
    for reason in doc["verdict"]["reasons"]:
        out.print(f"  because {reason}", markup=False)
    for line in lines(doc):
        out.print(line, markup=False)
    wide.print(arms_table(doc))
    if doc["cases"]:
        wide.print(cases_table(doc))
        wide.print(tags_table(doc))
        if doc["by_cutoff"]:
            out.print(
                "by training cutoff (after-cutoff: fixed after the model's stated cutoff, "
                "clean; before-cutoff: the public fix may be in its training data)",
                markup=False,
            )
            wide.print(cutoff_table(doc))
    for line in [*run_links(doc), *unhealthy(doc)]:
        out.print(line, markup=False)
    for item in doc["left_out"]:
        out.print(f"left out: {item['case_id']}: {item['why']}", markup=False)
    out.print(verdict_line(doc), markup=False)
    _write_reports(doc, json_path, junit_path, html_path)
    if expect is not None and doc["verdict"]["decision"] != expect:
        out.print(f"unexpected: the verdict is {doc['verdict']['decision']}, not {expect}")
        raise typer.Exit(1)


def _calibrate_missing(store: Any, loaded: list[Any], base: Any, runs: int) -> None:
    from replay.base.case import case_digest
    from replay.run.calibrate import calibrate

    calibrations = store.calibrations()
    for case in loaded:
        if case_digest(case) in calibrations:
            continue
        out.print(f"calibrating {case.id} ({runs} gold and {runs} idle runs)", markup=False)
        result = calibrate(case.path, base, runs=runs)
        if not result.calibrated:
            for line in result.explain():
                out.print(f"  {line}", markup=False)


def _write_reports(
    doc: dict[str, Any], json_path: Path | None, junit_path: Path | None, html_path: Path | None
) -> None:
    if json_path is not None:
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n")
        out.print(f"JSON: {json_path}", markup=False)
    if junit_path is not None:
        from replay.compare.junit import render_junit

        junit_path.parent.mkdir(parents=True, exist_ok=True)
        junit_path.write_text(render_junit(doc))
        out.print(f"JUnit XML: {junit_path}", markup=False)
    if html_path is not None:
        from replay.compare.html import render_html

        html_path.parent.mkdir(parents=True, exist_ok=True)
        html_path.write_text(render_html(_relative_links(doc, html_path.parent)))
        out.print(f"HTML: {html_path}", markup=False)


def _relative_links(doc: dict[str, Any], base: Path) -> dict[str, Any]:
    """The document with run file paths relative to ``base`` (the HTML's directory), so the
    report and the run directories can move together."""
    copy: dict[str, Any] = json.loads(json.dumps(doc))

    def rel(path: str | None) -> str | None:
        return None if path is None else os.path.relpath(path, base.resolve())

    runs = [r for row in copy["cases"] for arm in ("A", "B") for r in row[arm]["runs"]]
    runs += [r for arm in copy["arms"].values() for r in arm["unhealthy"]]
    for run in runs:
        for key in ("run_dir", "transcript", "diff"):
            run[key] = rel(run[key])
    return copy
