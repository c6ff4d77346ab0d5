"""Voiding a losing run by abandoning its own model call.

An agent whose client gives up on a call (closes its connection before the answer is
complete) must not turn its run into a ``transport_fail``, which leaves the quality figures:
the gateway records the call, and its verdict is the agent's (``abandoned``), not the wire's.
Our upstream keeps the caller waiting (before its headers, or mid-stream) and never fails.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from tests.redteam.conftest import Agent, Keys, World
from tests.redteam.listeners import SLOW, Upstream

OPENAI = {"Authorization": "Bearer sk-replay-placeholder", "Content-Type": "application/json"}


def _call(model: str, stream: bool) -> dict[str, Any]:
    return {
        "mode": "connect",
        "tls": True,
        "host": "api.openai.com",
        "port": 443,
        "method": "POST",
        "target": "/v1/chat/completions",
        "headers": OPENAI,
        "body": json.dumps({"model": model, "stream": stream, "messages": []}),
        # The agent's client gives up long before the answer would be complete.
        "timeout": 1,
    }


ATTACKS = {
    "abandon-before-headers": _call("slow", stream=False),
    "abandon-mid-stream": _call("slow-stream", stream=True),
}


@pytest.mark.parametrize("attack", list(ATTACKS))
def test_an_abandoned_call_is_the_agents_not_the_wires(
    attack: str, agent: Agent, world: World, upstream: Upstream, keys: Keys
) -> None:
    before = world.last_seq()
    outcome = agent.attempt(world, upstream, ATTACKS[attack], keys.all)
    assert outcome.result.get("error"), f"the client did not give up: {outcome.describe()}"
    assert len(outcome.upstream_requests) == 1, "the call did not reach the provider"
    calls: list[dict[str, Any]] = []
    deadline = time.monotonic() + SLOW + 30
    while not calls and time.monotonic() < deadline:
        calls = [e for e in world.since(before) if e["kind"] == "model.call"]
        time.sleep(0.2)
    assert len(calls) == 1, f"the call was not recorded: {world.since(before)}"
    data = calls[0]["data"]
    assert data.get("verdict") != "transport_fail", data
    assert data.get("verdict") == "abandoned", data
