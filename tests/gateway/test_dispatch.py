"""The gateway's mitmproxy: only the addons it runs on, each event offered only to the addons
that handle it, with the same calls in the same order as mitmproxy's own dispatch."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import httpx
import pytest

from tests.gateway.conftest import DEMO, GATEWAY_PYTHON, ROOT


def test_dispatch_makes_mitmproxys_calls_and_follows_the_chain() -> None:
    script = Path(__file__).with_name("dispatch_check.py")
    done = subprocess.run(
        [str(GATEWAY_PYTHON), str(script)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    theirs, ours = result["theirs"], result["ours"]
    assert ours == theirs
    # The story really exercised what the cache must follow: a sub-addon's hook, an addon
    # that raises (the next still runs), addons added late (reached), AddonHalt (stops the
    # rest), removed addons (no longer reached), a cleared chain (nothing).
    assert theirs[:4] == [
        "first.request",
        "raises.request",
        "parent/child.request",
        "updates.update",
    ]
    late = theirs[theirs.index("-- add late, halts") :]
    assert "late.request" in late and "halts.response" in late
    assert "after-halt.request" in late and "after-halt.response" not in late
    removed = theirs[theirs.index("-- remove first and parent") : theirs.index("-- clear")]
    assert not [c for c in removed if c.startswith(("first.", "parent/"))]
    assert theirs[-1] == "-- clear"
    assert result["ours_is_dispatch"] and not result["plain_is_dispatch"]
    assert result["gateway_manager"] == "Dispatch" and result["is_addon_manager"]
    assert result["gateway_addons"] == [
        "Core",
        "Block",
        "StripDnsHttpsRecords",
        "DisableH2C",
        "Proxyserver",
        "DnsResolver",
        "NextLayer",
        "TlsConfig",
        "ErrorCheck",
    ]


def test_mitmproxys_own_pages_are_outside_the_world(gateway_factory) -> None:
    """Without the onboarding addon, mitm.it is one more host outside the world."""
    gw = gateway_factory(str(DEMO), "--service", "slack")
    with gw.client() as client:
        plain = client.get("http://mitm.it/")
        assert plain.status_code == 403 and "outside the frozen world" in plain.text
        with pytest.raises(httpx.ProxyError, match="403"):
            client.get("https://mitm.it/cert/pem")
        assert client.post("https://slack.com/api/auth.test").json()["ok"] is False
    hosts = [
        (e["data"]["host"], e["data"]["method"])
        for e in gw.events()
        if e["kind"] == "egress.denied"
    ]
    assert hosts == [("mitm.it", "GET"), ("mitm.it", "CONNECT")]
