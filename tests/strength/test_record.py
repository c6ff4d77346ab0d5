"""A case's strength kept with its version (issue 37, point 2): ``strength.json`` beside the
case file carries the case digest; ``replay case stale`` says the strength at the current
version, or that it was never measured there (a changed gold patch, a changed case file),
without counting it as stale. No Docker: the measurement is written as ``case strength
--record`` writes it."""

from __future__ import annotations

from pathlib import Path

import pytest

from replay.base.case import case_digest, read_case
from replay.strength.model import CaseStrength
from replay.strength.record import STRENGTH_FILE, record_strength, recorded_strength
from tests.cases_alive.helpers import copy_case
from tests.cli_helpers import run_cli


def measured(digest: str, *, strong: bool = True) -> CaseStrength:
    return CaseStrength(
        case_id="demo-caret-zero",
        case_digest=digest,
        image="sha256:0",
        seed=0,
        max_mutants=20,
        threshold=0.9,
        generated=24,
        rejected=23 if strong else 17,
        survivors=1 if strong else 7,
        equivalent=0,
        possibly_equivalent=0,
        errors=0,
        strength=23 / 24 if strong else 17 / 24,
        strong=strong,
        weak_because=[] if strong else ["rejects 71% of wrong fixes, under 90%"],
        seconds=60.0,
        gold_seconds=3.0,
        timeout=120.0,
    )


def test_a_recorded_strength_counts_for_its_case_version_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = copy_case(tmp_path / "cases")
    never = run_cli(capsys, "case", "stale", str(path))
    assert never.code == 0, never.out + never.err
    assert "strength: never measured at this version" in never.out
    loaded = read_case(path)
    written = record_strength(loaded, measured(case_digest(loaded)))
    assert written == path.parent / STRENGTH_FILE
    assert recorded_strength(loaded) == measured(case_digest(loaded))
    ok = run_cli(capsys, "case", "stale", str(path))
    assert ok.code == 0 and "ok     demo-caret-zero" in ok.out
    assert "strength: 96% (23 rejected, 1 survived of 24 wrong fixes made), strong" in ok.out
    # A new version of the case (its gold patch changed): the old measurement is not its own.
    gold = path.parent / "gold.patch"
    gold.write_text(gold.read_text() + "\n")
    assert recorded_strength(read_case(path)) is None
    changed = run_cli(capsys, "case", "stale", str(path))
    assert changed.code == 0 and "strength: never measured at this version" in changed.out


def test_a_weak_measurement_is_said_and_another_versions_is_refused(tmp_path: Path) -> None:
    path = copy_case(tmp_path / "cases")
    loaded = read_case(path)
    record_strength(loaded, measured(case_digest(loaded), strong=False))
    from replay.strength.record import strength_line

    assert "WEAK: rejects 71% of wrong fixes, under 90%; strengthen it" in strength_line(loaded)
    with pytest.raises(ValueError, match="another case version"):
        record_strength(loaded, measured("0" * 64))


def test_a_strength_file_that_is_no_record_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = copy_case(tmp_path / "cases")
    (path.parent / STRENGTH_FILE).write_text('{"schema": 1, "case_id": "x"}')
    result = run_cli(capsys, "case", "stale", str(path))
    assert result.code == 2
    [line] = result.err.strip().splitlines()
    assert line.startswith(f"error: {path.parent / STRENGTH_FILE}: not a strength record (")
    assert line.endswith("; measure it again")


def test_a_weak_case_says_how_to_strengthen_or_accept_it_and_accepting_keeps_the_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = copy_case(tmp_path / "cases")  # its strength.json is the shipped version's
    shipped = (path.parent / STRENGTH_FILE).read_text()
    # Never measured at this version: nothing to accept, one line, exit 2, nothing written.
    never = run_cli(capsys, "case", "strength", "--accept", "equivalent", str(path))
    assert never.code == 2, never.out + never.err
    assert "never measured at this version; measure it first" in never.err
    assert (path.parent / STRENGTH_FILE).read_text() == shipped
    loaded = read_case(path)
    record_strength(loaded, measured(case_digest(loaded), strong=False))
    from replay.strength.record import strength_line

    flagged = strength_line(loaded)
    assert "WEAK: rejects 71% of wrong fixes, under 90%" in flagged
    assert "--extra-tests PATCH" in flagged and f"--accept REASON {path}" in flagged
    blank = run_cli(capsys, "case", "strength", "--accept", "  ", str(path))
    assert blank.code == 2 and "give the reason the case is accepted" in blank.err
    reason = "the survivors change a constant every key of one kind shares"
    ok = run_cli(capsys, "case", "strength", "--accept", reason, str(path))
    assert ok.code == 0, ok.out + ok.err
    assert f"demo-caret-zero: 71% weak, accepted: {reason}" in ok.out
    kept = recorded_strength(loaded)
    assert kept is not None and kept.accepted is not None and kept.accepted.reason == reason
    assert kept.rejected == 17 and kept.survivors == 7  # the measurement itself is untouched
    assert strength_line(loaded).endswith(f"weak, accepted: {reason}")
    stale = run_cli(capsys, "case", "stale", str(path))
    assert stale.code == 0 and f"weak, accepted: {reason}" in stale.out
    # A changed case is another version: its acceptance goes with the old measurement.
    gold = path.parent / "gold.patch"
    gold.write_text(gold.read_text() + "\n")
    assert "never measured" in strength_line(read_case(path))


def test_a_strong_case_has_nothing_to_accept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = copy_case(tmp_path / "cases")
    loaded = read_case(path)
    record_strength(loaded, measured(case_digest(loaded)))
    before = (path.parent / STRENGTH_FILE).read_text()
    result = run_cli(capsys, "case", "strength", "--accept", "why not", str(path))
    assert result.code == 2
    [line] = result.err.strip().splitlines()
    assert line.endswith("--accept: the case is strong; there is nothing to accept")
    assert (path.parent / STRENGTH_FILE).read_text() == before
