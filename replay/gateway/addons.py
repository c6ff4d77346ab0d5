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

import asyncio
import functools
import inspect
import json
import logging
import re
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from mitmproxy import connection, ctx, http, tcp, udp
from mitmproxy.proxy import server_hooks

from fakes.core.world import World
from replay.gateway.asgi import serve
from replay.gateway.config import GatewayConfig, Route, key_may_go_to, model_call_refusal
from replay.gateway.modelcalls import FailureKind, ModelCall, ModelCallObserver, failure_class
from replay.gateway.paths import names_control_plane
from replay.gateway.scrub import Scrubber, StreamDecoder, UnreadableEncoding

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
        reason = scrub(f"{where}: {type(exc).__name__}: {exc}")
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
                        "error": failure[:2000],
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
            _refuse_request(self.gate, flow, flow.request.host, "not part of the world")

    def request(self, flow: http.HTTPFlow) -> None:
        if flow.response is not None or flow.error is not None:
            return
        if flow.metadata.get(ROUTE) != "model":
            _deny(self.gate, flow, flow.request.host, "not part of the world")
        elif not flow.metadata.get(MODEL_ALLOWED):
            _deny(self.gate, flow, flow.request.host, "not an allowed model API call")

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


def _refuse_request(gate: Gate, flow: http.HTTPFlow, host: str, why: str) -> None:
    """Refuse at ``requestheaders``: a 403 (:func:`_deny`), or, for a body mitmproxy has
    already chosen to stream (it cannot answer such a request itself), kill the flow, which
    stops it before any upstream connection."""
    _deny(gate, flow, host, why)
    if flow.request.stream:
        flow.response = None
        flow.kill()  # type: ignore[no-untyped-call]


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


MODEL_ALLOWED = "replay.model_allowed"
_OBSERVER = "replay.observer"
_WIRE = "replay.wire"
# What the agent may not choose on the model route: the credential is the runner's, and so
# is the account it bills (a made-up organisation or project gets a 401 that would void the
# run as the runner's fault).
_AGENT_HEADERS = (
    "authorization",
    "x-api-key",
    "proxy-authorization",
    "openai-organization",
    "openai-project",
    "cookie",
)


@dataclass
class _Wire:
    """One model call's clock towards the provider (the gateway's own deadline)."""

    first_byte: float
    idle: float
    started: float = field(default_factory=time.monotonic)
    last: float | None = None
    """When the provider last sent something (headers or a chunk); None before headers."""
    deadline: str | None = None
    """Set when the deadline passed and the gateway closed the upstream side."""
    refused: str | None = None
    """Set when the answer could not be scrubbed (an encoding the gateway cannot decode)."""
    task: asyncio.Task[None] | None = None

    def stop(self) -> None:
        if self.task is not None:
            self.task.cancel()
            self.task = None


