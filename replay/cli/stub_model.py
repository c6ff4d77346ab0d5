"""``replay stub-model``: serve the stub model."""

from __future__ import annotations

import socket
import sys
from pathlib import Path
from typing import Annotated

import typer

from replay.base.errors import InputError
from replay.cli.common import out

app = typer.Typer(
    help="The stub model: plays a scripted trajectory, injects wire faults.",
    no_args_is_help=True,
)


@app.callback()
def _group() -> None:
    """The stub model: plays a scripted trajectory, injects wire faults."""


@app.command("serve")
def serve(
    script: Annotated[Path, typer.Option(help="Trajectory script (YAML or JSON).")],
    port: Annotated[int, typer.Option(help="TCP port on --host (0: any free port).")] = 8765,
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    fault: Annotated[
        list[str] | None,
        typer.Option(
            help="KIND=RATE, KIND=every:N or KIND=calls:FIRST-LAST (repeatable), "
            "e.g. 503=0.1, reset=every:3, reset=calls:1-3."
        ),
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of the fault draws.")] = 0,
    hold_seconds: Annotated[
        float, typer.Option(help="How long a timeout fault holds a connection.")
    ] = 30.0,
    retry_after: Annotated[float, typer.Option(help="retry-after of a 429, in seconds.")] = 1.0,
    think_seconds: Annotated[float, typer.Option(help="Delay before each answer's headers.")] = 0.0,
    event_gap_seconds: Annotated[
        float, typer.Option(help="Delay between the events of a stream.")
    ] = 0.0,
) -> None:
    """Serve /v1/chat/completions, /v1/responses, /v1/messages and /v1/models."""
    import uvicorn
    from pydantic import ValidationError

    from replay.harness.stub import Fault, StubConfig, load_script, make_stub_app

    loaded = load_script(script)
    try:
        faults = [Fault.parse(spec) for spec in fault or []]
        config = StubConfig(
            script=loaded,
            faults=faults,
            seed=seed,
            hold_seconds=hold_seconds,
            retry_after=retry_after,
            think_seconds=think_seconds,
            event_gap_seconds=event_gap_seconds,
        )
        stub = make_stub_app(config)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in first["loc"])
        raise InputError("--fault", f"{where}: {first['msg']}" if where else first["msg"]) from exc
    except ValueError as exc:
        raise InputError("--fault", str(exc)) from exc
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        # Listen before printing the URL: a client that reads it and connects at once waits
        # in the backlog until uvicorn accepts, instead of being refused.
        sock.listen(2048)
    except OSError as exc:
        raise InputError("--port", f"cannot listen on {host}:{port}: {exc.strerror}") from exc
    bound = sock.getsockname()[1]
    base = f"http://{host}:{bound}"
    out.print(
        f"stub model {loaded.name!r} ({len(loaded.steps)} steps) at {base}"
        f" (OpenAI base_url {base}/v1); faults: " + (", ".join(fault or []) or "none")
    )
    sys.stdout.flush()
    server = uvicorn.Server(uvicorn.Config(stub, log_level="warning", lifespan="off"))
    server.run(sockets=[sock])
