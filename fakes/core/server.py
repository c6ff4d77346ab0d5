"""Serving a world: the fakes routed by Host, and apart from them the control plane.

Two apps, on purpose:

- :class:`HostRouter` is the world as an agent may see it: each request goes to the fake that
  owns its Host, and nothing else exists. It has no control routes at all, so no spelling of a
  path (``/%5Freplay/reset``, ``//_replay``, ``/x/../_replay``) can reach one. The gateway
  serves only this.
- :func:`control_app` is the runner's: reset, the event log as JSON lines, a state dump, under
  :data:`CONTROL_PREFIX` (moto's ``/moto-api/``). Nothing under it is an agent's mutation. The
  gateway serves it on the runner's Unix socket only.

:class:`WorldApp` puts both on one listener for the runner's own tools, where no agent is
involved: ``replay fakes serve``, the contract targets and the fakes' tests.
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
from replay.base.case import ScriptedReply
from replay.base.errors import ReplayError
from replay.base.snapshot import Snapshot

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


class HostRouter:
    """ASGI entry for the fakes alone: the fake that owns the request's Host answers it."""

    def __init__(self, apps: dict[str, ASGIApp]) -> None:
        self.routes = dict(apps)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
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


async def _lifespan(receive: Receive, send: Send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


class WorldApp:
    """The runner's view of a world on one listener: the control plane, then the fakes.

    Never put this behind the gateway: serve :attr:`router` there (see the module doc).
    """

    def __init__(self, world: World, apps: dict[str, ASGIApp]) -> None:
        self.world = world
        self.router = HostRouter(apps)
        """The fakes without the control plane: what an agent may reach."""
        self.routes = self.router.routes
        self.control = control_app(world)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.control(scope, receive, send)
            return
        path: str = scope.get("path", "")
        if path == CONTROL_PREFIX or path.startswith(CONTROL_PREFIX + "/"):
            await self.control(scope, receive, send)
            return
        await self.router(scope, receive, send)


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
