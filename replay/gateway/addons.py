"""The gateway's mitmproxy addons: one concern each, in the order :func:`addons` gives.

1. :class:`Classify` decides each flow's route from its destination; CONNECTs to hosts
   outside the world are refused before any tunnel exists, and so is any request whose
   decoded, normalised path names the control plane (:mod:`replay.gateway.paths`).
2. :class:`ServeWorld` answers fake, registry and docs hosts from in-process apps (the fakes
   without the control plane, which lives only on the runner's Unix socket). A fake that
   raises answers 500 and is recorded as ``gateway.world_error``: the world's defect, which
   must not void the agent's run.
3. :class:`ModelRoute` forwards model-API requests upstream with the real credential and
   logs every call.
4. :class:`Deny` answers everything still unanswered with 403 and an ``egress.denied``
   event, and refuses raw TCP, UDP, DNS and WebSockets.
5. :class:`NoUpstream` refuses any upstream connection that is not on the model route.

Every hook is guarded (:class:`Guarded`): mitmproxy's own ``safecall`` logs an addon's
exception and lets the flow go on; here an exception kills the flow, is recorded, and marks
the run invalid. Fail closed.
"""

from __future__ import annotations

import functools
import inspect
import logging
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from mitmproxy import connection, http, tcp, udp
from mitmproxy.proxy import server_hooks

from fakes.core.world import World
from replay.gateway.asgi import serve
from replay.gateway.config import GatewayConfig, Route
from replay.gateway.modelcalls import ModelCall, ModelCallObserver, transport_kind
from replay.gateway.paths import names_control_plane

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

    def route(self, host: str) -> Route:
        return self.config.route_for(host, self.fake_hosts, self.docs_hosts)

    def record(
        self, service: str, kind: str, object_type: str, object_id: str, data: dict[str, Any]
    ) -> None:
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
        reason = f"{where}: {type(exc).__name__}: {exc}"
        log.error("addon failed, killing the flow: %s\n%s", reason, traceback.format_exc())
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
    return arg.request.pretty_url if isinstance(arg, http.HTTPFlow) else None


def _deny(gate: Gate, flow: http.HTTPFlow, host: str, why: str) -> None:
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
            "method": flow.request.method,
            "scheme": flow.request.scheme,
            "path": flow.request.path if flow.request.method != "CONNECT" else None,
            "reason": why,
        },
    )


class Classify(Guarded):
    """Give each flow its route, from where it is really going."""

    def http_connect(self, flow: http.HTTPFlow) -> None:
        host = flow.request.host
        route = self.gate.route(host)
        if route == "deny":
            _deny(self.gate, flow, host, "CONNECT to an unknown host")
            return
        flow.metadata[ROUTE] = route

    def requestheaders(self, flow: http.HTTPFlow) -> None:
        # flow.request.host is where the bytes would go (the CONNECT target inside a tunnel);
        # the Host header must name the same place, or a client could dress one host as another.
        host = flow.request.host.lower()
        named = flow.request.host_header
        if named is not None and named.split(":")[0].strip("[]").lower() != host:
            _deny(self.gate, flow, host, f"Host header {named!r} does not match the destination")
            return
        # Decided here, before any body is read or any upstream is dialled, and on the path as
        # the apps will decode it: the control plane is the runner's, never the agent's (the
        # apps served here do not even have it; this refuses and records the attempt).
        if names_control_plane(flow.request.data.path):
            _deny(self.gate, flow, host, "the control plane is not part of the world")
            return
        flow.metadata[ROUTE] = self.gate.route(host)


class ServeWorld(Guarded):
    """Answer the world's hosts from the in-process apps."""

    async def request(self, flow: http.HTTPFlow) -> None:
        if flow.response is not None or flow.error is not None:
            return
        route: Route | None = flow.metadata.get(ROUTE)
        if route in ("fake", "registry", "docs"):
            app = self.gate.apps.get(route)
            if app is None:
                _deny(self.gate, flow, flow.request.host, f"the world has no {route} here")
                return
            failure = await serve(app, flow)
            if failure is not None:
                # A fake that breaks on a request is the world's defect, not the gateway's: the
                # agent gets a 500 (as a real service sometimes answers) and the run is graded
                # on what it did. Voiding the run instead would let an agent cancel a losing run
                # with one malformed GET. The error is recorded and shown with the grade.
                self.gate.record(
                    "gateway",
                    "gateway.world_error",
                    "request",
                    flow.request.pretty_url,
                    {
                        "url": flow.request.pretty_url,
                        "method": flow.request.method,
                        "host": flow.request.pretty_host,
                        "error": f"{type(failure).__name__}: {failure}"[:2000],
                    },
                )


class Deny(Guarded):
    """Anything not answered and not on the model route is refused, and recorded."""

    def request(self, flow: http.HTTPFlow) -> None:
        if flow.response is not None or flow.error is not None:
            return
        if flow.metadata.get(ROUTE) != "model":
            _deny(self.gate, flow, flow.request.host, "not part of the world")

    def tcp_start(self, flow: tcp.TCPFlow) -> None:
        self._refuse(flow, "raw TCP")

    def udp_start(self, flow: udp.UDPFlow) -> None:
        self._refuse(flow, "UDP")

    def dns_request(self, flow: Any) -> None:
        self._refuse(flow, "DNS")

    def websocket_start(self, flow: http.HTTPFlow) -> None:
        self._refuse(flow, "WebSocket")

    def _refuse(self, flow: Any, what: str) -> None:
        address = flow.server_conn.address
        host = address[0] if address else "?"
        flow.kill()
        self.gate.record(
            "egress",
            "egress.denied",
            "host",
            str(host),
            {
                "host": str(host),
                "port": address[1] if address else None,
                "protocol": what,
                "reason": f"{what} is not allowed",
            },
        )


