"""The live model route through the real gateway, against the stub model as the provider.

Each injected fault reaches the log with its class; a healthy call has its usage counted.
The provider side is swapped between tests behind one upstream address, so one gateway serves
them all. The gateway's own deadline towards the provider is short here (``DEADLINE``), so a
provider that hangs is a ``timeout`` and a client that hangs up first has ``abandoned`` its call.
"""

from __future__ import annotations

import ssl
import time
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest

from replay.harness.stub.app import StubConfig, make_stub_app
from replay.harness.stub.faults import Fault
from replay.harness.stub.script import Script
from tests.gateway.conftest import DEMO, Gateway, start_gateway, stop_gateway
from tests.serving import serving

SCRIPT = Script.model_validate({"name": "t", "steps": [{"say": "hello there"}]})
DEADLINE = 4.0
"""The gateway's first-byte and idle deadlines towards the provider in these tests."""


class Swappable:
    """An ASGI app that forwards to whichever stub the test installed."""

    def __init__(self) -> None:
        self.app: Any = make_stub_app(StubConfig(script=SCRIPT))

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await self.app(scope, receive, send)


@pytest.fixture(scope="module")
def route(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Gateway, Swappable]]:
    upstream = Swappable()
    with serving(upstream) as upstream_url:
        gw = start_gateway(
            tmp_path_factory.mktemp("route"),
            str(DEMO),
            "--service",
            "slack",
            "--model-upstream",
            upstream_url,
            env={
                "REPLAY_MODEL_FIRST_BYTE_TIMEOUT": str(DEADLINE),
                "REPLAY_MODEL_IDLE_TIMEOUT": str(DEADLINE),
            },
        )
        try:
            yield gw, upstream
        finally:
            stop_gateway(gw)


def client(gw: Gateway, timeout: float = 10) -> tuple[openai.OpenAI, httpx.Client]:
    env = gw.env
    http = httpx.Client(
        proxy=env["HTTPS_PROXY"],
        verify=ssl.create_default_context(cafile=env["SSL_CERT_FILE"]),
        timeout=timeout,
    )
    return openai.OpenAI(api_key=env["OPENAI_API_KEY"], http_client=http, max_retries=0), http


def last_call(gw: Gateway) -> dict[str, Any]:
    calls = [e["data"] for e in gw.events() if e["kind"] == "model.call"]
    assert calls, "the call was logged"
    return calls[-1]


@pytest.mark.parametrize("stream", [False, True])
def test_healthy_calls_pass_and_usage_is_counted(route, stream: bool) -> None:
    gw, upstream = route
    upstream.app = make_stub_app(StubConfig(script=SCRIPT))
    sdk, http = client(gw)
    with http:
        if stream:
            chunks = list(
                sdk.chat.completions.create(
                    model="gpt-test",
                    messages=[{"role": "user", "content": "hi"}],
                    stream=True,
                    stream_options={"include_usage": True},
                )
            )
            text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
            usage = chunks[-1].usage
        else:
            answer = sdk.chat.completions.create(
                model="gpt-test", messages=[{"role": "user", "content": "hi"}]
            )
            text, usage = answer.choices[0].message.content or "", answer.usage
    assert text == "hello there" and usage is not None
    call = last_call(gw)
    assert call["verdict"] == "ok" and call["streamed"] is stream
    assert call["usage"]["input_tokens"] == usage.prompt_tokens
    assert call["usage"]["output_tokens"] == usage.completion_tokens
    assert call["ttfb_ms"] is not None and call["total_ms"] >= call["ttfb_ms"]


FAULTS = [
    # (fault, streamed request, SDK timeout, the class the log must give)
    # The provider holds the call past the gateway's deadline, the client would wait longer.
    ("timeout", False, 30, "timeout"),
    ("reset", False, 10, "reset"),
    ("http_503", False, 10, "http_5xx"),
    ("http_429", False, 10, "http_429"),
    ("truncate", True, 10, "truncated_stream"),
    ("bad_json", False, 10, "bad_json"),
]


