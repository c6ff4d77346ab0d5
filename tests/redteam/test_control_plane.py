"""The control plane (reset, events, state) through the proxy, under every spelling, on every
host the world answers for, with GET and POST, over HTTPS (CONNECT) and plain HTTP.

Each must get 403 or 404, a 403 must be recorded, and the world must be as the agent left it:
a comment posted before the attacks is still there and its event still in the log (a reset
would have emptied it), and no answer carries the log or the state. The same paths sent
straight to the runner's control socket do reach the control plane, so a 404 through the
proxy means the gateway kept them out, not that the path was never a way in.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from typing import Any

import pytest

from replay.gateway.config import MODEL_HOSTS, REGISTRY_HOSTS
from replay.run.attacks.control import SPELLINGS
from tests.redteam.conftest import PLACEHOLDER_GH, Agent, Keys, World, denied
from tests.redteam.listeners import Upstream

ON_THE_SOCKET = {
    "plain-reset",
    "plain-events",
    "plain-state",
    "pct5F-reset",
    "pct5F-events",
    "pct5f-reset",
    "pct5f-state",
    "pct2F-reset",
    "pct2f-events",
    "pct-letters-events",
    "query-events",
}
"""Spellings that the control app itself routes to a control endpoint (its server decodes
``%XX``): what the issue's agent reached through the proxy."""


@dataclass(frozen=True)
class Sentinel:
    """A mutation the agent made before the attacks: a reset would take it away."""

    text: str
    event: dict[str, Any]


def _hosts(world: World) -> list[str]:
    return [*world.state["fake_hosts"], *REGISTRY_HOSTS, *MODEL_HOSTS]


@pytest.fixture(scope="module")
def sentinel(agent: Agent, world: World) -> Sentinel:
    text = f"red team sentinel {uuid.uuid4().hex}"
    body = json.dumps({"body": text})
    request = {
        "id": "comment",
        "mode": "connect",
        "tls": True,
        "method": "POST",
        "host": "api.github.com",
        "port": 443,
        "target": "/repos/acme/semverkit/issues/7/comments",
        "headers": {"Authorization": f"token {PLACEHOLDER_GH}", "Content-Type": "application/json"},
        "body": body,
    }
    result = agent.probe([request], [])["comment"]
    assert result["status"] == 201, result
    events = [e for e in world.events() if text in json.dumps(e)]
    # The comment, and its meaning (github.comment.posted, however a comment is made).
    assert sorted(e["kind"] for e in events) == [
        "github.comment.posted",
        "github.issue_comment.created",
    ], events
    return Sentinel(text, next(e for e in events if e["kind"] == "github.issue_comment.created"))


def _requests(path: str, hosts: list[str]) -> list[dict[str, Any]]:
    out = []
    for host in hosts:
        for method in ("GET", "POST"):
            for scheme in ("https", "http"):
                tls = scheme == "https"
                target, url = path, None
                if path.startswith("https://"):
                    # An absolute URL as the request target, inside the tunnel too.
                    rest = "/" + path.split("/", 3)[3]
                    target, url = f"https://{host}{rest}", f"http://{host}{rest}"
                out.append(
                    {
                        "url": url,
                        "id": f"{method} {scheme}://{host} {url or target}",
                        "mode": "connect" if tls else "absolute",
                        "tls": tls,
                        "method": method,
                        "host": host,
                        "port": 443 if tls else 80,
                        "target": target,
                        "body": "" if method == "POST" else None,
                    }
                )
    return out


def _leaks_log(body: str, sentinel: Sentinel) -> bool:
    compact = body.replace(" ", "")
    return sentinel.text in body or '"seq":' in compact or '"ok":true' in compact


@pytest.mark.parametrize("path", list(SPELLINGS.values()), ids=list(SPELLINGS))
def test_control_plane_through_the_proxy_is_refused(
    path: str, agent: Agent, world: World, sentinel: Sentinel, upstream: Upstream, keys: Keys
) -> None:
    before = world.last_seq()
    _, upstream_requests = upstream.snapshot()
    results = agent.probe(_requests(path, _hosts(world)), [sentinel.text, *keys.all])
    after = world.events()

    wrong = {
        rid: f"{r['status']} {r.get('error') or ''} {r['body'][:160]!r}"
        for rid, r in results.items()
        if r["status"] not in (403, 404) or r["found"] or _leaks_log(r["body"], sentinel)
    }
    assert not wrong, f"{len(wrong)}/{len(results)} attempts not refused: {wrong}"
    still = [e for e in after if e["seq"] == sentinel.event["seq"]]
    assert still == [sentinel.event], "the world was reset: the sentinel's event is gone"
    refused = sum(1 for r in results.values() if r["status"] == 403)
    recorded = denied([e for e in after if e["seq"] > before])
    assert len(recorded) >= refused, f"{refused} refusals, {len(recorded)} recorded"
    assert upstream.since(upstream_requests) == [], "the model upstream was sent the request"


def test_the_spellings_reach_the_control_plane_on_the_runner_socket(
    world: World, sentinel: Sentinel
) -> None:
    """The attacks are real: sent straight to the control socket (GET only, so nothing is
    reset), these spellings reach a control endpoint (200, or 405 for ``reset``)."""
    reached = {}
    for attack, path in SPELLINGS.items():
        status, body = world.control_raw("GET", path)
        reached[attack] = status
        if attack.endswith("-events") and status == 200:
            assert sentinel.text in body.decode(), "the events endpoint returns the log"
    assert {a for a, s in reached.items() if s in (200, 405)} >= ON_THE_SOCKET, reached


def test_the_sentinel_is_still_in_the_world_after_every_attack(
    agent: Agent, world: World, sentinel: Sentinel
) -> None:
    """Read back by the agent, through the proxy: the fake still holds the comment."""
    request = {
        "id": "read",
        "mode": "connect",
        "tls": True,
        "method": "GET",
        "host": "api.github.com",
        "port": 443,
        "target": "/repos/acme/semverkit/issues/7/comments?per_page=100",
        "headers": {"Authorization": f"token {PLACEHOLDER_GH}"},
    }
    result = agent.probe([request], [sentinel.text])["read"]
    assert result["status"] == 200 and result["found"] == [sentinel.text], result
    assert sentinel.event in world.events()
