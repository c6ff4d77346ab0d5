"""``replay contract``: run the contract scenarios, record them, write the coverage table."""

from __future__ import annotations

import os
import runpy
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    from replay.contract.mutation import FamilyRun
    from replay.contract.recording import Gap
    from replay.contract.targets import ContractSetupError, Target

app = typer.Typer(help="Contract tests: the fakes held to the real APIs.", no_args_is_help=True)
# The defaults the options show, without importing the contract package (it loads the fakes,
# FastAPI and the clients: seconds, which ``replay --help`` must not pay). The same paths as
# replay.contract's RECORDINGS, COVERAGE_FILE and DEFAULT_SNAPSHOT (tests/contract checks it).
ROOT = Path(__file__).resolve().parents[2]
RECORDINGS = ROOT / "contract_tests" / "recordings"
COVERAGE_FILE = ROOT / "contract_tests" / "COVERAGE.md"
DEFAULT_SNAPSHOT = ROOT / "snapshots" / "demo"
TESTS = RECORDINGS.parent
GAPS_FILE = TESTS / "gaps.py"

ServiceOpt = Annotated[str, typer.Option("--service", "-s", help="github, slack, linear, or all.")]
RecordingsOpt = Annotated[Path, typer.Option(help="Directory of recordings.")]


def known_gaps(path: Path = GAPS_FILE) -> list[Gap]:
    """The known gaps: the ``GAPS`` list of ``contract_tests/gaps.py``.

    That file is data (it imports only :class:`Gap`) and is run by path, not imported: the
    ``contract_tests`` directory is not an installed package, so an import would need it on
    ``sys.path`` (``PYTHONPATH=.``), and the test modules beside it need pytest."""
    from replay.contract.recording import Gap

    if not path.exists():
        return []
    gaps: Any = runpy.run_path(str(path)).get("GAPS", [])
    return [g for g in gaps if isinstance(g, Gap)]


def _services(service: str) -> list[str]:
    from replay.contract.targets import SERVICES, ContractSetupError

    if service == "all":
        return list(SERVICES)
    if service not in SERVICES:
        raise ContractSetupError(
            f"--service: unknown service {service!r}; known: all, {', '.join(SERVICES)}"
        )
    return [service]


def _run(
    targets: dict[str, Target],
    recordings: Path,
    record: bool,
    every: bool = False,
    mutants: bool = False,
    only: Sequence[str] = (),
) -> bool:
    """Run every scenario of the targets' services; unless recording, also every family of
    evidence checks, and print the block of each service; with ``mutants``, then the mutation
    figure (which never fails the run). True when all held."""
    from replay.contract.evidence.families import FAMILIES
    from replay.contract.mutation import run_family
    from replay.contract.scenarios import all_scenarios
    from replay.contract.suite import check
    from replay.contract.summary import service_lines

    gaps = known_gaps()
    outcomes = [
        check(target, scenario, gaps, recordings, record=record)
        for service, target in targets.items()
        for scenario in all_scenarios(service)
    ]
    runs = []
    if not record:
        from replay.contract.mutation import family_name

        for i, family in enumerate(FAMILIES, 1):
            # Minutes in all: each family's line as it starts, on stderr.
            typer.echo(f"family {i}/{len(FAMILIES)} {family_name(family)}...", err=True)
            runs.append(run_family(family))
    reports = [r for run in runs for r in run.reports if r.service in targets]
    for service in targets:
        for line in service_lines(service, outcomes, reports, every):
            typer.echo(line)
    if mutants:
        _mutants(list(targets), runs, every, only)
    return all(o.ok or o.skipped for o in outcomes) and all(r.ok for r in reports)


def _mutants(
    services: list[str], unmodified: list[FamilyRun], every: bool, only: Sequence[str] = ()
) -> None:
    """Plant each mutant of ``services`` (those named ``only``, when given) in a copy of its
    fake and print how many the evidence from outside catches, one line per mutant to stderr
    as it goes."""
    from replay.contract.mutation import MUTANTS, MutantResult, run_mutants

    def told(i: int, n: int, result: MutantResult) -> None:
        typer.echo(f"mutant {i}/{n} {result.line()}", err=True)

    typer.echo("mutants: planting each in a copy of its fake (minutes)...", err=True)
    chosen = [m for m in MUTANTS if not only or m.name in only]
    report = run_mutants(services, chosen, progress=told, unmodified=unmodified)
    for line in report.lines(every):
        typer.echo(line)


def _mutant_names(names: list[str], services: list[str]) -> list[str]:
    """``--mutant``'s names, each checked to be a mutant of one of ``services``."""
    from replay.contract.mutation import MUTANTS
    from replay.contract.targets import ContractSetupError

    known = [m.name for m in MUTANTS if m.service in services]
    for name in names:
        if name not in known:
            raise ContractSetupError(
                f"--mutant: no mutant {name!r} of {', '.join(services)}; one of: {', '.join(known)}"
            )
    return names


