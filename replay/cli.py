"""The ``replay`` command. The only place that turns errors into messages and exit codes.

Exit status: 0 success, 1 a check failed or a tool broke, 2 bad input (one line naming the
file, the field and the problem).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from replay import __version__
from replay.base.errors import InputError, ReplayError

app = typer.Typer(
    help="Replay shipped tickets against coding agents in a frozen copy of the world.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
case_app = typer.Typer(help="Cases: one shipped ticket each.", no_args_is_help=True)
snapshot_app = typer.Typer(help="Snapshots: the world as it stood at T.", no_args_is_help=True)
results_app = typer.Typer(help="The results store.", no_args_is_help=True)
docs_cli = typer.Typer(help="The documentation cache of a snapshot.", no_args_is_help=True)
world_app = typer.Typer(help="One frozen world behind the gateway.", no_args_is_help=True)
fakes_app = typer.Typer(
    help="The stateful fakes of GitHub, Linear and Slack.", no_args_is_help=True
)
app.add_typer(case_app, name="case")
app.add_typer(snapshot_app, name="snapshot")
app.add_typer(results_app, name="results")
app.add_typer(fakes_app, name="fakes")
app.add_typer(world_app, name="world")
app.add_typer(docs_cli, name="docs")


def _needs_clients(missing: str | None) -> Callable[[], None]:
    """A stand-in command for a feature whose clients (an extra) are not installed."""

    def unavailable() -> None:
        raise ReplayError(
            f"this command drives the services' real clients ({missing} is not installed): "
            "pip install 'replay[clients]'"
        )

    return unavailable


_LOOSE = {"allow_extra_args": True, "ignore_unknown_options": True}


def _mount_subcommands() -> None:
    # Sub-apps that live beside what they drive; imported here, they stay light to load.
    from replay.harness.cli import stub_model_app
    from replay.images.cli import app as image_app
    from replay.registry.cli import app as registry_app
    from replay.runtime.cli import app as gc_app

    app.add_typer(registry_app, name="registry")
    app.add_typer(stub_model_app, name="stub-model")
    app.add_typer(image_app, name="image")
    app.add_typer(gc_app, name="gc")
    # These drive the services' real clients (httpx, githubkit, slack_sdk, gql): an extra
    # that an environment such as the gateway's cannot have (see pyproject).
    try:
        from replay.capture.cli import capture as snapshot_capture

        snapshot_app.command("capture")(snapshot_capture)
    except ModuleNotFoundError as exc:
        snapshot_app.command("capture", context_settings=_LOOSE)(_needs_clients(exc.name))
    try:
        from replay.casebuild.cli import create as case_create
        from replay.casebuild.cli import import_swebench

        case_app.command("create")(case_create)
        case_app.command("import-swebench")(import_swebench)
    except ModuleNotFoundError as exc:
        case_app.command("create", context_settings=_LOOSE)(_needs_clients(exc.name))
        case_app.command("import-swebench", context_settings=_LOOSE)(_needs_clients(exc.name))
    try:
        from replay.contract.cli import contract_app

        app.add_typer(contract_app, name="contract")
    except ModuleNotFoundError as exc:
        app.command("contract", context_settings=_LOOSE)(_needs_clients(exc.name))


_mount_subcommands()

out = Console(highlight=False, soft_wrap=True)


class Settings:
    """Options given before the subcommand, passed down through click's context."""

    def __init__(self, db: str | None) -> None:
        self.db = db


@app.callback(invoke_without_command=True)
def _root(
    ctx: typer.Context,
    db: Annotated[
        str | None,
        typer.Option(help="Results store: a SQLAlchemy URL or a SQLite path. Env: REPLAY_DB."),
    ] = None,
    version: Annotated[bool, typer.Option("--version", help="Print the version.")] = False,
) -> None:
    if version:
        out.print(f"replay {__version__}")
        raise typer.Exit()
    if ctx.invoked_subcommand is None:
        out.print(ctx.get_help())
        raise typer.Exit()
    ctx.obj = Settings(db)


# ----------------------------------------------------------------------------- case


@case_app.command("validate")
def case_validate(
    paths: Annotated[list[Path], typer.Argument(help="Case files (case.yaml).")],
) -> None:
    """Check a case: its format, its snapshot, its gold patch and its hidden tests."""
    from replay.validate import validate_case

    for path in paths:
        result = validate_case(path)
        out.print(f"[bold]{result.case.id}[/] ({path})")
        for check in result.checks:
            out.print(f"  ok  {check}")


