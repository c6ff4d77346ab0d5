"""``replay doctor`` (issue 35): a missing image and a missing model key are reported with
what to do, and exit 1; the provider's endpoint is probed only with a key, here on loopback
(a test never connects outside this machine)."""

from __future__ import annotations

import shutil
import socket
from pathlib import Path

import pytest
import yaml

from tests.cli_helpers import run_cli

ROOT = Path(__file__).resolve().parents[1]
KEYS = ("REPLAY_OPENAI_API_KEY", "OPENAI_API_KEY", "REPLAY_ANTHROPIC_API_KEY", "ANTHROPIC_API_KEY")


def _unbuilt_case(tmp_path: Path) -> Path:
    """The demo case under an id no image was built for (its files beside it, its snapshot
    where the demo's is)."""
    src = ROOT / "cases" / "demo-caret-zero"
    dest = tmp_path / "cases" / "doctor-unbuilt"
    shutil.copytree(src, dest)
    data = yaml.safe_load((dest / "case.yaml").read_text())
    data["id"] = "doctor-unbuilt"
    data["snapshot"] = str(ROOT / "snapshots" / "demo")
    (dest / "case.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return dest / "case.yaml"


def test_doctor_reports_a_missing_image_and_a_missing_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in KEYS:
        monkeypatch.delenv(name, raising=False)
    case = _unbuilt_case(tmp_path)
    result = run_cli(capsys, "doctor", str(case), "--out", str(tmp_path / "runs"))
    assert result.code == 1, result.out + result.err
    lines = result.out.splitlines()
    assert "ok   docker: Docker Engine answers" in lines
    assert any(
        line.startswith("FIX  image replay-env:doctor-unbuilt: not built: replay image env")
        for line in lines
    ), lines
    assert any(
        line.startswith("FIX  model key for reference (api.openai.com): none of $REPLAY_OPENAI")
        and "export OPENAI_API_KEY=" in line
        for line in lines
    ), lines
    assert not any("model endpoint" in line for line in lines)  # no key: nothing probed
    assert lines[-1].endswith("to fix")


def test_with_a_key_the_endpoint_is_probed_here_on_loopback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-only")
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        args = ["doctor", "--harness", "claude-code", "--out", str(tmp_path / "runs")]
        up = run_cli(capsys, *args, "--model-upstream", f"http://127.0.0.1:{port}")
    assert "ok   model key for claude-code (api.anthropic.com): $ANTHROPIC_API_KEY is set" in up.out
    assert f"ok   model endpoint 127.0.0.1:{port}: accepts connections" in up.out
    down = run_cli(capsys, *args, "--model-upstream", f"http://127.0.0.1:{port}")
    assert f"FIX  model endpoint 127.0.0.1:{port}: no connection" in down.out
    assert down.code == 1
