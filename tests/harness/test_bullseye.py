"""A pip harness on a case whose Python is older than the harness allows: mini-swe-agent
(Requires-Python >= 3.10) on tomli-error-module (Debian bullseye, the project's Python 3.9).

Against the real Docker engine: the harness layer brings bookworm's Python 3.11 into
``/opt/harness/python`` (the env image's python3 is 3.9) and makes the venv from it, without
``tomllib`` (tomli as of 2023, the case's future: the image audit would refuse the run); the
project's own Python stays 3.9, the one the agent's commands and the hidden tests run; gold
passes and idle fails. The other pip harnesses take the same path (``replay harness matrix``
over every case shows them); this one, the cheapest to install, stands for them in CI.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from replay.base.case import load_case
from replay.harness.install import PYTHON_HOME, VENV, HarnessImage, env_python, venv_python
from replay.harness.spec import HarnessSpec, load_harness
from replay.images.env import EnvImage
from replay.run.runner import RunOptions, RunResult, run_case
from replay.runtime import ContainerSpec, Runtime

ROOT = Path(__file__).resolve().parents[2]
CASE = ROOT / "cases" / "tomli-error-module" / "case.yaml"


@pytest.fixture(scope="module")
def spec() -> tuple[HarnessSpec, Path]:
    return load_harness("mini-swe-agent")


@pytest.fixture(scope="module")
def runs(harness: HarnessImage, tmp_path_factory: pytest.TempPathFactory) -> dict[str, RunResult]:
    tmp = tmp_path_factory.mktemp("bullseye")
    out: dict[str, RunResult] = {}
    for stub in ("gold", "idle"):
        options = RunOptions(
            harness="mini-swe-agent",
            stub=stub,
            out=tmp / "runs",
            db=str(tmp / "r.db"),
            wire_retries=0,
        )
        (out[stub],) = run_case(CASE, options)
    return out


def test_the_case_is_on_bullseye_s_python(runtime: Runtime, env_image: EnvImage) -> None:
    assert load_case(CASE).environment.base_image == "replay-base:bullseye"
    assert env_python(runtime, env_image.id) == "3.9"
    release = venv_python(load_harness("mini-swe-agent")[0], "3.9")
    assert release is not None and release.name == "bookworm"


def test_the_venv_runs_bookworm_s_python_and_the_system_keeps_its_own(
    runtime: Runtime, harness: HarnessImage
) -> None:
    box = runtime.create(ContainerSpec(image=harness.id, command=["sleep", "120"]), "bullseye")
    try:
        mine = box.exec(
            [f"{VENV}/bin/python", "-c", "import sys; print(sys.version_info[:2], sys.base_prefix)"]
        )
        system = box.exec(["python3", "-c", "import sys; print(sys.version_info[:2])"])
        which = box.exec(["sh", "-c", "command -v python3 python"])
        version = box.exec(
            [
                f"{VENV}/bin/python",
                "-c",
                "import importlib.metadata as m; print(m.version('mini-swe-agent'))",
            ]
        )
        tomllib = box.exec([f"{VENV}/bin/python", "-c", "import tomllib"])
        stdlib = box.exec([f"{VENV}/bin/python", "-c", "import json, ssl, sqlite3, ctypes"])
    finally:
        box.remove()
    assert mine.exit_code == 0, mine.out + mine.err
    assert mine.out.split() == ["(3,", "11)", f"{PYTHON_HOME}/usr"]
    assert system.out.strip() == "(3, 9)"
    # Nothing of the harness is on the system's paths.
    assert which.exit_code == 0 and PYTHON_HOME not in which.out and VENV not in which.out
    assert version.out.strip() == "2.4.6", version.err
    # Its standard library is whole but for tomllib, tomli as of 2023: this case's future.
    assert stdlib.exit_code == 0, stdlib.err
    assert tomllib.exit_code == 1 and "No module named 'tomllib'" in tomllib.err


def test_gold_passes_and_idle_fails(runs: dict[str, RunResult]) -> None:
    gold, idle = runs["gold"], runs["idle"]
    assert gold.outcome == "pass", gold.reason
    assert gold.grade.harness == "mini-swe-agent" and gold.grade.harness_exit == 0
    assert gold.grade.tests is not None and gold.grade.tests.resolved
    assert gold.grade.side_effects.ok and gold.grade.attempts.prs_opened == 1
    assert idle.outcome == "model_fail", idle.reason
    assert idle.grade.tests is not None and not idle.grade.tests.resolved
    for run in runs.values():
        events = (run.run_dir / "events.jsonl").read_text()
        assert '"egress.denied"' not in events
