"""The model-call log: one record per HTTP call on the live model route, and its verdict.

The gateway feeds one :class:`ModelCallObserver` per call from its proxy hooks::

    obs = ModelCallObserver()
    obs.begin(method, url, request_headers, request_body, t_request_end)
    obs.headers(status, response_headers, t_first_byte)
    obs.chunk(data)            # zero or more times, as a streamed body passes
    record = obs.end(t_end, body)   # or obs.error(kind, message, t) on a transport failure

Pure Python and no I/O, so it runs beside mitmproxy and in the tests alike. A streamed body
is parsed as it passes; only the incomplete last SSE line is held.

From mitmproxy's hooks (FIELD_NOTES 7): ``request`` -> ``begin(flow.request.method,
flow.request.pretty_url, flow.request.headers, flow.request.raw_content,
flow.request.timestamp_end)``; ``responseheaders`` -> ``headers(flow.response.status_code,
flow.response.headers, flow.response.timestamp_start)`` and, for a stream, set
``flow.response.stream`` to a callable that calls ``chunk(data)`` and returns ``data``
(chunks are the wire bytes: gzip and deflate are decoded here, another encoding leaves the
body uninspected); ``response`` -> ``end(flow.response.timestamp_end, None if streamed else
flow.response.content)``; ``error`` -> ``error(failure_class(flow.error.msg, answered,
deadline), flow.error.msg, time.time())``.

Classification (FIELD_NOTES 8). Per call, ``verdict`` is:

- ``ok``: a complete answer in the provider's format.
- ``transport_fail``: the wire spoiled the call: connect, TLS, timeout, reset, 408, 429,
  5xx, 529 overloaded (also an ``overloaded_error`` event mid-stream), or a stream that ended
  without its terminal event. The SDKs retry these.
- ``protocol_fail``: the call completed but the answer cannot be parsed (not JSON, or not the
  provider's response object).
- ``rejected``: the API answered in its own format and refused the request: 400, 404, 413
  and other 4xx (``http_4xx``: the request is wrong, the agent's), 401/403 (``auth``: the key
  or the account is refused), or a quota stop (``quota``: an exhausted spend limit or credit
  balance). This is neither the wire nor an unparseable answer, and retrying does not help.
  The grader decides what a run stopped by it is: a refused key or account on the harness's
  own call is the runner's (``infra_fail``, see
  :attr:`replay.grade.wire.WireSummary.account_refused`); a 400 for the agent's own bad body
  is the agent's, and so is a refusal its own calls drew (another model, another client,
  after the harness exited).
- ``abandoned``: the agent's own client hung up before the answer was complete, while the
  gateway was still waiting on a provider that had not failed (and whose deadline had not
  passed). The agent's doing, not the wire's: it does not make the wire unhealthy.

Who broke the wire is decided by the gateway's own deadline towards the provider: when it
passes first, the gateway closes the upstream side and the call is a ``timeout``
(transport); when the client hangs up first, the call is ``abandoned``.

Who sent a call. The agent holds a placeholder key and reaches the model API through the same
proxy as its harness, so the gateway sees the agent's own calls (``curl`` from its shell, a
background process) beside the harness's. Each record keeps the evidence the grader tells them
apart by (:mod:`replay.grade.wire`): the ``model`` the body asks for, when the request was sent,
and the client's fingerprint, :attr:`RequestFacts.client` (the values of
:data:`IDENTITY_HEADERS`: the user agent, the SDKs' ``x-stainless-*`` package and runtime
headers, ``anthropic-version``, ``x-app``; the same on every call one client makes).

Hostile input. Every header and body is the agent's to choose: a retry count in digits that
are not ASCII (``'²'``), one with thousands of digits, a header sent twice, a body that is not
JSON, is JSON nested past the parser's limit, or names a ``model`` that is not a string or holds
a lone surrogate. None of it raises (an exception would fail the gateway's addon and void the
run): the call is recorded with what was odd in :attr:`RequestFacts.odd`, and every string in
the record is made encodable (:mod:`replay.gateway.hostile`).

Retries: the SDKs resend the same bytes with ``x-stainless-retry-count`` raised; every attempt
is its own record, sharing :attr:`ModelCall.logical_key`. Rolling the records up into logical
calls and the run's wire verdict is the grader's (:mod:`replay.grade.wire`), not the gateway's.
"""

