"""Large bodies: 70 MiB, addressed around the route check.

With request streaming, mitmproxy connects upstream before the ``request`` hook, so a body
large enough to be streamed went to the model upstream's address although the route was
"denied" (and logged as such). Each attempt here must be refused before any connection to
our upstream (it accepted none and read no request), and recorded.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.redteam.conftest import Agent, Keys, World
from tests.redteam.listeners import Trap, Upstream

MIB_70 = 70


def _attempts(upstream: Upstream, trap: Trap) -> dict[str, dict[str, Any]]:
    port = upstream.port
    big = {
        "method": "POST",
        "body_mb": MIB_70,
        "timeout": 120,
        "headers": {"Content-Type": "application/octet-stream"},
    }
    return {
        "upstream-address-absolute": {
            **big,
            "mode": "absolute",
            "host": "127.0.0.1",
            "port": port,
            "target": "/v1/chat/completions",
        },
        "upstream-localhost-absolute": {
            **big,
            "mode": "absolute",
            "host": "localhost",
            "port": port,
            "target": "/upload",
        },
        "upstream-address-connect": {
            **big,
            "mode": "connect",
            "tls": False,
            "host": "127.0.0.1",
            "port": port,
            "target": "/upload",
        },
        "model-host-files": {
            **big,
            "mode": "connect",
            "tls": True,
            "host": "api.openai.com",
            "port": 443,
            "target": "/v1/files",
            "headers": {"Authorization": "Bearer sk-replay-placeholder"},
        },
        "trap-absolute": {
            **big,
            "mode": "absolute",
            "host": "127.0.0.1",
            "port": trap.port,
            "target": "/upload",
        },
    }


ATTACKS = [
    "upstream-address-absolute",
    "upstream-localhost-absolute",
    "upstream-address-connect",
    "model-host-files",
    "trap-absolute",
]


@pytest.mark.parametrize("attack", ATTACKS)
def test_a_70_mib_body_is_refused_before_any_upstream_connection(
    attack: str, agent: Agent, world: World, upstream: Upstream, trap: Trap, keys: Keys
) -> None:
    hits = len(trap.seen())
    outcome = agent.attempt(
        world, upstream, _attempts(upstream, trap)[attack], keys.all, timeout=300
    )
    result = outcome.result
    assert outcome.upstream_connections == 0 and outcome.upstream_requests == [], outcome.describe()
    assert trap.seen()[hits:] == [], "the trap listener was reached"
    # Refused means delivered nowhere (the listeners say so above) and answered by the
    # gateway with an error, or the connection closed while the body was still being sent.
    assert result["status"] is None or result["status"] >= 400, outcome.describe()
    assert "UPSTREAM REACHED" not in result["body"] and "you sent" not in result["body"]
    assert outcome.denials, f"not recorded: {outcome.describe()}"
