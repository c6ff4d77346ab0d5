"""Voiding a losing run by crashing a fake: one malformed request, then the run is "infra".

Each attempt must get an answer (no dropped connection), below 500, in the vendor's own error
shape (GitHub: ``message``; Linear's GraphQL: ``errors``; Slack: HTTP 200 with ``ok: false``
and an ``error``), and the gateway must record no ``gateway.addon_failed`` (which marks the
run invalid). Afterwards the fake still answers a plain read.
"""

from __future__ import annotations

import pytest

from replay.run.attacks.crash import GH, malformed_requests, tls_request, vendor_shaped
from tests.redteam.conftest import Agent, World

ATTEMPTS = malformed_requests("acme/semverkit", 7, "C04QL2REL")
"""Attack id -> (the vendor's error shape expected, the request): the corpus's own
(``malformed-requests`` sends them from a run's sandbox)."""


READ = tls_request("api.github.com", "GET", "/repos/acme/semverkit", GH)


@pytest.mark.parametrize("attack", list(ATTEMPTS))
def test_a_malformed_request_gets_the_vendors_error_and_voids_nothing(
    attack: str, agent: Agent, world: World
) -> None:
    shape, request = ATTEMPTS[attack]
    before = world.last_seq()
    results = agent.probe([{**request, "id": attack}, {**READ, "id": "after"}], [])
    result = results[attack]
    assert result["status"] is not None, f"no answer: {result['error']}"
    assert result["status"] < 500, f"{result['status']} {result['body'][:300]!r}"
    assert vendor_shaped(shape, result["status"], result["body"]) is None, vendor_shaped(
        shape, result["status"], result["body"]
    )
    failed = [
        e
        for e in world.since(before)
        if e["kind"] in ("gateway.addon_failed", "gateway.world_error")
    ]
    assert failed == [], failed
    assert results["after"]["status"] == 200, results["after"]
