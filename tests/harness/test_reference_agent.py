"""The reference harness against the stub model: tool calls run, transcripts written, and
the wire and protocol failures end the run with their own exit statuses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from replay.harness.spec import ExitCodes, HarnessExit, UnknownHarness, load_harness
from replay.harness.stub.app import StubConfig, make_stub_app
from replay.harness.stub.faults import Fault
from replay.harness.stub.script import Script
from tests.harness.server import serving

AGENT = Path(__file__).resolve().parents[2] / "replay" / "harness" / "reference" / "agent.py"


def run_agent(base: str, tmp: Path, *extra: str) -> tuple[int, list[dict]]:
    (tmp / "task.md").write_text("Create out.txt saying hello.")
    work = tmp / "work"
    work.mkdir(exist_ok=True)
    transcript = tmp / "transcript.jsonl"
    transcript.unlink(missing_ok=True)
    env = {**os.environ, "OPENAI_BASE_URL": base + "/v1", "OPENAI_API_KEY": "sk-replay-placeholder"}
    done = subprocess.run(
        [
            sys.executable,
            str(AGENT),
            "--task",
            str(tmp / "task.md"),
            "--workdir",
            str(work),
            "--transcript",
            str(transcript),
            "--timeout",
            "5",
            *extra,
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    lines = [json.loads(line) for line in transcript.read_text().splitlines()]
    return done.returncode, lines


def script(**kw) -> Script:  # type: ignore[no-untyped-def]
    return Script.model_validate({"name": "t", **kw})


def test_tool_calls_run_and_the_final_answer_ends_the_run(tmp_path: Path) -> None:
    stub = make_stub_app(
        StubConfig(
            script=script(
                steps=[
                    {"say": "Writing the file.", "bash": "echo hello > out.txt && cat out.txt"},
                    {"say": "Done: out.txt says hello."},
                ]
            )
        )
    )
    with serving(stub) as base:
        code, log = run_agent(base, tmp_path)
    assert code == 0
    assert (tmp_path / "work" / "out.txt").read_text() == "hello\n"
    (tool,) = [e for e in log if e["kind"] == "tool"]
    assert tool["command"] == "echo hello > out.txt && cat out.txt"
    assert "hello" in tool["output"] and "(exit status 0)" in tool["output"]
    assert log[-1] == {**log[-1], "kind": "stop", "reason": "final"}


def test_a_command_longer_than_one_argument_may_be_runs_whole(tmp_path: Path) -> None:
    """Found by the second held-out corpus (emoji 2021): the gold stub writes its 300 KB
    patch with one heredoc, and ``bash -lc COMMAND`` failed with "Argument list too long"
    (Linux caps one argument at 128 KiB), so the gold run changed nothing."""
    big = "".join(f"line {i:06d} of a large file\n" for i in range(12_000))  # ~300 KB
    command = f"cat > big.txt <<'REPLAY_EOF'\n{big}REPLAY_EOF\nwc -l < big.txt"
    assert len(command.encode()) > 128 * 1024
    stub = make_stub_app(StubConfig(script=script(steps=[{"bash": command}, {"say": "Done."}])))
    with serving(stub) as base:
        code, log = run_agent(base, tmp_path)
    assert code == 0
    assert (tmp_path / "work" / "big.txt").read_text() == big
    (tool,) = [e for e in log if e["kind"] == "tool"]
    assert "12000" in tool["output"] and "(exit status 0)" in tool["output"]


def test_step_limit(tmp_path: Path) -> None:
    stub = make_stub_app(StubConfig(script=script(steps=[{"bash": "true"}] * 5)))
    with serving(stub) as base:
        code, log = run_agent(base, tmp_path, "--max-steps", "2")
    assert code == 3 and log[-1]["reason"] == "max_steps"


@pytest.mark.parametrize(
    ("kind", "exit_code", "reason"),
    [
        ("http_503", 4, "transport"),
        ("reset", 4, "transport"),
        ("bad_json", 5, "protocol"),
    ],
)
def test_wire_and_protocol_failures_have_their_own_exit(
    tmp_path: Path, kind: str, exit_code: int, reason: str
) -> None:
    stub = make_stub_app(
        StubConfig(
            script=script(steps=[{"bash": "true"}]),
            faults=[Fault.model_validate({"kind": kind, "rate": 1.0})],
        )
    )
    with serving(stub) as base:
        code, log = run_agent(base, tmp_path, "--retries", "1")
    assert code == exit_code, log
    assert log[-1]["reason"] == reason
    # The status the agent exits with is the one its spec declares for that failure.
    spec, _ = load_harness("reference")
    assert spec.exit_codes.meaning(code) is HarnessExit(reason)
    if reason == "transport":
        assert [e["attempt"] for e in log if e["kind"] == "model_error"] == [0, 1]


def test_builtin_spec_by_name_and_unknown_names() -> None:
    spec, base = load_harness("reference")
    assert (base / spec.install.files["/opt/harness/agent.py"]).resolve() == AGENT
    assert spec.argv(task="/t", workdir="/w", transcript="/x", model="m")[-2:] == ["--model", "m"]
    with pytest.raises(UnknownHarness, match=r"built in: .*reference"):
        load_harness("nope")


def test_exit_codes_are_what_a_spec_declares() -> None:
    reference, _ = load_harness("reference")
    assert reference.exit_codes == ExitCodes(transport=4, protocol=5)
    assert [reference.exit_codes.meaning(c) for c in (None, 0, 3, 4, 5)] == [
        None,
        None,
        None,
        HarnessExit.TRANSPORT,
        HarnessExit.PROTOCOL,
    ]
    # A harness that declares nothing claims nothing by its exit status.
    mini, _ = load_harness("mini-swe-agent")
    assert mini.exit_codes.meaning(4) is None and mini.exit_codes.meaning(5) is None
    other = ExitCodes(transport=7)
    assert other.meaning(7) is HarnessExit.TRANSPORT and other.meaning(4) is None
    with pytest.raises(ValueError, match="share the exit status 9"):
        ExitCodes(transport=9, protocol=9)
