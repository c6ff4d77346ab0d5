"""The model-call observer: usage, timing, error class and verdict per call, and the roll-up
(:mod:`replay.grade.wire`, the grader's, fed the records the observer makes).

Two sources of bytes: what the stub model really sends to the real SDKs (captured by a tap that
feeds the observer the way the gateway's hooks do: headers, then chunks as they pass, then the
end or the transport failure), and hand-written responses in the providers' documented shapes.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest

from replay.gateway.modelcalls import (
    ModelCall,
    ModelCallObserver,
    RequestFacts,
    TokenUsage,
    failure_class,
    transport_kind,
    verdict_for,
)
from replay.grade.wire import group_logical_calls, summarize_wire
from replay.harness.stub import Fault, FaultKind, Script, StubConfig, make_stub_app
from tests.harness.server import serving

SCRIPT = Script.model_validate(
    {
        "name": "gold",
        "steps": [
            {"say": "Reading the failing test first.", "bash": "pytest -x tests/test_dates.py"},
            {"say": "Fixed."},
        ],
    }
)
SCHEMA = {"type": "object", "properties": {"command": {"type": "string"}}}
MSGS: Any = [{"role": "user", "content": "Fix the date bug."}]


# ------------------------------------------------------------------ the tap


class _TransportSpy:
    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.aborted = False

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return self.inner.get_extra_info(name, default)

    def abort(self) -> None:
        self.aborted = True
        self.inner.abort()


class _Exchange:
    """One call through the tap: forwards the app's messages and feeds the observer."""

    def __init__(self, send: Any, obs: ModelCallObserver, tap: Tap) -> None:
        self.tap = tap
        inner = getattr(getattr(send, "__self__", None), "transport", None)
        self.transport = _TransportSpy(inner) if inner is not None else None
        self._send = send
        self.obs = obs
        self.sse = False
        self.plain: list[bytes] = []
        self.done = False

    async def send(self, message: Any) -> None:
        now = time.time()
        if message["type"] == "http.response.start":
            headers = [(k.decode(), v.decode()) for k, v in message["headers"]]
            self.obs.headers(message["status"], headers, now)
            self.sse = any(k == "content-type" and "event-stream" in v for k, v in headers)
        elif message["type"] == "http.response.body":
            data = message.get("body", b"")
            if self.sse:
                self.obs.chunk(data)
            else:
                self.plain.append(data)
            if not message.get("more_body", False):
                # Logged before the last byte goes out, so the client never sees the
                # answer before the log does.
                self.tap.record(self.obs.end(now, None if self.sse else b"".join(self.plain)))
                self.done = True
        await self._send(message)