class NoUpstream(Guarded):
    """The last line: no connection leaves the machine except on the model route."""

    def server_connect(self, data: server_hooks.ServerConnectionHookData) -> None:
        server: connection.Server = data.server
        host = (server.address[0] if server.address else "") or ""
        upstream = self.gate.config.model_upstream
        allowed = self.gate.route(host) == "model" or (
            upstream is not None and _same_host(upstream, host, server.address)
        )
        if not allowed:
            server.error = f"replay gateway: no upstream connections to {host}"
            self.gate.record(
                "egress",
                "egress.denied",
                "host",
                host,
                {
                    "host": host,
                    "port": server.address[1] if server.address else None,
                    "reason": "upstream connection refused",
                },
            )


def _same_host(url: str, host: str, address: tuple[str, int] | None) -> bool:
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return parts.hostname == host and address is not None and address[1] == port


class ModelRoute(Guarded):
    """The one live route: the real credential goes on here, and every call is logged.

    The agent holds placeholder keys; the runner's real key is set only on requests to the
    model host, and scrubbed from anything that comes back.
    """

    def __init__(self, gate: Gate, secrets: dict[str, tuple[str, str]]) -> None:
        self.secrets = secrets
        """model host -> (header name, header value) taken from the runner's environment."""
        super().__init__(gate)

    def requestheaders(self, flow: http.HTTPFlow) -> None:
        if flow.metadata.get(ROUTE) != "model":
            return
        host = flow.request.host.lower()
        secret = self.secrets.get(host)
        if secret is not None:
            header, value = secret
            flow.request.headers[header] = value
            if header != "authorization":
                flow.request.headers.pop("authorization", None)
        if "accept-encoding" in flow.request.headers:
            # Only encodings the observer can read, so every answer's usage is counted.
            flow.request.headers["accept-encoding"] = "gzip, deflate"
        flow.metadata["replay.model_url"] = flow.request.pretty_url
        upstream = self.gate.config.model_upstream
        if upstream:
            parts = urlsplit(upstream)
            flow.request.scheme = parts.scheme
            flow.request.host = parts.hostname or "127.0.0.1"
            flow.request.port = parts.port or (443 if parts.scheme == "https" else 80)
            flow.request.host_header = host  # what the provider would see

    def request(self, flow: http.HTTPFlow) -> None:
        if flow.metadata.get(ROUTE) != "model" or flow.response is not None:
            return
        observer = ModelCallObserver()
        observer.begin(
            flow.request.method,
            str(flow.metadata.get("replay.model_url", flow.request.pretty_url)),
            _pairs(flow.request.headers),
            flow.request.raw_content or b"",
            flow.request.timestamp_end or time.time(),
        )
        flow.metadata["replay.observer"] = observer

    def responseheaders(self, flow: http.HTTPFlow) -> None:
        observer: ModelCallObserver | None = flow.metadata.get("replay.observer")
        if observer is None or flow.response is None:
            return
        response = flow.response
        observer.headers(
            response.status_code,
            _pairs(response.headers),
            response.timestamp_start or time.time(),
        )
        self._scrub_headers(response)
        if "text/event-stream" in response.headers.get("content-type", "").lower():
            # Set here, not later: setting stream after the headers hook buffers the body.
            response.stream = self._passthrough(observer)

    def _passthrough(self, observer: ModelCallObserver) -> Callable[[bytes], bytes]:
        def chunk(data: bytes) -> bytes:
            if data:
                observer.chunk(data)
            return self._scrub(data)

        return chunk

    def response(self, flow: http.HTTPFlow) -> None:
        observer: ModelCallObserver | None = flow.metadata.pop("replay.observer", None)
        if observer is None or flow.response is None:
            return
        response = flow.response
        streamed = bool(response.stream)
        body = None if streamed else (response.raw_content or b"")
        if body is not None and response.headers.get("content-encoding"):
            body = response.get_content(strict=False) or b""
        call = observer.end(response.timestamp_end or time.time(), body)
        if not streamed and response.raw_content:
            response.content = self._scrub(response.get_content(strict=False) or b"")
        self._log(call)

    def error(self, flow: http.HTTPFlow) -> None:
        observer: ModelCallObserver | None = flow.metadata.pop("replay.observer", None)
        if observer is None or flow.error is None:
            return
        kind = transport_kind(flow.error.msg, answered=flow.response is not None)
        call = observer.error(kind, flow.error.msg, flow.error.timestamp)
        self._log(call)

    def _log(self, call: ModelCall) -> None:
        self.gate.record(
            "model", "model.call", "model_call", call.request_id, call.model_dump(mode="json")
        )

    def _scrub_headers(self, response: http.Response) -> None:
        for name, value in _pairs(response.headers):
            cleaned = self._scrub(value.encode()).decode("utf-8", "replace")
            if cleaned != value:
                response.headers[name] = cleaned

    def _scrub(self, data: bytes) -> bytes:
        for _, value in self.secrets.values():
            secret = value.removeprefix("Bearer ").encode()
            if secret and secret in data:
                data = data.replace(secret, b"[replay: credential removed]")
        return data


def _pairs(headers: http.Headers) -> list[tuple[str, str]]:
    return [(k.decode("latin-1"), v.decode("latin-1")) for k, v in headers.fields]


def addons(gate: Gate, secrets: dict[str, tuple[str, str]]) -> list[Guarded]:
    """The gateway's addons, in the order they must run."""
    return [
        Classify(gate),
        ServeWorld(gate),
        ModelRoute(gate, secrets),
        Deny(gate),
        NoUpstream(gate),
    ]
