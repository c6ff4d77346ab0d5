"""``replay batch run`` and ``status`` end to end on a demo case (Docker, the stub model):
two runs at once through the real runner, and a rerun that finds everything finished."""

from __future__ import annotations

from pathlib import Path

import pytest

from replay.batch.engine import _prepared
from replay.batch.plan import load_plan
from replay.run.runner import RunOptions
from tests.cli_helpers import run_cli

ROOT = Path(__file__).resolve().parents[2]


def test_a_batch_runs_in_parallel_and_a_rerun_redoes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plan = tmp_path / "plan.yaml"
    plan.write_text(
        "schema: 1\nname: demo\n"
        f"cases: [{ROOT}/cases/demo-caret-zero/case.yaml]\n"
        "candidates: [{name: gold, stub: gold}, {name: idle, stub: idle}]\nruns: 2\n"
    )
    db = ["--db", str(tmp_path / "results.db")]
    args = [*db, "batch", "run", str(plan), "--jobs", "2", "--out", str(tmp_path / "runs")]
    first = run_cli(capsys, *args)
    assert first.code == 0, first.out + first.err
    assert "batch demo: ran 4, 4/4 finished (model_fail 2, pass 2)" in first.out
    # Its images are built now: a batch of the case need not run a first run alone again,
    # unless a candidate's harness has an image of its own.
    loaded = load_plan(plan)
    assert _prepared(loaded, RunOptions()) == {loaded.runs[0].digest}
    with_image = tmp_path / "image.yaml"
    with_image.write_text(plan.read_text().replace("stub: idle", "harness: mini-swe-agent"))
    assert _prepared(load_plan(with_image), RunOptions()) == set()
    again = run_cli(capsys, *args)
    assert again.code == 0 and "ran 0, 4/4 finished" in again.out
    status = run_cli(capsys, *db, "batch", "status", str(plan))
    assert status.code == 0
    assert "demo" in status.out and "model_fail 2, pass 2" in status.out
