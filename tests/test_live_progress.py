"""Issue 35: ``replay run`` and ``compare`` said nothing until a run ended. On a terminal (a
pseudo-terminal here, as a person's) they now show the phase that is running and a running
elapsed time, redrawn while the run goes on; in a log, a line per phase."""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CASE = str(ROOT / "cases" / "demo-caret-zero" / "case.yaml")
PHASE = re.compile(
    rb"run 1: (world reset|sandbox|agent|grading) \((\d+)s in this phase, (\d+)s in all\)"
)


def _on_a_terminal(argv: list[str], timeout: float) -> tuple[list[tuple[float, bytes]], int]:
    """Run ``argv`` on a pseudo-terminal; what it wrote, chunk by chunk with the time it came,
    and its exit status."""
    main, child = pty.openpty()
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "200", "LINES": "50"}
    proc = subprocess.Popen(argv, stdin=child, stdout=child, stderr=child, env=env, cwd=ROOT)
    os.close(child)
    chunks: list[tuple[float, bytes]] = []
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([main], [], [], 1.0)
            if ready:
                try:
                    data = os.read(main, 65536)
                except OSError:  # the child closed the terminal
                    break
                if not data:
                    break
                chunks.append((time.monotonic(), data))
            elif proc.poll() is not None:
                break
        code = proc.wait(timeout=max(1.0, deadline - time.monotonic()))
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(main)
    return chunks, code


def _phases_before_the_end(chunks: list[tuple[float, bytes]], end: bytes) -> list[tuple[str, int]]:
    """The (phase, seconds in all) redrawn before ``end`` first appeared."""
    seen: list[tuple[str, int]] = []
    for _, data in chunks:
        if end in data:
            seen += [(m[1].decode(), int(m[3])) for m in PHASE.finditer(data.split(end)[0])]
            break
        seen += [(m[1].decode(), int(m[3])) for m in PHASE.finditer(data)]
    return seen


def test_run_shows_its_phases_and_a_running_time_on_a_terminal(tmp_path: Path) -> None:
    argv = [
        sys.executable, "-m", "replay", "--db", str(tmp_path / "r.db"), "run", CASE,
        "--stub", "gold", "--out", str(tmp_path / "runs"),
    ]  # fmt: skip
    chunks, code = _on_a_terminal(argv, timeout=600)
    everything = b"".join(data for _, data in chunks)
    assert code == 0, everything[-3000:]
    seen = _phases_before_the_end(chunks, b"healthy runs passed")
    assert {"sandbox", "agent", "grading"} <= {phase for phase, _ in seen}, seen
    assert len({total for _, total in seen}) >= 2, seen  # the time runs while it is shown


def test_compare_shows_its_phases_before_its_verdict(tmp_path: Path) -> None:
    argv = [
        sys.executable, "-m", "replay", "--db", str(tmp_path / "r.db"), "compare", CASE,
        "--a", "name=gold,stub=gold", "--b", "name=idle,stub=idle", "--runs", "1",
        "--calibrate", "1", "--out", str(tmp_path / "runs"),
    ]  # fmt: skip
    chunks, code = _on_a_terminal(argv, timeout=900)
    everything = b"".join(data for _, data in chunks)
    assert code == 0 and b"verdict:" in everything, everything[-3000:]
    seen = _phases_before_the_end(chunks, b"verdict:")
    assert {"agent", "grading"} <= {phase for phase, _ in seen}, seen
    assert b"[arm B: idle]" in everything
