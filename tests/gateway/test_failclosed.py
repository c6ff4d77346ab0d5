"""Fail closed: an exception in any gateway addon kills its request and marks the run invalid.

mitmproxy's own safecall logs an addon's exception and lets the flow go on; ours must not.
The check runs in the gateway's venv, where mitmproxy is installed.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.gateway.conftest import DEMO, GATEWAY_PYTHON, ROOT


def test_a_crashing_addon_kills_the_flow_and_marks_the_run_invalid() -> None:
    script = Path(__file__).with_name("failclosed_check.py")
    done = subprocess.run(
        [str(GATEWAY_PYTHON), str(script), str(DEMO)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["live_killed"] and result["answered_killed"]
    assert len(result["invalid"]) == 2
    assert "Broken.request: RuntimeError: bug in an addon" in result["invalid"][0]
    assert result["events"] == [
        ["gateway.addon_failed", "Broken.request"],
        ["gateway.addon_failed", "Broken.response"],
    ]
    assert result["crash_records"] == 1
    assert result["key_in_crash_record"] is False, "the runner's key never lands in the log"


def test_the_gateway_venv_runs_the_cli_without_the_clients_extra() -> None:
    """mitmproxy's venv cannot hold httpx; commands that need the clients say so clearly."""
    for argv in (["contract", "run"], ["snapshot", "capture", "x"], ["case", "create", "x"]):
        done = subprocess.run(
            [str(GATEWAY_PYTHON), "-m", "replay", *argv],
            capture_output=True,
            text=True,
            cwd=ROOT,
            check=False,
            timeout=120,
        )
        assert done.returncode == 1, done.stderr
        assert "pip install 'replay[clients]'" in done.stderr
        assert "Traceback" not in done.stderr


def test_a_fake_that_raises_answers_500_and_does_not_void_the_run() -> None:
    """A fake's bug is recorded as the world's error; it must not let an agent void its run."""
    script = Path(__file__).with_name("world_error_check.py")
    done = subprocess.run(
        [str(GATEWAY_PYTHON), str(script), str(DEMO)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    answers = result["answers"]
    assert [(a["status"], a["killed"], a["invalid"]) for a in answers] == [(500, False, [])] * 3
    # Behind the fake's own net, the agent gets GitHub's own 5xx shape, not a traceback.
    assert "Internal Server Error" not in answers[2]["body"]
    assert json.loads(answers[2]["body"])["message"]
    kinds = [e["kind"] for e in result["events"]]
    assert kinds == ["gateway.world_error"] * 3, "the world's defect is recorded every time"
    errors = [e["data"]["error"] for e in result["events"]]
    assert errors[0].startswith("OverflowError") and errors[1].startswith("UnicodeEncodeError")
    assert errors[2].startswith("OverflowError"), "what the net caught reaches the record"
