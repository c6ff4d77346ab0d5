"""Copies of a demo case in a directory of cases of their own, to retire or make stale."""

from __future__ import annotations

import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "cases"


def copy_case(cases_dir: Path, name: str = "demo-caret-zero", edit=None) -> Path:  # type: ignore[no-untyped-def]
    """``cases_dir/<name>/case.yaml``, a copy of the demo case, its snapshot path made
    absolute, with ``edit(text) -> text`` applied to the case file."""
    target = cases_dir / name
    shutil.copytree(DEMO / name, target)
    text = (target / "case.yaml").read_text()
    text = text.replace("snapshot: ../../snapshots/demo", f"snapshot: {ROOT}/snapshots/demo")
    if edit is not None:
        text = edit(text)
    (target / "case.yaml").write_text(text)
    return target / "case.yaml"
