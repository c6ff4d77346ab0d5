"""The one live route: model-API calls go upstream with the runner's credential, logged.

See :class:`ModelRoute`.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from mitmproxy import connection, ctx, http

from replay.gateway.config import key_may_go_to, model_call_refusal
from replay.gateway.gate import ROUTE, Gate, Guarded, refuse_request
from replay.gateway.modelcalls import FailureKind, ModelCall, ModelCallObserver, failure_class
from replay.gateway.scrub import StreamDecoder, UnreadableEncoding

log = logging.getLogger("replay.gateway")

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
            refuse_request(self.gate, flow, host, why)
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
