"""replay's reference harness's own transcript (``agent.py``), as uniform entries.

JSON lines, each with a ``kind``: ``start`` (the model, the API base and the task),
``assistant`` (the chat completion's message, its tool calls' arguments a JSON string),
``tool`` (a command and its output), ``model_error``/``protocol_error`` (a failed call), and
``stop`` (why the loop ended). A line that is not a JSON object is skipped.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from replay.harness.transcript import json_lines, openai_tool_calls


def to_uniform(path: Path) -> Iterator[dict[str, Any]]:
    """The entries of the reference harness's transcript, oldest first, as they are read."""
    for record in json_lines(path):
        if not isinstance(record, dict):
            continue
        kind = record.get("kind")
        if kind == "start":
            text = f"reference harness, model {record.get('model')} at {record.get('base')}"
            yield {"role": "system", "text": text, "tool_calls": []}
            yield {"role": "user", "text": str(record.get("task", "")), "tool_calls": []}
        elif kind == "assistant" and isinstance(record.get("message"), dict):
            message = record["message"]
            text = message.get("content") if isinstance(message.get("content"), str) else ""
            yield {"role": "assistant", "text": text, "tool_calls": openai_tool_calls(message)}
        elif kind == "tool":
            yield {"role": "tool", "text": str(record.get("output", "")), "tool_calls": []}
        elif kind in ("model_error", "protocol_error"):
            detail = {k: v for k, v in record.items() if k not in ("t", "kind")}
            yield {"role": "system", "text": f"{kind}: {json.dumps(detail)}", "tool_calls": []}
        elif kind == "stop" and record.get("reason") != "final":
            text = f"stopped: {record.get('reason')}: {record.get('detail', '')}".rstrip(": ")
            yield {"role": "system", "text": text, "tool_calls": []}
