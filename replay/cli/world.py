"""``replay world``: one frozen world behind the gateway (start it, print its environment)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from replay.base.errors import InputError, ReplayError
from replay.cli.common import out

app = typer.Typer(help="One frozen world behind the gateway.", no_args_is_help=True)

STATE_FILE = Path(".replay") / "world.json"


@app.command("up")
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
    parent_pid: Annotated[
        int | None,
        typer.Option(
            min=1,
            help="Stop when this process (the runner that started the world) is gone.",
            hidden=True,
        ),
    ] = None,
    parent_start: Annotated[
        str | None,
        typer.Option(help="The parent's start time (tells a reused pid apart).", hidden=True),
    ] = None,
    lifeline: Annotated[
        int | None,
        typer.Option(
            min=0, help="A pipe's read end the parent holds open (--parent-pid).", hidden=True
        ),
    ] = None,
) -> None:
    """Start the world: fakes, registry and docs behind mitmproxy; only the model API is live."""
    import asyncio

    if parent_pid is not None:
        from replay.world.process import die_with_parent

        die_with_parent(parent_pid, lifeline)
    elif lifeline is not None:
        raise typer.BadParameter("--lifeline needs --parent-pid", param_hint="--lifeline")

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


@app.command("env")
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
