"""mini-swe-agent's trajectory (``--output``, ``trajectory_format: mini-swe-agent-1.1``), as
uniform entries.

One JSON document: ``messages`` in OpenAI chat's shape (``system``, ``user``, ``assistant``
with ``tool_calls`` whose arguments are a JSON string, ``tool`` results), each with an
``extra`` of mini's own; ``info`` holds its exit status.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from replay.harness.transcript import openai_tool_calls, read_document


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text") for p in content if isinstance(p, dict)]
        return "\n".join(p for p in parts if isinstance(p, str))
    return ""


def to_uniform(path: Path) -> list[dict[str, Any]]:
    """The entries of a mini-swe-agent trajectory; an empty file, or one that is not JSON, has
    none (one too large to read whole is a ``TranscriptError``)."""
    try:
        document = json.loads(read_document(path))
    except ValueError:
        return []
    messages = document.get("messages") if isinstance(document, dict) else None
    out: list[dict[str, Any]] = []
    for message in messages if isinstance(messages, list) else []:
        if not isinstance(message, dict) or message.get("role") not in (
            "system",
            "user",
            "assistant",
            "tool",
        ):
            continue
        calls = openai_tool_calls(message) if message["role"] == "assistant" else []
        out.append(
            {"role": message["role"], "text": _text(message.get("content")), "tool_calls": calls}
        )
    info = document.get("info") if isinstance(document, dict) else None
    status = info.get("exit_status") if isinstance(info, dict) else None
    if status is not None and status != "Submitted":
        out.append({"role": "system", "text": f"exit status: {status}", "tool_calls": []})
    return out