class ModelRoute(Guarded):
    """The one live route: the real credential goes on here, and every call is logged.

    Only the allow-listed inference calls (:func:`replay.gateway.config.model_call_refusal`:
    method and path per provider, HTTPS on 443) go out, decided at ``requestheaders`` before
    any upstream connection; everything else on a model host gets 403 and an
    ``egress.denied`` event. The agent holds placeholder keys; the runner's real key is set
    only on allowed calls, and never in cleartext across a network. Everything that comes
    back is scrubbed of the key (headers, bodies, streams across chunk boundaries) before the
    agent or any log sees it; upstream is asked for ``identity`` so nothing compressed
    passes unscrubbed (gzip and deflate are decoded anyway; another encoding is refused).
    The gateway keeps its own deadline towards the provider, so a provider that hangs
    (``timeout``, transport) is told apart from a client that gave up (``abandoned``).
    """

    def __init__(self, gate: Gate, secrets: dict[str, tuple[str, str]]) -> None:
        self.secrets = secrets
        """model host -> (header name, header value) taken from the runner's environment."""
        self.scrubber = gate.scrubber
        super().__init__(gate)

    def requestheaders(self, flow: http.HTTPFlow) -> None:
        if flow.response is not None or flow.error is not None:
            return
        if flow.metadata.get(ROUTE) != "model":
            return
        request = flow.request
        host = request.host.lower().rstrip(".")
        why = model_call_refusal(host, request.method, request.scheme, request.port, request.path)
        if why is not None:
            _refuse_request(self.gate, flow, host, why)
            return
        upstream = self.gate.config.model_upstream
        for name in _AGENT_HEADERS:
            request.headers.pop(name, None)
        secret = self.secrets.get(host)
        if secret is not None and key_may_go_to(upstream):
            header, value = secret
            request.headers[header] = value
        # Nothing compressed: every byte that comes back must be scrubbed and read.
        request.headers["accept-encoding"] = "identity"
        flow.metadata["replay.model_url"] = request.pretty_url
        flow.metadata[MODEL_ALLOWED] = True
        if upstream:
            parts = urlsplit(upstream)
            request.scheme = parts.scheme
            request.host = parts.hostname or "127.0.0.1"
            request.port = parts.port or (443 if parts.scheme == "https" else 80)
            request.host_header = host  # what the provider would see

    def request(self, flow: http.HTTPFlow) -> None:
        if flow.response is not None or flow.error is not None:
            return
        if flow.metadata.get(ROUTE) != "model" or not flow.metadata.get(MODEL_ALLOWED):
            return
        observer = ModelCallObserver()
        observer.begin(
            flow.request.method,
            str(flow.metadata.get("replay.model_url", flow.request.pretty_url)),
            _pairs(flow.request.headers),
            flow.request.raw_content or b"",
            flow.request.timestamp_end or time.time(),
        )
        flow.metadata[_OBSERVER] = observer
        config = self.gate.config
        wire = _Wire(config.model_first_byte_timeout, config.model_idle_timeout)
        flow.metadata[_WIRE] = wire
        wire.task = asyncio.get_running_loop().create_task(self._watch(flow, wire))

    async def _watch(self, flow: http.HTTPFlow, wire: _Wire) -> None:
        """Close the upstream side when the provider misses the gateway's deadline."""
        try:
            while True:
                if wire.last is None:
                    due = wire.started + wire.first_byte
                    what = f"no answer from the provider within {wire.first_byte:g} s"
                else:
                    due = wire.last + wire.idle
                    what = f"the provider's answer stalled for {wire.idle:g} s"
                now = time.monotonic()
                if now >= due:
                    break
                await asyncio.sleep(due - now)
            wire.deadline = f"gateway deadline: {what}"
            log.info("%s: %s, closing the upstream side", flow.request.pretty_url, what)
            if not _close_upstream(flow) and flow.live and flow.error is None:
                # Nothing to close while the call is still waiting: the deadline cannot be
                # enforced, which must not pass silently.
                raise RuntimeError("no upstream connection to close for a call past its deadline")
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self._fail("deadline", flow, exc)

    def responseheaders(self, flow: http.HTTPFlow) -> None:
        observer: ModelCallObserver | None = flow.metadata.get(_OBSERVER)
        wire: _Wire | None = flow.metadata.get(_WIRE)
        if observer is None or wire is None or flow.response is None:
            return
        wire.last = time.monotonic()
        response = flow.response
        self._scrub_headers(response)
        decoder: StreamDecoder | None = None
        encoding = response.headers.get("content-encoding", "").strip().lower()
        if encoding not in ("", "identity"):
            try:
                decoder = StreamDecoder(encoding)
            except UnreadableEncoding as exc:
                # Asked for identity and got what cannot be read, so cannot be scrubbed.
                wire.refused = f"the provider answered in {exc}; refused unscrubbed"
                observer.headers(response.status_code, _pairs(response.headers), time.time())
                flow.kill()  # type: ignore[no-untyped-call]
                return
            # Decoded here, so the length changes: the client gets it chunked (HTTP/1).
            response.headers.pop("content-encoding", None)
            response.headers.pop("content-length", None)
            if flow.request.http_version.startswith("HTTP/1") and (
                "transfer-encoding" not in response.headers
            ):
                response.headers["transfer-encoding"] = "chunked"
        observer.headers(
            response.status_code,
            _pairs(response.headers),
            response.timestamp_start or time.time(),
        )
        # Every answer is streamed through the scrubber (set here: setting stream after the
        # headers hook buffers the body); the observer reads the scrubbed bytes.
        response.stream = self._passthrough(observer, wire, decoder)

    def _passthrough(
        self, observer: ModelCallObserver, wire: _Wire, decoder: StreamDecoder | None
    ) -> Callable[[bytes], list[bytes]]:
        scrub = self.scrubber.stream()

        # A list, not bytes: an empty bytes chunk would go out as HTTP/1's chunked terminator
        # and end the client's body while the provider is still sending.
        def chunk(data: bytes) -> list[bytes]:
            wire.last = time.monotonic()
            if wire.refused is not None:
                return []
            try:
                plain = decoder.feed(data) if decoder is not None else data
                if not data and decoder is not None:
                    plain += decoder.flush()
            except UnreadableEncoding as exc:
                wire.refused = f"the provider's answer is unreadable ({exc}); cut off"
                return []
            out = scrub.feed(plain)
            if not data:  # the end of the body: what was held back was no key
                out += scrub.flush()
            if not out:
                return []
            observer.chunk(out)
            return [out]

        return chunk

    def response(self, flow: http.HTTPFlow) -> None:
        observer: ModelCallObserver | None = flow.metadata.pop(_OBSERVER, None)
        wire: _Wire | None = flow.metadata.get(_WIRE)
        if observer is None or flow.response is None:
            return
        if wire is not None:
            wire.stop()
        response = flow.response
        end = response.timestamp_end or time.time()
        if wire is not None and wire.refused is not None:
            self._log(observer.error("encoding", wire.refused, end))
            return
        body = None
        if not response.stream:
            # Answered with the headers alone (no body followed): nothing went through the
            # stream, so scrub what there is here.
            body = self.scrubber.scrub(response.get_content(strict=False) or b"")
            if response.raw_content:
                response.content = body
        self._log(observer.end(end, body))

    def error(self, flow: http.HTTPFlow) -> None:
        observer: ModelCallObserver | None = flow.metadata.pop(_OBSERVER, None)
        wire: _Wire | None = flow.metadata.get(_WIRE)
        if observer is None or flow.error is None:
            return
        if wire is not None:
            wire.stop()
        if wire is not None and wire.refused is not None:
            kind: FailureKind = "encoding"
            detail = wire.refused
        else:
            deadline = wire.deadline if wire is not None else None
            client_gone = not flow.client_conn.state & connection.ConnectionState.CAN_READ
            kind = failure_class(flow.error.msg, flow.response is not None, deadline, client_gone)
            detail = deadline or flow.error.msg
        self._log(observer.error(kind, detail, flow.error.timestamp))

    def _log(self, call: ModelCall) -> None:
        # Scrubbed as a whole: an error detail may quote what the provider said.
        record = json.loads(self.scrubber.scrub_text(call.model_dump_json()))
        self.gate.record("model", "model.call", "model_call", call.request_id, record)

    def _scrub_headers(self, response: http.Response) -> None:
        for name, value in _pairs(response.headers):
            cleaned = self.scrubber.scrub_text(value)
            if cleaned != value:
                response.headers[name] = cleaned


