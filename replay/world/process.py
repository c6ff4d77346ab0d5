"""One world as a process: ``replay world up`` in the gateway's own Python, run as a unit.

mitmproxy lives in its own environment (``.venv-gateway``, see pyproject), so the gateway runs
as a subprocess: ``$REPLAY_GATEWAY_PYTHON``, else the checkout's ``.venv-gateway``, else this
interpreter if it has mitmproxy.

A world dies with the process that started it, however that process ends (SIGKILL included):
otherwise it is re-parented to init and keeps its gateway, fakes and ports. The runner starts
it as ``replay world up --parent-pid PID --parent-start TICKS --lifeline FD``, holding the
write end of a pipe whose read end is FD; in the world, :func:`die_with_parent` watches that
pipe (end of file once every copy of the write end is closed, which the kernel does when the
parent exits) and, as a fallback, whether its parent is still PID. When either fails it sends
SIGTERM to its own process group (itself and what it started), then SIGKILL after a grace.

Not ``prctl(PR_SET_PDEATHSIG)``: Linux sends that signal when the *thread* that forked the
child exits, not the process, and batches start worlds from pool worker threads. The pipe is
bound to the process. The same options are the label :func:`orphan_worlds` finds world
processes of dead runners by (``replay gc``, a resuming batch).
"""

from __future__ import annotations

import contextlib
import http.client
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Collection, Iterator
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