def _fail(exc: ContractSetupError) -> None:
    typer.echo(f"error: {exc}", err=True)
    raise typer.Exit(2) from exc


@app.command("run")
def run_cmd(
    service: ServiceOpt = "all",
    target: Annotated[str, typer.Option(help="fake (default) or live.")] = "fake",
    snapshot: Annotated[Path, typer.Option(help="Snapshot the fake serves.")] = DEFAULT_SNAPSHOT,
    recordings: RecordingsOpt = RECORDINGS,
    every: Annotated[
        bool,
        typer.Option(
            "--list",
            help="List every check that held too (each served GraphQL field, each recorded "
            "interaction, each Slack response and error code, each mutant), not only gaps "
            "and failures.",
        ),
    ] = False,
    mutants: Annotated[
        bool,
        typer.Option(
            help="Plant faults of its own in a copy of each fake and print how many the "
            "evidence from outside catches (fake target only; minutes; an uncaught mutant is "
            "printed, not a failure).",
        ),
    ] = True,
    mutant: Annotated[
        list[str] | None,
        typer.Option(
            help="Plant only the mutant of this name (repeatable; the names are those "
            "--list prints).",
        ),
    ] = None,
) -> None:
    """Hold the fakes to the vendors' evidence (recorded real traffic, published schemas and
    SDK documents), run the scenarios and compare each with its recording; exit 1 on a
    failure or a difference. Then, unless ``--no-mutants``, the mutation figure: how many
    faults planted in copies of the fakes the evidence catches."""
    from replay.contract.targets import (
        ContractSetupError,
        fake_target,
        live_requested,
        live_target,
        serve_world,
    )

    try:
        names = _services(service)
        if target not in ("fake", "live"):
            raise ContractSetupError(f"--target: {target!r} is neither fake nor live")
        only = _mutant_names(mutant or [], names)
        with ExitStack() as stack:
            if target == "fake":
                served = stack.enter_context(serve_world(snapshot))
                targets = {name: fake_target(served) for name in names}
            else:
                if not live_requested():
                    raise ContractSetupError("--target live needs REPLAY_CONTRACT_LIVE=1")
                targets = {name: live_target(name) for name in names}
            ok = _run(
                targets,
                recordings,
                record=False,
                every=every,
                mutants=mutants and target == "fake",
                only=only,
            )
    except ContractSetupError as exc:
        _fail(exc)
        return
    raise typer.Exit(0 if ok else 1)


@app.command("record")
def record_cmd(
    service: ServiceOpt = "all",
    recordings: RecordingsOpt = RECORDINGS,
    stand_in: Annotated[
        bool,
        typer.Option(
            "--stand-in",
            help="Serve this project's fake on a loopback port and record it as the live "
            "service (the recordings then say recorded_against: self: regression snapshots "
            "of the fake, not evidence).",
        ),
    ] = False,
    snapshot: Annotated[Path, typer.Option(help="Snapshot of the stand-in.")] = DEFAULT_SNAPSHOT,
) -> None:
    """Record the scenarios against the live services named by the environment."""
    from replay.contract.targets import (
        ContractSetupError,
        live_requested,
        live_target,
        serve_world,
        stand_in_env,
    )

    try:
        names = _services(service)
        with ExitStack() as stack:
            env: dict[str, str] = dict(os.environ)
            if stand_in:
                env.update(stand_in_env(stack.enter_context(serve_world(snapshot))))
            elif not live_requested(env):
                raise ContractSetupError("recording needs REPLAY_CONTRACT_LIVE=1 (or --stand-in)")
            targets = {name: live_target(name, env) for name in names}
            ok = _run(targets, recordings, record=True)
    except ContractSetupError as exc:
        _fail(exc)
        return
    raise typer.Exit(0 if ok else 1)


@app.command("coverage")
def coverage_cmd(
    out: Annotated[Path, typer.Option(help="Markdown file to write.")] = COVERAGE_FILE,
    recordings: RecordingsOpt = RECORDINGS,
    check_only: Annotated[
        bool, typer.Option("--check", help="Only check that OUT is up to date.")
    ] = False,
    events: Annotated[
        list[Path] | None,
        typer.Option("--events", help="An agent run's event log (events.jsonl); may be repeated."),
    ] = None,
) -> None:
    """Write the coverage table of every fake (implemented, called, expected, missing)."""
    from replay.contract.coverage import load_recordings, render

    text = render(load_recordings(recordings), events or [])
    if check_only:
        if not out.exists() or out.read_text() != text:
            typer.echo(f"{out} is out of date: run `replay contract coverage`", err=True)
            raise typer.Exit(1)
        typer.echo(f"{out} is up to date")
        return
    out.write_text(text)
    typer.echo(f"wrote {out}")
