"""mini-swe-agent, installed unmodified from today's PyPI into its own prefix, against the stub.

Against the real Docker engine: the harness layer is built once (the wheelhouse and the image
are cached, so later sessions reuse them), the gold trajectory played to mini-swe-agent reaches
the reference harness's verdict with no denied egress, its installed files match the wheels'
RECORDs, and neither the harness's packages nor the repository's (as of T) leak into the other.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from replay.harness.install import (
    COMPLETE,
    HARNESS_REPOSITORY,
    VENV,
    HarnessImage,
    HarnessInstallError,
    audit_wheel,
    download_wheels,
    ensure_harness_image,
    venv_python,
    wheelhouse_key,
    wheels,
)
from replay.harness.spec import HarnessSpec, StubHints, load_harness
from replay.harness.stub.script import Script
from replay.images.env import EnvImage
from replay.run.runner import RunOptions, RunResult, run_case
from replay.runtime import Container, ContainerSpec, Runtime

ROOT = Path(__file__).resolve().parents[2]
CASE = ROOT / "cases" / "demo-caret-zero" / "case.yaml"
FINISH = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"


@pytest.fixture(scope="module")
def spec() -> tuple[HarnessSpec, Path]:
    return load_harness("mini-swe-agent")


@pytest.fixture()
def box(runtime: Runtime, harness: HarnessImage) -> Iterator[Container]:
    """A container of the harness image with no network at all."""
    c = runtime.create(ContainerSpec(image=harness.id, command=["sleep", "300"]), "oss-harness")
    try:
        yield c
    finally:
        c.remove()


def sh(c: Container, script: str) -> tuple[int | None, str]:
    r = c.exec(["sh", "-c", script])
    return r.exit_code, r.out + r.err


def replay(tmp: Path, harness: str) -> RunResult:
    (run,) = run_case(
        CASE, RunOptions(harness=harness, stub="gold", out=tmp / "runs", db=str(tmp / "r.db"))
    )
    return run


def events(run: RunResult) -> list[dict[str, Any]]:
    lines = (run.run_dir / "events.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


# ----------------------------------------------------------------------------- the stub


def test_finish_hint_appends_the_harness_s_finishing_command() -> None:
    script = Script.model_validate({"name": "gold", "steps": [{"bash": "true"}], "final": "ok"})
    played = StubHints(finish_bash=FINISH).apply(script)
    assert [s.bash for s in played.steps] == ["true", FINISH]
    assert StubHints().apply(script) is script
    texted = StubHints(text_action="<cmd>{command}</cmd>").apply(script)
    assert texted.text_action == "<cmd>{command}</cmd>"
    with pytest.raises(ValueError, match="command"):
        StubHints(text_action="no placeholder").apply(script)


def test_the_spec_pins_a_version_and_runs_the_cli_non_interactively(
    spec: tuple[HarnessSpec, Path],
) -> None:
    s = spec[0]
    assert s.install.pip == ["mini-swe-agent==2.4.6"]
    assert s.stub.finish_bash == FINISH
    argv = s.argv(task="/r/task.md", workdir="/w", transcript="/r/t.json", model="gpt-4.1")
    assert argv[-3:] == ["gpt-4.1", "/r/task.md", "/r/t.json"]
    assert "--yolo" in argv[2] and "--exit-immediately" in argv[2]
    assert s.env["LITELLM_LOCAL_MODEL_COST_MAP"] == "True"


# ----------------------------------------------------------------------------- the layer


def test_a_pip_harness_brings_bookworm_s_python_unless_the_env_image_has_3_11() -> None:
    mini, _ = load_harness("mini-swe-agent")
    for name in ("mini-swe-agent", "aider", "claude-code"):
        s, _ = load_harness(name)
        # bookworm's env images: nothing brought, the venv is made from their python3.
        assert venv_python(s, "3.11") is None
        # bullseye's 3.9, a newer one, or an image without python3: bookworm's 3.11.
        for env in ("3.9", "3.13", None):
            release = venv_python(s, env)
            assert release is not None and (release.name, release.python_version) == (
                "bookworm",
                "3.11",
            )
    # A spec's own install.python wins on every image; a spec without pip brings nothing.
    openhands, _ = load_harness("openhands")
    for env in ("3.9", "3.11", None):
        assert getattr(venv_python(openhands, env), "name", None) == "trixie"
        assert venv_python(load_harness("reference")[0], env) is None
    assert mini.install.python is None


def test_a_complete_wheelhouse_is_reused_and_a_failed_download_leaves_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[list[str]] = []

    def pip(cmd: list[str], **kw: Any) -> subprocess.CompletedProcess[str]:
        calls.append(cmd)
        return subprocess.CompletedProcess(cmd, 1, "", "ERROR: No matching distribution")

    monkeypatch.setattr(subprocess, "run", pip)
    done = tmp_path / wheelhouse_key(["x==1"])
    done.mkdir()
    (done / COMPLETE).write_text("{}")
    assert download_wheels(["x==1"], tmp_path) == done
    assert calls == []
    with pytest.raises(HarnessInstallError, match="No matching distribution"):
        download_wheels(["y==1"], tmp_path)
    (cmd,) = calls
    assert cmd[-1] == "y==1" and "--only-binary=:all:" in cmd and "--python-version" in cmd
    assert sorted(p.name for p in tmp_path.iterdir()) == [done.name]


def test_the_harness_image_is_cached_by_env_spec_and_wheels(
    runtime: Runtime, env_image: EnvImage, harness: HarnessImage, spec: tuple[HarnessSpec, Path]
) -> None:
    assert harness.reference == f"{HARNESS_REPOSITORY}:mini-swe-agent-{harness.key}"
    again = ensure_harness_image(runtime, spec[0], spec[1], env_image.id)
    assert not again.built and again.id == harness.id
    assert download_wheels(spec[0].install.pip) == harness.wheelhouse
    names = [w.name for w in wheels(harness.wheelhouse)]
    assert "mini_swe_agent-2.4.6-py3-none-any.whl" in names
    assert any(n.startswith("litellm-") for n in names)


def test_installed_files_match_the_wheels_records(box: Container, harness: HarnessImage) -> None:
    for prefix in ("mini_swe_agent-", "litellm-"):
        (whl,) = [w for w in wheels(harness.wheelhouse) if w.name.startswith(prefix)]
        assert audit_wheel(box, whl) == [], whl.name
    # The audit does catch a changed file.
    where = f"{VENV}/lib/python3.11/site-packages/minisweagent/__init__.py"
    code, out = sh(box, f"echo '# patched' >> {where}")
    assert code == 0, out
    (whl,) = [w for w in wheels(harness.wheelhouse) if w.name.startswith("mini_swe_agent-")]
    assert [bad.split(":")[0] for bad in audit_wheel(box, whl)] == ["minisweagent/__init__.py"]


def test_harness_and_repository_environments_do_not_leak(
    runtime: Runtime, env_image: EnvImage, box: Container
) -> None:
    # The harness's packages are not in the system Python the repository uses...
    code, out = sh(box, "python3 -c 'import litellm'")
    assert code == 1 and "No module named 'litellm'" in out
    code, out = sh(box, "command -v mini")
    assert code != 0, out
    # ...and the repository's (as of T) are not in the harness's venv.
    for module in ("semverkit", "pytest"):
        code, out = sh(box, f"{VENV}/bin/python -c 'import {module}'")
        assert code == 1 and f"No module named '{module}'" in out
    code, out = sh(box, f"{VENV}/bin/mini --help")
    assert code == 0 and "--yolo" in out, out
    # The system Python's packages are exactly the env image's: pytest still at its pin of T.
    listing = "python3 -m pip list --format=json --disable-pip-version-check"
    code, in_harness = sh(box, listing)
    assert code == 0, in_harness
    env_box = runtime.create(ContainerSpec(image=env_image.id, command=["sleep", "300"]), "env")
    try:
        code, in_env = sh(env_box, listing)
    finally:
        env_box.remove()
    assert json.loads(in_harness) == json.loads(in_env)
    assert {"name": "pytest", "version": "8.3.5"} in json.loads(in_harness)


# ----------------------------------------------------------------------------- the run


def test_gold_passes_as_with_the_reference_harness(tmp_path: Path, runtime: Runtime) -> None:
    mini = replay(tmp_path / "mini", "mini-swe-agent")
    reference = replay(tmp_path / "reference", "reference")
    assert mini.outcome == reference.outcome == "pass", (mini.reason, reference.reason)
    assert mini.grade.harness == "mini-swe-agent"
    # The harness ran from its own image, made on the env image the run (and grading) used.
    labels = runtime.image_labels(mini.grade.harness_image or "")
    assert labels["replay.harness"] == "mini-swe-agent" and labels["replay.env"] == mini.grade.image
    assert reference.grade.harness_image is None
    kinds = [e["kind"] for e in events(mini)]
    assert "egress.denied" not in kinds, [e for e in events(mini) if e["kind"] == "egress.denied"]
    assert kinds.count("github.pull_request.opened") == 1
    # Every turn parsed: no format-error retries, the run ended on mini's own submit command.
    wire = mini.grade.wire
    assert wire.healthy and wire.protocol_failed == 0
    # The same number of turns: the reference ends on the stub's text answer, mini on its
    # submit command in place of it.
    assert wire.logical_calls == reference.grade.wire.logical_calls
    trajectory = json.loads((mini.run_dir / "transcript.traj.json").read_text())
    assert trajectory["info"]["exit_status"] == "Submitted"
    assert trajectory["info"]["mini_version"] == "2.4.6"
    assert not any(
        m.get("extra", {}).get("interrupt_type") == "FormatError" for m in trajectory["messages"]
    )
    assert mini.grade.harness_exit == 0
    assert (mini.run_dir / "diff.patch").read_text() == (
        reference.run_dir / "diff.patch"
    ).read_text()
