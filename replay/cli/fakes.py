"""``replay fakes serve``: the stateful fakes of GitHub, Linear and Slack, standalone."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from replay.cli.common import out

app = typer.Typer(help="The stateful fakes of GitHub, Linear and Slack.", no_args_is_help=True)


@app.command("serve")
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
