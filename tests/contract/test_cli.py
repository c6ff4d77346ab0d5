"""``replay contract`` as a user runs it: the installed entry point, from the repository root,
with no ``PYTHONPATH`` (``contract_tests`` is a directory of the checkout, not a package)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from replay.cli.contract import known_gaps
from replay.contract.runner import RECORDINGS

ROOT = RECORDINGS.parents[1]
REPLAY = Path(sys.executable).with_name("replay")
"""The console script pip installed beside this interpreter (``.venv/bin/replay``)."""


def replay(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH" and "CONTRACT" not in k}
    return subprocess.run(
        [str(REPLAY), *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
    )


def test_run_and_record_work_without_pythonpath(tmp_path: Path) -> None:
    assert REPLAY.is_file(), f"no console script at {REPLAY}: pip install -e ."
    ran = replay("contract", "run", "--service", "all", "--target", "fake")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "ok   github/issue_history" in ran.stdout and "ok   linear/errors" in ran.stdout
    recorded = replay(
        "contract", "record", "--stand-in", "--service", "slack", "--recordings", str(tmp_path)
    )
    assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    assert (tmp_path / "slack" / "errors.json").is_file()


def test_known_gaps_are_every_services_list() -> None:
    gaps = known_gaps()
    assert {g.service for g in gaps} == {"github", "linear", "slack"}
    assert all(g.why for g in gaps)
