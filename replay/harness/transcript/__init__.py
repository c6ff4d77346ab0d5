"""The uniform transcript: every harness's own transcript turned into one shape.

A run keeps the harness's own transcript as it wrote it (the spec's ``transcript`` file), and
beside it ``transcript.jsonl``, derived from it by the module of this package named for the
spec's ``transcript_format`` (``claude-stream-json`` -> :mod:`.claude_stream_json`), one JSON
object per line::

    {"index": 0, "role": "assistant", "text": "...", "tool_calls": [{"name": "Bash",
     "arguments": {"command": "pytest -x"}}]}

``role`` is ``system``, ``user``, ``assistant`` or ``tool`` (a tool's result); ``text`` the
entry's text; ``tool_calls`` the tools an assistant turn called, with their arguments (empty
otherwise). Each format module has ``to_uniform(path: Path) -> Iterable[dict]`` and imports
nothing from this package but the readers below; the entries are checked (and numbered in
order) here.

A transcript comes out of the agent's sandbox and is read as hostile input: line by line
(:func:`text_lines`, :func:`json_lines`: a line past ``Caps.transcript_line`` is skipped,
invalid UTF-8 replaced), or whole only up to ``Caps.transcript_document``
(:func:`read_document`); only a regular file is read, never through a link. Every string of
an entry has its lone surrogates (a JSON ``"\\ud800"``, which no UTF-8 file can hold)
replaced by U+FFFD, and the uniform transcript is written as it is read.
"""

from __future__ import annotations

import importlib
import json
import os
import pkgutil
import re
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from replay.base.errors import ReplayError
from replay.runtime.bounded import Caps

UNIFORM = "transcript.jsonl"
"""The uniform transcript's name in a run's directory."""
ROLES = ("system", "user", "assistant", "tool")


class TranscriptError(ReplayError):
    """A harness's transcript could not be read in its declared format."""


def known_formats() -> list[str]:
    """The formats a module of this package converts (``claude-stream-json``...)."""
    return sorted(m.name.replace("_", "-") for m in pkgutil.iter_modules(__path__))


def iter_uniform(fmt: str, path: Path) -> Iterator[dict[str, Any]]:
    """The entries of the harness's transcript at ``path``, written in format ``fmt``, one at
    a time (checked, numbered, their lone surrogates replaced)."""
    if fmt not in known_formats():
        raise TranscriptError(
            f"unknown transcript format {fmt!r}; known: {', '.join(known_formats())}"
        )
    module = importlib.import_module(f"{__name__}.{fmt.replace('-', '_')}")
    for i, item in enumerate(module.to_uniform(path)):
        calls = item.get("tool_calls", [])
        if (
            item.get("role") not in ROLES
            or not isinstance(item.get("text"), str)
            or not isinstance(calls, list)
            or not all(isinstance(c, dict) and isinstance(c.get("name"), str) for c in calls)
        ):
            raise TranscriptError(f"{fmt}: entry {i} is not a uniform entry: {item!r:.200}")
        yield {
            "index": i,
            "role": item["role"],
            "text": clean(item["text"]),
            "tool_calls": clean(calls),
        }


def to_uniform(fmt: str, path: Path) -> list[dict[str, Any]]:
    """The entries of the harness's transcript at ``path``, written in format ``fmt``."""
    return list(iter_uniform(fmt, path))


def write_uniform(fmt: str, native: Path, run_dir: Path) -> Path:
    """Convert ``native`` and write it as the run's ``transcript.jsonl``, entry by entry; a
    transcript that cannot be read to its end leaves none (the error is raised)."""
    out = run_dir / UNIFORM
    partial = run_dir / f".{UNIFORM}.partial"
    try:
        with partial.open("w", encoding="utf-8") as fh:
            for entry in iter_uniform(fmt, native):
                fh.write(json.dumps(entry, ensure_ascii=False) + "\n")
        partial.replace(out)
    finally:
        partial.unlink(missing_ok=True)
    return out


_SURROGATE = re.compile("[\ud800-\udfff]")


def clean(value: Any) -> Any:
    """``value`` with every lone surrogate in its strings (keys included) replaced by U+FFFD:
    JSON may escape one (``"\\udc80"``), no UTF-8 file can hold it."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [clean(v) for v in value]
    if isinstance(value, dict):
        return {clean(k): clean(v) for k, v in value.items()}
    return value


def _open_regular(path: Path) -> IO[bytes]:
    """``path`` opened for reading if it is a regular file; never through a link, never a
    FIFO (which would block) or a device."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        raise TranscriptError(f"{path.name}: cannot be read: {exc.strerror or exc}") from exc
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise TranscriptError(f"{path.name}: not a regular file; not read")
    return os.fdopen(fd, "rb")


def text_lines(path: Path, caps: Caps | None = None) -> Iterator[str]:
    """The lines of the file at ``path`` (without their ends), invalid UTF-8 replaced; a line
    longer than ``caps.transcript_line`` bytes is skipped whole (never held)."""
    limit = (caps or Caps.from_env()).transcript_line
    with _open_regular(path) as fh:
        while line := fh.readline(limit + 1):
            if len(line) > limit and not line.endswith(b"\n"):
                # Past the cap: drop the rest of this line, a piece at a time.
                while (rest := fh.readline(limit)) and not rest.endswith(b"\n"):
                    pass
                continue
            yield line.rstrip(b"\r\n").decode("utf-8", errors="replace")


def json_lines(path: Path, caps: Caps | None = None) -> Iterator[Any]:
    """The JSON value of each line of ``path`` (:func:`text_lines`); a line that is not JSON
    is skipped."""
    for line in text_lines(path, caps):
        try:
            yield json.loads(line)
        except ValueError:
            continue


def read_document(path: Path, caps: Caps | None = None) -> str:
    """The whole text of ``path`` (a transcript that is one document), invalid UTF-8
    replaced; larger than ``caps.transcript_document`` is a :class:`TranscriptError`."""
    limit = (caps or Caps.from_env()).transcript_document
    with _open_regular(path) as fh:
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise TranscriptError(
            f"{path.name}: larger than {limit} bytes, the most read whole "
            "(REPLAY_CAP_TRANSCRIPT_DOCUMENT); not read"
        )
    return data.decode("utf-8", errors="replace")


__all__ = [
    "ROLES",
    "UNIFORM",
    "TranscriptError",
    "clean",
    "iter_uniform",
    "json_lines",
    "known_formats",
    "read_document",
    "text_lines",
    "to_uniform",
    "write_uniform",
]


def openai_tool_calls(message: dict[str, Any]) -> list[dict[str, Any]]:
    """The tool calls of an OpenAI chat message as uniform ``tool_calls`` entries; arguments
    that are not JSON are kept as the model sent them, under ``_raw``."""
    out = []
    for call in message.get("tool_calls") or []:
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict):
            continue
        raw = function.get("arguments")
        try:
            arguments = json.loads(raw) if isinstance(raw, str) else raw
        except ValueError:
            arguments = {"_raw": raw}
        out.append({"name": str(function.get("name", "")), "arguments": arguments or {}})
    return out
