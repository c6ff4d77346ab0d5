"""Claude Code's ``--output-format stream-json --verbose`` output, as uniform entries.

One JSON object per line: ``system`` events (``init`` names the session, model, working
directory and tools), ``assistant`` events carrying an Anthropic message (streamed one content
block per event, the blocks of one message sharing its ``id``), ``user`` events carrying the
prompt or ``tool_result`` blocks, and a last ``result`` event with the final answer and
usage. A line that is not a JSON object (a harness killed mid-write) is skipped.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


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


def to_uniform(path: Path) -> list[dict[str, Any]]:
    """The entries of a stream-json transcript, oldest first."""
    out: list[dict[str, Any]] = []
    last_id: str | None = None
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if not isinstance(event, dict):
            continue
        kind = event.get("type")
        message = event.get("message")
        if kind == "system" and event.get("subtype") == "init":
            out.append({"role": "system", "text": _init(event), "tool_calls": []})
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
            if msg_id is not None and msg_id == last_id and out and out[-1]["role"] == "assistant":
                # The same message, streamed one block at a time: one turn.
                prev = out[-1]
                prev["text"] = "\n".join(t for t in (prev["text"], text) if t)
                prev["tool_calls"].extend(calls)
            else:
                out.append({"role": "assistant", "text": text, "tool_calls": calls})
            last_id = msg_id if isinstance(msg_id, str) else None
        elif kind == "user" and isinstance(message, dict):
            content = message.get("content")
            if isinstance(content, str):
                out.append({"role": "user", "text": content, "tool_calls": []})
            elif isinstance(content, list):
                for block in content:
                    if not isinstance(block, dict):
                        continue
                    if block.get("type") == "tool_result":
                        text = _text(block.get("content"))
                        out.append({"role": "tool", "text": text, "tool_calls": []})
                    elif block.get("type") == "text":
                        out.append({"role": "user", "text": _text([block]), "tool_calls": []})
            last_id = None
        elif kind == "result" and event.get("subtype") != "success":
            # How a run that did not finish ended (a turn limit, an API error).
            why = event.get("result") or event.get("errors") or ""
            text = f"{event.get('subtype', 'error')}: {why}".rstrip(": ")
            out.append({"role": "system", "text": text, "tool_calls": []})
            last_id = None
    return out
