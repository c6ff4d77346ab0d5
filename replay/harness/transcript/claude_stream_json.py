"""Claude Code's ``--output-format stream-json --verbose`` output, as uniform entries.

One JSON object per line: ``system`` events (``init`` names the session, model, working
directory and tools), ``assistant`` events carrying an Anthropic message (streamed one content
block per event, the blocks of one message sharing its ``id``), ``user`` events carrying the
prompt or ``tool_result`` blocks, and a last ``result`` event with the final answer and
usage. A line that is not a JSON object (a harness killed mid-write) is skipped.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from replay.harness.transcript import json_lines


def _text(content: Any) -> str:
    """The text of a message's or a tool result's content."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"
        ]
        return "\n".join(p for p in parts if isinstance(p, str))
    return ""


def _init(event: dict[str, Any]) -> str:
    tools = event.get("tools")
    names = ", ".join(t for t in tools if isinstance(t, str)) if isinstance(tools, list) else ""
    return (
        f"Claude Code {event.get('claude_code_version', '?')}, model {event.get('model', '?')}, "
        f"in {event.get('cwd', '?')}, permission mode {event.get('permissionMode', '?')}; "
        f"tools: {names}"
    )


def to_uniform(path: Path) -> Iterator[dict[str, Any]]:
    """The entries of a stream-json transcript, oldest first, as they are read (an assistant
    turn is handed out once the next event shows it complete)."""
    last: dict[str, Any] | None = None  # the entry not handed out yet (it may grow)
    last_id: str | None = None
    for event in json_lines(path):
        if not isinstance(event, dict):
            continue
        kind = event.get("type")
        message = event.get("message")
        entries: list[dict[str, Any]] = []
        if kind == "system" and event.get("subtype") == "init":
            entries.append({"role": "system", "text": _init(event), "tool_calls": []})
            last_id = None
        elif kind == "assistant" and isinstance(message, dict):
            content = message.get("content")
            blocks = (
                [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []
            )
            text = _text(blocks)
            calls = [
                {"name": b.get("name", ""), "arguments": b.get("input") or {}}
                for b in blocks
                if b.get("type") == "tool_use"
            ]
            msg_id = message.get("id")
            if (
                msg_id is not None
                and msg_id == last_id
                and last is not None
                and last["role"] == "assistant"
            ):
                # The same message, streamed one block at a time: one turn.
                last["text"] = "\n".join(t for t in (last["text"], text) if t)
                last["tool_calls"].extend(calls)
            else:
                entries.append({"role": "assistant", "text": text, "tool_calls": calls})
            last_id = msg_id if isinstance(msg_id, str) else None
        elif kind == "user" and isinstance(message, dict):
            content = message.get("content")
            if isinstance(content, str):
                entries.append({"role": "user", "text": content, "tool_calls": []})
            elif isinstance(content, list):
                for block in content:
                    if not isinstance(block, dict):
                        continue
                    if block.get("type") == "tool_result":
                        text = _text(block.get("content"))
                        entries.append({"role": "tool", "text": text, "tool_calls": []})
                    elif block.get("type") == "text":
                        entries.append({"role": "user", "text": _text([block]), "tool_calls": []})
            last_id = None
        elif kind == "result" and event.get("subtype") != "success":
            # How a run that did not finish ended (a turn limit, an API error).
            why = event.get("result") or event.get("errors") or ""
            text = f"{event.get('subtype', 'error')}: {why}".rstrip(": ")
            entries.append({"role": "system", "text": text, "tool_calls": []})
            last_id = None
        for entry in entries:
            if last is not None:
                yield last
            last = entry
    if last is not None:
        yield last