from __future__ import annotations

import hashlib
import re
import uuid
import zlib
from collections.abc import Iterable, Mapping
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field

from replay.gateway.hostile import ascii_count, parse_json, safe_text, show

SCHEMA_VERSION = 2
"""2 added :attr:`ModelCall.request`; a record of format 1 reads with it None."""

Provider = Literal["openai_chat", "openai_responses", "anthropic_messages", "unknown"]
ErrorClass = Literal[
    "connect",
    "tls",
    "timeout",
    "reset",
    "http_408",
    "http_429",
    "http_5xx",
    "overloaded_529",
    "truncated_stream",
    "bad_json",
    "http_4xx",
    "auth",
    "quota",
    "encoding",
    "abandoned",
]
Verdict = Literal["ok", "transport_fail", "protocol_fail", "rejected", "abandoned"]
TransportKind = Literal["connect", "tls", "timeout", "reset"]
FailureKind = Literal["connect", "tls", "timeout", "reset", "abandoned", "encoding"]
"""How a call without a complete answer ended (:func:`failure_class`)."""

TRANSPORT_CLASSES: frozenset[str] = frozenset(
    {
        "connect",
        "tls",
        "timeout",
        "reset",
        "http_408",
        "http_429",
        "http_5xx",
        "overloaded_529",
        "truncated_stream",
        # The provider answered in an encoding the gateway cannot decode, so cannot scrub.
        "encoding",
    }
)
PROTOCOL_CLASSES: frozenset[str] = frozenset({"bad_json"})
REJECTED_CLASSES: frozenset[str] = frozenset({"http_4xx", "auth", "quota"})

# How Anthropic words a spend-limit or credit stop (as opposed to a rate-limit blip), and
# OpenAI's quota code.
_QUOTA_WORDING = re.compile(
    r"usage limit|spend(ing)? limit|regain access|credit balance|billing|"
    r"usage credits are required|extra usage is required|insufficient_quota|exceeded your "
    r"current quota",
    re.IGNORECASE,
)


IDENTITY_HEADERS: tuple[str, ...] = (
    "user-agent",
    "x-app",
    "anthropic-version",
    "x-stainless-lang",
    "x-stainless-package-version",
    "x-stainless-os",
    "x-stainless-arch",
    "x-stainless-runtime",
    "x-stainless-runtime-version",
)
"""The request headers that say which client sent a call: the same on every call one client
makes (unlike ``x-stainless-retry-count``, ``x-stainless-helper-method``, ``anthropic-beta`` or
``content-length``, which change from call to call), different between the harness's SDK and
the agent's own ``curl``. Their values make :attr:`RequestFacts.client`."""
_HEADER_CAP = 200
"""Characters kept of one identity header's value."""
_MODEL_CAP = 256
"""Characters kept of a request's ``model``: longer than any provider's model id."""
_RETRY_DIGITS = 4
"""An SDK's retry count has one digit; more than four is not a count."""


class RequestFacts(BaseModel):
    """What a call's request says about its sender, and what was odd in it (format 2)."""

    model_config = ConfigDict(extra="forbid")

    client: str
    """The client's identity headers (:data:`IDENTITY_HEADERS`) as sent: ``name=value`` in
    that order, joined by ``; `` (repeated headers' values joined by ``, ``; each cut to 200
    characters; bytes that are not UTF-8 escaped); empty when it sent none. Every call one
    client makes carries the same: the harness's calls share one (see
    :mod:`replay.grade.wire`, which tells the harness's calls from the agent's by it)."""
    odd: list[str] = Field(default_factory=list)
    """What in the request no provider's SDK sends, recorded as it was (a retry count that is
    not a count, a header sent twice, a body that is not JSON or a ``model`` that is not a
    string...). Never held against the run: the call is classified by what the provider
    answered."""