# ----------------------------------------------------------------------------- snapshot


@snapshot_app.command("inspect")
def snapshot_inspect(path: Annotated[Path, typer.Argument(help="Snapshot directory.")]) -> None:
    """Show T, the repository, and how much of each service the snapshot holds."""
    from replay.snapshot import load_snapshot
    from replay.snapshot.inspect import summarize

    summary = summarize(load_snapshot(path))
    out.print(f"snapshot  {summary.path}")
    out.print(f"T         {summary.at.isoformat()}")
    out.print(f"source    {summary.source}")
    for r in summary.repositories:
        out.print(
            f"repo      {r.name} @ {r.base_commit} ({r.default_branch}): {r.commits} commits, "
            f"newest {r.newest_commit_at.isoformat()}"
        )
    table = Table("what", "count", box=None, pad_edge=False)
    for what, count in summary.counts.items():
        table.add_row(what, str(count))
    out.print(table)


@snapshot_app.command("build")
def snapshot_build(
    sources: Annotated[Path, typer.Argument(help="Sources directory (world.yaml, history/).")],
    dest: Annotated[Path, typer.Argument(help="Snapshot directory to write (replaced).")],
    at: Annotated[
        datetime | None,
        typer.Option(help="Cut at this T instead of world.yaml's (ISO 8601 with a timezone)."),
    ] = None,
    shared_git: Annotated[
        bool,
        typer.Option(
            "--shared-git",
            help="Keep the repository's history in the shared git store under the blob store "
            "(each object once for every snapshot) instead of a bundle in the snapshot.",
        ),
    ] = False,
    blobs: Annotated[
        Path | None,
        typer.Option(help="Blob store root; default $REPLAY_BLOBS or snapshots/blobs."),
    ] = None,
) -> None:
    """Generate a snapshot from sources, cutting their timeline at T."""
    from replay.snapshot import build_snapshot

    if at is not None and at.tzinfo is None:
        raise InputError(sources / "world.yaml", "--at needs a timezone (e.g. ...Z)", "at")
    manifest = build_snapshot(sources, dest, at, shared_git=shared_git, blobs=blobs)
    out.print(f"wrote {dest} (T {manifest.at.isoformat()}, {len(manifest.parts)} parts)")
    for name, digest in sorted(manifest.parts.items()):
        out.print(f"  {digest}  {name}")
    for repo in manifest.repositories:
        if repo.objects is not None:
            out.print(f"  {repo.name} @ {repo.base_commit} in the shared store {repo.objects}")


@snapshot_app.command("prune-cache")
def snapshot_prune_cache(
    blobs: Annotated[
        Path | None,
        typer.Option(help="Blob store root; default $REPLAY_BLOBS or snapshots/blobs."),
    ] = None,
    older_than: Annotated[
        float, typer.Option(help="Keep bundles written within this many hours.", min=0)
    ] = 1.0,
) -> None:
    """Remove the bundles cut from the shared git stores; they are made again on use."""
    from replay.base.sharedgit import blob_root, prune_bundles

    root = blob_root(blobs)
    removed = prune_bundles(root, older_than * 3600)
    out.print(f"removed {len(removed)} cached bundle(s) under {root}")


@snapshot_app.command("audit")
def snapshot_audit(
    path: Annotated[Path, typer.Argument(help="Snapshot directory.")],
    case: Annotated[
        Path | None, typer.Option(help="Case file: also search for its answer.")
    ] = None,
    fresh: Annotated[bool, typer.Option(help="Ignore the cached verdict.")] = False,
) -> None:
    """Search every part of the snapshot for what came after T and, with --case, the answer."""
    from replay.base.case import load_case
    from replay.snapshot import load_snapshot
    from replay.snapshot.audit import audit, audit_cached

    findings = (
        audit(load_snapshot(path), load_case(case) if case else None)
        if fresh
        else audit_cached(path, case)
    )
    for f in findings:
        out.print(f"LEAK  {f.location}: {f.problem}", markup=False)
    if findings:
        raise typer.Exit(1)
    answer = f" the answer of {case}" if case else ""
    out.print(f"clean: nothing in {path} leaks{answer} (nothing dated after T)")


