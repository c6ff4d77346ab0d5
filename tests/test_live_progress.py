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
    rb"run 1: (world reset|sandbox|agent|grading)(?:, turn \d+(?:, [\d,]+ tokens)?)? "
    rb"\((\d+)s in this phase, (\d+)s in all[,)]"
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


def test_case_calibrate_shows_each_runs_phases_on_a_terminal(tmp_path: Path) -> None:
    """``case calibrate`` ran gold and idle K times each before printing a line."""
    argv = [
        sys.executable, "-m", "replay", "--db", str(tmp_path / "r.db"), "case", "calibrate",
        CASE, "--runs", "1",
    ]  # fmt: skip
    chunks, code = _on_a_terminal(argv, timeout=900)
    everything = b"".join(data for _, data in chunks)
    assert code == 0 and b"calibrated" in everything, everything[-3000:]
    seen = _phases_before_the_end(chunks, b"gold passed")
    assert {"agent", "grading"} <= {phase for phase, _ in seen}, seen


def test_case_create_tells_each_step_as_it_starts(monkeypatch, tmp_path: Path) -> None:
    """``case create`` was silent for minutes (104 s on a small repository): each step is
    told as it starts, and a case made again (a declaration added) tells its steps again."""
    import dataclasses

    from replay.casebuild import create
    from replay.casebuild.declared import Addition
    from replay.casebuild.environment import Wanted
    from replay.casebuild.testlists import TestLists
    from tests.casebuild.repos import shapes_repo, shapes_source

    repo, _, fix = shapes_repo(tmp_path / "shapes")
    src = dataclasses.replace(shapes_source(repo, fix), wanted=Wanted(requires=("pytest",)))
    found = TestLists(fail_to_pass=["tests/test_shapes.py::test_area"], pass_to_pass=[], flaky=[])
    none = TestLists(fail_to_pass=[], pass_to_pass=[], flaky=[])
    made: list[tuple[str, ...]] = []

    def environment(spec, given, out, runtime):
        made.append(given.wanted.requires)
        return out / "case.yaml"

    def measure(path, runtime, repeats):
        lists = found if len(made) > 1 else none
        said = {"lists": lists, "missing_modules": lambda self: ["pygments"]}
        return type("M", (), {**said, "fails_with_gold": lambda self: False})()

    addition = Addition("pygments", requires=("-r requirements-test.txt",), where="x")
    monkeypatch.setattr(create, "_create_with_environment", environment)
    monkeypatch.setattr(create, "measure", measure)
    monkeypatch.setattr(create, "named_tests", lambda path, lists: (lists, []))
    monkeypatch.setattr(create, "_on_the_fallback", lambda *a: None)
    monkeypatch.setattr(create, "_with_what_the_tests_lack", lambda *a: None)
    monkeypatch.setattr(create, "_declared_addition", lambda *a: addition)
    monkeypatch.setattr(create, "write_lists", lambda path, lists: None)
    monkeypatch.setattr(create, "_check_images", lambda path, runtime: None)
    told: list[str] = []
    create.create_case("shapes-area", src, tmp_path / "case", None, say=lambda _: None,
                       progress=told.append)  # fmt: skip
    steps = [line.split(":")[0] for line in told]
    assert steps == ["history", "environment", "measure"] * 2 + ["image audit"]
    assert made == [("pytest",), ("pytest", "-r requirements-test.txt")]
