"""OpenHands' event stream (the agent SDK's events), as uniform entries.

OpenHands keeps a conversation as events, each a JSON object with a ``kind``: in its
persistence directory one file per event (``events/event-00000-<id>.json``), and on stdout one
per line with ``openhands --headless --json`` (among lines that are not JSON: a line that is
not a JSON object is skipped). ``path`` is either: such a stream, or the ``events`` directory.

- ``SystemPromptEvent``: the system prompt (``system_prompt.text``).
- ``MessageEvent``: a message (``llm_message.role`` and its content's text parts).
- ``ActionEvent``: an assistant turn, its ``thought`` as text and its ``tool_call`` (name and
  arguments as a JSON string).
- ``ObservationEvent`` (a tool's result, ``observation.content``), ``AgentErrorEvent`` (a
  call the harness refused, ``error``) and ``UserRejectObservation`` (``rejection_reason``):
  the tool's side.

Other kinds (state updates, condensations, pauses) are bookkeeping and left out.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from replay.harness.transcript import json_lines, read_document

_ROLES = ("system", "user", "assistant", "tool")


def _text(parts: Any) -> str:
    """The text of a content list (``[{"type": "text", "text": ...}]``) or a string."""
    if isinstance(parts, str):
        return parts
    if isinstance(parts, dict):
        parts = [parts]
    if not isinstance(parts, list):
        return ""
    texts = [
        p["text"]
        for p in parts
        if isinstance(p, dict) and p.get("type") == "text" and isinstance(p.get("text"), str)
    ]
    return "\n".join(texts)


def _arguments(raw: Any) -> dict[str, Any]:
    """A tool call's arguments: a JSON object, or the raw text when it is not one."""
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        try:
            parsed = json.loads(raw)
        except ValueError:
            return {"_raw": raw}
        if isinstance(parsed, dict):
            return parsed
        return {"_raw": raw}
    return {}


def _events(path: Path) -> Iterator[dict[str, Any]]:
    if path.is_dir() and not path.is_symlink():
        # One document per event; a link, or anything but a regular file, is not read.
        values: Iterable[Any] = (
            _json(read_document(p))
            for p in sorted(path.glob("event-*.json"))
            if p.is_file() and not p.is_symlink()
        )
    else:
        values = json_lines(path)
    for event in values:
        if isinstance(event, dict) and isinstance(event.get("kind"), str):
            yield event


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def _entry(event: dict[str, Any]) -> dict[str, Any] | None:
    kind = event["kind"]
    if kind == "SystemPromptEvent":
        return {"role": "system", "text": _text(event.get("system_prompt")), "tool_calls": []}
    if kind == "MessageEvent":
        message = event.get("llm_message")
        if not isinstance(message, dict):
            return None
        role = message.get("role")
        return {
            "role": role if role in _ROLES else "user",
            "text": _text(message.get("content")),
            "tool_calls": [],
        }
    if kind == "ActionEvent":
        call = event.get("tool_call")
        calls = []
        if isinstance(call, dict) and isinstance(call.get("name"), str):
            calls.append({"name": call["name"], "arguments": _arguments(call.get("arguments"))})
        return {"role": "assistant", "text": _text(event.get("thought")), "tool_calls": calls}
    if kind == "ObservationEvent":
        observation = event.get("observation")
        content = observation.get("content") if isinstance(observation, dict) else None
        return {"role": "tool", "text": _text(content), "tool_calls": []}
    if kind == "AgentErrorEvent":
        error = event.get("error")
        return {"role": "tool", "text": error if isinstance(error, str) else "", "tool_calls": []}
    if kind == "UserRejectObservation":
        reason = event.get("rejection_reason")
        return {"role": "tool", "text": reason if isinstance(reason, str) else "", "tool_calls": []}
    return None


def to_uniform(path: Path) -> Iterator[dict[str, Any]]:
    """The entries of an OpenHands event stream (a JSONL file or an ``events`` directory),
    as they are read."""
    for event in _events(path):
        entry = _entry(event)
        if entry is not None:
            yield entry