class TokenUsage(BaseModel):
    """Tokens one call reported, normalised across providers.

    OpenAI counts cached tokens inside ``input_tokens``; Anthropic counts cache reads and cache
    writes apart from it. Each field keeps the provider's own meaning.
    """

    model_config = ConfigDict(extra="forbid")

    input_tokens: int = 0
    """OpenAI ``prompt_tokens``/``input_tokens``; Anthropic ``input_tokens``."""
    output_tokens: int = 0
    """OpenAI ``completion_tokens``/``output_tokens``; Anthropic ``output_tokens``."""
    cached_input_tokens: int = 0
    """OpenAI ``*_tokens_details.cached_tokens``; Anthropic ``cache_read_input_tokens``."""
    cache_creation_input_tokens: int = 0
    """Anthropic ``cache_creation_input_tokens`` (0 for OpenAI)."""
    reasoning_tokens: int = 0
    """OpenAI ``*_tokens_details.reasoning_tokens`` (0 for Anthropic)."""

    def __add__(self, other: TokenUsage) -> TokenUsage:
        return TokenUsage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cached_input_tokens=self.cached_input_tokens + other.cached_input_tokens,
            cache_creation_input_tokens=self.cache_creation_input_tokens
            + other.cache_creation_input_tokens,
            reasoning_tokens=self.reasoning_tokens + other.reasoning_tokens,
        )


class ModelCall(BaseModel):
    """One HTTP call on the live model route, as the gateway saw it (model-call log, v1)."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = SCHEMA_VERSION
    """Version of this record's format."""
    request_id: str
    """The provider's id (``x-request-id`` or ``request-id`` response header), else one the
    gateway made up (``gw-`` prefix)."""
    request_id_from_provider: bool
    """Whether :attr:`request_id` came from the provider's response headers."""
    method: str
    """HTTP method."""
    host: str
    """Host the call went to."""
    path: str
    """Path of the call, without the query string."""
    provider: Provider
    """API detected from the path: OpenAI chat completions, OpenAI responses, Anthropic
    messages, or unknown."""
    model: str | None
    """The ``model`` field of the request body, if any."""
    streamed: bool
    """Whether the answer was a server-sent-event stream (or was asked to be one)."""
    retry_count: int
    """The SDK's ``x-stainless-retry-count`` request header (0 when absent)."""
    logical_key: str
    """Hash of method, path and request body: SDK retries of one call share it."""
    t_request_end: float
    """When the last byte of the request was sent (epoch seconds)."""
    status: int | None
    """HTTP status of the answer; None when no answer came."""
    ttfb_ms: float | None
    """From the end of the request to the response headers, in milliseconds."""
    total_ms: float | None
    """From the end of the request to the last byte or the failure, in milliseconds."""
    request_bytes: int
    """Size of the request body."""
    response_bytes: int
    """Size of the response body received (all of a stream's chunks)."""
    error_class: ErrorClass | None
    """Why the call failed; None when it succeeded."""
    error_detail: str | None
    """The provider's error message, the transport error, or what was wrong with the body."""
    usage: TokenUsage | None
    """Tokens the answer reported; None when it reported none."""
    stop_reason: str | None
    """``finish_reason``/``stop_reason``/``status`` of a complete answer."""
    verdict: Verdict
    """``ok``, ``transport_fail``, ``protocol_fail``, ``rejected`` or ``abandoned`` (see the
    module doc)."""
    request: RequestFacts | None = None
    """Which client sent the call and what was odd in its request; None in a record of
    format 1."""


def verdict_for(error_class: ErrorClass | None) -> Verdict:
    """The per-call verdict an error class implies."""
    if error_class is None:
        return "ok"
    if error_class in TRANSPORT_CLASSES:
        return "transport_fail"
    if error_class in PROTOCOL_CLASSES:
        return "protocol_fail"
    if error_class == "abandoned":
        return "abandoned"
    return "rejected"


def detect_provider(path: str) -> Provider:
    """Which API a path belongs to (any prefix before ``/v1`` is allowed)."""
    path = path.rstrip("/")
    if path.endswith("/chat/completions"):
        return "openai_chat"
    if path.endswith("/responses"):
        return "openai_responses"
    if path.endswith("/messages"):
        return "anthropic_messages"
    return "unknown"


