"""Calibration says what went wrong (issue 16): a setup command that fails, and a test command
that crashes before any test runs, are named with the end of their output, and their logs
kept; against the real Docker engine, on copies of the demo case."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from replay.run.calibrate import CalibrationError, calibrate
from replay.run.runner import RunOptions
from tests.cli_helpers import run_cli
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


def test_a_test_command_that_crashes_is_named_and_its_output_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through the CLI, as a user sees it: the case is not calibrated, and each run that went
    wrong is printed with its reason and its run directory."""
    command = "python -m pytest -q -p replay_no_such_plugin --junitxml={junit} tests"
    case = _variant(tmp_path, hidden_tests__command=command)
    monkeypatch.chdir(tmp_path)  # run directories go to ./.replay/runs
    db = str(tmp_path / "r.db")
    result = run_cli(capsys, "--db", db, "case", "calibrate", str(case), "--runs", "1")
    assert result.code == 1, result.err
    assert "gold passed 0/1, idle failed 1/1: NOT CALIBRATED" in result.out
    (line,) = [x.strip() for x in result.out.splitlines() if x.strip().startswith("gold run 1")]
    said = f"the test command `{command}` wrote no JUnit report (exit "
    assert line.startswith(f"gold run 1: model_fail: hidden tests not resolved; {said}")
    assert "No module named 'replay_no_such_plugin'" in line
    found = re.search(r"\(run directory: (\S+)\)$", line)
    assert found is not None, line
    run_dir = Path(found.group(1))
    assert f"(full output: {run_dir / 'tests'})" in line
    kept = run_dir / "tests" / "output-1.txt"
    assert "No module named 'replay_no_such_plugin'" in kept.read_text()
