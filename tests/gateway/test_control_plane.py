"""The control plane is the runner's: no spelling of its path reaches it through the gateway.

Two layers, both tested: the app the gateway serves has no control routes at all (the fakes
routed by Host), and the gateway refuses and records any request whose decoded, normalised path
names the control plane, before it reads a body or dials anything. Requests go out as raw bytes
(plain HTTP in absolute form, and inside a CONNECT tunnel over TLS), because HTTP clients
normalise paths such as ``/x/../_replay`` before sending them.
"""

from __future__ import annotations

import socket
import ssl
from typing import Any

import pytest
from fastapi.testclient import TestClient

from fakes.core import build_world
from replay.gateway.paths import names_control_plane, normalised_path
from replay.snapshot import load_snapshot
from tests.gateway.conftest import DEMO, Gateway

SPELLINGS = [
    "/_replay/reset",
    "/_replay",
    "/%5Freplay/reset",
    "/%5freplay/reset",
    "/_replay%2Freset",
    "/%5F%72%65%70%6C%61%79/reset",
    "/%255Freplay/reset",
    "/%25255Freplay/reset",
    "//_replay/reset",
    "/./_replay/reset",
    "/x/../_replay/reset",
    "/api/v3/../_replay/reset",
    "/api/v3/_replay/reset",
    "/_REPLAY/reset",
    "/_Replay/events",
    "/_replay;x/reset",
    "/_replay\\reset",
    "/%2F_replay/reset",
    "/_replay/events?since=0",
    "/_replay/state",
    "/_replay/slack/ratelimit",
]
HOSTS = ["api.github.com", "github.com", "api.linear.app", "slack.com", "pypi.org"]


@pytest.mark.parametrize("path", SPELLINGS)
def test_every_spelling_names_the_control_plane(path: str) -> None:
    assert names_control_plane(path), normalised_path(path)


@pytest.mark.parametrize(
    "path",
    ["/repos/acme/semverkit", "/api/chat.postMessage", "/graphql", "/simple/replay/", "/x_replay"],
)
def test_ordinary_paths_are_not_the_control_plane(path: str) -> None:
    assert not names_control_plane(path)


def test_the_served_fakes_have_no_control_routes() -> None:
    world = build_world(load_snapshot(DEMO))
    client = TestClient(world.router)
    posted = client.post(
        "/api/chat.postMessage",
        headers={"host": "slack.com", "authorization": "Bearer xoxb-replay-placeholder"},
        json={"channel": "#eng", "text": "before the attack"},
    )
    assert posted.json()["ok"], posted.text
    with world.world.session() as s:
        before = [e.kind for e in world.world.events.read(s)]
    assert before == ["slack.message.posted"]
    for host in ("api.github.com", "slack.com", "api.linear.app"):
        for method in ("GET", "POST"):
            for path in ("/_replay/reset", "/_replay/events", "/_replay/state", "/_replay/health"):
                response = client.request(method, path, headers={"host": host})
                assert "before the attack" not in response.text, (host, path)
                assert '"fakes"' not in response.text and '"seq"' not in response.text
    with world.world.session() as s:
        assert [e.kind for e in world.world.events.read(s)] == before, "nothing was reset"
    # The runner's composite app does have it: the paths above are the real control plane.
    runner = TestClient(world)
    assert runner.get("/_replay/health").json()["ok"] is True
    assert "before the attack" in runner.get("/_replay/state").text


def _raw(gw: Gateway, scheme: str, host: str, method: str, path: str) -> tuple[int, bytes]:
    """Send one request with its path exactly as given; (status, body)."""
    proxy_host, proxy_port = gw.proxy.removeprefix("http://").rsplit(":", 1)
    sock = socket.create_connection((proxy_host, int(proxy_port)), timeout=20)
    try:
        stream: Any = sock
        target = path
        if scheme == "https":
            sock.sendall(f"CONNECT {host}:443 HTTP/1.1\r\nHost: {host}:443\r\n\r\n".encode())
            head = _read_head(sock)
            if not head.startswith(b"HTTP/1.1 200") and not head.startswith(b"HTTP/1.0 200"):
                return int(head.split()[1]), b""
            context = ssl.create_default_context(cafile=gw.ca)
            stream = context.wrap_socket(sock, server_hostname=host)
            sock = stream
        else:
            target = f"http://{host}{path}"
        body = b"{}" if method == "POST" else b""
        request = (
            f"{method} {target} HTTP/1.1\r\nHost: {host}\r\nContent-Length: {len(body)}\r\n"
            "Content-Type: application/json\r\nConnection: close\r\n\r\n"
        ).encode() + body
        stream.sendall(request)
        data = b""
        while True:
            chunk = stream.recv(65536)
            if not chunk:
                break
            data += chunk
        head, _, rest = data.partition(b"\r\n\r\n")
        return int(head.split()[1]), rest
    finally:
        sock.close()


def _read_head(sock: socket.socket) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(4096)
        if not chunk:
            break
        data += chunk
    return data


def test_no_spelling_reaches_the_control_plane_through_the_gateway(gateway_factory) -> None:
    gw = gateway_factory(str(DEMO))
    # A mutation before the attack: a reset would erase it.
    with gw.client() as client:
        posted = client.post(
            "https://slack.com/api/chat.postMessage",
            headers={"authorization": f"Bearer {gw.env['SLACK_BOT_TOKEN']}"},
            json={"channel": "#eng", "text": "before the attack"},
        )
    assert posted.json()["ok"], posted.text
    with gw.control() as control:
        state_before = control.get("/_replay/state").json()
    tried = 0
    for host in HOSTS:
        for scheme in ("https", "http"):
            for method in ("GET", "POST"):
                for path in SPELLINGS:
                    status, body = _raw(gw, scheme, host, method, path)
                    tried += 1
                    assert status in (403, 404), (scheme, host, method, path, status, body)
                    assert b"before the attack" not in body and b'"seq"' not in body
    events = gw.events()
    kinds = [e["kind"] for e in events]
    assert kinds[0] == "slack.message.posted", "the mutation made before the attack is still there"
    refused = [e for e in events if e["kind"] == "egress.denied"]
    assert len(refused) == tried, "every attempt is refused and recorded"
    assert all("control plane" in e["data"]["reason"] for e in refused)
    assert "gateway.addon_failed" not in kinds
    with gw.control() as control:
        assert control.get("/_replay/state").json() == state_before
