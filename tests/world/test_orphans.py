"""A world dies with the process that started it, however that process ends; what a hung
world leaves is found and ended by :func:`orphan_worlds` / :func:`kill_worlds`, and a world
whose runner lives is never touched."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from replay.world import World
from replay.world.process import kill_worlds, orphan_worlds

DEMO = Path(__file__).resolve().parents[2] / "snapshots" / "demo"

PARENT = """
import sys, threading, time
from pathlib import Path
from replay.world import World

world = World(Path(sys.argv[1]), Path(sys.argv[2]))
# Started from a thread that ends at once: the world must outlive the thread (a batch
# starts worlds from pool threads), only not the process.
starter = threading.Thread(target=world.start)
starter.start()
starter.join()
print(world._process.pid, flush=True)
if sys.argv[3] == "stop":
    import os, signal
    os.kill(world._process.pid, signal.SIGSTOP)  # a hung world: it cannot stop itself
    print("stopped", flush=True)
time.sleep(600)
"""


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def wait_gone(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def start_parent(tmp: Path, mode: str) -> tuple[subprocess.Popen[str], int]:
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT, str(DEMO), str(tmp), mode],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    assert parent.stdout is not None
    line = parent.stdout.readline()
    assert line.strip().isdigit(), f"the parent did not start its world: {line!r}"
    if mode == "stop":
        assert parent.stdout.readline().strip() == "stopped"
    return parent, int(line)


def test_a_world_outlives_its_starting_thread_and_dies_with_its_sigkilled_parent(
    tmp_path: Path,
) -> None:
    parent, world = start_parent(tmp_path, "run")
    try:
        time.sleep(3)  # the starting thread is long gone: the world still runs
        assert alive(world)
        assert world not in orphan_worlds()  # its parent lives
    finally:
        os.killpg(parent.pid, signal.SIGKILL)
        parent.communicate()
    # Re-parented to init, it notices, ends its process group and is gone.
    assert wait_gone(world, 30), "the world outlived its SIGKILLed parent"
    assert "parent" in (tmp_path / "gateway.log").read_text()


def test_a_hung_world_of_a_dead_runner_is_found_and_ended_and_a_live_ones_is_not(
    tmp_path: Path,
) -> None:
    (tmp_path / "hung").mkdir()
    (tmp_path / "live").mkdir()
    parent, hung = start_parent(tmp_path / "hung", "stop")
    os.killpg(parent.pid, signal.SIGKILL)
    parent.communicate()
    with World(DEMO, tmp_path / "live") as live:
        assert live._process is not None
        mine = live._process.pid
        time.sleep(2)
        assert alive(hung)  # stopped: it could not end itself
        owner = f"{parent.pid}@{socket.gethostname()}"
        found = orphan_worlds({owner})
        assert list(found) == [hung]
        assert mine not in orphan_worlds()
        assert orphan_worlds({f"{os.getpid()}@{socket.gethostname()}"}) == {}
        assert kill_worlds(found, grace=1) == [hung]
        assert wait_gone(hung, 10)
        assert live.running()
    assert not alive(mine)
