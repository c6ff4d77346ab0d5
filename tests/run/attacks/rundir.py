"""A run directory as the corpus's checks read it, written by hand: the transcript's tool
outputs (with the drivers' report lines) and the world's event log."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def make_run(
    where: Path,
    reports: dict[str, Any] | None = None,
    events: list[dict[str, Any]] | None = None,
) -> Path:
    """``where`` as a run directory whose transcript holds each report (tag -> value) as a
    driver prints it, and whose event log holds ``events``."""
    where.mkdir(parents=True, exist_ok=True)
    lines: list[dict[str, Any]] = [
        {"index": 0, "role": "user", "text": "redteam-report nothing {}", "tool_calls": []}
    ]
    for tag, value in (reports or {}).items():
        # What the assistant sent holds the report's words too; only tool output counts.
        call = {"name": "bash", "arguments": {"command": f"report({tag!r})"}}
        lines.append({"role": "assistant", "text": "", "tool_calls": [call]})
        text = f"some output\nredteam-report {tag} {json.dumps(value)}\n\n(exit status 0)"
        lines.append({"role": "tool", "text": text, "tool_calls": []})
    (where / "transcript.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    (where / "events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events or []))
    return where


def denied(count: int) -> list[dict[str, Any]]:
    """``count`` refusals as the world records them."""
    return [
        {"seq": i + 1, "kind": "egress.denied", "data": {"host": "x", "reason": "outside"}}
        for i in range(count)
    ]
