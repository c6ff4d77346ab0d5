"""A run refuses a sandbox whose image holds the answer: the image audit runs before the harness
starts (cached per image), as the snapshot audit does for the world."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
import yaml

from replay.base.case import load_case, read_patch
from replay.images.audit import case_markers, comment_only, fix_contexts
from replay.images.base import ensure_case_base_image
from replay.images.env import ENV_REPOSITORY, build_env_image
from replay.run.runner import RunError, RunOptions, run_case
from replay.runtime import ContainerSpec, Runtime
from replay.world import running_world

ROOT = Path(__file__).resolve().parents[2]
CARET = ROOT / "cases" / "demo-caret-zero" / "case.yaml"


def test_a_run_refuses_an_environment_image_holding_a_gold_line(
    tmp_path: Path, runtime: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REPLAY_AUDIT_CACHE", str(tmp_path / "audit-cache"))
    case = load_case(CARET)
    ensure_case_base_image(runtime, case.environment)
    with tempfile.TemporaryDirectory() as tmp, running_world(case.snapshot, Path(tmp)) as gw:
        env = build_env_image(case, runtime, gw)
    # The same case under another id, whose environment image is the demo's with a copy of a
    # gold line planted in dist-packages with the lines around it in the fix (as a vendored
    # copy would carry it: a line alone in other code is no leak); the image
    # keeps the recipe label, so the run takes it as the case's environment.
    copy = tmp_path / "case"
    shutil.copytree(CARET.parent, copy)
    data = yaml.safe_load((copy / "case.yaml").read_text())
    data["id"] = "caret-planted"
    data["snapshot"] = str(case.snapshot)
    (copy / "case.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    # A line of code: a comment-only gold line counts only in a copy of the project.
    line = next(m.text for m in case_markers(case) if not comment_only(m.text))
    planted = tmp_path / "planted" / "usr" / "lib" / "python3" / "dist-packages"
    planted.mkdir(parents=True)
    around = sorted(fix_contexts(read_patch(case.gold.patch))[line])
    (planted / "vendored_semver.py").write_text("\n".join([*around[:3], line, *around[3:6]]))
    box = runtime.create(ContainerSpec(image=env.id, command=["sleep", "300"]), "leak-run-test")
    try:
        box.copy_in(tmp_path / "planted" / "usr", "/", owner=(0, 0))
        box.commit(ENV_REPOSITORY, "caret-planted", changes=["LABEL replay.test=planted"])
    finally:
        box.remove()
    try:
        opts = RunOptions(stub="idle", out=tmp_path / "runs", db=str(tmp_path / "r.db"))
        with pytest.raises(RunError, match="the sandbox's image holds the answer") as exc:
            run_case(copy / "case.yaml", opts)
        assert "/usr/lib/python3/dist-packages/vendored_semver.py" in str(exc.value)
        # The clean image of the same case runs.
        (idle,) = run_case(CARET, opts)
        assert idle.outcome == "model_fail"
    finally:
        subprocess.run(
            ["docker", "rmi", "-f", f"{ENV_REPOSITORY}:caret-planted"], capture_output=True
        )