Headers = Mapping[str, str] | Iterable[tuple[str, str]]


def _header_values(headers: Headers, name: str) -> list[str]:
    """Every value of header ``name`` (any case), in the order sent."""
    items = headers.items() if isinstance(headers, Mapping) else headers
    return [value for key, value in items if key.lower() == name]


def _header(headers: Headers, name: str) -> str | None:
    values = _header_values(headers, name)
    return values[0] if values else None


def client_of(headers: Headers) -> str:
    """The :attr:`RequestFacts.client` of a request's headers."""
    parts = []
    for name in IDENTITY_HEADERS:
        values = _header_values(headers, name)
        if values:
            parts.append(f"{name}={safe_text(', '.join(values), _HEADER_CAP)}")
    return "; ".join(parts)


def _int(value: Any) -> int:
    # A count the provider reported; anything else (a bool, a float, a negative or absurd
    # number that a results store's integer column could not hold) counts as none.
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**53:
        return value
    return 0


def _retry_count(values: list[str], odd: list[str]) -> int:
    """The SDK's retry count from ``x-stainless-retry-count``; 0, noted as odd, for a value
    that is not a small count in ASCII digits, and the first of several."""
    if not values:
        return 0
    if len(values) > 1:
        odd.append(f"x-stainless-retry-count sent {len(values)} times")
    count = ascii_count(values[0], _RETRY_DIGITS)
    if count is None:
        odd.append(f"x-stainless-retry-count {show(values[0])} is not a count")
        return 0
    return count


def _openai_usage(raw: Mapping[str, Any]) -> TokenUsage:
    inp = raw.get("prompt_tokens", raw.get("input_tokens"))
    out = raw.get("completion_tokens", raw.get("output_tokens"))
    in_details = raw.get("prompt_tokens_details") or raw.get("input_tokens_details") or {}
    out_details = raw.get("completion_tokens_details") or raw.get("output_tokens_details") or {}
    return TokenUsage(
        input_tokens=_int(inp),
        output_tokens=_int(out),
        cached_input_tokens=_int(in_details.get("cached_tokens"))
        if isinstance(in_details, Mapping)
        else 0,
        reasoning_tokens=_int(out_details.get("reasoning_tokens"))
        if isinstance(out_details, Mapping)
        else 0,
    )


def _anthropic_usage(raw: Mapping[str, Any], base: TokenUsage | None = None) -> TokenUsage:
    """Anthropic usage; a ``message_delta`` usage is cumulative and may omit input counts."""
    base = base or TokenUsage()
    return TokenUsage(
        input_tokens=_int(raw.get("input_tokens", base.input_tokens)),
        output_tokens=_int(raw.get("output_tokens", base.output_tokens)),
        cached_input_tokens=_int(raw.get("cache_read_input_tokens", base.cached_input_tokens)),
        cache_creation_input_tokens=_int(
            raw.get("cache_creation_input_tokens", base.cache_creation_input_tokens)
        ),
    )


def _error_message(body: Any) -> tuple[str | None, str | None]:
    """(type or code, message) of an error body in either provider's shape."""
    if not isinstance(body, Mapping):
        return None, None
    err = body.get("error")
    if not isinstance(err, Mapping):
        return None, None
    kind = err.get("type")
    code = err.get("code")
    message = err.get("message")
    label = code if isinstance(code, str) and code else kind
    return (
        label if isinstance(label, str) else None,
        message if isinstance(message, str) else None,
    )


def classify_status(status: int, body: Any) -> ErrorClass | None:
    """The error class of an HTTP status, given the parsed error body (or None)."""
    if status < 400:
        return None
    kind, message = _error_message(body)
    quota_text = f"{kind or ''} {message or ''}"
    if status == 408:
        return "http_408"
    if status == 429:
        return "quota" if _QUOTA_WORDING.search(quota_text) else "http_429"
    if status == 402:
        return "quota"
    if status == 529:
        return "overloaded_529"
    if status >= 500:
        return "http_5xx"
    if status == 400 and message and "credit balance" in message.lower():
        return "quota"
    if status in (401, 403):
        # The key (401) or the account, organisation or region (403) is refused.
        return "auth"
    return "http_4xx"


