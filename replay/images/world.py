"""Starting a world (``replay world up``) for an image build, in the gateway's own Python.

mitmproxy lives in its own environment (``.venv-gateway``, see pyproject), so the gateway runs
as a subprocess: ``$REPLAY_GATEWAY_PYTHON``, else the checkout's ``.venv-gateway``, else this
interpreter if it has mitmproxy.
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from replay.base.errors import ReplayError

CHECKOUT = Path(__file__).resolve().parents[2]


def gateway_python() -> Path:
    """The interpreter that runs the gateway."""
    given = os.environ.get("REPLAY_GATEWAY_PYTHON")
    if given:
        return Path(given)
    venv = CHECKOUT / ".venv-gateway" / "bin" / "python"
    if venv.exists():
        return venv
    if importlib.util.find_spec("mitmproxy") is not None:
        return Path(sys.executable)
    raise ReplayError(
        "no Python with mitmproxy for the gateway: `make` builds .venv-gateway, "
        "or set REPLAY_GATEWAY_PYTHON"
    )


@contextmanager
def running_world(
    snapshot: Path, workdir: Path, *args: str, timeout: float = 60
) -> Iterator[dict[str, Any]]:
    """``replay world up SNAPSHOT`` until the block ends; yields its state (proxy, CA, env)."""
    state = workdir / "world.json"
    log = workdir / "gateway.log"
    cmd = [
        str(gateway_python()),
        "-m",
        "replay",
        "world",
        "up",
        str(snapshot),
        *args,
        "--state",
        str(state),
        "--confdir",
        str(workdir / "conf"),
    ]
    with log.open("wb") as out:
        process = subprocess.Popen(
            cmd, stdout=out, stderr=subprocess.STDOUT, cwd=workdir, start_new_session=True
        )
    try:
        deadline = time.monotonic() + timeout
        while not state.exists():
            if process.poll() is not None or time.monotonic() > deadline:
                raise ReplayError(f"the gateway did not start: {log.read_text()[-2000:]}")
            time.sleep(0.1)
        yield json.loads(state.read_text())
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
