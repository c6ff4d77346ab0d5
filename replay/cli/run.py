"""``replay run``: replay cases end to end and say how each run went."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from replay.base.outcomes import OUTCOMES, Outcome
from replay.cli.common import out


def run(
    ctx: typer.Context,
    cases: Annotated[list[Path], typer.Argument(help="Case files (case.yaml).")],
    harness: Annotated[str, typer.Option(help="Harness: a built-in name or a spec file.")] = (
        "reference"
    ),
    runs: Annotated[int, typer.Option(min=1, help="Runs per case (for pass@k, pass^k).")] = 1,
    model: Annotated[str, typer.Option(help="The model the harness asks for.")] = "gpt-4.1",
    model_upstream: Annotated[
        str | None, typer.Option(help="Send model calls here instead of the provider's API.")
    ] = None,
    stub: Annotated[
        list[str] | None,
        typer.Option(
            help="Play the stub model's trajectory instead: gold, cheat, reckless, asks, "
            "idle, or spoof-conftest, spoof-plugin, spoof-site (attacks on the grader) "
            "(repeatable: each one is run)."
        ),
    ] = None,
    fault: Annotated[
        list[str] | None,
        typer.Option(help="Stub wire fault, KIND=RATE, KIND=every:N or KIND=calls:FIRST-LAST."),
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of the stub's fault draws.")] = 0,
    harness_env: Annotated[
        list[str] | None, typer.Option(help="NAME=VALUE for the harness (repeatable).")
    ] = None,
    wire_retries: Annotated[
        int, typer.Option(min=0, help="Replay a run the wire spoiled up to N more times.")
    ] = 2,
    prices: Annotated[
        Path | None, typer.Option(help="Price table (YAML, USD per million tokens).")
    ] = None,
    out_dir: Annotated[Path, typer.Option("--out", help="Where run directories go.")] = Path(
        ".replay/runs"
    ),
    clock: Annotated[bool, typer.Option(help="Freeze the sandbox's clock at T.")] = False,
    expect: Annotated[
        list[str] | None,
        typer.Option(
            help="Exit 1 unless every run has this outcome: OUTCOME, or TRAJECTORY=OUTCOME "
            "(repeatable)."
        ),
    ] = None,
    include_retired: Annotated[
        bool, typer.Option(help="Run retired cases too (replay case retire).")
    ] = False,
) -> None:
    """Replay cases end to end: world, sandbox, harness, hidden tests, side effects, verdict."""
    from replay.cases.retired import active_case_files
    from replay.cli.progress import PhaseDisplay
    from replay.harness.spec import check_harness
    from replay.run.runner import RunOptions, RunResult, run_case
    from replay.run.summary import case_summary, summary_table
    from replay.run.trajectories import check_trajectory
    from replay.world.warm import keep_warm

    pairs = [item.partition("=") for item in harness_env or []]
    if any(not sep for _, sep, _ in pairs):
        raise typer.BadParameter("expected NAME=VALUE", param_hint="--harness-env")
    # A typo'd name stops here, before any world, image or run is made.
    wanted = _expectations(expect or [])
    check_harness(harness)
    for name in stub or []:
        check_trajectory(name)
    if not stub and model_upstream is None:
        from replay.doctor import require_key

        require_key(harness)
    cases = active_case_files(cases, include_retired=include_retired, notice=_say)
    results: list[RunResult] = []
    trajectories: list[str | None] = list(stub) if stub else [None]
    # The trajectories of one case share its world, reset between runs (replay.world.warm).
    with keep_warm(), PhaseDisplay(out) as display:
        for case in cases:
            for trajectory in trajectories:
                display.label = f" [stub:{trajectory}]" if trajectory else f" [{model}]"
                options = RunOptions(
                    harness=harness,
                    model=model,
                    runs=runs,
                    model_upstream=model_upstream,
                    stub=trajectory,
                    stub_faults=tuple(fault or ()),
                    stub_seed=seed,
                    harness_env={k: v for k, _, v in pairs},
                    out=out_dir,
                    db=ctx.obj.db,
                    clock=clock,
                    wire_retries=wire_retries,
                    prices=prices,
                    progress=display,
                )
                done = run_case(case, options)
                results += done
                outcomes = [r.outcome for r in done]
                for line in case_summary(done[0].case_id, done[0].grade.model, outcomes):
                    out.print(line, markup=False)
    # A wide table: give it room even when the output is not a terminal.
    Console(highlight=False, width=max(out.width, 220)).print(summary_table(results))
    for r in results:
        out.print(f"  {r.case_id} [{r.grade.model}] run {r.attempt}: {r.run_dir}", markup=False)
    trajectory_of = {id(r): r.grade.model.removeprefix("stub:") for r in results}
    failed = [
        r
        for r in results
        if (want := wanted.get(trajectory_of[id(r)], wanted.get("*"))) is not None
        and r.outcome != want
    ]
    if failed:
        for r in failed:
            out.print(
                f"unexpected: {r.case_id} [{r.grade.model}] was {r.outcome}: {r.reason}",
                markup=False,
            )
        raise typer.Exit(1)


def _say(line: str) -> None:
    out.print(line, markup=False)


def _expectations(items: list[str]) -> dict[str, Outcome]:
    """``--expect`` values as {trajectory or ``*``: outcome}; an outcome that is not one of
    the five is a usage error (a typo would otherwise expect what no run can be)."""
    wanted: dict[str, Outcome] = {}
    for item in items:
        key, sep, value = item.rpartition("=")
        try:
            wanted[key if sep else "*"] = Outcome(value)
        except ValueError:
            known = ", ".join(OUTCOMES)
            raise typer.BadParameter(
                f"{value!r} is not an outcome (one of {known})", param_hint="--expect"
            ) from None
    return wanted
