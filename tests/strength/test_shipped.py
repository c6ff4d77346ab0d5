"""The shipped cases' strength (issue 37, point 4): every case in ``cases/`` has its strength
recorded at its current digest, and measuring a demo case and a real one again with the
recorded seed and bound gives the same wrong fixes and the same verdicts (``make strength``
measures every shipped case). Docker, the environment images ``make demo`` builds."""

from __future__ import annotations

from pathlib import Path

import pytest

from replay.base.case import read_case
from replay.strength import StrengthOptions, measure_strength
from replay.strength.record import recorded_strength, strength_path

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = sorted(ROOT.glob("cases/*/case.yaml"))


def test_every_shipped_case_has_its_strength_recorded_at_its_current_version() -> None:
    assert len(SHIPPED) >= 7
    unmeasured = [
        str(path.parent.name) for path in SHIPPED if recorded_strength(read_case(path)) is None
    ]
    assert unmeasured == [], (
        f"measure them: replay case strength --record {' '.join(unmeasured)} (a case changed "
        "since its strength was recorded, or a new case)"
    )


@pytest.mark.parametrize("name", ["demo-caret-zero", "humanize-naturalsize-one-byte"])
def test_measured_again_it_gives_the_recorded_verdicts(name: str) -> None:
    loaded = read_case(ROOT / "cases" / name / "case.yaml")
    recorded = recorded_strength(loaded)
    assert recorded is not None, strength_path(loaded)
    again = measure_strength(
        loaded,
        StrengthOptions(
            max_mutants=recorded.max_mutants,
            seed=recorded.seed,
            threshold=recorded.threshold,
        ),
    )
    assert again.case_digest == recorded.case_digest
    assert [(r.name, r.description, r.verdict) for r in again.results] == [
        (r.name, r.description, r.verdict) for r in recorded.results
    ]
    assert (again.strength, again.strong) == (recorded.strength, recorded.strong)
    assert again.seconds > 0 and all(r.seconds >= 0 for r in again.results)
