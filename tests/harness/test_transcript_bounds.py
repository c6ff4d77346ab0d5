"""A transcript is the agent's to write: every reader takes it as hostile input. A lone
surrogate, bytes that are not UTF-8, a line of megabytes, a link or a FIFO where the file
should be: the uniform transcript is written or the reason is, and nothing raises past the
runner's note."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from replay.harness.spec import load_harness
from replay.harness.transcript import (
    UNIFORM,
    TranscriptError,
    json_lines,
    read_document,
    to_uniform,
    write_uniform,
)
from replay.run.runner import _uniform_transcript
from replay.runtime.bounded import Caps

TOOL = {"t": 0, "kind": "tool", "command": "ls", "output": "fine"}


def _reference(path: Path, *raw: bytes) -> Path:
    path.write_bytes(b"".join(raw))
    return path


def test_a_lone_surrogate_and_bytes_not_utf8_are_replaced_not_fatal(tmp_path: Path) -> None:
    native = _reference(
        tmp_path / "agent.jsonl",
        json.dumps(TOOL).encode() + b"\n",
        b'{"t": 0, "kind": "tool", "output": "lone \\ud800 surrogate", "\\udfff": 1}\n',
        b"\xed\xa0\x80\xff\n",
        b'{"t": 0, "kind": "assistant", "message": {"content": "x\\udc80", "tool_calls": '
        b'[{"function": {"name": "bash", '
        b'"arguments": "{\\"command\\": \\"echo \\\\udc80\\"}"}}]}}\n',
    )
    out = write_uniform("reference-jsonl", native, tmp_path)
    entries = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [e["text"] for e in entries] == ["fine", "lone \ufffd surrogate", "x\ufffd"]
    assert entries[2]["tool_calls"] == [{"name": "bash", "arguments": {"command": "echo \ufffd"}}]


def test_the_runner_notes_a_transcript_it_cannot_read_and_goes_on(tmp_path: Path) -> None:
    spec, _ = load_harness("reference")
    # A directory where the file should be (copied out by an older runner, or by hand).
    (tmp_path / "agent.jsonl").mkdir()
    (tmp_path / "agent.jsonl" / "passwd").symlink_to("/etc/passwd")
    _uniform_transcript(spec, tmp_path)
    assert "agent.jsonl: not a regular file" in (tmp_path / "transcript-error.txt").read_text()
    assert not (tmp_path / UNIFORM).exists()


@pytest.mark.parametrize("kind", ["symlink", "fifo"])
def test_a_link_or_a_fifo_is_never_read(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "agent.jsonl"
    if kind == "symlink":
        (tmp_path / "real.jsonl").write_text(json.dumps(TOOL) + "\n")
        path.symlink_to(tmp_path / "real.jsonl")
    else:
        os.mkfifo(path)  # opening it for reading without O_NONBLOCK would block for ever
    with pytest.raises(TranscriptError, match=r"agent\.jsonl"):
        to_uniform("reference-jsonl", path)


def test_a_line_past_the_cap_is_skipped_whole_and_the_rest_read(tmp_path: Path) -> None:
    caps = Caps(transcript_line=1000)
    native = _reference(
        tmp_path / "agent.jsonl",
        b"\0" * 5000,
        b"\n",
        json.dumps(TOOL).encode() + b"\n",
        b"x" * 1000 + b"\n",  # exactly the cap: read (and not JSON)
        json.dumps(TOOL).encode(),  # no newline at the end: still read
    )
    assert list(json_lines(native, caps)) == [TOOL, TOOL]


def test_a_document_past_its_cap_is_not_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "traj.json"
    path.write_text(json.dumps({"messages": [{"role": "user", "content": "x" * 2000}]}))
    assert read_document(path, Caps(transcript_document=4000)).startswith('{"messages"')
    with pytest.raises(TranscriptError, match="larger than 1000 bytes"):
        read_document(path, Caps(transcript_document=1000))