# ----------------------------------------------------------------------------- fakes


@fakes_app.command("serve")
def fakes_serve(
    snapshot: Annotated[Path, typer.Argument(help="Snapshot directory.")],
    port: Annotated[int, typer.Option(help="TCP port on --host.")] = 8080,
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    uds: Annotated[
        Path | None,
        typer.Option(help="Listen on this Unix socket instead (gh's http_unix_socket)."),
    ] = None,
    service: Annotated[
        list[str] | None, typer.Option(help="Serve only these fakes (repeatable).")
    ] = None,
) -> None:
    """Serve the snapshot's fakes standalone, routing requests by their Host header."""
    import uvicorn

    from fakes.core import FAKES, build_world
    from replay.snapshot import load_snapshot

    world = build_world(load_snapshot(snapshot), service or sorted(FAKES))
    where = f"unix:{uds}" if uds else f"http://{host}:{port}"
    out.print(f"serving {', '.join(sorted(world.routes))} at {where} (T {world.world.snapshot.at})")
    out.print(
        "control plane: /_replay/{reset,events,state,health} on any host"
        " (the runner's own tool: never put this listener where an agent can reach it;"
        " `replay world up` serves the fakes without it)"
    )
    if uds:
        uvicorn.run(world, uds=str(uds), log_level="warning")
    else:
        uvicorn.run(world, host=host, port=port, log_level="warning")


# ----------------------------------------------------------------------------- world

STATE_FILE = Path(".replay") / "world.json"


@world_app.command("up")
def world_up(
    snapshot: Annotated[Path, typer.Argument(help="Snapshot directory.")],
    port: Annotated[int, typer.Option(help="Proxy port (0: any free port).")] = 0,
    host: Annotated[str, typer.Option(help="Address the proxy listens on.")] = "127.0.0.1",
    model_upstream: Annotated[
        str | None,
        typer.Option(help="Send model-API traffic here instead (e.g. the stub model's URL)."),
    ] = None,
    model_host: Annotated[
        list[str] | None, typer.Option(help="Model API hosts (default: OpenAI and Anthropic).")
    ] = None,
    case: Annotated[Path | None, typer.Option(help="Case whose scripted people to play.")] = None,
    state: Annotated[Path, typer.Option(help="Where to write the world's state.")] = STATE_FILE,
    confdir: Annotated[
        Path, typer.Option(help="mitmproxy's directory (its CA is made once and reused).")
    ] = Path(".replay") / "gateway",
    events_db: Annotated[
        str, typer.Option(help="SQLAlchemy URL of the run's event log (default: in memory).")
    ] = "sqlite://",
    service: Annotated[
        list[str] | None, typer.Option(help="Start only these fakes (repeatable).")
    ] = None,
    model_first_byte_timeout: Annotated[
        float | None,
        typer.Option(
            help="Seconds the gateway waits for the provider's first byte before it gives up "
            "(a transport timeout); default $REPLAY_MODEL_FIRST_BYTE_TIMEOUT or 540."
        ),
    ] = None,
    model_idle_timeout: Annotated[
        float | None,
        typer.Option(
            help="Seconds an answer may stall mid-body before the gateway gives up; "
            "default $REPLAY_MODEL_IDLE_TIMEOUT or 300."
        ),
    ] = None,
    model_upstream_ca: Annotated[
        Path | None,
        typer.Option(help="PEM bundle to trust for an https --model-upstream."),
    ] = None,
) -> None:
    """Start the world: fakes, registry and docs behind mitmproxy; only the model API is live."""
    import asyncio

    try:
        from replay.gateway.proxy import serve_forever
    except ModuleNotFoundError as exc:
        if exc.name is None or not exc.name.startswith("mitmproxy"):
            raise
        raise ReplayError(
            f"the gateway needs mitmproxy 11.0.2 in its own environment "
            f"(make builds .venv-gateway): {exc}"
        ) from exc
    from replay.gateway.config import MODEL_HOSTS, GatewayConfig

    config = GatewayConfig(
        snapshot=snapshot.resolve(),
        listen_host=host,
        listen_port=port,
        confdir=confdir.resolve(),
        state_file=state.resolve(),
        events_db=events_db,
        model_hosts=tuple(model_host or MODEL_HOSTS),
        model_upstream=model_upstream,
        case=case.resolve() if case else None,
        **({"services": tuple(service)} if service else {}),
        **(
            {"model_first_byte_timeout": model_first_byte_timeout}
            if model_first_byte_timeout
            else {}
        ),
        **({"model_idle_timeout": model_idle_timeout} if model_idle_timeout else {}),
        **({"model_upstream_ca": model_upstream_ca.resolve()} if model_upstream_ca else {}),
    )
    asyncio.run(serve_forever(config))


