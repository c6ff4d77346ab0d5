"""Aider's chat history (``--chat-history-file``, markdown) as uniform transcript entries.

Aider appends to this file as the session goes (aider/io.py, 0.86): ``# aider chat started
at ...`` opens a session; each line the user sent is prefixed ``#### ``; what aider itself
prints (its banner, questions with the answer taken, ``Running <command>``, token counts) is
a blockquote, ``> `` per line, except that the second and later lines of one multi-line
message carry no prefix and follow it directly; the model's answer is plain markdown, set
off by blank lines. Shell commands come in the answer as fenced blocks (```bash and the other
shells aider's editblock parser knows), edits as SEARCH/REPLACE blocks under the file's
path; the converter lists both as the answer's tool calls (``shell`` with ``command``,
``edit`` with ``path``, ``search`` and ``replace``). Aider keeps no command output here
(only "Added N lines of output to the chat"), so a ``tool`` entry is what aider printed.

Blockquotes before the first user message (aider's start-up banner) become ``system``
entries, later ones ``tool`` entries.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from replay.harness.transcript import read_document

SHELLS = (
    "bash",
    "sh",
    "shell",
    "cmd",
    "batch",
    "powershell",
    "ps1",
    "zsh",
    "fish",
    "ksh",
    "csh",
    "tcsh",
)
_SESSION = re.compile(r"^# aider chat started at (.*)$")
_HEAD = re.compile(r"^<{5,9} SEARCH>?\s*$")
_DIVIDER = re.compile(r"^={5,9}\s*$")
_UPDATED = re.compile(r"^>{5,9} REPLACE\s*$")
_FENCE = re.compile(r"^(`{3,}|~{3,})\s*([\w+-]*)\s*$")


def to_uniform(path: Path) -> list[dict[str, Any]]:
    """The entries of the chat history at ``path``, in the order aider wrote them."""
    entries: list[dict[str, Any]] = []
    kind: str | None = None  # "quote", "user", "answer" or "session" for the open entry
    lines: list[str] = []
    seen_user = False

    def close() -> None:
        nonlocal kind, lines, seen_user
        text = "\n".join(lines).strip("\n")
        if kind == "user":
            seen_user = True
            entries.append({"role": "user", "text": text, "tool_calls": []})
        elif kind == "quote":
            role = "tool" if seen_user else "system"
            entries.append({"role": role, "text": text, "tool_calls": []})
        elif kind == "session":
            entries.append({"role": "system", "text": text, "tool_calls": []})
        elif kind == "answer" and text.strip():
            entries.append({"role": "assistant", "text": text, "tool_calls": _calls(text)})
        kind, lines = None, []

    previous_blank = True
    for raw in read_document(path).splitlines():
        line = raw.rstrip()
        blank = not line
        if (session := _SESSION.match(line)) is not None:
            close()
            kind, lines = "session", [f"aider chat started at {session.group(1)}"]
            close()
        elif line == "####" or line.startswith("#### "):
            if kind != "user":
                close()
                kind = "user"
            lines.append(line[5:])
        elif line == ">" or line.startswith("> "):
            if kind != "quote":
                close()
                kind = "quote"
            lines.append(line[2:])
        elif kind == "quote" and not blank and not previous_blank:
            lines.append(line)  # a later line of a multi-line message aider printed
        elif kind == "user" and blank:
            close()
        elif kind == "answer" or not blank:
            if kind != "answer":
                close()
                kind = "answer"
            lines.append(raw)
        previous_blank = blank
    close()
    return entries


def _calls(text: str) -> list[dict[str, Any]]:
    """Shell blocks and SEARCH/REPLACE edits in an answer, in order."""
    calls: list[dict[str, Any]] = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        fence = _FENCE.match(lines[i].strip())
        if fence is not None and fence.group(2) in SHELLS and not _edit_follows(lines, i):
            marker = fence.group(1)
            body, i = _until(lines, i + 1, lambda s, m=marker: s.strip().startswith(m))
            calls.append({"name": "shell", "arguments": {"command": "\n".join(body)}})
            continue
        if _HEAD.match(lines[i].strip()):
            path = _path_before(lines, i)
            search, i = _until(lines, i + 1, lambda s: bool(_DIVIDER.match(s.strip())))
            replace, i = _until(lines, i, lambda s: bool(_UPDATED.match(s.strip())))
            calls.append(
                {
                    "name": "edit",
                    "arguments": {
                        "path": path,
                        "search": "\n".join(search),
                        "replace": "\n".join(replace),
                    },
                }
            )
            continue
        i += 1
    return calls


def _edit_follows(lines: list[str], i: int) -> bool:
    """A fence opening a SEARCH/REPLACE block (aider checks the next two lines too)."""
    return any(_HEAD.match(s.strip()) for s in lines[i + 1 : i + 3])


def _until(lines: list[str], start: int, end: Callable[..., bool]) -> tuple[list[str], int]:
    """The lines from ``start`` up to the one ``end`` accepts, and the index after it."""
    out: list[str] = []
    i = start
    while i < len(lines) and not end(lines[i]):
        out.append(lines[i])
        i += 1
    return out, i + 1


def _path_before(lines: list[str], i: int) -> str:
    """The file path aider reads from the (up to three) lines before a SEARCH marker."""
    for candidate in reversed(lines[max(0, i - 3) : i]):
        name = candidate.strip().strip("`*").strip()
        if name and _FENCE.match(candidate.strip()) is None:
            return name
    return ""