def _not_started(code: int | None, timeout: float, log: Path) -> str:
    """Why the gateway did not start, in one line and never empty: it exited (with the code,
    or the signal that ended it) or it was still starting when ``timeout`` ran out, then the
    end of what it wrote, or that it wrote nothing (jedi 2026, sixth held-out corpus: the
    stop read "the gateway did not start:" and named nothing)."""
    if code is None:
        why = f"it was still starting after {timeout:.0f} s (a machine too busy, or a hang)"
    elif code < 0:
        why = f"it was ended by signal {-code}"
    else:
        why = f"it exited with code {code}"
    try:
        lines = [line.strip() for line in log.read_text(errors="replace").splitlines()]
    except OSError as exc:
        return f"the gateway did not start: {why}; its log {log} could not be read ({exc})"
    tail = " | ".join(line for line in lines if line)[-600:]
    return f"the gateway did not start: {why}" + (
        f"; the end of its log ({log}): {tail}" if tail else f" and wrote nothing to {log}"
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
        self._lifeline: int | None = None
        """The write end of the pipe the world watches: closed when this process ends."""
        self._state: dict[str, Any] | None = None

    @property
    def state(self) -> dict[str, Any]:
        """The running world's state file (``world.json``)."""
        if self._state is None:
            raise ReplayError(f"the world of {self.snapshot} is not running")
        return self._state

    def start(self) -> dict[str, Any]:
        """Start the gateway and wait until it listens; returns :attr:`state`."""
        from replay.runtime.base import process_start

        state = self.workdir / "world.json"
        log = self.workdir / "gateway.log"
        python = gateway_python()
        # A world killed before it could clean up leaves its state file: read as this one's,
        # it would hand the next run a dead proxy's address (and its sandbox's model calls
        # would fail where no gateway records them).
        state.unlink(missing_ok=True)
        self._cut_bundles()
        read_end, self._lifeline = os.pipe()  # neither end is inherited unless passed
        cmd = [
            str(python),
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
            "--parent-pid",
            str(os.getpid()),
            "--parent-start",
            process_start(os.getpid()) or "",
            "--lifeline",
            str(read_end),
        ]
        try:
            with log.open("wb") as out:
                # A session of its own: stopping it stops its whole process group.
                self._process = subprocess.Popen(
                    cmd,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    cwd=self.workdir,
                    start_new_session=True,
                    pass_fds=(read_end,),
                )
        except BaseException:
            self._close_lifeline()
            raise
        finally:
            os.close(read_end)
        try:
            deadline = time.monotonic() + self.timeout
            while not state.exists():
                code = self._process.poll()
                if code is not None or time.monotonic() > deadline:
                    raise ReplayError(_not_started(code, self.timeout, log))
                time.sleep(0.1)
            self._state = json.loads(state.read_text())
        except BaseException:
            self.stop()
            raise
        return self.state

    def _cut_bundles(self) -> None:
        """Cut each repository's base history from the shared git store now, in this process
        and unbounded, so that the world's start (bounded by :attr:`timeout`) only reads the
        cached bundle: the first cut of a long history (cmd2 2026's 25,000 objects, sixth
        held-out corpus) took more than the whole timeout on a busy machine, inside the
        world's process, and its start failed. A snapshot that does not load is left to the
        world to report."""
        from replay.base.errors import SnapshotError
        from replay.base.snapshot import load_snapshot

        try:
            snapshot = load_snapshot(self.snapshot)
        except (SnapshotError, OSError):
            return
        for part in snapshot.manifest.repositories:
            snapshot.bundle(part.name)

    def reset(self) -> None:
        """Back to the snapshot at T: the fakes' data and clock (registry and docs keep none)."""
        from fakes.core.server import CONTROL_PREFIX

        status, body = self._control("POST", f"{CONTROL_PREFIX}/reset")
        if status != 200:
            raise ReplayError(f"the world did not reset ({status}): {body[-500:]!r}")

    def running(self) -> bool:
        """Whether the world's process is still alive."""
        return self._process is not None and self._process.poll() is None

    def exit_code(self) -> int | None:
        """The world process's exit status once it has ended (negative: the signal that
        ended it), else None."""
        return None if self._process is None else self._process.poll()

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
        try:
            if process is None or process.poll() is not None:
                return
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        finally:
            self._close_lifeline()

    def _close_lifeline(self) -> None:
        fd, self._lifeline = self._lifeline, None
        if fd is not None:
            os.close(fd)

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


WORLD_ARGV = ("-m", "replay", "world", "up")
"""How a world process's command line begins, after its interpreter."""
PARENT_GRACE = 10.0
"""Seconds a world whose parent is gone has to stop on SIGTERM before it is killed."""


def die_with_parent(parent_pid: int, lifeline: int | None, poll: float = 1.0) -> None:
    """In the world's process: end this process group when ``parent_pid`` is gone.

    Watches, in a daemon thread, the ``lifeline`` pipe (end of file: the parent exited) and
    whether the parent is still ``parent_pid`` (re-parented to init or a subreaper: it
    exited; this also covers a parent that died before this call). Then SIGTERM to the
    process group (the gateway stops as on ``World.stop``; what it started goes too), and
    SIGKILL after :data:`PARENT_GRACE` seconds if it has not ended.
    """
    import select

    if os.getpgrp() != os.getpid():
        os.setpgid(0, 0)  # a group of its own, so that ending it ends nothing else

    def watch() -> None:
        while os.getppid() == parent_pid:
            if lifeline is None:
                time.sleep(poll)
                continue
            readable, _, _ = select.select([lifeline], [], [], poll)
            if readable and not os.read(lifeline, 1):
                break  # end of file: every write end is closed
        print(f"replay world: parent {parent_pid} is gone; stopping", file=sys.stderr, flush=True)
        os.killpg(0, signal.SIGTERM)
        time.sleep(PARENT_GRACE)
        os.killpg(0, signal.SIGKILL)

    threading.Thread(target=watch, name="die-with-parent", daemon=True).start()


def orphan_worlds(owners: Collection[str] | None = None) -> dict[int, str]:
    """This host's world processes whose parent is gone (pid: start time), among those
    started by ``owners`` (``pid@host`` of the runners, as in the containers' owner label)
    if given.

    Only processes whose command line is ``replay world up`` with ``--parent-pid`` count;
    a world whose parent still runs (same pid, same start time) never does.
    """
    from replay.runtime.base import Owner, process_start

    host = socket.gethostname()
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().decode(errors="replace").split("\0")[:-1]
        except OSError:
            continue
        parent = _option(argv, "--parent-pid")
        if tuple(argv[1:5]) != WORLD_ARGV or parent is None or not parent.isdigit():
            continue
        if owners is not None and f"{parent}@{host}" not in owners:
            continue
        owner = Owner(int(parent), host, _option(argv, "--parent-start") or "")
        start = process_start(int(entry.name))
        if start is not None and not owner.alive():
            found[int(entry.name)] = start
    return found


def kill_worlds(worlds: dict[int, str], grace: float = PARENT_GRACE) -> list[int]:
    """End these world processes (pid: start time, from :func:`orphan_worlds`) with their
    process groups: SIGTERM, then SIGKILL after ``grace`` seconds. A pid that now names
    another process (another start time) is left alone. Returns those signalled."""
    from replay.runtime.base import process_start

    ended = []
    for pid, start in worlds.items():
        if process_start(pid) != start:
            continue
        try:
            # A world leads its own group (a session of its own): its children go with it.
            if os.getpgid(pid) == pid:
                os.killpg(pid, signal.SIGTERM)
            else:
                os.kill(pid, signal.SIGTERM)
        except (ProcessLookupError, PermissionError):
            continue
        ended.append(pid)
    deadline = time.monotonic() + grace
    for pid in ended:
        while process_start(pid) == worlds[pid] and time.monotonic() < deadline:
            time.sleep(0.1)
        if process_start(pid) == worlds[pid]:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)
    return ended


def _option(argv: list[str], name: str) -> str | None:
    for i, arg in enumerate(argv):
        if arg == name and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith(name + "="):
            return arg.partition("=")[2]
    return None
