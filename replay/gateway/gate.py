"""What the gateway's addons share, and how each fails closed.

:class:`Gate` holds the world, the apps that serve it and the run's health; :class:`Guarded`
is every addon's base: mitmproxy's own ``safecall`` logs an addon's exception and lets the
flow go on; here an exception kills the flow, is recorded, and marks the run invalid.
:func:`deny` is the one way a request is refused with a 403 and an ``egress.denied`` event.
"""

from __future__ import annotations

import functools
import inspect
import json
import logging
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mitmproxy import http
from mitmproxy.proxy import server_hooks

from fakes.core.world import World
from replay.gateway.config import GatewayConfig, Route
from replay.gateway.hostile import safe_data, safe_text
from replay.gateway.scrub import Scrubber

log = logging.getLogger("replay.gateway")

HOOKS = frozenset(
    {
        "http_connect",
        "requestheaders",
        "request",
        "responseheaders",
        "response",
        "error",
        "tcp_start",
        "udp_start",
        "dns_request",
        "websocket_start",
        "server_connect",
        "tls_clienthello",
    }
)
ROUTE = "replay.route"


@dataclass
class Gate:
    """What the addons share: the world, the apps that serve it, and the run's health."""

    config: GatewayConfig
    world: World
    apps: dict[Route, Callable[..., Any]]
    """ASGI apps for the fake, registry and docs routes."""
    fake_hosts: frozenset[str]
    docs_hosts: frozenset[str] = frozenset()
    invalid: list[str] = field(default_factory=list)
    """Why the run cannot be trusted (an addon crashed); empty while healthy."""
    scrubber: Scrubber = field(default_factory=lambda: Scrubber(()))
    """The runner's real keys, masked in every event the gateway records (set by
    :func:`addons`), whatever addon records it: a crash message or a refused URL may quote
    what the provider sent back."""

    def route(self, host: str) -> Route:
        return self.config.route_for(host, self.fake_hosts, self.docs_hosts)

    def record(
        self, service: str, kind: str, object_type: str, object_id: str, data: dict[str, Any]
    ) -> None:
        """Record an event in the world's log. Strings from the sandbox (a URL, a header,
        a path in bytes that are not UTF-8, a lone surrogate from JSON) are written as
        escapes, so that nothing the agent sends makes the record itself fail."""
        object_id = safe_text(object_id)
        data = safe_data(data)
        if self.scrubber:
            object_id = self.scrubber.scrub_text(object_id)
            data = json.loads(self.scrubber.scrub_text(json.dumps(data)))
        with self.world.session() as s:
            self.world.events.record(
                s,
                service=service,
                kind=kind,
                actor=None,
                object_type=object_type,
                object_id=object_id,
                data=data,
            )


class Guarded:
    """Base for the gateway's addons: an exception in any hook kills the flow (fail closed)."""

    def __init__(self, gate: Gate) -> None:
        self.gate = gate
        for name in HOOKS:
            hook = getattr(self, name, None)
            if hook is not None:
                setattr(self, name, self._guard(name, hook))

    def _guard(self, name: str, hook: Callable[..., Any]) -> Callable[..., Any]:
        if inspect.iscoroutinefunction(hook):

            @functools.wraps(hook)
            async def guarded_async(arg: Any) -> None:
                try:
                    await hook(arg)
                except Exception as exc:
                    self._fail(name, arg, exc)

            return guarded_async

        @functools.wraps(hook)
        def guarded(arg: Any) -> None:
            try:
                hook(arg)
            except Exception as exc:
                self._fail(name, arg, exc)

        return guarded

    def _fail(self, hook: str, arg: Any, exc: Exception) -> None:
        where = f"{type(self).__name__}.{hook}"
        scrub = self.gate.scrubber.scrub_text
        reason = safe_text(scrub(f"{where}: {type(exc).__name__}: {exc}"))
        log.error("addon failed, killing the flow: %s\n%s", reason, scrub(traceback.format_exc()))
        self.gate.invalid.append(reason)
        if isinstance(arg, server_hooks.ServerConnectionHookData):
            arg.server.error = f"replay gateway: {reason}"
        elif getattr(arg, "killable", False):
            arg.kill()
        elif isinstance(arg, http.HTTPFlow):
            arg.response = http.Response.make(502, f"replay gateway failed: {reason}\n")
        try:
            self.gate.record(
                "gateway",
                "gateway.addon_failed",
                "addon",
                where,
                {"error": reason, "url": _url(arg)},
            )
        except Exception:
            log.exception("could not record the addon failure")


def _url(arg: Any) -> str | None:
    return safe_text(arg.request.pretty_url) if isinstance(arg, http.HTTPFlow) else None


def deny(gate: Gate, flow: http.HTTPFlow, host: str, why: str) -> None:
    host, why = safe_text(host, 300), safe_text(why)
    body = (
        f"replay: {host} is outside the frozen world ({why}); this request was not sent anywhere.\n"
    )
    flow.response = http.Response.make(403, body, {"content-type": "text/plain; charset=utf-8"})
    flow.metadata[ROUTE] = "deny"
    gate.record(
        "egress",
        "egress.denied",
        "host",
        host,
        {
            "host": host,
            "port": flow.request.port,
            "method": safe_text(flow.request.method, 100),
            "scheme": flow.request.scheme,
            "path": safe_text(flow.request.path) if flow.request.method != "CONNECT" else None,
            "reason": why,
        },
    )


def refuse_request(gate: Gate, flow: http.HTTPFlow, host: str, why: str) -> None:
    """Refuse at ``requestheaders``: a 403 (:func:`deny`), or, for a body mitmproxy has
    already chosen to stream (it cannot answer such a request itself), kill the flow, which
    stops it before any upstream connection."""
    deny(gate, flow, host, why)
    if flow.request.stream:
        flow.response = None
        flow.kill()  # type: ignore[no-untyped-call]
