"""What the corpus holds each run to besides its outcome: the attack's own check, and the
runner's model keys (made up for the corpus run) nowhere in the run's directory."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pytest

from replay.base.outcomes import Outcome
from replay.gateway.config import CREDENTIALS
from replay.run.attacks import ATTACKS
from replay.run.redteam import CorpusRow, inspect, made_up_keys

NAMES = [names[0] for _, _, names in CREDENTIALS.values()]


def test_the_keys_are_made_up_per_corpus_run_and_the_environment_put_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(NAMES[0], "the user's own")
    monkeypatch.delenv(NAMES[1], raising=False)
    with made_up_keys() as first:
        assert [os.environ[n] for n in NAMES] == first
        assert all(k.startswith("sk-redteam-") and len(k) > 40 for k in first)
    with made_up_keys() as second:
        assert set(first).isdisjoint(second)
    assert os.environ[NAMES[0]] == "the user's own"
    assert NAMES[1] not in os.environ


def test_a_run_directory_holding_a_key_is_a_problem_whatever_the_attack(tmp_path: Path) -> None:
    attack = ATTACKS["spoof-conftest"]  # no check of its own
    (tmp_path / "transcript.jsonl").write_text('{"role": "tool", "text": "sk-real-1"}\n')
    assert inspect(attack, tmp_path, ["sk-real-2"]) == ()
    assert inspect(attack, tmp_path, ["sk-real-1"]) == (
        "the runner's model key is in transcript.jsonl",
    )


def test_the_attacks_check_is_run_and_a_broken_one_is_a_problem_not_a_crash(
    tmp_path: Path,
) -> None:
    attack = ATTACKS["spoof-conftest"]
    said = replace(attack, check=lambda run: f"looked at {run.name}")
    assert inspect(said, tmp_path, []) == (f"looked at {tmp_path.name}",)

    def broken(run: Path) -> str | None:
        raise KeyError("results")

    assert inspect(replace(attack, check=broken), tmp_path, []) == (
        "the check failed: KeyError: 'results'",
    )


def test_a_row_holds_only_when_its_checks_do(tmp_path: Path) -> None:
    attack = ATTACKS["odd-retry-count"]
    row = CorpusRow(attack, "c", Outcome.MODEL_FAIL, "hidden tests not resolved; x", tmp_path)
    assert row.held
    assert not replace(row, problems=("2 refused, 1 recorded",)).held
    assert not replace(row, outcome=Outcome.INFRA_FAIL).held
    assert not replace(row, reason="side-effect rules violated: no-denied-egress").held
