"""Calibration says what went wrong (issue 16): a setup command that fails, and a test command
that crashes before any test runs, are named with the end of their output, and their logs
kept; against the real Docker engine, on copies of the demo case."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from replay.run.calibrate import CalibrationError, calibrate
from replay.run.runner import RunOptions
from tests.run.conftest import CARET


def _variant(tmp: Path, **changes: Any) -> Path:
    """A copy of the demo case with ``environment``/``hidden_tests`` fields changed."""
    case_dir = tmp / "case"
    shutil.copytree(CARET.parent, case_dir)
    path = case_dir / "case.yaml"
    data = yaml.safe_load(path.read_text())
    data["snapshot"] = str((CARET.parent / data["snapshot"]).resolve())
    for key, value in changes.items():
        section, _, name = key.partition("__")
        data[section][name] = value
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def test_a_failing_setup_command_is_named_with_its_output(tmp_path: Path) -> None:
    setup = "echo replay-setup-said-this; exit 3"
    case = _variant(tmp_path, environment__setup=[setup])
    opts = RunOptions(out=tmp_path / "runs", db=str(tmp_path / "r.db"))
    with pytest.raises(CalibrationError) as exc:
        calibrate(case, opts, runs=1)
    text = str(exc.value)
    assert f"environment setup {setup!r} exited 3" in text
    assert "replay-setup-said-this" in text
    log = case.parent / "logs" / "calibrate-error.log"
    assert text.endswith(f"log: {log}")
    assert "replay-setup-said-this" in log.read_text()


def test_a_test_command_that_crashes_is_named_and_its_output_kept(tmp_path: Path) -> None:
    command = "python -m pytest -q -p replay_no_such_plugin --junitxml={junit} tests"
    case = _variant(tmp_path, hidden_tests__command=command)
    opts = RunOptions(out=tmp_path / "runs", db=str(tmp_path / "r.db"))
    result = calibrate(case, opts, runs=1)
    assert not result.calibrated
    (gold,) = result.gold
    assert gold.outcome == "model_fail"
    kept = gold.run_dir / "tests" / "output-1.txt"
    assert "No module named 'replay_no_such_plugin'" in kept.read_text()
    (line,) = result.explain()
    said = f"the test command `{command}` wrote no JUnit report (exit "
    assert line.startswith(f"gold run 1: model_fail: hidden tests not resolved; {said}")
    assert "No module named 'replay_no_such_plugin'" in line
    assert f"(full output: {gold.run_dir / 'tests'})" in line
    assert line.endswith(f"(run directory: {gold.run_dir})")
