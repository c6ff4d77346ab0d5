"""Issue 35 item 2 on real runs (Docker, the world, the reference harness, the stub model):
the live display shows the agent's turn and tokens while the agent runs, a log gets a line
per phase and the agent's calls once its phase is over, with the time left once a run of a
known count has finished; ``harness matrix`` shows the same display while it runs."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from tests.test_live_progress import CASE, ROOT, _on_a_terminal

AGENT = re.compile(rb"run 1: agent, turn (\d+), ([\d,]+) tokens \(")


def _before(chunks: list[tuple[float, bytes]], end: bytes) -> bytes:
    """What was written before ``end`` first appeared."""
    seen = b""
    for _, data in chunks:
        if end in data:
            return seen + data.split(end)[0]
        seen += data
    return seen


def test_a_run_on_a_terminal_shows_the_agents_turn_and_tokens_as_it_goes(tmp_path: Path) -> None:
    # The stub thinks a second before each answer: its calls come while the display redraws.
    script = f"""
from pathlib import Path
from rich.console import Console
from replay.cli.progress import PhaseDisplay
from replay.run.runner import RunOptions, run_case
with PhaseDisplay(Console()) as display:
    options = RunOptions(stub="gold", stub_think_seconds=1.0, out=Path({str(tmp_path / "runs")!r}),
                         db={str(tmp_path / "r.db")!r}, progress=display)
    (run,) = run_case(Path({CASE!r}), options)
print("RUN ENDED", run.outcome, run.grade.wire.logical_calls,
      run.grade.tokens.input + run.grade.tokens.output)
"""
    chunks, code = _on_a_terminal([sys.executable, "-c", script], timeout=900)
    everything = b"".join(data for _, data in chunks)
    assert code == 0, everything[-3000:]
    ended = re.search(rb"RUN ENDED (\w+) (\d+) (\d+)", everything)
    assert ended is not None and ended[1] == b"pass", everything[-3000:]
    calls, tokens = int(ended[2]), int(ended[3])
    shown = [
        (int(m[1]), int(m[2].replace(b",", b"")))
        for m in AGENT.finditer(_before(chunks, b"RUN ENDED"))
    ]
    turns = sorted({turn for turn, _ in shown})
    assert len(turns) >= 2, f"the turn was redrawn as it went: {shown}"
    assert turns[-1] <= calls and max(t for _, t in shown) <= tokens, (shown, calls, tokens)
    assert all(t > 0 for _, t in shown), shown  # the stub reports its tokens


def test_a_run_in_a_log_says_each_phase_once_and_the_agents_calls_after_it(tmp_path: Path) -> None:
    argv = [
        sys.executable, "-m", "replay", "--db", str(tmp_path / "r.db"), "run", CASE,
        "--stub", "gold", "--runs", "2", "--out", str(tmp_path / "runs"),
    ]  # fmt: skip
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    lines = done.stdout.splitlines()
    assert not [line for line in lines if ", turn " in line], "no line per model call"
    agent = [
        m[1] for line in lines if (m := re.fullmatch(r"\[ *[\d.]+s\] (.*: agent)( \(.*\))?", line))
    ]
    assert agent == [
        "demo-caret-zero [stub:gold] run 1 of 2: agent",
        "demo-caret-zero [stub:gold] run 2 of 2: agent",
    ], lines
    after = [
        re.search(r"run (\d) of 2: grading \(agent: (\d+) turns?, [\d,]+ tokens", x) for x in lines
    ]
    told = {int(m[1]): int(m[2]) for m in after if m}
    assert set(told) == {1, 2}, lines
    for run_dir in (tmp_path / "runs" / "demo-caret-zero").iterdir():
        grade = json.loads((run_dir / "grade.json").read_text())
        assert 1 <= told[grade["attempt"]] <= grade["wire"]["logical_calls"], (told, grade["wire"])
    second = next(line for line in lines if "run 2 of 2: world reset" in line)
    assert re.search(r"\(about \w+ left\)$", second), second
    first = next(line for line in lines if "run 1 of 2: world reset" in line)
    assert "left" not in first, "no run had finished: no estimate"


def test_harness_matrix_shows_its_count_and_phases_while_it_runs(tmp_path: Path) -> None:
    argv = [
        sys.executable, "-m", "replay", "--db", str(tmp_path / "r.db"), "harness", "matrix",
        CASE, "--harness", "reference", "--stub", "gold", "--stub", "idle",
        "--out", str(tmp_path / "runs"),
    ]  # fmt: skip
    chunks, code = _on_a_terminal(argv, timeout=900)
    everything = b"".join(data for _, data in chunks)
    assert code == 0, everything[-3000:]
    before = _before(chunks, b"side effects")  # the table's header: the matrix is done
    assert re.search(rb"\[1/2\] demo-caret-zero \[reference, stub:gold\] run 1: agent", before)
    assert re.search(rb"\[2/2\] demo-caret-zero \[reference, stub:idle\] run 1: grading", before)
    # The first of the two has finished: the second says about how long is left.
    assert re.search(rb"\[2/2\] [^\r\n]*in all, about \w+ left\)", before), before[-2000:]
    assert not re.search(rb"\[1/2\] [^\r\n]* left\)", before), "nothing had finished yet"
