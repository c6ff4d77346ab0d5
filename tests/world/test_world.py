"""The orchestrator's World: one gateway process, started, reset and stopped as a unit."""

from __future__ import annotations

import http.client
import os
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from replay.base.errors import ReplayError
from replay.world import World

DEMO = Path(__file__).resolve().parents[2] / "snapshots" / "demo"


def _through_proxy(proxy: str, url: str) -> int:
    where = urlsplit(proxy)
    conn = http.client.HTTPConnection(where.hostname or "", where.port, timeout=30)
    try:
        conn.request("GET", url)
        return conn.getresponse().status
    finally:
        conn.close()


def test_a_world_starts_resets_and_stops_as_a_unit(tmp_path: Path) -> None:
    world = World(DEMO, tmp_path)
    with pytest.raises(ReplayError, match="not running"):
        _ = world.state
    with world:
        state = world.state
        assert {"proxy", "ca_bundle", "control", "env"} <= state.keys()
        # A request the gateway refuses is on the world's event log ...
        assert _through_proxy(state["proxy"], "http://example.com/") >= 400
        assert any(e["kind"] == "egress.denied" for e in world.events())
        # ... and a reset takes the whole world back to the snapshot.
        world.reset()
        assert world.events() == []
        pid = int(state["pid"])
    with pytest.raises(ReplayError, match="not running"):
        _ = world.state
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_a_world_that_cannot_start_leaves_no_process(tmp_path: Path) -> None:
    with pytest.raises(ReplayError, match="did not start"), World(tmp_path / "nothing", tmp_path):
        pass
