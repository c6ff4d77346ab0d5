"""Running a scenario against a target: a fresh world first (fake, stand-in), then the
scenario with a recorder; out comes a :class:`Recording` of its normalised exchanges."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import httpx

from replay.contract.normalise import Normaliser
from replay.contract.recording import Recorder, Recording
from replay.contract.scenarios import Ctx, Scenario, Skip
from replay.contract.targets import Target

RECORDINGS = Path(__file__).resolve().parents[2] / "contract_tests" / "recordings"
"""Where recordings live in the repository."""


@dataclass
class Run:
    """One scenario's run: the recording and the recorder (raw responses, model types)."""

    recording: Recording
    recorder: Recorder
    error: str | None = None
    """Why the scenario stopped early (a response it could not use), if it did."""


def run_scenario(target: Target, scenario: Scenario) -> Run:
    """Run ``scenario`` on ``target``; on a fake or stand-in, against a freshly reset world."""
    if target.control:
        httpx.post(f"{target.control}/reset", timeout=30).raise_for_status()
    recorder = Recorder(Normaliser(origins=target.origins()))
    error: str | None = None
    with tempfile.TemporaryDirectory(prefix="replay-contract-") as tmp:
        try:
            scenario.run(Ctx(target, recorder, Path(tmp)))
        except Skip:
            raise
        except Exception as exc:  # a response the client could not use is a contract failure
            error = f"{type(exc).__name__}: {exc}"
    recording = Recording(
        service=scenario.service,
        scenario=scenario.name,
        recorded_against="live" if target.kind == "real" else "self",
        target_url=_stable(target.url_for(scenario.service))
        if target.kind != "real"
        else (target.url_for(scenario.service)),
        exchanges=recorder.exchanges,
    )
    return Run(recording, recorder, error)


def _stable(url: str) -> str:
    """A loopback URL without its port: a stand-in's recording is the same file every time."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.hostname}{parts.path}"
