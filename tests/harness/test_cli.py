"""``replay stub-model serve``: the command a run starts, in a process of its own."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import openai
import pytest
from typer.testing import CliRunner

from replay.base.errors import InputError
from replay.cli.stub_model import app as stub_model_app

SCRIPT = "name: demo\nsteps:\n  - say: Looking.\n    bash: ls -la\n"
LAUNCH = "from replay.cli.stub_model import app; app(prog_name='stub-model')"


def test_serve_prints_its_url_and_injects_the_faults_it_was_given(tmp_path: Path) -> None:
    script = tmp_path / "demo.yaml"
    script.write_text(SCRIPT)
    args = ["serve", "--script", str(script), "--port", "0", "--fault", "503=every:2"]
    proc = subprocess.Popen(
        [sys.executable, "-c", LAUNCH, *args], stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert "stub model 'demo' (1 steps) at http://127.0.0.1:" in line, line
        base = line.split(" at ", 1)[1].split()[0]
        with openai.OpenAI(base_url=f"{base}/v1", api_key="placeholder", max_retries=0) as client:
            first = client.chat.completions.create(
                model="m", messages=[{"role": "user", "content": "go"}]
            )
            assert first.choices[0].message.content == "Looking.\n\n```bash\nls -la\n```"
            with pytest.raises(openai.InternalServerError) as err:
                client.chat.completions.create(
                    model="m", messages=[{"role": "user", "content": "go"}]
                )
            assert err.value.status_code == 503
    finally:
        proc.terminate()
        proc.wait(10)
        if proc.stdout is not None:
            proc.stdout.close()


@pytest.mark.parametrize(
    ("spec", "problem"),
    [("503=3", "less than or equal to 1"), ("teapot=0.1", "KIND one of"), ("503", "KIND=RATE")],
)
def test_a_bad_fault_is_an_input_error(tmp_path: Path, spec: str, problem: str) -> None:
    script = tmp_path / "demo.yaml"
    script.write_text(SCRIPT)
    result = CliRunner().invoke(
        stub_model_app, ["serve", "--script", str(script), "--port", "0", "--fault", spec]
    )
    assert isinstance(result.exception, InputError)
    assert str(result.exception).startswith("--fault: ") and problem in str(result.exception)


def test_a_bad_script_is_an_input_error(tmp_path: Path) -> None:
    script = tmp_path / "bad.yaml"
    script.write_text("name: x\nsteps: [{}]\n")
    result = CliRunner().invoke(stub_model_app, ["serve", "--script", str(script)])
    assert isinstance(result.exception, InputError)
    assert result.exception.field == "steps[0]"
