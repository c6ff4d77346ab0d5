"""The ``replay`` command. The only place that turns errors into messages and exit codes.

Exit status: 0 success, 1 a check failed or a tool broke, 2 bad input (one line naming the
file, the field and the problem).

One module per command group (:mod:`replay.cli.case` holds ``replay case ...``), and one per
top-level command (:mod:`replay.cli.run`, :mod:`replay.cli.events`); this module assembles
them into the root app. Nothing below the command line imports this package.
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer
from rich.console import Console

from replay import __version__
from replay.base.errors import InputError, ReplayError, UsageError
from replay.cli import (
    batch,
    case,
    compare,
    docs,
    doctor,
    events,
    fakes,
    gc,
    harness,
    image,
    redteam,
    registry,
    results,
    run,
    snapshot,
    stub_model,
    view,
    world,
)
from replay.cli.common import LOOSE, Settings, clients_missing, needs_clients, out

app = typer.Typer(
    help="Replay shipped tickets against coding agents in a frozen copy of the world.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)

# The contract group drives the services' real clients, an extra that an environment such
# as the gateway's cannot have (see pyproject): there it is a stand-in that says so.
if (missing := clients_missing()) is not None:
    app.command("contract", context_settings=LOOSE)(needs_clients(missing))
app.command("run")(run.run)
app.command("compare")(compare.compare)
app.command("events")(events.events)
app.command("doctor")(doctor.doctor)
app.command("view")(view.view)
app.add_typer(case.app, name="case")
app.add_typer(batch.app, name="batch")
app.add_typer(redteam.app, name="redteam")
app.add_typer(snapshot.app, name="snapshot")
app.add_typer(results.app, name="results")
app.add_typer(fakes.app, name="fakes")
app.add_typer(world.app, name="world")
app.add_typer(docs.app, name="docs")
app.add_typer(registry.app, name="registry")
app.add_typer(stub_model.app, name="stub-model")
app.add_typer(image.app, name="image")
app.add_typer(gc.app, name="gc")
app.add_typer(harness.app, name="harness")
if missing is None:
    from replay.cli import contract

    app.add_typer(contract.app, name="contract")


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


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the command, map errors to exit status."""
    err = Console(stderr=True, highlight=False)
    try:
        # Standalone mode: click reports its own usage errors (status 2) and exits.
        app(args=argv, prog_name="replay")
    except (InputError, UsageError) as exc:
        err.print(f"error: {exc}", markup=False, soft_wrap=True)
        sys.exit(2)
    except ReplayError as exc:
        err.print(f"error: {exc}", markup=False, soft_wrap=True)
        sys.exit(1)
