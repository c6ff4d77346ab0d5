"""The stub model answers any request body as a provider would, never with a crash.

The agent reaches the stub through the gateway like the harness does (a call from its own
shell), and a 500 from the stub is a wire failure (``transport_fail``): a body the stub could
not read would let an agent void its own run. Hypothesis sends JSON objects with every field
of every dialect of any type, lone surrogates and deep nesting included; each gets an answer
below 500, a 400 in the provider's error shape.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from replay.harness.stub import Script, StubConfig, make_stub_app

APP = make_stub_app(StubConfig(script=Script(name="g", steps=[{"say": "hi", "bash": "ls"}])))
PATHS = ["/v1/chat/completions", "/v1/responses", "/v1/messages", "/v1/messages/count_tokens"]
FIELDS = ["model", "messages", "input", "max_tokens", "stream", "stream_options", "tools"]
FIELDS += ["system", "previous_response_id", "instructions", "tool_choice"]
text = st.text(st.characters(codec=None), max_size=12)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=4),
    max_leaves=12,
)


async def _post(path: str, body: bytes, anthropic: bool) -> tuple[int, bytes]:
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    headers = [(b"anthropic-version", b"2023-06-01")] if anthropic else []
    scope = {"type": "http", "method": "POST", "path": path, "headers": headers}
    await APP(scope, receive, send)
    return sent[0]["status"], b"".join(m.get("body", b"") for m in sent[1:])


@settings(
    max_examples=300,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)
@given(
    path=st.sampled_from(PATHS),
    request=st.fixed_dictionaries({}, optional=dict.fromkeys(FIELDS, json_values)),
    raw=st.one_of(st.none(), st.binary(max_size=50), st.sampled_from([b"[" * 100_000])),
    anthropic=st.booleans(),
)
def test_any_body_gets_a_providers_answer_never_a_crash(
    path: str, request: dict[str, Any], raw: bytes | None, anthropic: bool
) -> None:
    body = raw if raw is not None else json.dumps(request).encode()
    status, answer = asyncio.run(_post(path, body, anthropic))
    assert status < 500, (status, answer[:300])
    if status == 400:
        error = json.loads(answer)["error"]
        assert error["type"] == "invalid_request_error" and error["message"]
