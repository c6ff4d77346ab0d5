"""A typo'd harness, stub or attack name is a usage error (exit 2, one line, "did you mean")
caught before anything is built, run or stored: ``run``, ``compare`` and ``batch run``."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli_helpers import assert_one_line_error, run_cli

ROOT = Path(__file__).resolve().parents[1]
CASE = str(ROOT / "cases" / "demo-caret-zero" / "case.yaml")


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        (
            ["--harness", "claude-cod", "--stub", "gold"],
            ["'claude-cod'", "did you mean claude-code"],
        ),
        (["--stub", "golden"], ["'golden'", "did you mean gold"]),
        (["--stub", "gold", "--stub", "chaet"], ["'chaet'", "did you mean cheat"]),
    ],
)
def test_run_refuses_an_unknown_name_before_it_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], fragments: list[str]
) -> None:
    db = tmp_path / "results.db"
    result = run_cli(capsys, "--db", str(db), "run", CASE, "--out", str(tmp_path / "runs"), *args)
    assert_one_line_error(result, *fragments)
    assert not db.exists() and not (tmp_path / "runs").exists()


@pytest.mark.parametrize(
    ("arm", "fragments"),
    [
        ("name=x,stub=golden", ["stub:", "did you mean gold"]),
        ("name=x,harness=claude-cod,stub=gold", ["harness:", "did you mean claude-code"]),
    ],
)
def test_compare_refuses_a_typo_before_the_comparison_is_fixed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], arm: str, fragments: list[str]
) -> None:
    """A typo used to fix the comparison in the store with the wrong arm, then fail; fixing
    the typo was then refused. Now nothing is stored, and the corrected command runs."""
    db = tmp_path / "results.db"
    args = ["--db", str(db), "compare", "--a", arm, "--b", "name=y,stub=gold", CASE]
    assert_one_line_error(run_cli(capsys, *args), *fragments)
    assert not db.exists()


def test_a_batch_plan_with_a_typo_is_refused_before_anything_is_stored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A typo'd stub in a plan used to be recorded as infra_fail, retried, and end the batch
    with exit 1 and no reason."""
    plan = tmp_path / "plan.yaml"
    plan.write_text(
        "schema: 1\nname: demo\n"
        f"cases: [{CASE}]\n"
        "candidates: [{name: gold, stub: golden}, {name: idle, stub: idle}]\nruns: 1\n"
    )
    db = tmp_path / "results.db"
    args = ["--db", str(db), "batch", "run", str(plan), "--out", str(tmp_path / "runs")]
    assert_one_line_error(run_cli(capsys, *args), str(plan), "did you mean gold")
    assert not db.exists() and not (tmp_path / "runs").exists()


def test_redteam_refuses_an_unknown_attack_as_a_usage_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    result = run_cli(capsys, "redteam", "run", CASE, "--attack", "spoof-conftes")
    assert_one_line_error(result, "'spoof-conftes'", "did you mean spoof-conftest")


KEYS = ("REPLAY_OPENAI_API_KEY", "OPENAI_API_KEY", "REPLAY_ANTHROPIC_API_KEY", "ANTHROPIC_API_KEY")


def test_a_real_model_without_its_key_stops_before_anything_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``replay run --model gpt-4.1`` without a key ran 28 s, exited 0 and showed three
    transport_fail runs (the wire retries); compare and batch the same. Now each stops at
    once, naming the variable; with --model-upstream or a stub no key is asked for."""
    for name in KEYS:
        monkeypatch.delenv(name, raising=False)
    db = tmp_path / "results.db"
    runs = tmp_path / "runs"
    result = run_cli(capsys, "--db", str(db), "run", CASE, "--model", "gpt-4.1", "--out", str(runs))
    assert_one_line_error(result, "model key for reference", "export OPENAI_API_KEY=")
    arm = "name=b,harness=claude-code,model=sonnet"  # the harness names the provider
    args = ["--db", str(db), "compare", "--a", "name=a,stub=gold", "--b", arm, CASE]
    assert_one_line_error(run_cli(capsys, *args), "export ANTHROPIC_API_KEY=")
    plan = tmp_path / "plan.yaml"
    plan.write_text(
        f"schema: 1\nname: demo\ncases: [{CASE}]\n"
        "candidates: [{name: gold, stub: gold}, {name: real, model: gpt-4.1}]\nruns: 1\n"
    )
    batch = run_cli(capsys, "--db", str(db), "batch", "run", str(plan), "--out", str(runs))
    assert_one_line_error(batch, "model key for reference")
    assert not db.exists() and not runs.exists()
