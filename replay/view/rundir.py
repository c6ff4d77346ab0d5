"""A run's directory, read for its page: the grade, events, model calls, transcript, diff
and the hidden tests' reports.

Much of it came out of the agent's sandbox or the grading container (the transcript, the
diff, the tests' output), so it is read as hostile input: only regular files, each up to a
cap (what is past it is counted and said, never read), a line that does not parse is
skipped and counted. Nothing here raises for a file that is missing or malformed: the page
says what could not be read.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from pydantic import ValidationError

from replay.base.errors import InputError
from replay.base.events import Event
from replay.gateway.modelcalls import ModelCall
from replay.grade.model import Grade, load_grade
from replay.results import RunRow

MiB = 1 << 20
CAPS = {
    "diff.patch": 4 * MiB,
    "transcript.jsonl": 16 * MiB,
    "events.jsonl": 16 * MiB,
    "model_calls.jsonl": 16 * MiB,
    "junit": 16 * MiB,
    "output": 1 * MiB,
}
"""Bytes read of each file at most (a page is for reading, not for holding a flood)."""
ENTRY_TEXT = 64 * 1024
"""Characters shown of one transcript entry's text or one tool call's argument."""
FAILURE_TEXT = 8 * 1024
"""Characters shown of one test's failure report."""

M = TypeVar("M", Event, ModelCall)


@dataclass(frozen=True)
class Capped:
    """A file's text, up to its cap."""

    text: str
    cut: int
    """Bytes past the cap, not read (0: the whole file)."""


def read_capped(path: Path, cap: int) -> Capped | None:
    """The text of a regular file (never through a link), up to ``cap`` bytes; None when
    there is no such file."""
    if path.is_symlink() or not path.is_file():
        return None
    size = path.stat().st_size
    with path.open("rb") as fh:
        data = fh.read(cap)
    return Capped(data.decode("utf-8", errors="replace"), max(0, size - len(data)))


def clip(text: str, limit: int) -> str:
    """``text``, or its first ``limit`` characters and how many more there were."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n[... {len(text) - limit} more characters not shown]"


@dataclass
class RunFiles:
    """What the run's page shows from its directory and its grade."""

    directory: Path | None
    grade: Grade | None = None
    events: list[Event] = field(default_factory=list)
    calls: list[ModelCall] = field(default_factory=list)
    transcript: list[dict[str, Any]] = field(default_factory=list)
    diff: Capped | None = None
    outputs: list[tuple[str, Capped]] = field(default_factory=list)
    """The hidden tests' output, one per repeat (``tests/output-N.txt``)."""
    failures: dict[str, str] = field(default_factory=dict)
    """A listed test's failure or error report from the JUnit XML, by node id."""
    notes: list[str] = field(default_factory=list)
    """What could not be read, one line each."""


def load_run(row: RunRow) -> RunFiles:
    """Everything the run's page shows that is not in its row."""
    directory = Path(row.run_dir) if row.run_dir else None
    files = RunFiles(directory)
    files.grade = _grade(row, directory, files.notes)
    if directory is None:
        files.notes.append("the run has no directory recorded (it did not start)")
        return files
    if not directory.is_dir():
        files.notes.append(f"the run's directory {directory} is not here")
        return files
    files.events = _lines(directory / "events.jsonl", Event, files.notes)
    files.calls = _lines(directory / "model_calls.jsonl", ModelCall, files.notes)
    files.transcript = _transcript(directory / "transcript.jsonl", files.notes)
    files.diff = read_capped(directory / "diff.patch", CAPS["diff.patch"])
    if files.diff is None:
        files.notes.append("no diff.patch in the run's directory")
    for path in sorted((directory / "tests").glob("output-*.txt")):
        text = read_capped(path, CAPS["output"])
        if text is not None:
            files.outputs.append((path.name, text))
    if files.grade is not None and files.grade.tests is not None:
        listed = [*files.grade.tests.fail_to_pass, *files.grade.tests.pass_to_pass]
        files.failures = _failures(sorted((directory / "tests").glob("junit-*.xml")), listed)
    return files


def _grade(row: RunRow, directory: Path | None, notes: list[str]) -> Grade | None:
    """The store's grade of the run, else its ``grade.json``."""
    problems = []
    if row.grade is not None:
        try:
            return row.grade.to_grade()
        except InputError as exc:
            problems.append(str(exc))
    if directory is not None and (directory / "grade.json").is_file():
        try:
            return load_grade(directory / "grade.json")
        except InputError as exc:
            problems.append(str(exc))
    notes.extend(f"grade not readable: {p}" for p in problems)
    if row.grade is None and row.outcome is None:
        notes.append("the run has no grade (it was not graded)")
    return None


def _lines(path: Path, model: type[M], notes: list[str]) -> list[M]:
    text = read_capped(path, CAPS[path.name])
    if text is None:
        notes.append(f"no {path.name} in the run's directory")
        return []
    found: list[M] = []
    bad = 0
    for line in text.text.splitlines():
        if not line.strip():
            continue
        try:
            found.append(model.model_validate_json(line))
        except ValidationError:
            bad += 1
    if bad:
        notes.append(f"{path.name}: {bad} line(s) could not be read")
    if text.cut:
        notes.append(f"{path.name}: its last {text.cut} bytes are past the viewer's cap")
    return found


def _transcript(path: Path, notes: list[str]) -> list[dict[str, Any]]:
    """The uniform transcript's entries (role, text, tool calls), their texts clipped."""
    text = read_capped(path, CAPS["transcript.jsonl"])
    if text is None:
        notes.append("no transcript.jsonl in the run's directory")
        return []
    entries: list[dict[str, Any]] = []
    bad = 0
    for line in text.text.splitlines():
        try:
            item = json.loads(line)
        except json.JSONDecodeError:
            bad += 1
            continue
        if not isinstance(item, dict):
            bad += 1
            continue
        calls = item.get("tool_calls")
        entries.append(
            {
                "index": item.get("index", len(entries)),
                "role": str(item.get("role", "?")),
                "text": clip(str(item.get("text", "")), ENTRY_TEXT),
                "tool_calls": calls if isinstance(calls, list) else [],
            }
        )
    if bad:
        notes.append(f"transcript.jsonl: {bad} line(s) could not be read")
    if text.cut:
        notes.append(f"transcript.jsonl: its last {text.cut} bytes are past the viewer's cap")
    return entries


def _junit_address(node: str) -> tuple[str, str]:
    """``(classname, name)`` as pytest's JUnit XML writes a node id: ``tests/test_x.py::
    TestY::test_z`` is ``("tests.test_x.TestY", "test_z")``."""
    parts = node.split("::")
    module = parts[0].removesuffix(".py").replace("/", ".")
    return ".".join([module, *parts[1:-1]]), parts[-1]


def _failures(reports: list[Path], listed: list[str]) -> dict[str, str]:
    """Each listed test's failure or error text, from the first report that has one."""
    wanted = {_junit_address(node): node for node in listed}
    found: dict[str, str] = {}
    for path in reports:
        text = read_capped(path, CAPS["junit"])
        if text is None or text.cut:
            continue
        try:
            root = ET.fromstring(text.text)
        except ET.ParseError:
            continue
        for case in root.iter("testcase"):
            node = wanted.get((case.get("classname", ""), case.get("name", "")))
            if node is None or node in found:
                continue
            for child in case:
                if child.tag in ("failure", "error"):
                    said = child.text or child.get("message") or ""
                    found[node] = clip(said.strip(), FAILURE_TEXT)
                    break
    return found
