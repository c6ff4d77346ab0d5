"""The demo world the project ships: valid cases, a clean cut, a reproducible snapshot."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from replay.base.case import load_case
from replay.snapshot import build_snapshot, load_snapshot
from replay.snapshot.audit import dated_after
from tests.cli_helpers import run_cli

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "snapshots" / "demo"
SOURCES = ROOT / "snapshots" / "sources" / "demo"
CASES = sorted((ROOT / "cases").glob("*/case.yaml"))
DEMO_CASES = sorted((ROOT / "cases").glob("demo-*/case.yaml"))


def test_there_are_at_least_three_demo_cases_of_different_kinds() -> None:
    cases = [load_case(p) for p in DEMO_CASES]
    assert len(cases) >= 3
    services = {c.ticket.service for c in cases}
    assert {"github", "linear"} <= services
    assert any(c.humans for c in cases), "one case needs a person's hint"
    assert any("human-rescued" in c.tags for c in cases)
    for c in cases:
        assert c.snapshot == DEMO.resolve()
        assert any(r.forbidden for r in c.side_effects), f"{c.id}: no forbidden effect"
        assert any((r.at_least or 0) >= 1 for r in c.side_effects), f"{c.id}: no expected effect"


@pytest.mark.parametrize("case_file", CASES, ids=[p.parent.name for p in CASES])
def test_case_validates(capsys, case_file: Path) -> None:
    result = run_cli(capsys, "case", "validate", str(case_file))
    assert result.code == 0, result.err
    assert "gold patch applies at the base commit" in result.out


def test_inspect_shows_t_and_counts(capsys) -> None:
    result = run_cli(capsys, "snapshot", "inspect", str(DEMO))
    assert result.code == 0, result.err
    snap = load_snapshot(DEMO)
    assert f"T         {snap.at.isoformat()}" in result.out
    for what in (
        "github issues",
        "github pull requests",
        "linear issues",
        "slack messages",
        "registry python files",
    ):
        assert what in result.out
    assert snap.github.issues and snap.linear.issues and snap.slack.channels


def test_nothing_in_the_demo_is_dated_after_t() -> None:
    assert dated_after(load_snapshot(DEMO)) == []


def test_the_sources_really_hold_later_activity() -> None:
    """The cut is real: the sources hold PRs, commits and messages after T; the snapshot not."""
    import yaml

    world = yaml.safe_load((SOURCES / "world.yaml").read_text())
    snap = load_snapshot(DEMO)
    at = snap.at.isoformat().replace("+00:00", "Z")
    later_pulls = [p for p in world["github"]["pulls"] if str(p["created_at"]) > at]
    assert later_pulls, "the merged fix PRs are in the sources"
    served = {(p.repo, p.number) for p in snap.github.pulls}
    assert not any((p["repo"], p["number"]) in served for p in later_pulls)
    history = sorted((SOURCES / "history").glob("*.patch"))
    assert len(history) > 12
    assert json.loads((DEMO / "manifest.json").read_text())["repositories"]


def test_regenerating_gives_identical_hashes(tmp_path: Path) -> None:
    first = build_snapshot(SOURCES, tmp_path / "one")
    second = build_snapshot(SOURCES, tmp_path / "two")
    shipped = load_snapshot(DEMO).manifest
    assert first.parts == second.parts == shipped.parts
    assert (tmp_path / "one" / "manifest.json").read_bytes() == (
        DEMO / "manifest.json"
    ).read_bytes()