@world_app.command("env")
def world_env(
    state: Annotated[Path, typer.Option(help="The running world's state file.")] = STATE_FILE,
) -> None:
    """Print the running world's client environment as shell exports."""
    import json

    try:
        data = json.loads(state.read_text())
    except FileNotFoundError as exc:
        raise ReplayError(f"no world is up ({state} does not exist): replay world up") from exc
    except json.JSONDecodeError as exc:
        raise InputError(state, f"malformed JSON: {exc.msg}") from exc
    import shlex

    for key, value in sorted(data["env"].items()):
        out.print(f"export {key}={shlex.quote(value)}", markup=False)


# ----------------------------------------------------------------------------- run


@app.command("run")
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
        list[str] | None, typer.Option(help="Stub wire fault, KIND=RATE or KIND=every:N.")
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
) -> None:
    """Replay cases end to end: world, sandbox, harness, hidden tests, side effects, verdict."""
    from replay.results.stats import case_stats
    from replay.run.runner import RunOptions, RunResult, run_case
    from replay.run.summary import summary_table

    pairs = [item.partition("=") for item in harness_env or []]
    if any(not sep for _, sep, _ in pairs):
        raise typer.BadParameter("expected NAME=VALUE", param_hint="--harness-env")
    wanted = {
        k if sep else "*": v if sep else k for k, sep, v in (e.partition("=") for e in expect or [])
    }
    results: list[RunResult] = []
    trajectories: list[str | None] = list(stub) if stub else [None]
    for case in cases:
        for trajectory in trajectories:
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
            )
            done = run_case(case, options)
            results += done
            stats = case_stats(
                done[0].case_id, [r.outcome for r in done], ks=sorted({1, len(done)})
            )
            rate = "n/a" if stats.pass_rate is None else f"{stats.pass_rate:.2f}"
            low, high = stats.interval
            label = done[0].grade["model"]
            out.print(
                f"{stats.case_id} [{label}]: {stats.passes}/{stats.healthy} healthy runs "
                f"passed (rate {rate}, 95% CI {low:.2f}-{high:.2f}); "
                f"outcomes {stats.outcomes}",
                markup=False,
            )
            for k, value in stats.pass_at.items():
                out.print(f"  pass@{k} {value:.2f}   pass^{k} {stats.pass_hat[k]:.2f}")
    # A wide table: give it room even when the output is not a terminal.
    Console(highlight=False, width=max(out.width, 220)).print(summary_table(results))
    for r in results:
        out.print(f"  {r.case_id} run {r.attempt}: {r.run_dir}", markup=False)
    trajectory_of = {id(r): str(r.grade["model"]).removeprefix("stub:") for r in results}
    failed = [
        r
        for r in results
        if (want := wanted.get(trajectory_of[id(r)], wanted.get("*"))) is not None
        and r.outcome != want
    ]
    if failed:
        for r in failed:
            out.print(
                f"unexpected: {r.case_id} [{r.grade['model']}] was {r.outcome}: {r.reason}",
                markup=False,
            )
        raise typer.Exit(1)


@case_app.command("calibrate")
def case_calibrate(
    ctx: typer.Context,
    cases: Annotated[list[Path], typer.Argument(help="Case files (case.yaml).")],
    runs: Annotated[int, typer.Option(min=1, help="Runs of gold and of idle (K).")] = 3,
) -> None:
    """Gold must pass and idle must fail, K times each; a case that does not is left out."""
    from replay.run.calibrate import calibrate
    from replay.run.runner import RunOptions

    bad = []
    for case in cases:
        result = calibrate(case, RunOptions(db=ctx.obj.db), runs=runs)
        gold = sum(r.outcome == "pass" for r in result.gold)
        idle = sum(r.outcome == "model_fail" for r in result.idle)
        verdict = "calibrated" if result.calibrated else "NOT CALIBRATED (left out of results)"
        out.print(
            f"{result.case_id}: gold passed {gold}/{runs}, idle failed {idle}/{runs}: {verdict}"
        )
        if not result.calibrated:
            bad.append(result.case_id)
    if bad:
        raise typer.Exit(1)