def _close_upstream(flow: http.HTTPFlow) -> bool:
    """Close the flow's upstream connection (or cancel its opening) from outside mitmproxy's
    layers: ``flow.kill()`` cannot stop a flow in transit (mitmproxy issue 4711), so this
    does what mitmproxy's own ``CloseConnection`` command does, on the client's handler."""
    proxyserver: Any = ctx.master.addons.get("proxyserver")  # type: ignore[no-untyped-call]
    handler = proxyserver.connections.get(flow.client_conn.id) if proxyserver else None
    if handler is None:
        return False
    target = (flow.request.host, flow.request.port)
    candidates = [flow.server_conn] + [
        c for c in handler.transports if isinstance(c, connection.Server) and c.address == target
    ]
    for server in candidates:
        if server in handler.transports and handler.transports[server].handler is not None:
            handler.close_connection(server)
            return True
    return False


def _pairs(headers: http.Headers) -> list[tuple[str, str]]:
    return [(k.decode("latin-1"), v.decode("latin-1")) for k, v in headers.fields]


PROXY_LOGGER = "mitmproxy.proxy.server"
_UNPARSED = re.compile(
    r": (Bad HTTP request line|Unknown HTTP version|Invalid header|Invalid headers)\b(.*)",
    re.DOTALL,
)


class Unparsed(logging.Filter):
    """Record the requests mitmproxy refuses before any addon sees them.

    A request line mitmproxy cannot parse (an absolute-form target naming a Unix socket's
    path, say) is answered 400 by its HTTP/1 layer, which then only logs it: no flow exists,
    so no hook runs and nothing would be recorded. This filter, on mitmproxy's proxy-server
    logger, turns those log records into ``egress.denied`` events. It changes nothing else:
    the records it lets through are the ones the logger passed before.
    """

    def __init__(self, gate: Gate, passed_level: int) -> None:
        super().__init__()
        self.gate = gate
        self.passed_level = passed_level

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            found = _UNPARSED.search(record.getMessage())
            if found is not None:
                peer = getattr(record, "client", None)
                self.gate.record(
                    "egress",
                    "egress.denied",
                    "host",
                    "",
                    {
                        "host": "",
                        "port": None,
                        "protocol": "HTTP",
                        "reason": f"the proxy could not parse the request (answered 400): "
                        f"{found.group(1)}{found.group(2)}"[:2000]
                        + (f" from {peer}" if peer else ""),
                    },
                )
        except Exception:
            # A logging filter must not break the proxy's connection handling; the 400 went
            # out all the same. Say so loudly.
            log.exception("could not record a request the proxy refused to parse")
        return record.levelno >= self.passed_level


def record_unparsed(gate: Gate) -> Unparsed:
    """Attach :class:`Unparsed` to mitmproxy's proxy-server logger (INFO is where it logs)."""
    logger = logging.getLogger(PROXY_LOGGER)
    unparsed = Unparsed(gate, logger.getEffectiveLevel())
    logger.addFilter(unparsed)
    logger.setLevel(min(logger.getEffectiveLevel(), logging.INFO))
    return unparsed


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
