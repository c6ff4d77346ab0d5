"""``docs/compare-report.md`` documents every key of the ``replay.compare/1`` document, one
line each, under the names it uses (``Arm.mean.se``, ``Run.reason``, ``gates[].status``)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.compare.htmltree import FIXTURES, load

DOC = Path(__file__).resolve().parents[2] / "docs" / "compare-report.md"

# Where an object of a named kind sits in the document (paths with [] for list items).
KINDS = {
    "arms.A": "Arm",
    "arms.B": "Arm",
    "arms.A.unhealthy[]": "Run",
    "arms.B.unhealthy[]": "Run",
    "cases[]": "CaseRow",
    "cases[].A": "ArmCase",
    "cases[].B": "ArmCase",
    "cases[].A.runs[]": "Run",
    "cases[].B.runs[]": "Run",
}
OPEN_MAPS = {"Arm.settings"}
"""Objects whose keys are data (a candidate's own settings), not fields."""


def keys(value: Any, path: str, name: str) -> Iterator[str]:
    """The documented name of every key under ``value``."""
    if isinstance(value, list):
        for item in value:
            yield from keys(item, path + "[]", name + "[]")
        return
    if not isinstance(value, dict) or name in OPEN_MAPS:
        return
    for key, child in value.items():
        child_path = f"{path}.{key}" if path else key
        kind = KINDS.get(child_path) or KINDS.get(child_path + "[]")
        child_name = f"{name}.{key}" if name else key
        yield child_name
        if kind is not None and isinstance(child, dict):
            yield from keys(child, child_path, kind)
        elif kind is not None:
            for item in child:
                yield from keys(item, child_path + "[]", kind)
        else:
            yield from keys(child, child_path, child_name)


def test_every_key_of_every_fixture_is_documented() -> None:
    fields = DOC.read_text().split("## Fields", 1)[1].split("\n## ", 1)[0]
    documented = set(re.findall(r"^- `([^`]+)`: \S", fields, re.MULTILINE))
    found = {key for name in FIXTURES for key in keys(load(name), "", "")}
    assert found - documented == set(), "keys the docs do not describe"
    assert documented - found == set(), "documented keys no fixture has"
    assert "schema" in documented and "Run.diff" in documented
