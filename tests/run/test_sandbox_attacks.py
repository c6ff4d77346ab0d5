"""The sandbox family of the red-team corpus, end to end through ``replay run`` on a demo case:
what the agent leaves for the runner to read back never crashes it, never makes the run
unhealthy, and never costs the host more than the caps.

Each attack ships gold's side effects without the fix, so the healthy outcome is
``model_fail`` (the hidden tests fail). The memory figures are the runner process's own peak
(``VmHWM`` of the process that reads the sandbox's output, run apart in
:mod:`tests.run.bounded_driver`).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from replay.base.outcomes import Outcome
from replay.grade.model import load_grade
from replay.results import Store
from replay.results.models import RunRow
from replay.run.attacks.sandbox import FLOOD_BYTES, SPARSE_BYTES
from replay.run.runner import RunOptions, run_case
from replay.runtime.base import Runtime
from replay.runtime.bounded import Caps
from replay.world.warm import keep_warm
from tests.run.conftest import CARET, ROOT

PEAK_LIMIT = 300 * 1024**2
"""The runner's peak memory must stay under this (issue 33), whatever the sandbox sends."""
MARKER_ROOM = 1024
"""Bytes a cut file may hold past its cap: the marker line."""


def test_a_transcript_made_a_directory_or_given_a_lone_surrogate_is_model_fail(
    tmp_path: Path, caret_env: tuple[Runtime, str]
) -> None:
    db = f"sqlite:///{tmp_path}/r.db"
    with keep_warm():
        runs = {
            stub: run_case(CARET, RunOptions(stub=stub, out=tmp_path / "runs", db=db))[0]
            for stub in ("transcript-dir", "transcript-surrogate")
        }
    store = Store(db)
    try:
        for stub, run in runs.items():
            assert run.outcome == Outcome.MODEL_FAIL, (stub, run.reason)
            assert run.reason.startswith("hidden tests not resolved"), run.reason
            assert run.crashed is None
            grade = load_grade(run.run_dir / "grade.json")
            assert grade.outcome == Outcome.MODEL_FAIL and grade.tests is not None
            assert grade.attempts.prs_opened == 1, "gold's side effects without the fix"
            with store.session() as s:
                row = s.get(RunRow, run.run_id)
                assert row is not None and row.outcome == "model_fail" and row.grade is not None
            # Nothing of the agent's came out as a link, nor anything outside the run.
            assert not [p for p in run.run_dir.rglob("*") if p.is_symlink()]
    finally:
        store.close()
    lost = runs["transcript-dir"].run_dir
    assert not (lost / "agent.jsonl").exists()
    why = (lost / "transcript-error.txt").read_text()
    assert why == (
        "/tmp/replay-run/agent.jsonl is a directory in the sandbox, not a regular file: not read\n"
    )
    odd = runs["transcript-surrogate"].run_dir
    assert not (odd / "transcript-error.txt").exists()
    entries = [json.loads(line) for line in (odd / "transcript.jsonl").read_text().splitlines()]
    assert "lone \ufffd surrogate" in [e["text"] for e in entries]
    # The harness went on writing after the odd lines: its last answer is there.
    assert entries[-1]["role"] == "assistant"


@pytest.mark.parametrize(
    ("stub", "cut_file"),
    [
        ("stdout-flood", "stdout.txt"),
        ("sparse-transcript", "agent.jsonl"),
        ("sparse-grading", None),  # the grader's own copy-out, beside the tests' reports
    ],
)
def test_a_flood_or_a_sparse_file_leaves_the_runner_small_and_the_disk_within_caps(
    tmp_path: Path, caret_env: tuple[Runtime, str], stub: str, cut_file: str | None
) -> None:
    # Sized from the work: the whole flood (or the sparse file's holes) crosses Docker's
    # stream, about 100 MB/s here; 10 MB/s is the floor allowed, plus a run's own minutes.
    crossing = max(FLOOD_BYTES, SPARSE_BYTES) / 10e6
    done = subprocess.run(
        [sys.executable, "-m", "tests.run.bounded_driver", str(CARET), stub, str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300 + crossing,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["outcome"] == "model_fail", report["reason"]
    assert report["peak_kib"] * 1024 < PEAK_LIMIT, f"the runner peaked at {report['peak_kib']} KiB"
    run_dir = Path(report["run_dir"])
    caps = Caps()
    biggest = max(caps.harness_output, caps.copy) + MARKER_ROOM
    sizes = {str(p.relative_to(run_dir)): p.stat().st_size for p in run_dir.rglob("*")}
    assert max(sizes.values()) <= biggest, sorted(sizes.items(), key=lambda kv: -kv[1])[:3]
    # The run directory holds at most one full cap (the cut file) besides what a run writes.
    assert sum(sizes.values()) < biggest + 16 * 1024**2
    if cut_file is not None:
        cuts = json.loads((run_dir / "cut.json").read_text())
        assert list(cuts["cut"]) == [cut_file]
        assert cuts["cut"][cut_file] > 0.9 * min(FLOOD_BYTES, SPARSE_BYTES)
        assert b"bytes cut here" in (run_dir / cut_file).read_bytes()
    if stub == "sparse-transcript":
        # The harness appended after the holes: its lines, in the kept tail, are read.
        uniform = (run_dir / "transcript.jsonl").read_text().splitlines()
        assert json.loads(uniform[-1])["text"] == "Done: the pull request is open."
