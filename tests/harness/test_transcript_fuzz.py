"""Property-based fuzzing (hypothesis) of the readers of what a sandbox hands back: every
transcript format's reader, on lines of its own vocabulary with any types and values, broken
lines, bytes that are not UTF-8 and lone surrogates; and the bounded copy-out, on tar streams
of any entries. A reader may refuse its input with its own error (the run notes it in
``transcript-error.txt``); it never raises anything else, writes only UTF-8 JSON lines, and the
copy-out makes nothing outside its destination nor any link. Derandomised, no example
database, no deadline."""

from __future__ import annotations

import io
import json
import os
import tarfile
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from replay.harness.transcript import TranscriptError, known_formats, write_uniform
from replay.runtime.bounded import Caps, extract

FUZZ = settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)

# The keys the formats read (their vocabulary), so that the values reach deep into the readers.
KEYS = [
    "type", "role", "content", "text", "message", "messages", "tool_calls", "function",
    "name", "arguments", "input", "id", "tool_use_id", "result", "subtype", "action", "args",
    "observation", "source", "llm_metrics", "tool_call_metadata", "model_response", "choices",
    "extra", "info", "history", "trajectory", "thought", "command", "session_id", "tools",
]  # fmt: skip
scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=True)
    | st.text(max_size=20)
    | st.sampled_from(["assistant", "user", "tool", "system", "tool_use", "text", "bash"])
)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=5), inner, max_size=5)
    ),
    max_leaves=25,
)
lines = st.one_of(
    values.map(lambda v: json.dumps(v).encode()),
    st.dictionaries(st.sampled_from(KEYS), values, max_size=6).map(
        lambda d: json.dumps(d).encode()
    ),
    st.just(b'{"role": "assistant", "content": "lone \\ud800 surrogate"}'),
    st.binary(max_size=60),
)
files = st.lists(lines, max_size=12).map(lambda ls: b"\n".join(ls))
documents = files | values.map(lambda v: json.dumps(v).encode())


@FUZZ
@given(st.sampled_from(known_formats()), documents)
def test_every_format_reads_any_bytes_or_refuses_them_with_its_own_error(
    fmt: str, data: bytes
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        native = Path(tmp) / "native"
        native.write_bytes(data)
        run_dir = Path(tmp) / "run"
        run_dir.mkdir()
        try:
            out = write_uniform(fmt, native, run_dir)
        except TranscriptError:
            assert not (run_dir / "transcript.jsonl").exists()
            return
        for line in out.read_text(encoding="utf-8").splitlines():
            entry: dict[str, Any] = json.loads(line)
            assert entry["role"] in ("system", "user", "assistant", "tool")


def tar_stream(entries: list[tuple[str, bytes, bytes, int]]) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, kind, data, mode in entries:
            info = tarfile.TarInfo(name)
            info.type = kind
            info.mode = mode
            if kind == tarfile.REGTYPE:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
            else:
                info.linkname = "../../../../etc/passwd"
                tar.addfile(info)
    return out.getvalue()


entries = st.lists(
    st.tuples(
        st.sampled_from(
            ["f", "d/f", "../out", "/abs", "d/../../out", "d", "d/", ".", "x\udcff", "a" * 300]
        ),
        st.sampled_from(
            [
                tarfile.REGTYPE,
                tarfile.DIRTYPE,
                tarfile.SYMTYPE,
                tarfile.LNKTYPE,
                tarfile.FIFOTYPE,
                tarfile.CHRTYPE,
            ]
        ),
        st.binary(max_size=200),
        st.sampled_from([0o644, 0o4755, 0o000, 0o777]),
    ),
    max_size=6,
)
streams = entries.map(tar_stream).flatmap(
    lambda data: st.integers(0, len(data)).map(lambda n: data[:n]) | st.just(data)
)


@FUZZ
@given(streams | st.binary(max_size=600), st.booleans(), st.integers(0, 300))
def test_a_copy_out_makes_only_files_and_directories_inside_its_destination(
    data: bytes, file_only: bool, cap: int
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        dest = Path(tmp) / "dest"
        dest.mkdir()
        report = extract(io.BytesIO(data), dest, Caps(copy_entries=4), file_only=file_only, cap=cap)
        for root, dirs, names in os.walk(Path(tmp)):
            for name in [*dirs, *names]:
                path = Path(root) / name
                assert not path.is_symlink(), path
                assert path == dest or dest in path.parents, path
                assert path.is_dir() or path.is_file(), path
        written = sum(p.stat().st_size for p in dest.rglob("*") if p.is_file())
        assert written == report.written
