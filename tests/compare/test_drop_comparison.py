"""A comparison fixed with a mistake can be dropped (or renamed) and run again (issue 35):
the name used to stay fixed to the wrong arms, and fixing the typo was refused for good."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli_helpers import run_cli

ROOT = Path(__file__).resolve().parents[2]
CASE = str(ROOT / "cases" / "demo-caret-zero" / "case.yaml")


def test_a_comparison_can_be_dropped_renamed_and_run_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = ["--db", str(tmp_path / "results.db")]

    def compare(b: str) -> tuple[int, str]:
        args = [*db, "compare", "--no-run", "--name", "demo", "--a", "name=x,stub=gold"]
        result = run_cli(capsys, *args, "--b", b, CASE)
        return result.code, result.out + result.err

    assert compare("name=y,stub=idle")[0] == 0
    code, said = compare("name=y,stub=cheat")  # another arm B under the same name
    assert code == 1 and "replay results drop-comparison demo" in said
    listed = run_cli(capsys, *db, "results", "comparisons")
    assert "demo" in listed.out and listed.out.count("x:") == 1
    dropped = run_cli(capsys, *db, "results", "drop-comparison", "demo")
    assert dropped.code == 0 and "dropped comparison demo" in dropped.out
    assert compare("name=y,stub=cheat")[0] == 0  # fixed anew
    renamed = run_cli(capsys, *db, "results", "rename-comparison", "demo", "demo-cheat")
    assert renamed.code == 0
    listed = run_cli(capsys, *db, "results", "comparisons")
    assert "demo-cheat" in listed.out and " demo " not in listed.out
    missing = run_cli(capsys, *db, "results", "drop-comparison", "nope")
    assert missing.code == 2 and "no comparison of this name" in missing.err
