"""The uniform transcript: every harness's own transcript turned into one shape.

A run keeps the harness's own transcript as it wrote it (the spec's ``transcript`` file), and
beside it ``transcript.jsonl``, derived from it by the module of this package named for the
spec's ``transcript_format`` (``claude-stream-json`` -> :mod:`.claude_stream_json`), one JSON
object per line::

    {"index": 0, "role": "assistant", "text": "...", "tool_calls": [{"name": "Bash",
     "arguments": {"command": "pytest -x"}}]}

``role`` is ``system``, ``user``, ``assistant`` or ``tool`` (a tool's result); ``text`` the
entry's text; ``tool_calls`` the tools an assistant turn called, with their arguments (empty
otherwise). Each format module has ``to_uniform(path: Path) -> list[dict]`` and imports
nothing from this package; the entries are checked (and numbered in order) here.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
from pathlib import Path
from typing import Any

from replay.base.errors import ReplayError

UNIFORM = "transcript.jsonl"
"""The uniform transcript's name in a run's directory."""
ROLES = ("system", "user", "assistant", "tool")


class TranscriptError(ReplayError):
    """A harness's transcript could not be read in its declared format."""


def known_formats() -> list[str]:
    """The formats a module of this package converts (``claude-stream-json``...)."""
    return sorted(m.name.replace("_", "-") for m in pkgutil.iter_modules(__path__))


def to_uniform(fmt: str, path: Path) -> list[dict[str, Any]]:
    """The entries of the harness's transcript at ``path``, written in format ``fmt``."""
    if fmt not in known_formats():
        raise TranscriptError(
            f"unknown transcript format {fmt!r}; known: {', '.join(known_formats())}"
        )
    module = importlib.import_module(f"{__name__}.{fmt.replace('-', '_')}")
    out = []
    for i, item in enumerate(module.to_uniform(path)):
        calls = item.get("tool_calls", [])
        if (
            item.get("role") not in ROLES
            or not isinstance(item.get("text"), str)
            or not isinstance(calls, list)
            or not all(isinstance(c, dict) and isinstance(c.get("name"), str) for c in calls)
        ):
            raise TranscriptError(f"{fmt}: entry {i} is not a uniform entry: {item!r:.200}")
        out.append({"index": i, "role": item["role"], "text": item["text"], "tool_calls": calls})
    return out


def write_uniform(fmt: str, native: Path, run_dir: Path) -> Path:
    """Convert ``native`` and write it as the run's ``transcript.jsonl``."""
    entries = to_uniform(fmt, native)
    out = run_dir / UNIFORM
    with out.open("w", encoding="utf-8") as fh:
        for entry in entries:
            fh.write(json.dumps(entry, ensure_ascii=False) + "\n")
    return out


__all__ = [
    "ROLES",
    "UNIFORM",
    "TranscriptError",
    "known_formats",
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