# ----------------------------------------------------------------------------- events


@app.command("events")
def events(
    run: Annotated[
        Path, typer.Argument(help="A run directory (its events.db) or an event-log SQLite file.")
    ],
    jsonl: Annotated[bool, typer.Option("--jsonl", help="One JSON object per line.")] = False,
    kind: Annotated[str | None, typer.Option(help="Only events of this kind (wildcards).")] = None,
) -> None:
    """Export a run's event log: fake mutations, denied requests, model calls."""
    import fnmatch

    from sqlalchemy import create_engine
    from sqlalchemy.exc import SQLAlchemyError
    from sqlalchemy.orm import Session

    from fakes.core.events import EventLog

    db = run / "events.db" if run.is_dir() else run
    if not db.is_file():
        raise InputError(db, "no event log here (expected a run directory or a SQLite file)")
    engine = create_engine(f"sqlite:///{db.resolve()}")
    try:
        with Session(engine) as session:
            found = EventLog.read(session)
    except SQLAlchemyError as exc:
        raise InputError(db, f"not an event log: {str(exc).splitlines()[0]}") from exc
    finally:
        engine.dispose()
    for event in found:
        if kind and not fnmatch.fnmatchcase(event.kind, kind):
            continue
        if jsonl:
            out.print(event.model_dump_json(by_alias=True), markup=False, highlight=False)
        else:
            out.print(
                f"{event.seq:>5} {event.at.isoformat()} {event.kind:<34} {event.object.id}",
                markup=False,
            )


# ----------------------------------------------------------------------------- docs


@docs_cli.command("record")
def docs_record(
    snapshot: Annotated[Path, typer.Argument(help="Snapshot directory to add the pages to.")],
    urls: Annotated[list[str], typer.Argument(help="Pages to record (GET).")],
    archive: Annotated[
        str | None,
        typer.Option(
            help="Fetch through a web archive as of T: a template with {stamp} and {url}, "
            "e.g. https://web.archive.org/web/{stamp}id_/{url}"
        ),
    ] = None,
) -> None:
    """Record documentation pages into the snapshot; they are served read-only as of T."""
    from replay.docs import record_pages

    for page in record_pages(snapshot, urls, archive=archive):
        out.print(f"{page.status}  {page.sha256[:12]}  {page.fetched_at.isoformat()}  {page.url}")


# ----------------------------------------------------------------------------- results


@results_app.command("report")
def results_report(ctx: typer.Context) -> None:
    """Quality over healthy runs of calibrated cases, with reliability and cost beside it."""
    from replay.results import Store
    from replay.results.report import build_report

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
        "pass@1",
        "pass^k",
        "reliability",
        "tokens",
        "cost",
        box=None,
    )
    for row in report.rows:
        st = row.stats
        rate = "n/a" if st.pass_rate is None else f"{st.passes}/{st.healthy} = {st.pass_rate:.2f}"
        k = max(st.pass_hat) if st.pass_hat else None
        table.add_row(
            row.case_id,
            row.harness,
            row.model,
            str(st.runs),
            rate,
            f"{st.interval[0]:.2f}-{st.interval[1]:.2f}",
            f"{st.pass_at[1]:.2f}" if 1 in st.pass_at else "n/a",
            f"^{k} {st.pass_hat[k]:.2f}" if k else "n/a",
            row.reliability,
            str(row.tokens),
            "n/a" if row.cost_usd is None else f"${row.cost_usd:.2f}",
        )
    out.print(table if report.rows else "no runs of calibrated cases with a real model yet")
    for case_id, why in sorted(report.left_out.items()):
        out.print(f"left out: {case_id}: {why}")


@results_app.command("list")
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


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the command, map errors to exit status."""
    err = Console(stderr=True, highlight=False)
    try:
        # Standalone mode: click reports its own usage errors (status 2) and exits.
        app(args=argv, prog_name="replay")
    except InputError as exc:
        err.print(f"error: {exc}", markup=False, soft_wrap=True)
        sys.exit(2)
    except ReplayError as exc:
        err.print(f"error: {exc}", markup=False, soft_wrap=True)
        sys.exit(1)
