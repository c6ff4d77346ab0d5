"""The stub model server: a plain ASGI app speaking OpenAI's and Anthropic's dialects.

Plain ASGI rather than a framework because the faults need the raw ``send``: a reset aborts
the TCP connection under uvicorn (RST), which no response class can express.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import socket
import struct
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any, Protocol

from pydantic import Field

from replay.base.formats import Strict
from replay.harness.stub.anthropic import AnthropicMessages
from replay.harness.stub.common import Answer, BadRequest, Conversation, answer
from replay.harness.stub.faults import Fault, FaultInjector, FaultKind
from replay.harness.stub.openai import CREATED, OpenAIChat, OpenAIResponses
from replay.harness.stub.script import Script

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

BAD_GATEWAY = (
    b"<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n"
    b"<center><h1>502 Bad Gateway</h1></center>\r\n</body>\r\n</html>\r\n"
)
GARBAGE = b"<html><body>upstream hiccup</body></html>"
COUNT_TOKENS_PATH = "/v1/messages/count_tokens"
"""Anthropic's token counting: answered, never faulted, and no turn of the script played."""
FORBIDDEN_MODELS = ("o1-pro", "claude-opus-4-1")
"""Real models the stub's account stands for a project without access to (the default of
:attr:`StubConfig.forbidden_models`): what an agent asks for when it draws a refusal itself."""
CALLS_PATH = "/_replay/stub/calls"
"""Control endpoint: what the stub did, call by call (JSON list of :class:`Served`)."""


class StubConfig(Strict):
    """How the stub plays: the script and the faults."""

    script: Script
    """The trajectory to play."""
    faults: list[Fault] = Field(default_factory=list)
    """Faults to inject on model calls (``GET /v1/models`` is never faulted)."""
    seed: int = 0
    """Seed of the fault draws."""
    hold_seconds: float = Field(default=30.0, gt=0)
    """How long a ``timeout`` fault holds a connection before resetting it."""
    retry_after: float = Field(default=1.0, ge=0)
    """The ``retry-after`` header of a 429, in seconds."""
    think_seconds: float = Field(default=0.0, ge=0)
    """Delay before an answer's headers (time to first byte of a model that thinks)."""
    event_gap_seconds: float = Field(default=0.0, ge=0)
    """Delay between the events of a stream."""
    forbidden_models: list[str] = Field(default_factory=lambda: list(FORBIDDEN_MODELS))
    """Models the stub's account may not use: a call for one is refused as the provider
    refuses it (OpenAI 403 ``model_not_found``, Anthropic 403 ``permission_error``), before
    any fault or turn of the script."""
    unknown_models: list[str] = Field(default_factory=list)
    """Models that do not exist for the stub: refused with the provider's 404 (OpenAI
    ``model_not_found``, Anthropic ``not_found_error``)."""


class Dialect(Protocol):
    name: str
    request_id_header: str

    def parse(self, body: dict[str, Any]) -> Conversation: ...
    def body(self, ans: Answer, conv: Conversation) -> dict[str, Any]: ...
    def events(self, ans: Answer, conv: Conversation) -> tuple[list[bytes], int]: ...
    def stream_error(self, sequence: int) -> bytes: ...
    def garbage_event(self) -> bytes: ...
    def error_body(self, status: int, message: str | None = None) -> dict[str, Any]: ...
    def refuse_model(
        self, model: str, forbidden: bool, request_id: str
    ) -> tuple[int, dict[str, Any]]: ...


DIALECTS: dict[str, Dialect] = {
    "/v1/chat/completions": OpenAIChat(),
    "/v1/responses": OpenAIResponses(),
    "/v1/messages": AnthropicMessages(),
}


@dataclass(frozen=True)
class Served:
    """What the stub did for one model call (for tests and logs)."""

    number: int
    path: str
    fault: FaultKind | None
    stream: bool
    cursor_after: int | None


