"""Direct egress from the sandbox, without the proxy, and the same destinations through it.

Reuses tests/runtime's escape attempts (``attempts.py``: IPv4 and IPv6 TCP and UDP, DNS over
UDP, TCP and the resolver, a raw socket, curl without the proxy) and its ``outside`` (a
namespace playing the internet, listeners on the host's loopback and Docker bridge), here in
the sandbox a run really gets: the case's environment image, as the agent's own user. A
container with no network cannot be heard by the gateway, so these are shown refused by the
listeners' silence; the same destinations asked of the proxy are refused and recorded.
"""

from __future__ import annotations

import json

from tests.redteam.conftest import Agent, Keys, World, refused
from tests.redteam.listeners import Upstream
from tests.runtime.conftest import Outside
from tests.runtime.test_lock import ATTEMPTS, targets


def test_direct_egress_fails_and_nothing_arrives(agent: Agent, outside: Outside) -> None:
    outside.clear()
    assert agent.box.container is not None
    agent.box.container.copy_in(ATTEMPTS, "/tmp/redteam")
    done = agent.box.exec(["python3", "/tmp/redteam/attempts.py", targets(outside)], timeout=180)
    assert done.exit_code == 0, done.err
    results = dict(json.loads(done.out))
    uid = agent.uid()
    reached = {k: v for k, v in results.items() if not v.startswith("blocked")}
    # A datagram "sent" only left the socket; the listeners say whether it arrived.
    assert all(k.startswith("udp") for k in reached), f"uid {uid}: {reached}"
    assert "PermissionError" in results["raw socket"], results["raw socket"]
    assert len(results) == len(outside.tcp) + len(outside.udp) + 4 + 2
    interfaces = agent.sh('python3 -c "import socket; print(socket.if_nameindex())"').out
    assert interfaces.strip() == "[(1, 'lo')]", "an interface besides loopback"
    assert outside.hits() == [], f"reached the outside (uid {uid})"


def test_the_outside_through_the_proxy_is_refused_and_recorded(
    agent: Agent, world: World, upstream: Upstream, outside: Outside, keys: Keys
) -> None:
    outside.clear()
    problems = []
    for host, port in outside.tcp:
        for mode in ("connect", "absolute"):
            request = {
                "mode": mode,
                "tls": False,
                "method": "GET",
                "host": host,
                "port": port,
                "target": "/",
            }
            outcome = agent.attempt(world, upstream, request, keys.all)
            if not refused(outcome.result) or not outcome.denials:
                problems.append(f"{mode} {host}:{port}: {outcome.describe()}")
    assert problems == []
    assert outside.hits() == []