@pytest.mark.parametrize(
    ("kind", "stream", "timeout", "expected"), FAULTS, ids=[f[0] for f in FAULTS]
)
def test_each_fault_is_logged_with_its_class(
    route, kind: str, stream: bool, timeout: float, expected: str
) -> None:
    gw, upstream = route
    upstream.app = make_stub_app(
        StubConfig(
            script=SCRIPT,
            faults=[Fault.model_validate({"kind": kind, "rate": 1.0})],
            hold_seconds=DEADLINE * 3,
        )
    )
    sdk, http = client(gw, timeout)
    with http, pytest.raises(Exception):  # noqa: B017 - each fault fails differently
        result = sdk.chat.completions.create(
            model="gpt-test",
            messages=[{"role": "user", "content": "hi"}],
            stream=stream,
            **({"stream_options": {"include_usage": True}} if stream else {}),
        )
        if stream:
            chunks = list(result)  # type: ignore[arg-type]
            if not any(c.usage for c in chunks):
                raise RuntimeError("the stream ended without its usage chunk")
    call = last_call(gw)
    assert call["error_class"] == expected, call
    verdict = "protocol_fail" if expected == "bad_json" else "transport_fail"
    assert call["verdict"] == verdict


def test_a_client_that_hangs_up_first_abandoned_its_call(route) -> None:
    """The provider is still thinking, its deadline has not passed: the agent gave up."""
    gw, upstream = route
    upstream.app = make_stub_app(
        StubConfig(script=SCRIPT, faults=[Fault(kind="timeout", rate=1.0)], hold_seconds=30)
    )
    before = len(_calls(gw))
    sdk, http = client(gw, timeout=DEADLINE / 8)
    with http, pytest.raises(openai.APITimeoutError):
        sdk.chat.completions.create(model="gpt-test", messages=[{"role": "user", "content": "hi"}])
    call = _wait_for_call(gw, before)
    assert (call["error_class"], call["verdict"]) == ("abandoned", "abandoned"), call


def test_a_stream_that_stalls_past_the_idle_deadline_is_a_timeout(route) -> None:
    gw, upstream = route
    upstream.app = make_stub_app(StubConfig(script=SCRIPT, event_gap_seconds=DEADLINE * 3))
    sdk, http = client(gw, timeout=DEADLINE * 6)
    with http, pytest.raises(openai.APIError):
        list(
            sdk.chat.completions.create(
                model="gpt-test", messages=[{"role": "user", "content": "hi"}], stream=True
            )
        )
    call = last_call(gw)
    assert (call["error_class"], call["verdict"]) == ("timeout", "transport_fail"), call
    assert "stalled" in call["error_detail"]


@pytest.mark.parametrize("status", [401, 403])
def test_a_refused_key_is_an_auth_rejection(route, status: int) -> None:
    gw, upstream = route
    upstream.app = make_stub_app(
        StubConfig(
            script=SCRIPT, faults=[Fault.model_validate({"kind": f"http_{status}", "every": 1})]
        )
    )
    sdk, http = client(gw)
    with http, pytest.raises(openai.APIStatusError):
        sdk.chat.completions.create(model="gpt-test", messages=[{"role": "user", "content": "hi"}])
    call = last_call(gw)
    assert (call["status"], call["error_class"], call["verdict"]) == (status, "auth", "rejected")


def _calls(gw: Gateway) -> list[dict[str, Any]]:
    return [e["data"] for e in gw.events() if e["kind"] == "model.call"]


def _wait_for_call(gw: Gateway, before: int) -> dict[str, Any]:
    """The call logged after the first ``before`` (an abandoned call is logged when the
    gateway notices the client left, a moment after the client's exception)."""
    for _ in range(200):
        calls = _calls(gw)
        if len(calls) > before:
            return calls[before]
        time.sleep(0.05)
    raise AssertionError("the abandoned call was never logged")
