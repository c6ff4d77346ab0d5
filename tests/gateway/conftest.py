"""Starting a real gateway (mitmproxy in .venv-gateway) as a subprocess, and servers beside it."""

from __future__ import annotations

import json
import os
import signal
import ssl
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[2]
GATEWAY_PYTHON = Path(os.environ.get("REPLAY_GATEWAY_PYTHON", ROOT / ".venv-gateway/bin/python"))
DEMO = ROOT / "snapshots" / "demo"


@dataclass
class Gateway:
    state: dict[str, Any]
    process: subprocess.Popen[bytes]
    log: Path

    @property
    def proxy(self) -> str:
        return str(self.state["proxy"])

    @property
    def ca(self) -> str:
        return str(self.state["ca_bundle"])

    @property
    def env(self) -> dict[str, str]:
        return dict(self.state["env"])

    def client(self, **kw: Any) -> httpx.Client:
        context = ssl.create_default_context(cafile=self.ca)
        return httpx.Client(proxy=self.proxy, verify=context, timeout=20, **kw)

    def control(self) -> httpx.Client:
        transport = httpx.HTTPTransport(uds=self.state["control"])
        return httpx.Client(transport=transport, base_url="http://control", timeout=20)

    def events(self) -> list[dict[str, Any]]:
        with self.control() as c:
            text = c.get("/_replay/events").text
        return [json.loads(line) for line in text.splitlines()]


def start_gateway(tmp: Path, *args: str, env: dict[str, str] | None = None) -> Gateway:
    """``replay world up`` in the gateway's own venv; returns once the proxy listens."""
    if not GATEWAY_PYTHON.exists():
        raise RuntimeError(f"{GATEWAY_PYTHON} is missing: `make test` builds the gateway venv")
    state = tmp / "world.json"
    log = tmp / "gateway.log"
    cmd = [
        str(GATEWAY_PYTHON),
        "-m",
        "replay",
        "world",
        "up",
        *args,
        "--state",
        str(state),
        "--confdir",
        str(tmp / "conf"),
    ]
    with log.open("wb") as out:  # Popen keeps its own copy of the descriptor
        process = subprocess.Popen(
            cmd,
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=tmp,
            env={**os.environ, **(env or {})},
            start_new_session=True,
        )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if state.exists():
            return Gateway(json.loads(state.read_text()), process, log)
        if process.poll() is not None:
            raise RuntimeError(f"the gateway exited: {log.read_text()[-3000:]}")
        time.sleep(0.1)
    process.kill()
    raise RuntimeError(f"the gateway did not start: {log.read_text()[-3000:]}")


def stop_gateway(gw: Gateway) -> None:
    if gw.process.poll() is None:
        os.killpg(gw.process.pid, signal.SIGTERM)
        try:
            gw.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(gw.process.pid, signal.SIGKILL)
            gw.process.wait()


@pytest.fixture()
def gateway_factory(tmp_path: Path) -> Iterator[Callable[..., Gateway]]:
    started: list[Gateway] = []

    def make(*args: str, env: dict[str, str] | None = None) -> Gateway:
        gw = start_gateway(tmp_path, *args, env=env)
        started.append(gw)
        return gw

    yield make
    for gw in started:
        stop_gateway(gw)


@pytest.fixture()
def python() -> str:
    return sys.executable