class Tap:
    """ASGI middleware in front of the stub, standing in for the gateway's hooks."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.calls: list[ModelCall] = []
        self._lock = threading.Lock()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        body, more = b"", True
        while more:
            msg = await receive()
            body += msg.get("body", b"")
            more = msg.get("more_body", False)
        headers = [(k.decode(), v.decode()) for k, v in scope["headers"]]
        host = dict(headers).get("host", "api.test")
        obs = ModelCallObserver()
        obs.begin(scope["method"], f"http://{host}{scope['path']}", headers, body, time.time())
        replayed = False

        async def app_receive() -> Any:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        exchange = _Exchange(send, obs, self)
        await self.app(scope, app_receive, exchange.send)
        if not exchange.done:
            aborted = exchange.transport is not None and exchange.transport.aborted
            if aborted:
                self.record(obs.error("reset", "connection reset by the server", time.time()))
            else:
                self.record(obs.error("timeout", "the client gave up waiting", time.time()))

    def record(self, call: ModelCall) -> None:
        with self._lock:
            self.calls.append(call)

    def wait(self, count: int) -> list[ModelCall]:
        """The calls, once ``count`` are logged (a failure is logged after the client saw it)."""
        deadline = time.monotonic() + 5
        while len(self.calls) < count and time.monotonic() < deadline:
            time.sleep(0.01)
        with self._lock:
            return list(self.calls)


def _tapped(*faults: Fault) -> Iterator[tuple[str, Tap]]:
    tap = Tap(make_stub_app(StubConfig(script=SCRIPT, faults=list(faults), retry_after=0.01)))
    with serving(tap) as url:
        yield url, tap


@pytest.fixture(scope="module")
def clean() -> Iterator[tuple[str, Tap]]:
    yield from _tapped()


def _oa(url: str, **kw: Any) -> openai.OpenAI:
    client = openai.OpenAI(base_url=f"{url}/v1", api_key="placeholder", **{"max_retries": 0, **kw})
    _clients.append(client)
    return client


def _an(url: str, **kw: Any) -> anthropic.Anthropic:
    client = anthropic.Anthropic(base_url=url, api_key="placeholder", **{"max_retries": 0, **kw})
    _clients.append(client)
    return client


_clients: list[openai.OpenAI | anthropic.Anthropic] = []


@pytest.fixture(autouse=True)
def _close_clients() -> Iterator[None]:
    """Close every SDK client a test made (an open pooled socket is a ResourceWarning)."""
    yield
    while _clients:
        _clients.pop().close()


def _chat(url: str, stream: bool, **kw: Any) -> TokenUsage | None:
    client = _oa(url, **kw)
    tools: Any = [{"type": "function", "function": {"name": "bash", "parameters": SCHEMA}}]
    if not stream:
        done = client.chat.completions.create(model="gpt-test", messages=MSGS, tools=tools)
        u = done.usage
    else:
        chunks = list(
            client.chat.completions.create(
                model="gpt-test",
                messages=MSGS,
                tools=tools,
                stream=True,
                stream_options={"include_usage": True},
            )
        )
        u = chunks[-1].usage
    assert u is not None
    return TokenUsage(input_tokens=u.prompt_tokens, output_tokens=u.completion_tokens)


def _responses(url: str, stream: bool, **kw: Any) -> TokenUsage | None:
    client = _oa(url, **kw)
    if stream:
        with client.responses.stream(model="gpt-test", input="Fix it.") as s:
            u = s.get_final_response().usage
    else:
        u = client.responses.create(model="gpt-test", input="Fix it.").usage
    assert u is not None
    return TokenUsage(input_tokens=u.input_tokens, output_tokens=u.output_tokens)


def _messages(url: str, stream: bool, **kw: Any) -> TokenUsage | None:
    client = _an(url, **kw)
    args: Any = {
        "model": "claude-test",
        "max_tokens": 256,
        "messages": MSGS,
        "tools": [{"name": "bash", "input_schema": SCHEMA}],
    }
    if stream:
        with client.messages.stream(**args) as s:
            u = s.get_final_message().usage
    else:
        u = client.messages.create(**args).usage
    return TokenUsage(input_tokens=u.input_tokens, output_tokens=u.output_tokens)


CALLS = {"openai_chat": _chat, "openai_responses": _responses, "anthropic_messages": _messages}


# ------------------------------------------------------------------ captured from the stub


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
@pytest.mark.parametrize("provider", list(CALLS))
def test_ok_calls_log_the_usage_the_sdk_saw(
    clean: tuple[str, Tap], provider: str, stream: bool
) -> None:
    url, tap = clean
    before = len(tap.calls)
    sdk_usage = CALLS[provider](url, stream)
    # The stub's last (empty) body message may go out after the SDK has its final chunk
    # (an OpenAI stream ends at ``[DONE]``), and the tap logs the call on that message.
    [call] = tap.wait(before + 1)[before:]
    assert call.verdict == "ok" and call.error_class is None
    assert call.provider == provider
    assert call.streamed is stream
    assert call.model in {"gpt-test", "claude-test"}
    assert call.usage == sdk_usage
    assert call.status == 200
    assert call.request_id_from_provider and call.request_id.startswith("req_stub")
    assert call.stop_reason in {"tool_calls", "tool_use", "completed"}
    assert call.ttfb_ms is not None and call.total_ms is not None
    assert 0 <= call.ttfb_ms <= call.total_ms
    assert call.request_bytes > 0 and call.response_bytes > 0
    assert call.retry_count == 0


# (provider, streamed, fault) -> error class the observer must give
FAULTED: list[tuple[str, bool, FaultKind, str]] = [
    ("openai_chat", True, "truncate", "truncated_stream"),
    ("openai_responses", True, "truncate", "truncated_stream"),
    ("anthropic_messages", True, "truncate", "truncated_stream"),
    ("anthropic_messages", True, "stream_error", "overloaded_529"),
    ("openai_chat", True, "stream_error", "http_5xx"),
    ("openai_chat", False, "http_429", "http_429"),
    ("anthropic_messages", True, "http_429", "http_429"),
    ("openai_chat", False, "http_503", "http_5xx"),
    ("anthropic_messages", False, "http_503", "http_5xx"),
    ("openai_chat", True, "http_502", "http_5xx"),
    ("anthropic_messages", False, "http_529", "overloaded_529"),
    ("anthropic_messages", True, "http_529", "overloaded_529"),
    ("openai_chat", False, "bad_json", "bad_json"),
    ("anthropic_messages", True, "bad_json", "bad_json"),
    ("openai_chat", False, "reset", "reset"),
    ("anthropic_messages", True, "reset", "reset"),
    ("openai_chat", False, "truncate", "reset"),
    ("anthropic_messages", False, "timeout", "timeout"),
]
VERDICT = {"bad_json": "protocol_fail"}


@pytest.mark.parametrize(("provider", "stream", "fault", "error_class"), FAULTED)
def test_faults_are_classified(
    provider: str, stream: bool, fault: FaultKind, error_class: str
) -> None:
    for url, tap in _tapped(Fault(kind=fault, every=1)):
        # What the SDKs raise for each fault is shown in tests/harness/test_stub_sdk.py.
        with contextlib.suppress(Exception):
            CALLS[provider](url, stream, timeout=1.5 if fault == "timeout" else 10.0)
        [call] = tap.wait(1)
    assert call.error_class == error_class
    assert call.verdict == VERDICT.get(error_class, "transport_fail")
    assert call.usage is None or stream  # a stream may have reported usage before it broke
    assert call.stop_reason is None
    if fault in {"timeout", "reset"} and not stream:
        assert call.status in {None, 200}
    assert call.total_ms is not None and call.total_ms >= (call.ttfb_ms or 0)


def test_a_400_is_rejected_not_transport(clean: tuple[str, Tap]) -> None:
    url, tap = clean
    before = len(tap.calls)
    with pytest.raises(openai.BadRequestError):
        _oa(url).chat.completions.create(model="gpt-test", messages=[])
    with pytest.raises(anthropic.BadRequestError):
        _an(url).messages.create(model="claude-test", max_tokens=10, messages=[])
    calls = tap.wait(before + 2)[before:]
    assert [(c.status, c.error_class, c.verdict) for c in calls] == [
        (400, "http_4xx", "rejected"),
        (400, "http_4xx", "rejected"),
    ]
    assert "messages" in (calls[1].error_detail or "")


def test_sdk_retries_group_into_one_logical_call() -> None:
    for url, tap in _tapped(Fault(kind="http_503", every=2)):
        _messages(url, stream=False, max_retries=2)  # call 1: clean
        _messages(url, stream=False, max_retries=2)  # call 2: 503, then the SDK's retry
        with pytest.raises(openai.InternalServerError):
            _chat(url, stream=True, max_retries=0)  # call 4: 503 again, no retry
        calls = tap.wait(4)
    assert [(c.status, c.retry_count) for c in calls] == [(200, 0), (503, 0), (200, 1), (503, 0)]
    # Same conversation, so calls 1-3 share one body: the first success closes its group.
    assert calls[0].logical_key == calls[1].logical_key == calls[2].logical_key
    logical = group_logical_calls(calls)
    assert [len(lc.attempts) for lc in logical] == [1, 2, 1]
    assert [lc.recovered for lc in logical] == [False, True, False]
    summary = summarize_wire(calls)
    assert summary.calls == 4 and summary.logical_calls == 3
    assert summary.recovered == 1 and summary.transport_failed == 1 and not summary.healthy
    assert summary.failed_attempts == {"http_5xx": 2}
    assert summary.usage.input_tokens == calls[0].usage.input_tokens + calls[2].usage.input_tokens  # type: ignore[union-attr]
    assert summary.model_wait_ms == pytest.approx(sum(c.total_ms or 0 for c in calls), abs=0.01)


def test_retries_that_all_fail_are_one_failed_logical_call() -> None:
    for url, tap in _tapped(Fault(kind="reset", every=1)):
        with pytest.raises(anthropic.APIConnectionError):
            _messages(url, stream=False, max_retries=2)
        calls = tap.wait(3)
    assert [(c.retry_count, c.error_class) for c in calls] == [
        (0, "reset"),
        (1, "reset"),
        (2, "reset"),
    ]
    summary = summarize_wire(calls)
    assert (summary.logical_calls, summary.transport_failed, summary.healthy) == (1, 1, False)


# ------------------------------------------------------------------ hand-written responses


def observe(
    path: str,
    status: int,
    body: bytes | list[bytes],
    *,
    request: dict[str, Any] | None = None,
    headers: dict[str, str] | None = None,
    request_headers: dict[str, str] | None = None,
) -> ModelCall:
    """Feed one call: request sent at t=100.0, headers at 100.25, last byte at 101.5."""
    obs = ModelCallObserver()
    req = json.dumps(request or {"model": "m"}).encode()
    obs.begin("POST", f"https://api.test{path}", request_headers or {}, req, 100.0)
    sse = isinstance(body, list)
    ctype = "text/event-stream" if sse else "application/json"
    obs.headers(status, {"content-type": ctype, **(headers or {})}, 100.25)
    if isinstance(body, list):
        for part in body:
            obs.chunk(part)
        return obs.end(101.5)
    return obs.end(101.5, body)


def ev(data: Any, event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {data if isinstance(data, str) else json.dumps(data)}\n\n".encode()


CHAT_USAGE = {
    "prompt_tokens": 1200,
    "completion_tokens": 340,
    "total_tokens": 1540,
    "prompt_tokens_details": {"cached_tokens": 1024, "audio_tokens": 0},
    "completion_tokens_details": {"reasoning_tokens": 192, "audio_tokens": 0},
}
CHAT_USAGE_PARSED = TokenUsage(
    input_tokens=1200, output_tokens=340, cached_input_tokens=1024, reasoning_tokens=192
)


def _chat_chunks(usage: bool = True, done: bool = True) -> list[bytes]:
    base = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    delta = {"index": 0, "delta": {"content": "hi"}, "finish_reason": None}
    out = [ev({**base, "choices": [delta]})]
    out.append(ev({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}))
    if usage:
        out.append(ev({**base, "choices": [], "usage": CHAT_USAGE}))
    if done:
        out.append(b"data: [DONE]\n\n")
    return out


STREAM_REQ = {"model": "gpt-x", "stream": True, "stream_options": {"include_usage": True}}


def test_openai_chat_json_with_cached_and_reasoning_tokens() -> None:
    body = {
        "id": "c",
        "object": "chat.completion",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": "x"}, "finish_reason": "stop"}
        ],
        "usage": CHAT_USAGE,
    }
    call = observe(
        "/v1/chat/completions", 200, json.dumps(body).encode(), headers={"x-request-id": "req_abc"}
    )
    assert (call.verdict, call.usage, call.stop_reason) == ("ok", CHAT_USAGE_PARSED, "stop")
    assert (call.request_id, call.ttfb_ms, call.total_ms) == ("req_abc", 250.0, 1500.0)


def test_openai_chat_stream_split_anywhere_gives_the_same_record() -> None:
    whole = b"".join(_chat_chunks()).replace(b"\n", b"\r\n")
    by_byte = observe(
        "/v1/chat/completions",
        200,
        [whole[i : i + 1] for i in range(len(whole))],
        request=STREAM_REQ,
    )
    at_once = observe("/v1/chat/completions", 200, [whole], request=STREAM_REQ)
    assert by_byte.model_dump(exclude={"request_id"}) == at_once.model_dump(exclude={"request_id"})
    assert (by_byte.verdict, by_byte.usage, by_byte.streamed) == ("ok", CHAT_USAGE_PARSED, True)
    assert by_byte.response_bytes == len(whole)


def test_openai_chat_stream_terminal_rules() -> None:
    plain = {"model": "gpt-x", "stream": True}
    assert (
        observe("/v1/chat/completions", 200, _chat_chunks(usage=False), request=plain).verdict
        == "ok"
    )
    no_usage = observe("/v1/chat/completions", 200, _chat_chunks(usage=False), request=STREAM_REQ)
    assert no_usage.error_class == "truncated_stream"
    no_done = observe("/v1/chat/completions", 200, _chat_chunks(done=False), request=STREAM_REQ)
    assert (no_done.error_class, no_done.verdict) == ("truncated_stream", "transport_fail")
    garbage = observe("/v1/chat/completions", 200, [b"data: {not json\n\n"], request=plain)
    assert (garbage.error_class, garbage.verdict) == ("bad_json", "protocol_fail")


def test_the_observer_never_holds_a_whole_stream() -> None:
    obs = ModelCallObserver()
    obs.begin(
        "POST", "https://api.test/v1/chat/completions", {}, json.dumps(STREAM_REQ).encode(), 0.0
    )
    obs.headers(200, {"content-type": "text/event-stream"}, 0.1)
    chunk = _chat_chunks(usage=False, done=False)[0]
    for _ in range(2000):
        obs.chunk(chunk)
    obs.chunk(chunk[:30])
    assert obs.held_bytes == 30


def test_openai_responses_stream_usage_from_response_completed() -> None:
    usage = {
        "input_tokens": 900,
        "input_tokens_details": {"cached_tokens": 512},
        "output_tokens": 120,
        "output_tokens_details": {"reasoning_tokens": 64},
        "total_tokens": 1020,
    }
    events = [
        ev(
            {
                "type": "response.created",
                "sequence_number": 0,
                "response": {"status": "in_progress", "usage": None},
            },
            "response.created",
        ),
        ev(
            {"type": "response.output_text.delta", "sequence_number": 1, "delta": "hi"},
            "response.output_text.delta",
        ),
    ]
    done = ev(
        {
            "type": "response.completed",
            "sequence_number": 2,
            "response": {"status": "completed", "usage": usage},
        },
        "response.completed",
    )
    call = observe(
        "/v1/responses", 200, [*events, done], request={"model": "gpt-x", "stream": True}
    )
    assert call.usage == TokenUsage(
        input_tokens=900, output_tokens=120, cached_input_tokens=512, reasoning_tokens=64
    )
    assert (call.verdict, call.stop_reason) == ("ok", "completed")
    cut = observe("/v1/responses", 200, events, request={"model": "gpt-x", "stream": True})
    assert cut.error_class == "truncated_stream"
    error = ev(
        {"type": "error", "code": "server_error", "message": "boom", "sequence_number": 2}, "error"
    )
    failed = observe(
        "/v1/responses", 200, [*events, error], request={"model": "gpt-x", "stream": True}
    )
    assert (failed.error_class, failed.error_detail) == ("http_5xx", "boom")


ANTHROPIC_START = {
    "type": "message_start",
    "message": {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "content": [],
        "model": "claude",
        "stop_reason": None,
        "usage": {
            "input_tokens": 472,
            "cache_creation_input_tokens": 20,
            "cache_read_input_tokens": 100,
            "output_tokens": 1,
        },
    },
}


def _anthropic_events(final_delta_usage: dict[str, Any]) -> list[bytes]:
    return [
        ev(ANTHROPIC_START, "message_start"),
        ev({"type": "ping"}, "ping"),
        ev(
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
            "content_block_start",
        ),
        ev(
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": "Hello"},
            },
            "content_block_delta",
        ),
        ev({"type": "content_block_stop", "index": 0}, "content_block_stop"),
        ev(
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": 15},
            },
            "message_delta",
        ),
        ev(
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": final_delta_usage,
            },
            "message_delta",
        ),
        ev({"type": "message_stop"}, "message_stop"),
    ]


def test_anthropic_stream_takes_the_last_cumulative_usage() -> None:
    call = observe(
        "/v1/messages",
        200,
        _anthropic_events({"output_tokens": 89}),
        request={"model": "claude", "stream": True},
    )
    assert call.usage == TokenUsage(
        input_tokens=472, output_tokens=89, cached_input_tokens=100, cache_creation_input_tokens=20
    )
    assert (call.verdict, call.stop_reason) == ("ok", "end_turn")
    # Newer streams repeat the input counts in message_delta: the last values win.
    full = {
        "input_tokens": 500,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 100,
        "output_tokens": 90,
    }
    call = observe(
        "/v1/messages", 200, _anthropic_events(full), request={"model": "claude", "stream": True}
    )
    assert call.usage == TokenUsage(input_tokens=500, output_tokens=90, cached_input_tokens=100)


def test_anthropic_overloaded_error_mid_stream() -> None:
    events = _anthropic_events({"output_tokens": 89})[:4]
    error = ev(
        {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}, "error"
    )
    call = observe(
        "/v1/messages", 200, [*events, error], request={"model": "claude", "stream": True}
    )
    assert (call.error_class, call.verdict, call.error_detail) == (
        "overloaded_529",
        "transport_fail",
        "Overloaded",
    )
    cut = observe("/v1/messages", 200, events, request={"model": "claude", "stream": True})
    assert cut.error_class == "truncated_stream"


def _err(kind: str, message: str, code: str | None = None, anthropic_shape: bool = True) -> bytes:
    if anthropic_shape:
        return json.dumps({"type": "error", "error": {"type": kind, "message": message}}).encode()
    return json.dumps(
        {"error": {"type": kind, "message": message, "param": None, "code": code}}
    ).encode()


@pytest.mark.parametrize(
    ("path", "status", "body", "error_class", "verdict"),
    [
        (
            "/v1/messages",
            429,
            _err(
                "rate_limit_error",
                "This request would exceed the rate limit for your organization.",
            ),
            "http_429",
            "transport_fail",
        ),
        (
            "/v1/messages",
            429,
            _err(
                "rate_limit_error",
                "You have reached your specified API usage limits. "
                "You will regain access on 2026-12-01 at 00:00 UTC.",
            ),
            "quota",
            "rejected",
        ),
        (
            "/v1/messages",
            400,
            _err(
                "invalid_request_error",
                "Your credit balance is too low to access the Anthropic API.",
            ),
            "quota",
            "rejected",
        ),
        (
            "/v1/chat/completions",
            429,
            _err(
                "insufficient_quota",
                "You exceeded your current quota, please check your plan and billing details.",
                "insufficient_quota",
                False,
            ),
            "quota",
            "rejected",
        ),
        (
            "/v1/chat/completions",
            429,
            _err("requests", "Rate limit reached for requests", "rate_limit_exceeded", False),
            "http_429",
            "transport_fail",
        ),
        (
            "/v1/messages",
            529,
            _err("overloaded_error", "Overloaded"),
            "overloaded_529",
            "transport_fail",
        ),
        (
            "/v1/messages",
            500,
            _err("api_error", "Internal server error"),
            "http_5xx",
            "transport_fail",
        ),
        (
            "/v1/chat/completions",
            503,
            _err("server_error", "The server is overloaded or not ready yet.", None, False),
            "http_5xx",
            "transport_fail",
        ),
        (
            "/v1/chat/completions",
            502,
            b"<html><body>502 Bad Gateway</body></html>",
            "http_5xx",
            "transport_fail",
        ),
        ("/v1/messages", 408, b"", "http_408", "transport_fail"),
        (
            "/v1/messages",
            400,
            _err("invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum"),
            "http_4xx",
            "rejected",
        ),
        (
            "/v1/messages",
            401,
            _err("authentication_error", "invalid x-api-key"),
            "auth",
            "rejected",
        ),
        (
            "/v1/chat/completions",
            403,
            _err("invalid_request_error", "Country not supported", None, False),
            "auth",
            "rejected",
        ),
        (
            "/v1/responses",
            404,
            _err("invalid_request_error", "The model does not exist", "model_not_found", False),
            "http_4xx",
            "rejected",
        ),
        (
            "/v1/messages",
            413,
            _err("request_too_large", "Request exceeds the maximum allowed size"),
            "http_4xx",
            "rejected",
        ),
        (
            "/v1/messages",
            200,
            b"<html><body>Sign in to continue</body></html>",
            "bad_json",
            "protocol_fail",
        ),
        ("/v1/chat/completions", 200, b'{"object": "list"}', "bad_json", "protocol_fail"),
        ("/v1/responses", 200, b"", "bad_json", "protocol_fail"),
    ],
)
def test_status_and_body_classes(
    path: str, status: int, body: bytes, error_class: str, verdict: str
) -> None:
    call = observe(path, status, body)
    assert (call.status, call.error_class, call.verdict) == (status, error_class, verdict)
    assert call.usage is None


def test_transport_failures_before_any_answer() -> None:
    for kind in ("connect", "tls", "timeout", "reset"):
        obs = ModelCallObserver()
        obs.begin(
            "POST",
            "https://api.anthropic.com/v1/messages",
            {"x-stainless-retry-count": "2"},
            b'{"model": "claude"}',
            10.0,
        )
        call = obs.error(kind, f"{kind} failed", 12.0)  # type: ignore[arg-type]
        assert (call.error_class, call.verdict, call.status, call.ttfb_ms, call.total_ms) == (
            kind,
            "transport_fail",
            None,
            None,
            2000.0,
        )
        assert (call.retry_count, call.host, call.provider, call.model) == (
            2,
            "api.anthropic.com",
            "anthropic_messages",
            "claude",
        )
        assert call.request_id.startswith("gw-") and not call.request_id_from_provider


def test_ids_keys_and_providers() -> None:
    usage = {"input_tokens": 3, "output_tokens": 4}
    message = {"id": "m", "type": "message", "content": [], "stop_reason": "end_turn"}
    body = json.dumps({**message, "usage": usage}).encode()
    call = observe(
        "/v1/messages",
        200,
        body,
        headers={"request-id": "req_011"},
        request_headers={"X-Stainless-Retry-Count": "1"},
    )
    assert (call.request_id, call.retry_count, call.usage) == (
        "req_011",
        1,
        TokenUsage(input_tokens=3, output_tokens=4),
    )
    same = observe("/v1/messages", 200, body)
    other = observe("/v1/messages", 200, body, request={"model": "other"})
    assert call.logical_key == same.logical_key != other.logical_key
    assert observe("/proxy/openai/v1/chat/completions", 500, b"").provider == "openai_chat"
    unknown = observe("/v1/embeddings", 200, b'{"data": []}')
    assert (unknown.provider, unknown.verdict) == ("unknown", "ok")
    ModelCall.model_validate_json(call.model_dump_json())


def test_an_identical_request_after_a_success_is_a_new_logical_call() -> None:
    ok = observe(
        "/v1/messages", 200, b'{"content": [], "usage": {"input_tokens": 1, "output_tokens": 1}}'
    )
    fail = observe("/v1/messages", 503, b"")
    again = ok.model_copy(update={"t_request_end": 200.0})
    bad = observe("/v1/messages", 200, b"nope", request={"model": "x"}).model_copy(
        update={"t_request_end": 300.0}
    )
    quota = observe(
        "/v1/messages",
        429,
        _err("rate_limit_error", "You have reached your specified API usage limits."),
    ).model_copy(update={"t_request_end": 400.0})
    calls = [ok, fail.model_copy(update={"t_request_end": 150.0}), again, bad, quota]
    logical = group_logical_calls(calls)
    assert [len(lc.attempts) for lc in logical] == [1, 2, 1, 1]
    summary = summarize_wire(calls)
    assert (
        summary.logical_calls,
        summary.recovered,
        summary.transport_failed,
        summary.healthy,
    ) == (4, 1, 0, True)
    assert (summary.protocol_failed, summary.rejected, summary.quota_stop) == (1, 1, True)
    assert summary.usage == TokenUsage(input_tokens=2, output_tokens=2)


# ------------------------------------------------------------------ beside mitmproxy

GATEWAY_PYTHON = Path(
    os.environ.get(
        "REPLAY_GATEWAY_PYTHON", Path(__file__).resolve().parents[2] / ".venv-gateway/bin/python"
    )
)
IN_GATEWAY_VENV = r"""
import json, threading, time, urllib.request
import uvicorn
from replay.gateway.modelcalls import ModelCallObserver
from replay.harness.stub import Script, StubConfig, make_stub_app

