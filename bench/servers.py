"""Servers the benchmark suites start, each in a process of its own (the gateway included)."""

from __future__ import annotations

import atexit
import json
import os
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import ROOT_DIR

GATEWAY_PYTHON = ROOT_DIR / ".venv-gateway" / "bin" / "python"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def serve_in_subprocess(argv: list[str], port: int) -> subprocess.Popen[bytes]:
    """Run a server command until the benchmark exits; return it once ``port`` accepts.

    A server in its own process, like the gateway, so neither side of a comparison shares
    the benchmark's interpreter (and its GIL) with the client.
    """
    process = subprocess.Popen(
        argv,
        cwd=ROOT_DIR,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    atexit.register(lambda: process.poll() is None and os.killpg(process.pid, signal.SIGTERM))
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{argv} exited with {process.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return process
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"{argv} did not listen on {port}")


def start_gateway(*args: str) -> dict[str, Any]:
    """``replay world up`` in the gateway venv; stopped when the benchmark process exits."""
    tmp = Path(tempfile.mkdtemp(prefix="replay-bench-"))
    state = tmp / "world.json"
    log = (tmp / "gateway.log").open("wb")
    process = subprocess.Popen(
        [
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
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=tmp,
        start_new_session=True,
    )
    log.close()

    def stop() -> None:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=15)

    atexit.register(stop)
    while not state.exists():
        if process.poll() is not None:
            raise RuntimeError((tmp / "gateway.log").read_text())
        time.sleep(0.1)
    data: dict[str, Any] = json.loads(state.read_text())
    return data
