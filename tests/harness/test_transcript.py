"""The uniform transcript: the dispatcher, Claude Code's stream-json, and the spec fields."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from replay.harness.spec import HarnessSpec, OwnRequest, StubHints
from replay.harness.stub.script import Script
from replay.harness.transcript import (
    UNIFORM,
    TranscriptError,
    known_formats,
    to_uniform,
    write_uniform,
)

INIT = {
    "type": "system",
    "subtype": "init",
    "cwd": "/workspace/semverkit",
    "model": "claude-sonnet-4-5",
    "permissionMode": "bypassPermissions",
    "claude_code_version": "2.1.332",
    "tools": ["Task", "Bash", "Edit", "Read", "Write"],
}


def _assistant(msg_id: str, *blocks: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "assistant",
        "message": {"id": msg_id, "role": "assistant", "content": list(blocks)},
    }


def _tool_result(content: Any) -> dict[str, Any]:
    block = {"type": "tool_result", "tool_use_id": "toolu_1", "content": content}
    return {"type": "user", "message": {"role": "user", "content": [block]}}


def _write(path: Path, events: list[Any], tail: str = "") -> Path:
    path.write_text("".join(json.dumps(e) + "\n" for e in events) + tail)
    return path


def test_stream_json_becomes_one_entry_per_turn_and_result(tmp_path: Path) -> None:
    native = _write(
        tmp_path / "claude.stream.jsonl",
        [
            INIT,
            # One message streamed a block at a time: one assistant turn.
            _assistant("msg_1", {"type": "thinking", "thinking": "hm"}),
            _assistant("msg_1", {"type": "text", "text": "Running the tests."}),
            _assistant(
                "msg_1",
                {
                    "type": "tool_use",
                    "id": "toolu_1",
                    "name": "Bash",
                    "input": {"command": "pytest -x"},
                },
            ),
            _tool_result("1 failed"),
            {"type": "system", "subtype": "vcs_state_changed", "kind": "push"},
            _assistant(
                "msg_2",
                {
                    "type": "tool_use",
                    "id": "t2",
                    "name": "Edit",
                    "input": {"file_path": "a.py", "old_string": "<=", "new_string": "<"},
                },
            ),
            _tool_result([{"type": "text", "text": "edited"}, {"type": "image", "source": {}}]),
            {"type": "user", "message": {"role": "user", "content": "keep going"}},
            _assistant("msg_3", {"type": "text", "text": "Done."}),
            {"type": "result", "subtype": "success", "result": "Done."},
        ],
        tail='{"type": "assistant", "message": {"id": "msg_4", "con',  # killed mid-write
    )
    entries = to_uniform("claude-stream-json", native)
    assert [(e["index"], e["role"]) for e in entries] == [
        (0, "system"),
        (1, "assistant"),
        (2, "tool"),
        (3, "assistant"),
        (4, "tool"),
        (5, "user"),
        (6, "assistant"),
    ]
    assert "Claude Code 2.1.332" in entries[0]["text"] and "Bash" in entries[0]["text"]
    assert entries[1] == {
        "index": 1,
        "role": "assistant",
        "text": "Running the tests.",
        "tool_calls": [{"name": "Bash", "arguments": {"command": "pytest -x"}}],
    }
    assert entries[2]["text"] == "1 failed" and entries[4]["text"] == "edited"
    assert entries[3]["tool_calls"][0]["name"] == "Edit" and entries[3]["text"] == ""
    assert entries[5]["text"] == "keep going"
    assert entries[6]["tool_calls"] == [] and entries[6]["text"] == "Done."
    out = write_uniform("claude-stream-json", native, tmp_path)
    assert out == tmp_path / UNIFORM
    assert [json.loads(line) for line in out.read_text().splitlines()] == entries


def test_a_run_that_did_not_succeed_says_how_it_ended(tmp_path: Path) -> None:
    native = _write(
        tmp_path / "s.jsonl",
        [INIT, {"type": "result", "subtype": "error_max_turns", "errors": ["max turns"]}],
    )
    entries = to_uniform("claude-stream-json", native)
    assert entries[-1]["role"] == "system" and "error_max_turns" in entries[-1]["text"]
    assert to_uniform("claude-stream-json", _write(tmp_path / "empty.jsonl", [])) == []


def test_an_unknown_format_names_the_known_ones(tmp_path: Path) -> None:
    assert "claude-stream-json" in known_formats()
    with pytest.raises(TranscriptError, match=r"known: .*claude-stream-json"):
        to_uniform("no-such-format", tmp_path / "x")


SPEC: dict[str, Any] = {
    "schema": 1,
    "name": "h",
    "provider": "anthropic",
    "command": ["true"],
}


def test_a_spec_keeps_the_native_transcript_apart_from_the_uniform_one() -> None:
    ok = HarnessSpec.model_validate(
        {**SPEC, "transcript": "native.jsonl", "transcript_format": "claude-stream-json"}
    )
    assert ok.transcript_format == "claude-stream-json"
    # Without a format nothing is converted, so the default name stays the harness's own.
    assert HarnessSpec.model_validate(SPEC).transcript == UNIFORM
    with pytest.raises(ValidationError, match="uniform transcript"):
        HarnessSpec.model_validate({**SPEC, "transcript_format": "claude-stream-json"})
    with pytest.raises(ValidationError, match="unknown format 'nope'"):
        HarnessSpec.model_validate({**SPEC, "transcript": "n.json", "transcript_format": "nope"})


def test_own_requests_match_method_host_and_the_whole_path() -> None:
    own = OwnRequest(
        method="POST", host="api.anthropic.com", path="/api/eval/sdk-[A-Za-z0-9]+", why="flags"
    )
    data = {"method": "POST", "host": "api.anthropic.com", "path": "/api/eval/sdk-abc9?x=1"}
    assert own.matches(data)
    assert own.matches({**data, "host": "API.anthropic.com."})
    assert not own.matches({**data, "method": "GET"})
    assert not own.matches({**data, "host": "api.openai.com"})
    assert not own.matches({**data, "path": "/api/eval/sdk-abc/more"})
    assert not own.matches({**data, "path": "/v1/api/eval/sdk-abc"})
    with pytest.raises(ValidationError, match="regular expression"):
        OwnRequest(method="GET", host="h", path="(", why="x")
    with pytest.raises(ValidationError):
        OwnRequest(method="GET", host="h", path="/", why="")


def test_the_bash_tool_hint_names_the_harness_s_shell_tool() -> None:
    script = Script.model_validate({"name": "gold", "steps": [{"bash": "true"}]})
    played = StubHints(bash_tool="Bash").apply(script)
    assert (played.bash_tool, played.bash_argument) == ("Bash", "command")
    other = StubHints(bash_tool="shell", bash_argument="cmd").apply(script)
    assert (other.bash_tool, other.bash_argument) == ("shell", "cmd")
    assert StubHints().apply(script) is script


def test_the_reference_harness_s_own_transcript_converts(tmp_path: Path) -> None:
    from replay.harness.stub.app import StubConfig, make_stub_app
    from tests.harness.server import serving
    from tests.harness.test_reference_agent import run_agent

    played = Script.model_validate(
        {
            "name": "t",
            "steps": [{"say": "Writing it.", "bash": "echo hello > out.txt && cat out.txt"}],
            "final": "Wrote out.txt.",
        }
    )
    with serving(make_stub_app(StubConfig(script=played))) as url:
        status, _ = run_agent(url, tmp_path)
    assert status == 0
    entries = to_uniform("reference-jsonl", tmp_path / "transcript.jsonl")
    assert [e["role"] for e in entries] == ["system", "user", "assistant", "tool", "assistant"]
    assert entries[1]["text"] == "Create out.txt saying hello."
    assert entries[2]["tool_calls"] == [
        {"name": "bash", "arguments": {"command": "echo hello > out.txt && cat out.txt"}}
    ]
    assert entries[3]["text"].startswith("hello\n") and "(exit status 0)" in entries[3]["text"]
    assert entries[4] == {
        "index": 4,
        "role": "assistant",
        "text": "Wrote out.txt.",
        "tool_calls": [],
    }
    # A run that ended otherwise says why.
    stopped = tmp_path / "stopped.jsonl"
    stopped.write_text(
        json.dumps({"t": 1, "kind": "model_error", "attempt": 0, "status": 503})
        + "\n"
        + json.dumps({"t": 2, "kind": "stop", "reason": "transport", "detail": "HTTP 503"})
        + "\n"
    )
    texts = [e["text"] for e in to_uniform("reference-jsonl", stopped)]
    assert texts == ['model_error: {"attempt": 0, "status": 503}', "stopped: transport: HTTP 503"]


def test_a_mini_swe_agent_trajectory_converts(tmp_path: Path) -> None:
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "bash", "arguments": json.dumps({"command": "ls"})},
    }
    document = {
        "trajectory_format": "mini-swe-agent-1.1",
        "info": {"exit_status": "LimitsExceeded"},
        "messages": [
            {"role": "system", "content": "You are a helpful assistant."},
            {"role": "user", "content": [{"type": "text", "text": "Please solve this issue."}]},
            {"role": "assistant", "content": "Looking.", "tool_calls": [call], "extra": {}},
            {"role": "tool", "tool_call_id": "call_1", "content": '{"returncode": 0}'},
            {"role": "exit", "content": "not a chat role"},
        ],
    }
    traj = tmp_path / "transcript.traj.json"
    traj.write_text(json.dumps(document))
    entries = to_uniform("mini-swe-agent-traj", traj)
    assert [(e["role"], e["text"]) for e in entries] == [
        ("system", "You are a helpful assistant."),
        ("user", "Please solve this issue."),
        ("assistant", "Looking."),
        ("tool", '{"returncode": 0}'),
        ("system", "exit status: LimitsExceeded"),
    ]
    assert entries[2]["tool_calls"] == [{"name": "bash", "arguments": {"command": "ls"}}]
    traj.write_text("")  # a harness that died before writing it
    assert to_uniform("mini-swe-agent-traj", traj) == []


def test_the_runner_writes_the_uniform_transcript_or_says_why_not(tmp_path: Path) -> None:
    from replay.harness.spec import load_harness
    from replay.run.runner import _uniform_transcript

    spec, _ = load_harness("claude-code")
    _uniform_transcript(spec, tmp_path)  # the harness left no transcript at all
    assert not (tmp_path / UNIFORM).exists()
    assert "claude.stream.jsonl" in (tmp_path / "transcript-error.txt").read_text()
    _write(tmp_path / "claude.stream.jsonl", [INIT])
    _uniform_transcript(spec, tmp_path)
    assert json.loads((tmp_path / UNIFORM).read_text())["role"] == "system"
    reference, _ = load_harness("reference")
    assert (reference.transcript, reference.transcript_format) == ("agent.jsonl", "reference-jsonl")