def _stream_error_class(kind: str | None) -> ErrorClass:
    if kind == "overloaded_error":
        return "overloaded_529"
    if kind in {"rate_limit_error", "rate_limit_exceeded"}:
        return "http_429"
    return "http_5xx"


def transport_kind(message: str, answered: bool = False) -> TransportKind:
    """Map a proxy's transport error message to a :data:`TransportKind`.

    ``answered``: whether response headers had arrived. Written for mitmproxy's messages on
    the provider's side (``server closed connection``, ``Connection killed: ...``, TLS
    handshake failures, ``[Errno 111] Connect call failed ...``). A client that hung up is not
    a transport failure: see :func:`failure_class`.
    """
    text = message.lower()
    if "tls" in text or "ssl" in text or "certificate" in text:
        return "tls"
    if "timed out" in text or "timeout" in text:
        return "timeout"
    connect_words = (
        "connect call failed",
        "failed to connect",
        "refused",
        "unreachable",
        "name or service",
        "getaddrinfo",
        "resolve",
        "no route",
    )
    if not answered and any(w in text for w in connect_words):
        return "connect"
    return "reset"


def failure_class(
    message: str, answered: bool, deadline: str | None = None, client_gone: bool = False
) -> FailureKind:
    """Who broke a call that got no complete answer, from the proxy's evidence.

    ``deadline``: set when the gateway's own deadline towards the provider passed and it
    closed the upstream side (a ``timeout`` on the provider, whatever the proxy's message
    says). Otherwise a client that went away while the provider had not failed abandoned
    its own call: ``client_gone`` (the client's connection no longer reads when the failure
    is reported; HTTP/2 says only ``peer closed connection``, on either side) or mitmproxy's
    words for it (``Client disconnected.``, ``stream reset by client``). Anything else
    failed on the provider's side (:func:`transport_kind`).
    """
    if deadline is not None:
        return "timeout"
    text = message.lower()
    if client_gone or "client disconnected" in text or "reset by client" in text:
        return "abandoned"
    return transport_kind(message, answered)


class _SSEParser:
    """Incremental server-sent-event parser that holds only an incomplete line."""

    def __init__(self) -> None:
        self._buf = b""
        self._event: str | None = None
        self._data: list[str] = []

    def feed(self, data: bytes) -> list[tuple[str | None, str]]:
        self._buf += data
        events: list[tuple[str | None, str]] = []
        while True:
            idx = self._buf.find(b"\n")
            if idx < 0:
                break
            line = self._buf[:idx].rstrip(b"\r").decode("utf-8", errors="replace")
            self._buf = self._buf[idx + 1 :]
            if not line:
                if self._data or self._event is not None:
                    events.append((self._event, "\n".join(self._data)))
                self._event, self._data = None, []
            elif line.startswith(":"):
                continue
            else:
                field, _, value = line.partition(":")
                value = value.removeprefix(" ")
                if field == "event":
                    self._event = value
                elif field == "data":
                    self._data.append(value)
        return events

    @property
    def held(self) -> int:
        """Bytes held: the incomplete last line and the data lines of an unfinished event."""
        return len(self._buf) + sum(len(d) for d in self._data)

    def close(self) -> list[tuple[str | None, str]]:
        """Events left when the stream ends (a last event without its blank line)."""
        events = self.feed(b"\n\n") if self._buf.strip() else []
        if not events and (self._data or self._event is not None):
            events = [(self._event, "\n".join(self._data))]
        self._event, self._data = None, []
        return events


