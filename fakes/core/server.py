"""Serving a world: one ASGI app that routes by Host to each fake, plus the control plane.

The control plane lives under :data:`CONTROL_PREFIX` on every host (moto's ``/moto-api/``):
reset, the event log as JSON lines, a state dump. Nothing under it is an agent's mutation.
A fake is found by name in :data:`FAKES`; an unknown name is an error listing the known ones.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import Any

from fastapi import FastAPI, Query
from fastapi.responses import JSONResponse, Response

from fakes.core.events import EventLog
from fakes.core.world import World, control_router
from replay.case import ScriptedReply
from replay.errors import ReplayError
from replay.snapshot.load import Snapshot

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

CONTROL_PREFIX = "/_replay"

FAKES: dict[str, str] = {
    "github": "fakes.github",
    "linear": "fakes.linear",
    "slack": "fakes.slack",
}
"""Service name -> module exposing ``install(world) -> ASGI app`` and ``HOSTS``."""


class UnknownFake(ReplayError):
    def __init__(self, name: str) -> None:
        super().__init__(f"no fake named {name!r}; known: {', '.join(sorted(FAKES))}")


def _module(name: str) -> Any:
    if name not in FAKES:
        raise UnknownFake(name)
    return importlib.import_module(FAKES[name])


class WorldApp:
    """ASGI entry for a whole world: control plane first, then the fake that owns the Host."""

    def __init__(self, world: World, apps: dict[str, ASGIApp]) -> None:
        self.world = world
        self.routes = dict(apps)
        self.control = control_app(world)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.control(scope, receive, send)
            return
        path: str = scope.get("path", "")
        if path == CONTROL_PREFIX or path.startswith(CONTROL_PREFIX + "/"):
            await self.control(scope, receive, send)
            return
        host = host_of(scope)
        app = self.routes.get(host)
        if app is None:
            body = json.dumps({"message": f"no fake serves host {host!r}"}).encode()
            await send(
                {
                    "type": "http.response.start",
                    "status": 421,
                    "headers": [(b"content-type", b"application/json")],
                }
            )
            await send({"type": "http.response.body", "body": body})
            return
        await app(scope, receive, send)


def host_of(scope: Scope) -> str:
    for key, value in scope.get("headers", []):
        if key == b"host":
            host = str(value.decode("latin-1")).lower()
            if host.startswith("["):
                return host.split("]")[0] + "]"
            return host.rsplit(":", 1)[0] if ":" in host else host
    server = scope.get("server")
    return str(server[0]) if server else ""


def control_app(world: World) -> FastAPI:
    app = FastAPI(title="replay control plane", docs_url=None, redoc_url=None, openapi_url=None)

    @app.post(f"{CONTROL_PREFIX}/reset")
    def reset() -> dict[str, bool]:
        world.reset()
        return {"ok": True}

    @app.get(f"{CONTROL_PREFIX}/events")
    def events(since: int = Query(default=0, ge=0)) -> Response:
        with world.session() as s:
            lines = [e.model_dump_json(by_alias=True) + "\n" for e in EventLog.read(s, since)]
        return Response("".join(lines), media_type="application/x-ndjson")

    @app.get(f"{CONTROL_PREFIX}/state")
    def state() -> JSONResponse:
        with world.session() as s:
            return JSONResponse({name: fake.dump(s) for name, fake in world.fakes.items()})

    for name, fake in world.fakes.items():
        # A fake's own switches, e.g. /_replay/slack/ratelimit; still never an agent's mutation.
        router = control_router(fake)
        if router is not None:
            app.include_router(router, prefix=f"{CONTROL_PREFIX}/{name}")

    @app.get(f"{CONTROL_PREFIX}/health")
    def health() -> dict[str, Any]:
        return {"ok": True, "at": world.snapshot.at.isoformat(), "fakes": sorted(world.fakes)}

    return app


def build_world(
    snapshot: Snapshot,
    services: Iterable[str] = ("github", "linear", "slack"),
    db_url: str = "sqlite://",
    humans: Iterable[ScriptedReply] = (),
) -> WorldApp:
    """Start every named fake on one shared world; return the app that routes between them."""
    modules = {name: _module(name) for name in services}
    world = World(snapshot, db_url=db_url, humans=list(humans))
    apps: dict[str, ASGIApp] = {}
    for module in modules.values():
        app = module.install(world)
        for host in module.HOSTS:
            apps[host] = app
    return WorldApp(world, apps)
