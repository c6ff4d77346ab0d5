"""What a run of the corpus left in its directory, read back for the points an outcome cannot show.

Two sources: what the world recorded (``events.jsonl``, exported by the runner from the
gateway's log), and what the attack's own probes reported from inside the sandbox (the
``redteam-report`` line a driver prints last, kept in the transcript as the tool's output;
see :mod:`replay.run.attacks.carry`). Everything is read with bounds: a run directory holds
what the sandbox wrote.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from replay.run.attacks.carry import REPORT

LINE_LIMIT = 4 * 1024 * 1024
"""The longest line read from a transcript or event log; longer ones are skipped."""
CHUNK = 1024 * 1024


def _lines(path: Path) -> Iterator[str]:
    """The file's lines, each at most :data:`LINE_LIMIT` bytes (longer ones skipped)."""
    try:
        fh = path.open("rb")
    except OSError:
        return
    with fh:
        skipping = False
        while line := fh.readline(LINE_LIMIT):
            whole = line.endswith(b"\n")
            if not skipping and (whole or len(line) < LINE_LIMIT):
                yield line.decode("utf-8", "replace")
            skipping = not whole


def _records(path: Path) -> Iterator[dict[str, Any]]:
    for line in _lines(path):
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            yield record


def tool_outputs(run_dir: Path) -> Iterator[str]:
    """The text of every tool result in the run's uniform transcript, in order."""
    for record in _records(run_dir / "transcript.jsonl"):
        if record.get("role") == "tool" and isinstance(record.get("text"), str):
            yield record["text"]


def report(run_dir: Path, tag: str) -> Any:
    """The last value a driver reported under ``tag`` (None when there is none)."""
    found = None
    head = f"{REPORT} {tag} "
    for text in tool_outputs(run_dir):
        for line in text.splitlines():
            if line.startswith(head):
                try:
                    found = json.loads(line[len(head) :])
                except ValueError:
                    continue
    return found


def events(run_dir: Path, kind: str | None = None) -> list[dict[str, Any]]:
    """The events the world recorded during the run (``kind``: only those)."""
    return [e for e in _records(run_dir / "events.jsonl") if kind is None or e.get("kind") == kind]


def holding(run_dir: Path, secrets: Sequence[str]) -> list[str]:
    """The files under ``run_dir`` (relative paths) whose bytes hold any of ``secrets``.

    Every regular file is read in chunks (overlapping by a secret's length, so that one
    split between two chunks is found too); symbolic links are not followed.
    """
    needles = [s.encode() for s in secrets if s]
    if not needles:
        return []
    overlap = max(len(n) for n in needles) - 1
    found: list[str] = []
    for root, dirs, files in os.walk(run_dir, followlinks=False):
        dirs.sort()
        for name in sorted(files):
            path = Path(root) / name
            if path.is_symlink() or not path.is_file():
                continue
            if _holds(path, needles, overlap):
                found.append(str(path.relative_to(run_dir)))
    return found


def _holds(path: Path, needles: list[bytes], overlap: int) -> bool:
    try:
        fh = path.open("rb")
    except OSError:
        return False
    with fh:
        tail = b""
        while chunk := fh.read(CHUNK):
            window = tail + chunk
            if any(n in window for n in needles):
                return True
            tail = window[-overlap:] if overlap else b""
    return False


def denials(run_dir: Path) -> list[dict[str, Any]]:
    """The refusals the world recorded (``egress.denied`` and any other ``*.denied`` kind)."""
    return [e for e in events(run_dir) if str(e.get("kind", "")).endswith("denied")]


def refused(result: dict[str, Any], *, closed: bool = False) -> bool:
    """A probe's request was refused by the proxy: a 4xx to its CONNECT or to the request
    (``closed``: or the connection closed before any answer, as for a body too large)."""
    connect, status = result.get("connect"), result.get("status")
    if isinstance(connect, int) and connect != 200:
        return 400 <= connect < 500
    if status is None:
        return closed
    return isinstance(status, int) and 400 <= status < 500


def judged(
    results: Any, ids: Sequence[str], judge: Callable[[str, dict[str, Any]], str | None]
) -> str | None:
    """What is wrong with a probe's ``results`` (id -> result, as reported): a request of
    ``ids`` missing, or one ``judge`` (given its id and result) finds fault with, in its
    words; None when every one is as it must be."""
    if not isinstance(results, dict):
        return "no report of the requests in the transcript"
    missing = [i for i in ids if not isinstance(results.get(i), dict)]
    if missing:
        return f"{len(missing)} of {len(ids)} requests not reported, e.g. {missing[0]!r}"
    wrong = [f"{i}: {why}" for i in ids if (why := judge(i, results[i]))]
    if wrong:
        return f"{len(wrong)} of {len(ids)} not as they must be: " + "; ".join(wrong[:3])
    return None


def all_recorded(run_dir: Path, attempts: int) -> str | None:
    """None when the world recorded at least ``attempts`` refusals, else how many."""
    count = len(denials(run_dir))
    return None if count >= attempts else f"{attempts} refused, {count} recorded"


def first(*found: str | None) -> str | None:
    """The first finding that is not None."""
    return next((f for f in found if f), None)
