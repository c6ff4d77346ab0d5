"""The live model route through the real gateway, against the stub model as the provider.

Each injected fault reaches the log with its class; a healthy call has its usage counted.
The provider side is swapped between tests behind one upstream address, so one gateway serves
them all.
"""

from __future__ import annotations

import ssl
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
    ("timeout", False, 1.5, "timeout"),
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
            hold_seconds=3,
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
