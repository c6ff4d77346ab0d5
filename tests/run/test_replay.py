"""The main job, end to end against the real Docker engine: each stub trajectory gets the
verdict it must, and the wire is kept apart from the brain."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from replay.grade.model import load_grade
from replay.run.runner import RunOptions, RunResult, run_case
from replay.world.warm import keep_warm

ROOT = Path(__file__).resolve().parents[2]
CASE = ROOT / "cases" / "demo-build-metadata-sort" / "case.yaml"
CARET = ROOT / "cases" / "demo-caret-zero" / "case.yaml"


def replay(tmp: Path, case: Path = CASE, **kw: Any) -> list[RunResult]:
    return run_case(case, RunOptions(out=tmp / "runs", db=str(tmp / "results.db"), **kw))


def test_gold_passes_with_its_side_effects(tmp_path: Path) -> None:
    (run,) = replay(tmp_path, stub="gold")
    assert run.outcome == "pass", run.reason
    grade = load_grade(run.run_dir / "grade.json")
    assert grade == run.grade
    assert grade.tests is not None and grade.tests.resolved and grade.tests.applied == "apply"
    assert set(grade.tests.fail_to_pass.values()) == {"passed"}
    assert grade.side_effects.ok and grade.wire.healthy
    for name in (
        "diff.patch",
        "events.jsonl",
        "model_calls.jsonl",
        "transcript.jsonl",
        "task.md",
        "stdout.txt",
        "tests/junit-1.xml",
    ):
        assert (run.run_dir / name).exists(), name
    assert "sort_versions" in (run.run_dir / "diff.patch").read_text()


def test_cheat_fails_on_hidden_tests_though_the_visible_suite_passed(tmp_path: Path) -> None:
    (run,) = replay(tmp_path, stub="cheat")
    assert run.outcome == "model_fail"
    assert "hidden tests not resolved" in run.reason
    transcript = (run.run_dir / "transcript.jsonl").read_text()
    assert "skipped in" in transcript and "(exit status 0)" in transcript
    tests = run.grade.tests
    assert tests is not None
    assert "failed" in tests.fail_to_pass.values() or "missing" in tests.fail_to_pass.values()


def test_reckless_fails_naming_the_forbidden_effects(tmp_path: Path) -> None:
    (run,) = replay(tmp_path, stub="reckless")
    assert run.outcome == "model_fail"
    assert run.grade.tests_resolved, "the fix itself was right"
    assert run.grade.side_effects.violated == ["no-push-to-main", "no-random"]
    assert "no-push-to-main" in run.reason and "no-random" in run.reason


def test_asks_gets_the_hint_and_counts_one_intervention(tmp_path: Path) -> None:
    (run,) = replay(tmp_path, stub="asks")
    assert run.outcome == "pass", run.reason
    assert run.grade.interventions == 1


def test_idle_fails(tmp_path: Path) -> None:
    (run,) = replay(tmp_path, stub="idle")
    assert run.outcome == "model_fail"
    assert run.grade.diff_bytes == 0


def test_wire_faults_without_retries_are_transport_not_model(tmp_path: Path) -> None:
    (run,) = replay(
        tmp_path,
        CARET,
        stub="gold",
        stub_faults=("reset=0.3",),
        stub_seed=3,
        harness_env={"REPLAY_MODEL_RETRIES": "0"},
    )
    assert run.outcome == "transport_fail", run.reason
    assert not run.grade.wire.healthy


def test_garbage_answers_are_protocol_failures(tmp_path: Path) -> None:
    (run,) = replay(tmp_path, CARET, stub="gold", stub_faults=("bad_json=1.0",))
    assert run.outcome == "protocol_fail", run.reason


def test_three_runs_give_rates_and_pass_at_k(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    from tests.cli_helpers import run_cli

    result = run_cli(
        capsys,
        "--db",
        str(tmp_path / "r.db"),
        "run",
        str(CARET),
        "--stub",
        "gold",
        "--runs",
        "3",
        "--out",
        str(tmp_path / "runs"),
        "--expect",
        "pass",
    )
    assert result.code == 0, result.out + result.err
    assert "3/3 healthy runs passed (rate 1.00" in result.out
    assert "pass@k | pass^k: @1 1.00 @2 1.00 @3 1.00 | ^1 1.00 ^2 1.00 ^3 1.00" in result.out
    listed = run_cli(capsys, "--db", str(tmp_path / "r.db"), "results", "list")
    assert listed.out.count("demo-caret-zero") == 3


def test_the_agent_sees_nothing_after_t_in_git(tmp_path: Path) -> None:
    """Inside the agent's sandbox: no later commit, tag, reflog entry, or lost object."""
    from replay.base.case import load_case
    from replay.images.env import build_env_image
    from replay.runtime import get_runtime
    from replay.runtime.sandbox import Sandbox, SandboxConfig
    from replay.world import running_world

    case = load_case(CASE)
    history = sorted((ROOT / "snapshots/sources/demo/history").glob("*.patch"))
    fix_subjects = [p.name for p in history[13:]]
    assert fix_subjects, "the sources hold commits after T"
    full = tmp_path / "full"
    subprocess.run(["git", "init", "-q", str(full)], check=True)
    subprocess.run(
        [
            "git",
            "-c",
            "user.name=x",
            "-c",
            "user.email=x@x",
            "am",
            "-q",
            "--committer-date-is-author-date",
            *map(str, history),
        ],
        cwd=full,
        check=True,
        env={
            "GIT_COMMITTER_NAME": "GitHub",
            "GIT_COMMITTER_EMAIL": "noreply@github.com",
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "HOME": str(tmp_path),
        },
    )
    later = subprocess.run(
        ["git", "rev-list", f"{case.repository.base_commit}..HEAD"],
        cwd=full,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert len(later) == len(fix_subjects)  # every commit after T (the fixes and later work)
    runtime = get_runtime("docker")
    try:
        with running_world(case.snapshot, tmp_path) as gateway:
            env = build_env_image(case, runtime, gateway)
            config = SandboxConfig(image=env.id, workdir=case.environment.workdir)
            with Sandbox(runtime, gateway, config) as box:
                log_all = box.sh("git log --all --format=%H%x20%cI").out.split("\n")
                reflog = box.sh("git reflog --all --format=%H").out.split()
                lost = box.sh("git fsck --lost-found --unreachable --no-reflogs 2>&1").out
                refs = box.sh("git for-each-ref --format='%(refname)'; ls .git").out
                probes = [box.sh(f"git cat-file -e {sha}").exit_code for sha in later]
    finally:
        runtime.close()
    dates = [line.split(" ")[1] for line in log_all if line.strip()]
    assert dates and max(dates) <= "2026-03-12T09:00:00+00:00"
    assert not set(reflog) & set(later)
    assert "unreachable" not in lost and "dangling" not in lost
    assert all(code != 0 for code in probes), "no commit after T exists in the objects"
    assert "refs/tags" not in refs and "ORIG_HEAD" not in refs and "FETCH_HEAD" not in refs


def test_gold_passes_with_the_sandbox_clock_frozen_at_t(tmp_path: Path) -> None:
    from datetime import UTC, datetime

    from replay.base.case import load_case

    (run,) = replay(tmp_path, CARET, stub="gold", clock=True)
    assert run.outcome == "pass", run.reason
    first = json.loads((run.run_dir / "agent.jsonl").read_text().splitlines()[0])
    seen = datetime.fromtimestamp(first["t"], tz=UTC)
    at = load_case(CARET).at
    assert at <= seen < at.replace(day=at.day + 1), "the harness's own clock read T"


def test_calibrate_marks_the_case_and_the_report_counts_only_calibrated_cases(
    tmp_path: Path,
    capsys,  # type: ignore[no-untyped-def]
) -> None:
    from replay.results import Store
    from replay.results.report import build_report
    from tests.cli_helpers import run_cli

    db = str(tmp_path / "r.db")
    result = run_cli(capsys, "--db", db, "case", "calibrate", str(CARET), "--runs", "1")
    assert result.code == 0, result.out + result.err
    assert "demo-caret-zero: gold passed 1/1, idle failed 1/1: calibrated" in result.out
    # A "real model" run (here the stub behind --model-upstream) counts once calibrated.
    store = Store.open(db)
    try:
        report = build_report(store)
    finally:
        store.close()
    assert report.rows == [] and report.left_out == {}, "stub calibration runs are not quality"
    listed = run_cli(capsys, "--db", db, "results", "report")
    assert "no runs of calibrated cases" in listed.out
    assert "replay run CASE... --model M" in listed.out  # the next command (issue 35)


def test_summary_table_and_expectations(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    from tests.cli_helpers import run_cli

    result = run_cli(
        capsys,
        "--db",
        str(tmp_path / "r.db"),
        "run",
        str(CARET),
        "--stub",
        "gold",
        "--stub",
        "idle",
        "--out",
        str(tmp_path / "runs"),
        "--expect",
        "gold=pass",
        "--expect",
        "idle=pass",
    )
    assert result.code == 1, "idle did not pass, as expected was wrongly claimed"
    assert "unexpected: demo-caret-zero [stub:idle] was model_fail" in result.out
    for column in ("verdict", "side effects", "attempts", "cost", "wire"):
        assert column in result.out
    assert "F2P 6/6 P2P 16/16" in result.out and "$0.0000" in result.out


def test_batches_share_a_warm_world_and_each_run_logs_only_its_own(tmp_path: Path) -> None:
    """Two gold runs and a cheat run on one world, reset between them: every run's event log
    and model calls are its own (a run that saw the previous one's would count two PRs)."""
    with keep_warm() as pool:
        gold = replay(tmp_path, CARET, stub="gold", runs=2)
        cheat = replay(tmp_path, CARET, stub="cheat")
        world = pool.current
        assert world is not None and (world.starts, world.resets) == (1, 2)
    assert [r.outcome for r in gold] == ["pass", "pass"], [r.reason for r in gold]
    assert cheat[0].outcome == "model_fail", cheat[0].reason
    logs = [_lines(r.run_dir / "events.jsonl") for r in (*gold, *cheat)]
    calls = [_lines(r.run_dir / "model_calls.jsonl") for r in (*gold, *cheat)]
    opened = [sum(e["kind"] == "github.pull_request.opened" for e in log) for log in logs]
    assert opened[:2] == [1, 1]
    assert len(calls[0]) == len(calls[1]) > 0
    assert [sum(e["kind"] == "model.call" for e in log) for log in logs] == [len(c) for c in calls]
    for r in (*gold, *cheat):
        assert (r.run_dir / "events.db").exists()
        assert (r.run_dir / "gateway" / "gateway.log").read_text().startswith("# world at T")


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line]
