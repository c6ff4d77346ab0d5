"""The runner's real model key, from inside the sandbox.

The gateway holds the real keys (made up per session) and routes the model hosts to an
upstream of the test's own on loopback, which records every request and quotes back the
credential it got. The inference calls get the key (the control: injection works, so the
echo would leak it if nothing scrubbed it); every other path, method, scheme and port of a
model host is refused, recorded, and never reaches the upstream; and no answer the agent
sees (body, header, a stream that splits the key, a gzip stream, a 401 quoting the key), nor
the event log, holds the key.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from replay.run.attacks.key import REFUSED
from tests.redteam.conftest import Agent, Keys, World, refused
from tests.redteam.listeners import Upstream

OPENAI = {"Authorization": "Bearer sk-replay-placeholder", "Content-Type": "application/json"}
ANTHROPIC = {
    "x-api-key": "sk-ant-replay-placeholder",
    "anthropic-version": "2023-06-01",
    "Content-Type": "application/json",
}
CHAT = json.dumps({"model": "echo", "messages": [{"role": "user", "content": "hi"}]})
MESSAGES = json.dumps(
    {"model": "echo", "max_tokens": 8, "messages": [{"role": "user", "content": "hi"}]}
)


def _tls(
    host: str,
    method: str,
    target: str,
    headers: dict[str, str],
    body: str | None = None,
    port: int = 443,
) -> dict[str, Any]:
    return {
        "mode": "connect",
        "tls": True,
        "host": host,
        "port": port,
        "method": method,
        "target": target,
        "headers": headers,
        "body": body,
    }


@pytest.mark.parametrize("attack", list(REFUSED))
def test_the_model_host_refuses_everything_but_inference(
    attack: str, agent: Agent, world: World, upstream: Upstream, keys: Keys
) -> None:
    outcome = agent.attempt(world, upstream, REFUSED[attack], keys.all)
    assert refused(outcome.result), outcome.describe()
    assert outcome.upstream_requests == [] and outcome.upstream_connections == 0, outcome.describe()
    assert outcome.denials, f"not recorded: {outcome.describe()}"
    assert outcome.result["found"] == [], "the answer holds the real key"


def _credentials(requests: list[dict[str, Any]]) -> list[str]:
    out = []
    for q in requests:
        headers = q["headers"]
        out.append(
            headers.get("x-api-key") or headers.get("authorization", "").removeprefix("Bearer ")
        )
    return out


INFERENCE: dict[str, tuple[dict[str, Any], str]] = {
    "openai-chat": (_tls("api.openai.com", "POST", "/v1/chat/completions", OPENAI, CHAT), "openai"),
    "anthropic-messages": (
        _tls("api.anthropic.com", "POST", "/v1/messages", ANTHROPIC, MESSAGES),
        "anthropic",
    ),
}


@pytest.mark.parametrize("call", list(INFERENCE))
def test_an_inference_call_carries_the_real_key_out_and_none_back(
    call: str, agent: Agent, world: World, upstream: Upstream, keys: Keys
) -> None:
    """The control for everything else here: the key is injected on the allowed route, and
    our upstream quotes it back in the body and a header."""
    request, provider = INFERENCE[call]
    outcome = agent.attempt(world, upstream, request, keys.all)
    assert outcome.result["status"] == 200, outcome.describe()
    assert _credentials(outcome.upstream_requests) == [getattr(keys, provider)]
    assert "you sent: " in outcome.result["body"]
    assert outcome.result["found"] == [], "the upstream's quote of the key reached the agent"
    assert not any(k in json.dumps(outcome.events) for k in keys.all), "the key is in the log"


SCRUB: dict[str, dict[str, Any]] = {
    "stream-split-across-chunks": _tls(
        "api.openai.com",
        "POST",
        "/v1/chat/completions",
        OPENAI,
        json.dumps({"model": "split", "stream": True, "messages": []}),
    ),
    "stream-gzip": _tls(
        "api.openai.com",
        "POST",
        "/v1/chat/completions",
        {**OPENAI, "Accept-Encoding": "gzip"},
        json.dumps({"model": "gzip", "stream": True, "messages": []}),
    ),
    "401-quoting-the-key": _tls(
        "api.openai.com",
        "POST",
        "/v1/chat/completions",
        OPENAI,
        json.dumps({"model": "reject", "messages": []}),
    ),
    "anthropic-401-quoting-the-key": _tls(
        "api.anthropic.com",
        "POST",
        "/v1/messages",
        ANTHROPIC,
        json.dumps({"model": "reject", "max_tokens": 1, "messages": []}),
    ),
}


@pytest.mark.parametrize("attack", list(SCRUB))
def test_no_answer_and_no_record_holds_the_key(
    attack: str, agent: Agent, world: World, upstream: Upstream, keys: Keys
) -> None:
    outcome = agent.attempt(world, upstream, SCRUB[attack], keys.all)
    assert outcome.result["status"] is not None, outcome.describe()
    # The upstream got the real key, so what it sent back held it.
    assert set(_credentials(outcome.upstream_requests)) & set(keys.all), outcome.describe()
    assert outcome.result["found"] == [], f"the agent got the key: {outcome.result['body'][:300]!r}"
    logged = [e["kind"] for e in outcome.events if any(k in json.dumps(e) for k in keys.all)]
    assert logged == [], f"the key is in the event log: {logged}"
    assert outcome.events, "the call was not recorded"


def test_the_whole_event_log_never_holds_the_key(
    agent: Agent, world: World, upstream: Upstream, keys: Keys
) -> None:
    agent.attempt(world, upstream, SCRUB["401-quoting-the-key"], keys.all)
    events = world.events()
    assert any(e["kind"] == "model.call" for e in events), "no model call recorded at all"
    holding = [e["seq"] for e in events if any(k in json.dumps(e) for k in keys.all)]
    assert holding == []
