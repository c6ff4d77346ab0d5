"""``replay case strength``'s bad input: one line, exit 2, before anything is graded; and the
package's public surface."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

import replay.strength
from tests.cli_helpers import assert_one_line_error, run_cli

ROOT = Path(__file__).resolve().parents[2]
CASE = str(ROOT / "cases" / "demo-caret-zero" / "case.yaml")


def test_a_missing_case_file_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = str(tmp_path / "nope" / "case.yaml")
    result = run_cli(capsys, "case", "strength", CASE, missing)
    assert_one_line_error(result, missing)
    assert result.out == "", "the first case is not graded before the second is read"


def test_a_json_path_in_no_directory_is_refused_before_grading(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = str(tmp_path / "no-such-dir" / "strength.json")
    result = run_cli(capsys, "case", "strength", CASE, "--json", target)
    assert_one_line_error(result, target, "--json", "its directory does not exist")


def test_a_bound_below_one_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    result = run_cli(capsys, "case", "strength", CASE, "--max-mutants", "0")
    assert result.code == 2 and "max-mutants" in result.err


def test_all_lists_every_public_name() -> None:
    module = replay.strength
    defined = {
        name
        for name, value in vars(module).items()
        if not name.startswith("_")
        and not inspect.ismodule(value)
        and str(getattr(value, "__module__", "")).startswith("replay")
    }
    assert defined <= set(module.__all__), defined - set(module.__all__)
    for name in module.__all__:
        assert hasattr(module, name), name