def read_body(body: bytes) -> dict[str, Any]:
    """A request's JSON object, or :class:`BadRequest` (the provider's 400) for anything else:
    not JSON, nested past the parser's limit, not an object, or holding a lone surrogate
    (valid JSON, but not text a provider reads)."""
    try:
        request = json.loads(body)
    except RecursionError as exc:
        raise BadRequest("We could not parse the JSON body of your request.") from exc
    except ValueError as exc:
        raise BadRequest(f"We could not parse the JSON body of your request. ({exc})") from exc
    if not isinstance(request, dict):
        raise BadRequest("the body must be a JSON object")
    try:
        json.dumps(request, ensure_ascii=False).encode()
    except UnicodeEncodeError as exc:
        raise BadRequest("The request body is not valid UTF-8 text.") from exc
    return request


class StubReset(Exception):
    """A reset was asked where the connection cannot be aborted (an in-process transport)."""


def _abort(send: Send) -> bool:
    """Abort the connection under uvicorn with an RST; False when there is no transport."""
    transport = getattr(getattr(send, "__self__", None), "transport", None)
    if transport is None or not hasattr(transport, "abort"):
        return False
    sock = transport.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    transport.abort()
    return True


async def _wait_disconnect(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


class StubModel:
    """The ASGI app. ``served`` lists what it did, call by call (also served as JSON at
    ``GET /_replay/stub/calls``, never faulted)."""

    def __init__(self, config: StubConfig) -> None:
        self.config = config
        self.injector = FaultInjector(config.faults, config.seed)
        self.served: list[Served] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            while True:
                msg = await receive()
                if msg["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif msg["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "http":
            return
        body = b""
        more = True
        while more:
            msg = await receive()
            if msg["type"] == "http.disconnect":
                return
            body += msg.get("body", b"")
            more = msg.get("more_body", False)
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        path, method = scope["path"], scope["method"]
        anthropic = "anthropic-version" in headers
        if method == "GET" and path == CALLS_PATH:
            await self._json(send, 200, [dataclasses.asdict(s) for s in self.served], {})
            return
        if method == "GET" and path == "/v1/models":
            await self._json(send, 200, self._models(anthropic), {})
            return
        if method == "POST" and path == COUNT_TOKENS_PATH:
            await self._count_tokens(body, send)
            return
        dialect = DIALECTS.get(path)
        if dialect is None or method != "POST":
            fallback = DIALECTS["/v1/messages" if anthropic else "/v1/chat/completions"]
            err = fallback.error_body(404, f"Invalid URL ({method} {path})")
            await self._json(send, 404, err, {})
            return
        await self._model_call(dialect, path, body, receive, send)

    async def _count_tokens(self, body: bytes, send: Send) -> None:
        counter = AnthropicMessages()
        try:
            request = read_body(body)
            counted = counter.count_tokens(request)
        except BadRequest as exc:
            await self._json(send, 400, counter.error_body(400, str(exc)), {})
            return
        await self._json(send, 200, counted, {})

    def _models(self, anthropic: bool) -> dict[str, Any]:
        model = self.config.script.model
        if anthropic:
            entry: dict[str, Any] = {
                "type": "model",
                "id": model,
                "display_name": model,
                "created_at": "2023-11-14T22:13:20Z",
            }
            return {"data": [entry], "has_more": False, "first_id": model, "last_id": model}
        entry = {"id": model, "object": "model", "created": CREATED, "owned_by": "replay-stub"}
        return {"object": "list", "data": [entry]}

    async def _json(
        self, send: Send, status: int, data: Any, headers: dict[str, str], raw: bytes | None = None
    ) -> None:
        payload = raw if raw is not None else json.dumps(data).encode()
        ctype = "text/html" if raw is BAD_GATEWAY else "application/json"
        await self._start(send, status, {"content-type": ctype, **headers}, len(payload))
        await send({"type": "http.response.body", "body": payload})

    async def _start(
        self, send: Send, status: int, headers: dict[str, str], length: int | None = None
    ) -> None:
        if length is not None:
            headers = {**headers, "content-length": str(length)}
        raw = [(k.encode(), v.encode()) for k, v in headers.items()]
        await send({"type": "http.response.start", "status": status, "headers": raw})

    async def _reset(self, send: Send, receive: Receive) -> None:
        if not _abort(send):
            raise StubReset("reset fault: no transport to abort")
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(_wait_disconnect(receive), 1.0)

    async def _model_call(
        self, dialect: Dialect, path: str, body: bytes, receive: Receive, send: Send
    ) -> None:
        number, fault = self.injector.draw()
        rid = {dialect.request_id_header: f"req_stub{number:08d}"}
        try:
            request = read_body(body)
            conv = dialect.parse(request)
        except BadRequest as exc:
            self.served.append(Served(number, path, None, False, None))
            await self._json(send, 400, dialect.error_body(400, str(exc)), rid)
            return
        model = request.get("model")
        forbidden = model in self.config.forbidden_models
        if isinstance(model, str) and (forbidden or model in self.config.unknown_models):
            self.served.append(Served(number, path, None, conv.stream, None))
            status, refusal = dialect.refuse_model(model, forbidden, rid[dialect.request_id_header])
            await self._json(send, status, refusal, rid)
            return
        ans = answer(self.config.script, conv, model if isinstance(model, str) else None)
        self.served.append(Served(number, path, fault, conv.stream, ans.cursor_after))
        if fault == "stream_error" and not conv.stream:
            fault = "http_529" if dialect.name == "anthropic_messages" else "http_500"
        if fault == "timeout":
            try:
                await asyncio.wait_for(_wait_disconnect(receive), self.config.hold_seconds)
            except TimeoutError:
                await self._reset(send, receive)
            return
        if fault == "reset" and not conv.stream:
            await self._reset(send, receive)
            return
        if fault in {"http_500", "http_503", "http_529", "http_429", "http_401", "http_403"}:
            status = int(fault.removeprefix("http_"))
            headers = dict(rid)
            if status == 429:
                headers["retry-after"] = f"{self.config.retry_after:g}"
            await self._json(send, status, dialect.error_body(status), headers)
            return
        if fault == "http_502":
            await self._json(send, 502, None, {}, raw=BAD_GATEWAY)
            return
        if self.config.think_seconds:
            await asyncio.sleep(self.config.think_seconds)
        if not conv.stream:
            await self._plain(dialect, ans, conv, fault, rid, receive, send)
        else:
            await self._stream(dialect, ans, conv, fault, rid, receive, send)

    async def _plain(
        self,
        dialect: Dialect,
        ans: Answer,
        conv: Conversation,
        fault: FaultKind | None,
        rid: dict[str, str],
        receive: Receive,
        send: Send,
    ) -> None:
        payload = json.dumps(dialect.body(ans, conv)).encode()
        if fault == "bad_json":
            await self._json(send, 200, None, rid, raw=GARBAGE)
        elif fault == "truncate":
            await self._start(send, 200, {"content-type": "application/json", **rid}, len(payload))
            half = payload[: len(payload) // 2]
            await send({"type": "http.response.body", "body": half, "more_body": True})
            await self._reset(send, receive)
        else:
            await self._json(send, 200, None, rid, raw=payload)

    async def _stream(
        self,
        dialect: Dialect,
        ans: Answer,
        conv: Conversation,
        fault: FaultKind | None,
        rid: dict[str, str],
        receive: Receive,
        send: Send,
    ) -> None:
        events, body_events = dialect.events(ans, conv)
        headers = {"content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache"}
        await self._start(send, 200, {**headers, **rid})
        if fault == "bad_json":
            events = [dialect.garbage_event()]
        elif fault in {"truncate", "reset", "stream_error"}:
            events = events[: max(1, body_events // 2)]
        for i, event in enumerate(events):
            if i and self.config.event_gap_seconds:
                await asyncio.sleep(self.config.event_gap_seconds)
            await send({"type": "http.response.body", "body": event, "more_body": True})
        if fault == "reset":
            await self._reset(send, receive)
            return
        if fault == "stream_error":
            error = dialect.stream_error(len(events))
            await send({"type": "http.response.body", "body": error, "more_body": True})
        await send({"type": "http.response.body", "body": b""})


def make_stub_app(config: StubConfig) -> StubModel:
    """The stub model server for ``config``, as an ASGI app."""
    return StubModel(config)
