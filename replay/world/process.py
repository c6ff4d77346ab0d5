"""One world as a process: ``replay world up`` in the gateway's own Python, run as a unit.

mitmproxy lives in its own environment (``.venv-gateway``, see pyproject), so the gateway runs
as a subprocess: ``$REPLAY_GATEWAY_PYTHON``, else the checkout's ``.venv-gateway``, else this
interpreter if it has mitmproxy.
"""

from __future__ import annotations

import http.client
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
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


class World:
    """One snapshot's world: its fakes, registry and docs behind the gateway.

    All of it is one ``replay world up`` process, so it is started, reset and stopped as a
    unit. While it runs, :attr:`state` is what a client needs of it (the proxy's address, the
    CA bundle, the client environment, the runner's control socket): what a sandbox is given.
    ``args`` are further options of ``replay world up`` (``--case``, ``--model-upstream``...).
    """

    def __init__(self, snapshot: Path, workdir: Path, *args: str, timeout: float = 60) -> None:
        self.snapshot = snapshot
        self.workdir = workdir
        self.args = args
        self.timeout = timeout
        self._process: subprocess.Popen[bytes] | None = None
        self._state: dict[str, Any] | None = None

    @property
    def state(self) -> dict[str, Any]:
        """The running world's state file (``world.json``)."""
        if self._state is None:
            raise ReplayError(f"the world of {self.snapshot} is not running")
        return self._state

    def start(self) -> dict[str, Any]:
        """Start the gateway and wait until it listens; returns :attr:`state`."""
        state = self.workdir / "world.json"
        log = self.workdir / "gateway.log"
        cmd = [
            str(gateway_python()),
            "-m",
            "replay",
            "world",
            "up",
            str(self.snapshot),
            *self.args,
            "--state",
            str(state),
            "--confdir",
            str(self.workdir / "conf"),
        ]
        with log.open("wb") as out:
            self._process = subprocess.Popen(
                cmd, stdout=out, stderr=subprocess.STDOUT, cwd=self.workdir, start_new_session=True
            )
        try:
            deadline = time.monotonic() + self.timeout
            while not state.exists():
                if self._process.poll() is not None or time.monotonic() > deadline:
                    raise ReplayError(f"the gateway did not start: {log.read_text()[-2000:]}")
                time.sleep(0.1)
            self._state = json.loads(state.read_text())
        except BaseException:
            self.stop()
            raise
        return self.state

    def reset(self) -> None:
        """Back to the snapshot at T: the fakes' data and clock (registry and docs keep none)."""
        from fakes.core.server import CONTROL_PREFIX

        status, body = self._control("POST", f"{CONTROL_PREFIX}/reset")
        if status != 200:
            raise ReplayError(f"the world did not reset ({status}): {body[-500:]!r}")

    def running(self) -> bool:
        """Whether the world's process is still alive."""
        return self._process is not None and self._process.poll() is None

    def connections(self) -> int:
        """How many client connections the gateway holds open right now."""
        from fakes.core.server import CONTROL_PREFIX

        status, body = self._control("GET", f"{CONTROL_PREFIX}/connections")
        if status != 200:
            raise ReplayError(f"the world's connections could not be read ({status})")
        return int(json.loads(body)["open"])

    def quiet(self, timeout: float) -> bool:
        """Wait until the gateway holds no client connection (every call of the last client
        recorded); False if it still holds one after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while self.connections():
            if time.monotonic() > deadline:
                return False
            time.sleep(0.02)
        return True

    def dump(self) -> dict[str, Any]:
        """Every fake's state, as the control plane dumps it."""
        from fakes.core.server import CONTROL_PREFIX

        status, body = self._control("GET", f"{CONTROL_PREFIX}/state")
        if status != 200:
            raise ReplayError(f"the world's state could not be read ({status})")
        data: dict[str, Any] = json.loads(body)
        return data

    def events(self) -> list[dict[str, Any]]:
        """The event log so far, as the control plane exports it (oldest first)."""
        from fakes.core.server import CONTROL_PREFIX

        status, body = self._control("GET", f"{CONTROL_PREFIX}/events")
        if status != 200:
            raise ReplayError(f"the world's event log could not be read ({status})")
        return [json.loads(line) for line in body.decode().splitlines() if line]

    def stop(self) -> None:
        """Stop the gateway (SIGTERM, then SIGKILL after 15 s); a stopped world stays stopped."""
        process, self._process, self._state = self._process, None, None
        if process is None or process.poll() is not None:
            return
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()

    def __enter__(self) -> World:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def _control(self, method: str, path: str) -> tuple[int, bytes]:
        """A request to the runner's control socket (never reachable through the proxy)."""
        conn = _UnixConnection(str(self.state["control"]), timeout=30)
        try:
            conn.request(method, path, headers={"Content-Length": "0"})
            answer = conn.getresponse()
            return answer.status, answer.read()
        except OSError as exc:
            raise ReplayError(f"the world's control socket failed: {exc}") from exc
        finally:
            conn.close()


class _UnixConnection(http.client.HTTPConnection):
    """HTTP over a Unix socket."""

    def __init__(self, path: str, timeout: float) -> None:
        super().__init__("control", timeout=timeout)
        self.path = path

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        sock.connect(self.path)
        self.sock = sock


@contextmanager
def running_world(
    snapshot: Path, workdir: Path, *args: str, timeout: float = 60
) -> Iterator[dict[str, Any]]:
    """A :class:`World` until the block ends; yields its state (proxy, CA, env)."""
    with World(snapshot, workdir, *args, timeout=timeout) as world:
        yield world.state
