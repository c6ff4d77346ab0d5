"""The live mode, exercised for real against a stand-in: the project's fake served by
uvicorn on another loopback port and named only through the environment, exactly as the
real services would be (``REPLAY_CONTRACT_LIVE=1``, tokens, sandbox names, base URLs).

Recording runs the live code path (target from the environment, record, normalise, write),
then an offline run of a separate fake compares with what was just written; and the
committed recordings are reproduced by a fresh stand-in recording, difference for
difference (none)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from replay.cli.contract import app as contract_app
from replay.cli.contract import known_gaps
from replay.contract.recording import Recording, compare, load
from replay.contract.runner import RECORDINGS
from replay.contract.scenarios import all_scenarios
from replay.contract.suite import check
from replay.contract.targets import (
    ContractSetupError,
    fake_target,
    live_requested,
    live_target,
    serve_world,
    stand_in_env,
)


def test_record_against_a_stand_in_then_compare_the_fake(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    recordings = tmp_path / "recordings"
    gaps = known_gaps()
    with serve_world() as stand_in:
        for name, value in stand_in_env(stand_in).items():
            monkeypatch.setenv(name, value)
        assert live_requested()
        for service in ("github", "slack", "linear"):
            target = live_target(service)
            assert target.kind == "stand-in" and target.is_live
            for scenario in all_scenarios(service):
                outcome = check(target, scenario, gaps, recordings, record=True)
                assert outcome.ok, "\n".join(outcome.lines())
    written = sorted(p.relative_to(recordings).as_posix() for p in recordings.glob("*/*.json"))
    assert written == sorted(
        p.relative_to(RECORDINGS).as_posix() for p in RECORDINGS.glob("*/*.json")
    )
    with serve_world() as fake:
        target = fake_target(fake)
        for scenario in all_scenarios():
            fresh = load(recordings, scenario.service, scenario.name)
            assert fresh is not None and fresh.recorded_against == "self"
            outcome = check(target, scenario, gaps, recordings)
            assert outcome.ok, "\n".join(outcome.lines())
            committed = load(RECORDINGS, scenario.service, scenario.name)
            assert committed is not None
            if committed.recorded_against == "self":
                # A regression snapshot of the fake: reproduced exactly. (A committed live
                # recording is compared above, with the known gaps, like any other.)
                assert compare(committed, fresh, []) == []
                assert committed.model_dump() == fresh.model_dump()


def test_live_target_names_what_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("GITHUB_TOKEN", "REPLAY_CONTRACT_GITHUB_REPO", "REPLAY_CONTRACT_GITHUB_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("REPLAY_CONTRACT_LIVE", "1")
    with pytest.raises(ContractSetupError, match="GITHUB_TOKEN, REPLAY_CONTRACT_GITHUB_REPO"):
        live_target("github")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_x")
    monkeypatch.setenv("REPLAY_CONTRACT_GITHUB_REPO", "me/sandbox")
    real = live_target("github")
    assert (real.kind, real.github_url, real.control) == ("real", "https://api.github.com", None)


def test_cli_record_stand_in_and_run(tmp_path: Path) -> None:
    runner = CliRunner()
    done = runner.invoke(
        contract_app, ["record", "--stand-in", "--service", "slack", "--recordings", str(tmp_path)]
    )
    assert done.exit_code == 0, done.output
    assert sorted(p.name for p in (tmp_path / "slack").iterdir()) == [
        "errors.json",
        "scope_and_rate_limit.json",
        "thread_and_reactions.json",
    ]
    ran = runner.invoke(contract_app, ["run", "--service", "slack", "--recordings", str(tmp_path)])
    assert ran.exit_code == 0, ran.output
    assert "ok   slack/thread_and_reactions" in ran.output
    (tmp_path / "slack" / "errors.json").unlink()
    missing = runner.invoke(
        contract_app, ["run", "--service", "slack", "--recordings", str(tmp_path)]
    )
    assert missing.exit_code == 1 and "no recording" in missing.output
    bad = runner.invoke(contract_app, ["run", "--service", "jira"])
    assert bad.exit_code == 2 and "unknown service 'jira'" in bad.output


def test_a_committed_live_recording_is_read_as_evidence(tmp_path: Path) -> None:
    """A recording made against the real service (``recorded_against: live``) is compared
    like any other and counted as evidence, apart from the self-recorded snapshots."""
    recordings = tmp_path / "recordings"
    shutil.copytree(RECORDINGS / "slack", recordings / "slack")
    path = recordings / "slack" / "errors.json"
    live = Recording.model_validate_json(path.read_text()).model_copy(
        update={"recorded_against": "live", "target_url": "https://slack.com/api/"}
    )
    path.write_text(live.to_json())
    ran = CliRunner().invoke(
        contract_app, ["run", "--service", "slack", "--recordings", str(recordings)]
    )
    assert ran.exit_code == 0, ran.output
    assert "live recordings (the vendor's API, evidence): 1/1 scenarios reproduced" in ran.output
    assert (
        "self recordings (the fake's regression snapshots, not evidence): 2/2 scenarios "
        "reproduced" in ran.output
    )
