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


def _gateway(tmp_path: Path, body: str) -> Path:
    script = tmp_path / "python"
    script.write_text(f"#!/bin/sh\n{body}\n")
    script.chmod(0o755)
    return script


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ("exit 3", r"it exited with code 3 and wrote nothing to .*gateway\.log$"),
        (
            "echo Traceback; echo '  File x'; echo 'no snapshot here' >&2; exit 2",
            r"it exited with code 2; the end of its log \(.*gateway\.log\): "
            r"Traceback \| File x \| no snapshot here$",
        ),
        ("kill -TERM $$", r"it was ended by signal 15 and wrote nothing"),
        (
            "exec sleep 30",
            r"it was still starting after 1 s \(a machine too busy, or a hang\) and wrote nothing",
        ),
    ],
    ids=["silent-exit", "exit-with-log", "signal", "too-slow"],
)
def test_a_gateway_that_does_not_start_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: str, said: str
) -> None:
    """Found by the sixth held-out corpus (jedi 2026): "the gateway did not start:" named
    nothing. Each way a gateway fails to start is told, and its process does not outlive it."""
    monkeypatch.setenv("REPLAY_GATEWAY_PYTHON", str(_gateway(tmp_path, body)))
    world = World(tmp_path / "snapshot", tmp_path, timeout=1)
    with pytest.raises(ReplayError, match=r"^the gateway did not start: " + said) as exc:
        world.start()
    assert "\n" not in str(exc.value)
    assert not world.running()
