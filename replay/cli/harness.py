"""``replay harness``: the built-in harnesses, and each one tried against the stub model."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from replay.cli.common import out

if TYPE_CHECKING:
    from replay.harness.spec import HarnessSpec
    from replay.run.runner import RunResult

app = typer.Typer(
    help="The built-in harnesses: their versions, and each one run against the stub model.",
    no_args_is_help=True,
)

DEMO_CASE = Path("cases/demo-caret-zero/case.yaml")


@app.callback()
def _group() -> None:
    """The built-in harnesses: their versions, and each one run against the stub model."""


def version_of(spec: HarnessSpec) -> str:
    """What the spec installs, as pinned (``pkg==X.Y.Z``), or that it ships with replay."""
    if spec.install.pip:
        return ", ".join(spec.install.pip)
    from replay import __version__

    return f"replay {__version__} (its own files)"


@app.command("list")
def list_() -> None:
    """The built-in harnesses with the versions their specs pin."""
    from replay.harness.spec import builtin_names, load_harness

    table = Table("harness", "provider", "version", "description", box=None, pad_edge=False)
    for name in builtin_names():
        spec, _ = load_harness(name)
        table.add_row(name, spec.provider, version_of(spec), spec.description)
    Console(highlight=False, width=max(out.width, 160)).print(table)


def events(result: RunResult) -> list[dict[str, Any]]:
    """The run's event log as its directory keeps it (``events.jsonl``)."""
    path = result.run_dir / "events.jsonl"
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def denied(result: RunResult) -> list[tuple[str, bool]]:
    """The run's denied requests (``METHOD host/path``), each marked True when the harness's
    spec declares it as its own."""
    own = Counter(result.grade.harness_egress)
    found = []
    for event in events(result):
        if event["kind"] != "egress.denied":
            continue
        data = event["data"]
        what = f"{data.get('method')} {data.get('host')}{data.get('path')}"
        mine = own[what] > 0
        if mine:
            own[what] -= 1
        found.append((what, mine))
    return found


def reached(result: RunResult) -> list[str]:
    """What the run reached: the model host(s) with their calls, then the world's services
    it changed (their events), each with a count."""
    hosts: Counter[str] = Counter()
    effects: Counter[str] = Counter()
    for event in events(result):
        if event["kind"] == "model.call":
            hosts[f"{event['data'].get('host')} (model)"] += 1
        elif event["kind"] not in ("egress.denied", "docs.miss") and not event["kind"].startswith(
            "gateway."
        ):
            effects[event["kind"]] += 1
    return [f"{k} x{n}" for k, n in sorted(hosts.items())] + [
        f"{k} x{n}" for k, n in sorted(effects.items())
    ]


@app.command("check")
def check(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="A built-in harness (or a spec file).")],
    case: Annotated[Path, typer.Option(help="The case to run it on.")] = DEMO_CASE,
    stub: Annotated[str, typer.Option(help="The stub trajectory to play.")] = "gold",
    out_dir: Annotated[Path, typer.Option("--out", help="Where run directories go.")] = Path(
        ".replay/runs"
    ),
) -> None:
    """Install the harness (from the wheelhouse) and run it against the stub on a demo case:
    its outcome, what it reached, and what the gateway denied it. Exit 1 unless gold passes
    (or another trajectory fails)."""
    from replay.run.runner import RunOptions, run_case

    (result,) = run_case(
        case, RunOptions(harness=name, stub=stub, out=out_dir, db=ctx.obj.db, wire_retries=0)
    )
    g = result.grade
    out.print(
        f"harness {g.harness} on {result.case_id} [stub:{stub}]: {result.outcome}", markup=False
    )
    out.print(f"  reason: {result.reason}", markup=False)
    out.print(f"  reached: {', '.join(reached(result)) or 'nothing'}", markup=False)
    refused = denied(result)
    out.print(f"  denied: {len(refused) or 'nothing'}", markup=False)
    for what, mine in refused:
        whose = "the harness's own (its spec declares it)" if mine else "held against the run"
        out.print(f"    {what}  [{whose}]", markup=False)
    out.print(f"  run directory: {result.run_dir}", markup=False)
    if (result.outcome == "pass") != (stub == "gold"):
        raise typer.Exit(1)


@app.command("matrix")
def matrix(
    ctx: typer.Context,
    cases: Annotated[list[Path], typer.Argument(help="Case files (case.yaml).")],
    harness: Annotated[
        list[str] | None,
        typer.Option(help="A harness to run (repeatable); every built-in one by default."),
    ] = None,
    stub: Annotated[
        list[str] | None, typer.Option(help="Stub trajectories (repeatable); gold and idle.")
    ] = None,
    out_dir: Annotated[Path, typer.Option("--out", help="Where run directories go.")] = Path(
        ".replay/runs"
    ),
) -> None:
    """Every harness on every case with every trajectory, in one table. Exit 1 unless each
    gold run passes and each other run fails."""
    from replay.cli.progress import PhaseDisplay
    from replay.harness.spec import builtin_names, load_harness
    from replay.run.runner import RunOptions, run_case
    from replay.world import keep_warm

    names = harness or builtin_names()
    trajectories = stub or ["gold", "idle"]
    table = Table(
        "harness",
        "version",
        "case",
        "stub",
        "verdict",
        "tests",
        "side effects",
        "denied (harness's own)",
        "calls",
        "time",
        box=None,
        pad_edge=False,
    )
    wrong: list[str] = []
    rows: dict[tuple[int, int, int], list[str]] = {}
    specs = {name: load_harness(name)[0] for name in names}
    total = len(cases) * len(names) * len(trajectories)
    # Case by case, so that every run of a case shares its warm world (reset between runs);
    # the table lists them harness by harness.
    with PhaseDisplay(out) as display:
        for c, case in enumerate(cases):
            with keep_warm():
                for h, name in enumerate(names):
                    for t, trajectory in enumerate(trajectories):
                        display.label = f" [{name}, stub:{trajectory}]"
                        display.counter = (len(rows) + 1, total)
                        (r,) = run_case(
                            case,
                            RunOptions(
                                harness=name,
                                stub=trajectory,
                                out=out_dir,
                                db=ctx.obj.db,
                                wire_retries=0,
                                progress=display,
                            ),
                        )
                        rows[h, c, t] = _row(r, name, specs[name], trajectory)
                        if (r.outcome == "pass") != (trajectory == "gold"):
                            wrong.append(
                                f"{name} {r.case_id} [stub:{trajectory}]: {r.outcome}: {r.reason}"
                            )
    for key in sorted(rows):
        table.add_row(*rows[key])
    Console(highlight=False, width=max(out.width, 200)).print(table)
    for line in wrong:
        out.print(f"unexpected: {line}", markup=False)
    if wrong:
        raise typer.Exit(1)


def _row(r: RunResult, name: str, spec: HarnessSpec, trajectory: str) -> list[str]:
    """One run's row of the matrix."""
    g = r.grade
    tests = g.tests
    refused = denied(r)
    own = sum(mine for _, mine in refused)
    return [
        name,
        version_of(spec),
        r.case_id,
        trajectory,
        str(r.outcome),
        "-"
        if tests is None
        else f"F2P {tests.f2p_passed}/{len(tests.fail_to_pass)} "
        f"P2P {tests.p2p_passed}/{len(tests.pass_to_pass)}",
        "ok" if g.side_effects.ok else "violated: " + ", ".join(g.side_effects.violated),
        f"{len(refused)} ({own})",
        str(g.wire.logical_calls),
        f"{g.seconds.total:.0f}s",
    ]