class ModelCallObserver:
    """Watches one call on the model route and produces its :class:`ModelCall`."""

    def __init__(self) -> None:
        self._method = "POST"
        self._host = ""
        self._path = ""
        self._provider: Provider = "unknown"
        self._model: str | None = None
        self._asked_stream = False
        self._include_usage = False
        self._retry_count = 0
        self._client = ""
        self._odd: list[str] = []
        self._logical_key = ""
        self._request_bytes = 0
        self._t_request_end = 0.0
        self._status: int | None = None
        self._resp_headers: list[tuple[str, str]] = []
        self._t_first_byte: float | None = None
        self._is_sse = False
        self._sse = _SSEParser()
        self._response_bytes = 0
        self._plain: list[bytes] = []
        self._decoder: Any = None
        self._unreadable: str | None = None
        self._terminal = False
        self._usage: TokenUsage | None = None
        self._stop_reason: str | None = None
        self._error: ErrorClass | None = None
        self._detail: str | None = None
        self.record: ModelCall | None = None

    @property
    def held_bytes(self) -> int:
        """How much of a stream the observer holds right now (it never keeps a whole one)."""
        return self._sse.held + sum(len(p) for p in self._plain)

    # ------------------------------------------------------------------ feeding

    def begin(
        self,
        method: str,
        url: str,
        request_headers: Mapping[str, str] | Iterable[tuple[str, str]],
        request_body: bytes,
        t_request_end: float,
    ) -> None:
        """The request has been sent in full.

        Everything here is the agent's to choose (its client can send any headers and body):
        what is odd is noted in :attr:`RequestFacts.odd`, never raised.
        """
        odd: list[str] = []
        try:
            parts = urlsplit(url)
            host, path = parts.hostname or "", parts.path or "/"
        except ValueError:
            host, path = "", "/"
            odd.append(f"URL {show(url)} does not parse")
        self._method = method.upper()
        self._host = host
        self._path = path
        self._provider = detect_provider(self._path)
        self._request_bytes = len(request_body)
        self._t_request_end = t_request_end
        headers = list(
            request_headers.items() if isinstance(request_headers, Mapping) else request_headers
        )
        self._retry_count = _retry_count(_header_values(headers, "x-stainless-retry-count"), odd)
        self._client = client_of(headers)
        digest = hashlib.sha256()
        digest.update(f"{self._method} {self._host}{self._path}\n".encode("utf-8", "replace"))
        digest.update(request_body)
        self._logical_key = digest.hexdigest()[:24]
        req, why = parse_json(request_body) if request_body else (None, None)
        if why is not None:
            odd.append(f"the body ({len(request_body)} bytes) is {why}")
        elif request_body and not isinstance(req, Mapping):
            odd.append(f"the body is JSON but not an object ({type(req).__name__})")
        if isinstance(req, Mapping):
            model = req.get("model")
            if isinstance(model, str):
                self._model = safe_text(model, _MODEL_CAP)
                if self._model != model:
                    odd.append(f"model {show(model)} is kept as {show(self._model)}")
            elif model is not None:
                odd.append(f"model is not a string ({type(model).__name__})")
            self._asked_stream = req.get("stream") is True
            opts = req.get("stream_options")
            self._include_usage = isinstance(opts, Mapping) and opts.get("include_usage") is True
        self._odd = odd

    def headers(
        self,
        status: int,
        response_headers: Mapping[str, str] | Iterable[tuple[str, str]],
        t_first_byte: float,
    ) -> None:
        """The response headers arrived."""
        self._status = status
        items = (
            response_headers.items()
            if isinstance(response_headers, Mapping)
            else (response_headers)
        )
        self._resp_headers = [(k.lower(), v) for k, v in items]
        self._t_first_byte = t_first_byte
        ctype = _header(self._resp_headers, "content-type") or ""
        self._is_sse = "text/event-stream" in ctype.lower()
        encoding = (_header(self._resp_headers, "content-encoding") or "identity").lower()
        if encoding in {"gzip", "x-gzip", "deflate"}:
            # Streamed chunks arrive encoded (a proxy decodes only a stored body).
            self._decoder = zlib.decompressobj(wbits=47)
        elif encoding != "identity":
            self._unreadable = encoding

    def chunk(self, data: bytes) -> None:
        """Part of a streamed body passed through, as it went over the wire."""
        self._response_bytes += len(data)
        if self._unreadable is not None:
            return
        if self._decoder is not None:
            try:
                data = self._decoder.decompress(data)
            except zlib.error:
                self._unreadable = "corrupt compressed data"
                return
        if self._is_sse:
            for event, payload in self._sse.feed(data):
                self._on_event(event, payload)
        else:
            # A plain body passed in chunks is small and parsed whole at the end.
            self._plain.append(data)

    def end(self, t_end: float, body: bytes | None = None) -> ModelCall:
        """The response is complete.

        ``body`` is the whole decoded body when it was not passed through :meth:`chunk`
        (mitmproxy's ``flow.response.content``); leave it None after chunks.
        """
        if body is not None:
            self._response_bytes = max(self._response_bytes, len(body))
            self._decoder, self._unreadable, self._plain = None, None, []
            if self._is_sse:
                for event, payload in self._sse.feed(body):
                    self._on_event(event, payload)
            else:
                self._plain = [body]
        if self._unreadable is not None:
            # A content encoding we cannot decode: only the status speaks.
            if (self._status or 0) >= 400:
                self._fail(classify_status(self._status or 0, None) or "http_4xx", None)
            self._detail = self._detail or f"body not inspected ({self._unreadable})"
        elif self._is_sse:
            for event, payload in self._sse.close():
                self._on_event(event, payload)
            self._finish_stream()
        else:
            self._finish_body(b"".join(self._plain))
        return self._build(t_end)

    def error(self, kind: FailureKind, message: str, t: float) -> ModelCall:
        """The call got no complete answer: it failed on the transport, or the client
        abandoned it."""
        self._error = kind
        self._detail = message
        return self._build(t)

    # ------------------------------------------------------------------ parsing

    def _fail(self, cls: ErrorClass, detail: str | None) -> None:
        if self._error is None:
            self._error, self._detail = cls, detail

    def _finish_body(self, body: bytes) -> None:
        status = self._status or 0
        parsed, why = parse_json(body) if body else (None, None)
        if why is not None and status < 400:
            self._fail("bad_json", f"body is not JSON ({len(body)} bytes)")
        if status >= 400:
            cls = classify_status(status, parsed)
            _, message = _error_message(parsed)
            self._fail(cls or "http_4xx", message or f"HTTP {status}")
            return
        if self._error is not None:
            return
        if not isinstance(parsed, Mapping):
            self._fail("bad_json", "body is not a JSON object")
            return
        if self._provider == "openai_chat":
            choices = parsed.get("choices")
            if not isinstance(choices, list):
                self._fail("bad_json", "no choices in a chat completion")
                return
            if choices and isinstance(choices[0], Mapping):
                reason = choices[0].get("finish_reason")
                self._stop_reason = reason if isinstance(reason, str) else None
            if isinstance(parsed.get("usage"), Mapping):
                self._usage = _openai_usage(parsed["usage"])
        elif self._provider == "openai_responses":
            if not isinstance(parsed.get("output"), list):
                self._fail("bad_json", "no output in a response")
                return
            status_field = parsed.get("status")
            self._stop_reason = status_field if isinstance(status_field, str) else None
            if isinstance(parsed.get("usage"), Mapping):
                self._usage = _openai_usage(parsed["usage"])
        elif self._provider == "anthropic_messages":
            if not isinstance(parsed.get("content"), list):
                self._fail("bad_json", "no content in a message")
                return
            reason = parsed.get("stop_reason")
            self._stop_reason = reason if isinstance(reason, str) else None
            if isinstance(parsed.get("usage"), Mapping):
                self._usage = _anthropic_usage(parsed["usage"])

    def _on_event(self, event: str | None, payload: str) -> None:
        if self._error is not None and self._error != "truncated_stream":
            return
        if self._provider == "openai_chat" and payload.strip() == "[DONE]":
            self._terminal = True
            return
        data, why = parse_json(payload)
        if why is not None:
            self._fail("bad_json", f"SSE data is {why}: {show(payload)}")
            return
        if not isinstance(data, Mapping):
            self._fail("bad_json", "SSE data is not a JSON object")
            return
        if (
            event == "error"
            or data.get("type") == "error"
            or isinstance(data.get("error"), Mapping)
        ):
            kind, message = _error_message(data)
            if kind is None and message is None:
                # OpenAI responses: the error event carries code and message at the top.
                code, text = data.get("code"), data.get("message")
                kind = code if isinstance(code, str) else None
                message = text if isinstance(text, str) else None
            self._fail(_stream_error_class(kind), message or "error event in the stream")
            return
        if self._provider == "openai_chat":
            choices = data.get("choices")
            for choice in choices if isinstance(choices, list) else []:
                if isinstance(choice, Mapping) and isinstance(choice.get("finish_reason"), str):
                    self._stop_reason = choice["finish_reason"]
            if isinstance(data.get("usage"), Mapping):
                self._usage = _openai_usage(data["usage"])
        elif self._provider == "openai_responses":
            kind = data.get("type", event)
            response = data.get("response")
            if kind in {"response.completed", "response.incomplete", "response.failed"}:
                self._terminal = True
                if isinstance(response, Mapping):
                    status_field = response.get("status")
                    self._stop_reason = status_field if isinstance(status_field, str) else None
                    if isinstance(response.get("usage"), Mapping):
                        self._usage = _openai_usage(response["usage"])
                if kind == "response.failed":
                    err = response.get("error") if isinstance(response, Mapping) else None
                    code = err.get("code") if isinstance(err, Mapping) else None
                    self._fail("http_5xx", f"response.failed: {code}")
        elif self._provider == "anthropic_messages":
            kind = data.get("type", event)
            if kind == "message_start" and isinstance(data.get("message"), Mapping):
                usage = data["message"].get("usage")
                if isinstance(usage, Mapping):
                    self._usage = _anthropic_usage(usage)
            elif kind == "message_delta":
                delta = data.get("delta")
                if isinstance(delta, Mapping) and isinstance(delta.get("stop_reason"), str):
                    self._stop_reason = delta["stop_reason"]
                if isinstance(data.get("usage"), Mapping):
                    self._usage = _anthropic_usage(data["usage"], self._usage)
            elif kind == "message_stop":
                self._terminal = True

    def _finish_stream(self) -> None:
        status = self._status or 0
        if status >= 400:
            self._fail(classify_status(status, None) or "http_4xx", f"HTTP {status}")
            return
        if self._error is not None:
            return
        if self._provider == "unknown":
            return
        if not self._terminal:
            what = {
                "openai_chat": "[DONE]",
                "openai_responses": "response.completed",
                "anthropic_messages": "message_stop",
            }[self._provider]
            self._fail("truncated_stream", f"stream ended without {what}")
        elif self._provider == "openai_chat" and self._include_usage and self._usage is None:
            self._fail("truncated_stream", "include_usage was asked but no usage chunk came")

    def _build(self, t_end: float) -> ModelCall:
        header_id = _header(self._resp_headers, "x-request-id") or _header(
            self._resp_headers, "request-id"
        )
        ttfb = None
        if self._t_first_byte is not None:
            ttfb = round(max(0.0, self._t_first_byte - self._t_request_end) * 1000, 3)
        # Every string is made recordable (the provider's words too: an error message may
        # quote what the agent sent).
        self.record = ModelCall(
            request_id=safe_text(header_id, _HEADER_CAP) if header_id else f"gw-{uuid.uuid4().hex}",
            request_id_from_provider=header_id is not None,
            method=safe_text(self._method, _HEADER_CAP),
            host=safe_text(self._host, _HEADER_CAP),
            path=safe_text(self._path),
            provider=self._provider,
            model=self._model,
            streamed=self._is_sse or self._asked_stream,
            retry_count=self._retry_count,
            logical_key=self._logical_key,
            t_request_end=self._t_request_end,
            status=self._status,
            ttfb_ms=ttfb,
            total_ms=round(max(0.0, t_end - self._t_request_end) * 1000, 3),
            request_bytes=self._request_bytes,
            response_bytes=self._response_bytes,
            error_class=self._error,
            error_detail=safe_text(self._detail) if self._detail is not None else None,
            usage=self._usage,
            stop_reason=(
                safe_text(self._stop_reason, _HEADER_CAP)
                if self._error is None and self._stop_reason is not None
                else None
            ),
            verdict=verdict_for(self._error),
            request=RequestFacts(client=self._client, odd=self._odd),
        )
        return self.record