script = Script(name="g", steps=[{"say": "hi", "bash": "ls"}])
server = uvicorn.Server(uvicorn.Config(make_stub_app(StubConfig(script=script)), port=0,
                                       log_level="critical", lifespan="off"))
threading.Thread(target=server.run, daemon=True).start()
while not server.started:
    time.sleep(0.01)
port = server.servers[0].sockets[0].getsockname()[1]
body = json.dumps({"model": "claude", "max_tokens": 9, "stream": True,
                   "messages": [{"role": "user", "content": "go"}]}).encode()
headers = {"content-type": "application/json", "anthropic-version": "2023-06-01"}
req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/messages", body, headers)
obs = ModelCallObserver()
obs.begin("POST", req.full_url, dict(req.header_items()), body, time.time())
with urllib.request.urlopen(req) as resp:
    obs.headers(resp.status, dict(resp.headers.items()), time.time())
    while data := resp.read1(64):
        obs.chunk(data)
call = obs.end(time.time())
server.should_exit = True
print(json.dumps({"call": call.model_dump()}))
"""


def test_observer_and_stub_run_in_the_gateway_venv() -> None:
    """mitmproxy's venv pins older h11 and has none of the test clients: both modules work."""
    assert GATEWAY_PYTHON.exists(), f"{GATEWAY_PYTHON} missing: run make (it builds .venv-gateway)"
    done = subprocess.run(
        [str(GATEWAY_PYTHON), "-c", IN_GATEWAY_VENV], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    call = ModelCall.model_validate(out["call"])
    healthy = summarize_wire([call]).healthy  # the grader's, outside the gateway
    assert (call.verdict, call.provider, call.streamed, healthy) == (
        "ok",
        "anthropic_messages",
        True,
        True,
    )
    assert call.usage is not None and call.usage.output_tokens > 0


@pytest.mark.parametrize(
    ("message", "answered", "kind"),
    [
        ("[Errno 111] Connect call failed ('127.0.0.1', 9)", False, "connect"),
        ("[Errno -2] Name or service not known", False, "connect"),
        ("Server TLS handshake failed. certificate verify failed", False, "tls"),
        ("server closed connection", True, "reset"),
        ("server closed connection", False, "reset"),
        ("Connection killed: [Errno 104] Connection reset by peer", False, "reset"),
        ("Connection timed out", False, "timeout"),
    ],
)
def test_proxy_error_messages_map_to_transport_kinds(
    message: str, answered: bool, kind: str
) -> None:
    assert transport_kind(message, answered) == kind
    assert failure_class(message, answered) == kind


def test_who_broke_the_call_the_client_or_the_provider() -> None:
    # The agent's client hung up while the provider had not failed: the agent's doing.
    assert failure_class("Client disconnected.", False) == "abandoned"
    assert failure_class("Client disconnected.", True) == "abandoned"
    assert failure_class("stream reset by client (CANCEL)", True) == "abandoned"
    # HTTP/2 words both sides' hang-ups alike: whose connection is gone decides.
    assert failure_class("peer closed connection", False, client_gone=True) == "abandoned"
    assert failure_class("peer closed connection", False) == "reset"
    # The gateway's own deadline passed first: the provider hung, whatever mitmproxy says.
    deadline = "gateway deadline: no answer from the provider within 4 s"
    assert failure_class("Client disconnected.", False, deadline) == "timeout"
    assert failure_class("server closed connection", False, deadline) == "timeout"
    obs = ModelCallObserver()
    obs.begin("POST", "https://api.test/v1/chat/completions", {}, b"{}", 0.0)
    call = obs.error("abandoned", "Client disconnected.", 1.0)
    assert (call.error_class, call.verdict) == ("abandoned", "abandoned")


def _call(t: float, error_class: str | None, status: int | None, key: str = "k") -> ModelCall:
    obs = ModelCallObserver()
    obs.begin("POST", "https://api.test/v1/chat/completions", {}, key.encode(), t)
    call = obs.error("reset", "x", t + 1)  # a template; the fields that matter are set below
    return call.model_copy(
        update={
            "error_class": error_class,
            "status": status,
            "verdict": verdict_for(error_class),  # type: ignore[arg-type]
        }
    )


def test_abandoned_calls_do_not_make_the_wire_unhealthy_and_group_with_their_retry() -> None:
    calls = [_call(0, "abandoned", None), _call(2, None, 200), _call(5, None, 200, "other")]
    summary = summarize_wire(calls)
    assert summary.healthy and summary.transport_failed == 0
    assert (summary.logical_calls, summary.abandoned) == (2, 0), "the retry answered"
    only = summarize_wire([_call(0, "abandoned", None), _call(2, "abandoned", None)])
    assert only.healthy and (only.logical_calls, only.abandoned) == (1, 1)


def test_a_refused_key_or_account_is_the_runners_unless_a_later_call_was_answered() -> None:
    refused = summarize_wire([_call(0, "auth", 401), _call(2, "auth", 401)])
    assert refused.account_refused is not None and "auth (HTTP 401)" in refused.account_refused
    quota = summarize_wire([_call(0, None, 200), _call(2, "quota", 429)])
    assert quota.account_refused is not None and quota.quota_stop
    # One refusal the agent provoked itself (say, a made-up model), then the harness's next
    # call answered: the key works, nothing to blame on the runner.
    provoked = summarize_wire([_call(0, None, 200), _call(2, "auth", 403), _call(4, None, 200)])
    assert provoked.account_refused is None
    # A 400 for the agent's own bad body is neither the wire nor the account.
    bad = summarize_wire([_call(0, "http_4xx", 400)])
    assert bad.account_refused is None and bad.healthy and bad.rejected == 1


def test_a_gzip_stream_is_decoded_and_an_unknown_encoding_is_left_alone() -> None:
    raw = gzip.compress(b"".join(_anthropic_events({"output_tokens": 89})))
    obs = ModelCallObserver()
    obs.begin("POST", "https://api.test/v1/messages", {}, b'{"model": "c", "stream": true}', 0.0)
    obs.headers(200, {"content-type": "text/event-stream", "content-encoding": "gzip"}, 0.1)
    for i in range(0, len(raw), 7):
        obs.chunk(raw[i : i + 7])
    call = obs.end(0.2)
    assert (call.verdict, call.response_bytes) == ("ok", len(raw))
    assert call.usage is not None and call.usage.output_tokens == 89

    obs = ModelCallObserver()
    obs.begin("POST", "https://api.test/v1/messages", {}, b'{"model": "c"}', 0.0)
    obs.headers(200, {"content-type": "application/json", "content-encoding": "br"}, 0.1)
    obs.chunk(b"\x8b\x02\x80opaque")
    call = obs.end(0.2)
    assert (call.verdict, call.usage) == ("ok", None)
    assert call.error_detail == "body not inspected (br)"


def test_ttfb_and_total_follow_the_stubs_delays() -> None:
    config = StubConfig(script=SCRIPT, think_seconds=0.3, event_gap_seconds=0.02)
    tap = Tap(make_stub_app(config))
    with serving(tap) as url:
        _messages(url, stream=True)
    [call] = tap.wait(1)
    assert call.ttfb_ms is not None and call.total_ms is not None
    assert 300 <= call.ttfb_ms < 1300
    # message_start, ping, block start/deltas/stop..., message_delta, message_stop
    assert call.total_ms - call.ttfb_ms >= 20 * 8


# ------------------------------------------------------------------ hostile requests


def _sent(headers: Any, body: bytes = b'{"model": "gpt-4.1"}') -> ModelCall:
    obs = ModelCallObserver()
    obs.begin("POST", "https://api.openai.com/v1/chat/completions", headers, body, 0.0)
    call = obs.error("reset", "x", 1.0)
    ModelCall.model_validate_json(call.model_dump_json().encode("utf-8"))
    return call


@pytest.mark.parametrize(
    "value",
    [
        "\xb2",  # the byte 0xB2 as the gateway reads headers (latin-1): '²', isdigit() but no int
        "\xc2\xb2",  # '²' in UTF-8, read the same way
        "²",
        "\u0661",  # ARABIC-INDIC DIGIT ONE
        "9" * 5000,  # more digits than int() converts
        "12345",
        "-1",
        "0x1",
        "",
    ],
)
def test_a_retry_count_that_is_not_a_count_is_recorded_as_odd(value: str) -> None:
    """Issue 33: ``x-stainless-retry-count: ²`` raised in the gateway's observer, failed the
    addon and voided the run."""
    call = _sent({"x-stainless-retry-count": value})
    assert call.retry_count == 0 and call.request is not None
    assert len(call.request.odd) == 1 and "is not a count" in call.request.odd[0]
    assert len(call.request.odd[0]) < 200, "a huge value is quoted cut"


def test_retry_counts_repeated_headers_and_the_client() -> None:
    call = _sent(
        [
            ("X-Stainless-Retry-Count", " 2 "),
            ("x-stainless-retry-count", "0"),
            ("User-Agent", "OpenAI/Python 1.99.1"),
            ("x-stainless-lang", "python"),
            ("x-stainless-retry-count-ish", "x"),
            ("x-stainless-timeout", "600"),
        ]
    )
    assert call.retry_count == 2 and call.request is not None
    assert call.request.odd == ["x-stainless-retry-count sent 2 times"]
    assert call.request.client == "user-agent=OpenAI/Python 1.99.1; x-stainless-lang=python"
    assert _sent({}).request == RequestFacts(client="", odd=[])
    # A byte that is not UTF-8, as mitmproxy's own reading carries it: written as an escape.
    odd = _sent([("user-agent", "curl/\udcff" + "x" * 500)])
    assert odd.request is not None and odd.request.client.startswith("user-agent=curl/\\xff")
    assert len(odd.request.client) < 260


@pytest.mark.parametrize(
    ("body", "odd", "model"),
    [
        (b"[" * 100_000, "the body (100000 bytes) is JSON nested too deep to read", None),
        (b'{"a":' * 50_000, "the body (250000 bytes) is JSON nested too deep to read", None),
        (b"\xff\xfe not json", "the body (11 bytes) is not JSON (UnicodeDecodeError)", None),
        (b"model=gpt-4.1", "the body (13 bytes) is not JSON (JSONDecodeError)", None),
        (
            b'{"model": 1' + b"0" * 5000 + b"}",
            "the body (5012 bytes) is not JSON (ValueError)",
            None,
        ),
        (b'["gpt-4.1"]', "the body is JSON but not an object (list)", None),
        (b'{"model": 41}', "model is not a string (int)", None),
        # A lone surrogate is valid JSON; kept written as its escape.
        (b'{"model": "o1\\ud800"}', "model 'o1\\ud800' is kept as 'o1\\\\ud800'", "o1\\ud800"),
    ],
)
def test_bodies_the_sdks_never_send_are_recorded_as_odd(
    body: bytes, odd: str, model: str | None
) -> None:
    call = _sent({}, body)
    assert call.request is not None and call.request.odd == [odd]
    assert call.model == model


def test_a_huge_model_name_is_kept_cut() -> None:
    call = _sent({}, json.dumps({"model": "m" * 100_000}).encode())
    assert call.model is not None and call.model.endswith("... (100000 characters)")
    assert len(call.model) < 300 and call.request is not None and len(call.request.odd) == 1
