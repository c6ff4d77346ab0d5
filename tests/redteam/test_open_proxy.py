"""The gateway as an open proxy to this machine: loopback under every spelling of its address.

The target is a trap the test listens with on 127.0.0.1 and ::1 (the same port); the
gateway runs on the host, so a gateway that forwarded these would reach it. Each attempt,
CONNECT (then plain HTTP in the tunnel) and absolute-form GET, must be refused, recorded,
and the trap must have seen nothing. The gateway's own port and the runner's control socket
(named by its path) are tried the same way; neither may answer with the world's log.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from replay.run.attacks.carry import INSIDE
from replay.run.attacks.egress import LOOPBACK
from tests.gateway.conftest import GATEWAY_PYTHON
from tests.redteam.conftest import Agent, Keys, World, refused
from tests.redteam.listeners import Trap, Upstream


def _pair(host: str, port: int) -> dict[str, dict[str, Any]]:
    return {
        "connect": {
            "mode": "connect",
            "tls": False,
            "method": "GET",
            "host": host,
            "port": port,
            "target": "/",
        },
        "absolute": {
            "mode": "absolute",
            "method": "GET",
            "host": host,
            "port": port,
            "target": "/",
        },
    }


CASES = [(name, mode) for name in LOOPBACK for mode in ("connect", "absolute")]


@pytest.mark.parametrize(("spelling", "mode"), CASES, ids=[f"{n}-{m}" for n, m in CASES])
def test_loopback_through_the_gateway_is_refused(
    spelling: str, mode: str, agent: Agent, world: World, upstream: Upstream, trap: Trap, keys: Keys
) -> None:
    hits = len(trap.seen())
    request = _pair(LOOPBACK[spelling], trap.port)[mode]
    outcome = agent.attempt(world, upstream, request, keys.all)
    assert trap.seen()[hits:] == [], f"the trap was reached: {outcome.describe()}"
    assert refused(outcome.result), outcome.describe()
    assert outcome.denials, f"not recorded: {outcome.describe()}"


@pytest.fixture(scope="module")
def plain_proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """mitmproxy with none of the gateway's addons: what an open proxy does with the attempts."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    conf = tmp_path_factory.mktemp("plain-proxy")
    mitmdump = GATEWAY_PYTHON.parent / "mitmdump"
    process = subprocess.Popen(
        [
            str(mitmdump),
            "-q",
            "--listen-host",
            "127.0.0.1",
            "--listen-port",
            str(port),
            "--set",
            f"confdir={conf}",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise RuntimeError("mitmdump did not start") from None
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(15)


def test_the_same_attempts_reach_the_trap_through_an_open_proxy(
    plain_proxy: str, trap: Trap, tmp_path: Path
) -> None:
    """The control: the same bytes, sent from here through a proxy that forwards them, do
    reach the trap under every spelling, so the trap's silence above means a refusal."""
    requests = [
        {**_pair(host, trap.port)[mode], "id": f"{name}-{mode}"}
        for name, host in LOOPBACK.items()
        for mode in ("connect", "absolute")
    ]
    missed = []
    for request in requests:
        one = tmp_path / f"{request['id']}.json"
        one.write_text(json.dumps({"requests": [request], "needles": []}))
        before = len(trap.seen())
        done = subprocess.run(
            [sys.executable, str(INSIDE / "probe.py"), str(one)],
            env={**os.environ, "HTTPS_PROXY": plain_proxy},
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        if len(trap.seen()) == before:
            missed.append(f"{request['id']}: {done.stdout[:300]}")
    assert missed == [], missed


@pytest.mark.parametrize("mode", ["connect", "absolute"])
def test_the_model_upstreams_own_address_is_refused(
    mode: str, agent: Agent, world: World, upstream: Upstream, keys: Keys
) -> None:
    """The one loopback address the gateway may connect to, asked for by name."""
    request = {**_pair("127.0.0.1", upstream.port)[mode], "target": "/v1/models"}
    outcome = agent.attempt(world, upstream, request, keys.all)
    assert outcome.upstream_connections == 0 and outcome.upstream_requests == [], outcome.describe()
    assert refused(outcome.result), outcome.describe()
    assert outcome.denials, f"not recorded: {outcome.describe()}"


@pytest.mark.parametrize("mode", ["connect", "absolute"])
def test_the_gateways_own_port_is_refused(
    mode: str, agent: Agent, world: World, upstream: Upstream, keys: Keys
) -> None:
    port = int(str(world.state["proxy"]).rsplit(":", 1)[1])
    request = {**_pair("127.0.0.1", port)[mode], "target": "/_replay/events"}
    outcome = agent.attempt(world, upstream, request, keys.all)
    assert refused(outcome.result), outcome.describe()
    assert '"seq"' not in outcome.result["body"], "the gateway answered with the log"
    assert outcome.denials, f"not recorded: {outcome.describe()}"


def _socket_targets(path: str) -> dict[str, dict[str, Any]]:
    encoded = quote(path, safe="")
    return {
        "pct-encoded-host": {
            "mode": "absolute",
            "method": "GET",
            "host": "localhost",
            "port": 80,
            "url": f"http://{encoded}/_replay/events",
        },
        "http+unix": {
            "mode": "absolute",
            "method": "GET",
            "host": "localhost",
            "port": 80,
            "url": f"http+unix://{encoded}/_replay/events",
        },
        "unix-scheme": {
            "mode": "absolute",
            "method": "GET",
            "host": "localhost",
            "port": 80,
            "url": f"unix://{path}:/_replay/events",
        },
        "connect-path": {
            "mode": "connect",
            "tls": False,
            "method": "GET",
            "host": path,
            "port": 80,
            "target": "/_replay/events",
        },
    }


@pytest.mark.parametrize("form", ["pct-encoded-host", "http+unix", "unix-scheme", "connect-path"])
def test_the_control_socket_by_its_path_is_refused(
    form: str, agent: Agent, world: World, upstream: Upstream, keys: Keys
) -> None:
    path = str(world.state["control"])
    outcome = agent.attempt(world, upstream, _socket_targets(path)[form], keys.all)
    status, body = world.control_raw("GET", "/_replay/events")
    assert status == 200 and b'"seq"' in body, "the socket serves the log to the runner"
    assert '"seq"' not in outcome.result["body"], "the agent got the log"
    assert refused(outcome.result), outcome.describe()
    assert outcome.denials, f"not recorded: {outcome.describe()}"
