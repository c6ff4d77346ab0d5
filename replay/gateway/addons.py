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

Every hook is guarded (:class:`replay.gateway.gate.Guarded`): an exception kills the flow, is
recorded, and marks the run invalid. Fail closed. :class:`~replay.gateway.model_route.ModelRoute`
lives in its own module, as does :class:`~replay.gateway.unparsed.Unparsed`, which records the
requests mitmproxy refuses before any addon sees them.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from mitmproxy import connection, http, tcp, udp
from mitmproxy.proxy import server_hooks

from replay.gateway.asgi import serve
from replay.gateway.config import Route
from replay.gateway.gate import ROUTE, Gate, Guarded, deny, refuse_request
from replay.gateway.hostile import safe_text
from replay.gateway.model_route import MODEL_ALLOWED, ModelRoute
from replay.gateway.paths import names_control_plane
from replay.gateway.scrub import Scrubber


class Classify(Guarded):
    """Give each flow its route, from where it is really going."""

    def http_connect(self, flow: http.HTTPFlow) -> None:
        host = flow.request.host
        route = self.gate.route(host)
        if route == "deny":
            deny(self.gate, flow, host, "CONNECT to an unknown host")
            return
        flow.metadata[ROUTE] = route

    def requestheaders(self, flow: http.HTTPFlow) -> None:
        # flow.request.host is where the bytes would go (the CONNECT target inside a tunnel);
        # the Host header must name the same place, or a client could dress one host as another.
        host = flow.request.host.lower()
        named = flow.request.host_header
        if named is not None and named.split(":")[0].strip("[]").lower() != host:
            deny(self.gate, flow, host, f"Host header {named!r} does not match the destination")
            return
        # Decided here, before any body is read or any upstream is dialled, and on the path as
        # the apps will decode it: the control plane is the runner's, never the agent's (the
        # apps served here do not even have it; this refuses and records the attempt).
        if names_control_plane(flow.request.data.path):
            deny(self.gate, flow, host, "the control plane is not part of the world")
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
                deny(self.gate, flow, flow.request.host, f"the world has no {route} here")
                return
            failure = await serve(app, flow)
            if failure is not None:
                # A fake that breaks on a request is the world's defect, not the gateway's: the
                # agent gets a 500 (as a real service sometimes answers) and the run is graded
                # on what it did. Voiding the run instead would let an agent cancel a losing run
                # with one malformed GET. The error is recorded and shown with the grade.
                url = safe_text(flow.request.pretty_url)
                self.gate.record(
                    "gateway",
                    "gateway.world_error",
                    "request",
                    url,
                    {
                        "url": url,
                        "method": safe_text(flow.request.method, 100),
                        "host": safe_text(flow.request.pretty_host, 300),
                        "error": safe_text(failure),
                    },
                )


class Deny(Guarded):
    """Anything not answered and not on the model route is refused, and recorded.

    Refused at ``requestheaders``, before the body is read and before mitmproxy could open
    any upstream connection, whatever the body's size; ``request`` refuses again whatever
    slipped through (fail closed).
    """

    def requestheaders(self, flow: http.HTTPFlow) -> None:
        if flow.response is not None or flow.error is not None:
            return
        if flow.metadata.get(ROUTE) in (None, "deny"):
            refuse_request(self.gate, flow, flow.request.host, "not part of the world")

    def request(self, flow: http.HTTPFlow) -> None:
        if flow.response is not None or flow.error is not None:
            return
        if flow.metadata.get(ROUTE) != "model":
            deny(self.gate, flow, flow.request.host, "not part of the world")
        elif not flow.metadata.get(MODEL_ALLOWED):
            deny(self.gate, flow, flow.request.host, "not an allowed model API call")

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
    """The last line: no connection leaves the machine except to the model provider.

    With ``--model-upstream``, only to that address (over TLS when it is ``https``);
    without, only to a model host on port 443 over TLS.
    """

    def server_connect(self, data: server_hooks.ServerConnectionHookData) -> None:
        server: connection.Server = data.server
        host = (server.address[0] if server.address else "") or ""
        upstream = self.gate.config.model_upstream
        if self._allowed(server):
            if upstream is not None and server.tls:
                # Verify the upstream's certificate for its own name, not the model host's
                # the client asked for (mitmproxy would take the client's SNI).
                server.sni = urlsplit(upstream).hostname
            return
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

    def _allowed(self, server: connection.Server) -> bool:
        if server.address is None:
            return False
        host, port = server.address[0].lower(), server.address[1]
        upstream = self.gate.config.model_upstream
        if upstream is not None:
            parts = urlsplit(upstream)
            https = parts.scheme == "https"
            return (
                host == (parts.hostname or "").lower()
                and port == (parts.port or (443 if https else 80))
                and bool(server.tls) == https
            )
        return self.gate.route(host) == "model" and port == 443 and bool(server.tls)


def addons(gate: Gate, secrets: dict[str, tuple[str, str]]) -> list[Guarded]:
    """The gateway's addons, in the order they must run."""
    values = [value for _, value in secrets.values()]
    gate.scrubber = Scrubber(values + [v.removeprefix("Bearer ") for v in values])
    return [
        Classify(gate),
        ServeWorld(gate),
        ModelRoute(gate, secrets),
        Deny(gate),
        NoUpstream(gate),
    ]
