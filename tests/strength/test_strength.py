"""A weak case and a strong one from the same history, measured against the real Docker engine.

Both have the same gold patch, which fixes two behaviours (caret ranges on 0.x, numeric
prerelease order) and carries a line of dead code (:mod:`tests.strength.cases`); the weak
case's hidden tests check only the caret ranges. Each measurement grades the gold patch, 8
mutants, 5 partial fixes and 2 overfits, each in a grading container of its own (about two
minutes per case here).
"""

from __future__ import annotations

from pathlib import Path

import docker
import pytest

from replay.base.case import load_case, read_case
from replay.runtime import get_runtime
from replay.runtime.base import RUN_LABEL
from replay.strength import (
    CaseStrength,
    Ready,
    StrengthOptions,
    grade_diff,
    measure_strength,
    ready_image,
    report_lines,
)
from tests.strength.cases import DEAD_CODE, dead_line, gold_patch, write_case

VERSION = "src/semverkit/version.py"
OPTIONS = StrengthOptions(max_mutants=8, seed=0)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    work = tmp_path_factory.mktemp("strength")
    gold = gold_patch(work)
    (work / "gold.patch").write_text(gold)
    return {
        "gold": work / "gold.patch",
        "weak": write_case(work / "weak", gold, strong=False),
        "strong": write_case(work / "strong", gold, strong=True),
    }


@pytest.fixture(scope="module")
def measured(built: dict[str, Path]) -> dict[str, CaseStrength]:
    return {name: measure_strength(read_case(built[name]), OPTIONS) for name in ("weak", "strong")}


def test_the_weak_case_is_under_the_threshold_with_its_survivors_named(
    measured: dict[str, CaseStrength],
) -> None:
    weak = measured["weak"]
    assert not weak.strong
    assert weak.strength is not None and weak.strength < weak.threshold
    survivors = {r.name: r for r in weak.survived()}
    partial = [r for r in survivors.values() if r.kind == "partial"]
    mutants = [r for r in survivors.values() if r.kind == "mutant"]
    # Leaving out the whole prerelease fix passes hidden tests that never look at it.
    assert f"{VERSION} left out (as at the base commit)" in {r.description for r in partial}
    accepted = [why for why in weak.weak_because if why.startswith("they accept the partial")]
    assert accepted and all(r.name in accepted[0] for r in partial)
    assert mutants, "mutants of the unchecked behaviour survive"
    assert all(r.path == VERSION for r in mutants), (
        "every surviving mutant is in the part no test checks"
    )
    printed = "\n".join(report_lines(weak))
    assert printed.startswith("demo-caret-zero: WEAK: strength ")
    for r in survivors.values():
        assert r.diff.startswith("diff --git") and VERSION in r.from_gold, r.name
        assert f"survivor {r.name} ({r.kind})" in printed


def test_the_strong_case_is_above_the_threshold_and_accepts_no_partial_fix(
    measured: dict[str, CaseStrength],
) -> None:
    weak, strong = measured["weak"], measured["strong"]
    assert strong.strong and strong.weak_because == []
    assert strong.strength is not None and strong.strength >= strong.threshold
    assert not [r for r in strong.survived() if r.kind == "partial"]

    # The same mutants and partial fixes, graded against other hidden tests (the overfits
    # differ: their named inputs include the visible files of each case's listed tests).
    def same(result: CaseStrength) -> list[tuple[str, str]]:
        return [(r.name, r.diff) for r in result.results if r.kind != "overfit"]

    assert same(strong) == same(weak)
    for r in strong.results:
        if r.kind == "partial" and r.path == VERSION and r.verdict == "rejected":
            assert any("test_precedence.py" in t for t in r.not_passed), r


def test_dead_code_mutants_are_equivalent_not_survivors(
    measured: dict[str, CaseStrength], built: dict[str, Path]
) -> None:
    line = dead_line(built["gold"].read_text())
    for result in measured.values():
        dead = [r for r in result.results if r.kind == "mutant" and r.line == line]
        assert dead, "the dead line is mutated"
        assert all(r.verdict == "equivalent" and r.reason.startswith("dead code") for r in dead)
        assert not [r for r in result.survived() if r.line == line]
        judged = result.rejected + result.survivors
        assert result.strength == result.rejected / judged
        assert judged + result.equivalent + result.possibly_equivalent + result.errors == len(
            result.results
        )
    # Graded anyway, the dead code passes the hidden tests: counting it would have made one
    # more survivor.
    case = load_case(built["weak"])
    runtime = get_runtime("docker")
    try:
        ready = Ready(runtime, case, ready_image(case, runtime))
        dead = next(r for r in measured["weak"].results if r.kind == "mutant" and r.line == line)
        assert DEAD_CODE.strip().split("#")[0].strip() in dead.from_gold
        assert grade_diff(ready, dead.diff).verdict == "survived"
    finally:
        runtime.close()


def test_time_is_reported_per_case_and_per_wrong_fix(measured: dict[str, CaseStrength]) -> None:
    for result in measured.values():
        assert result.seconds > 0 and result.gold_seconds > 0
        assert result.timeout >= 120
        for r in result.results:
            graded = r.verdict in ("rejected", "survived", "error")
            assert (r.seconds > 0) == graded, r
            assert (r.applied == "apply") == graded, r
        again = CaseStrength.model_validate_json(result.to_json())
        assert again == result, "the JSON holds the whole measurement"


def test_every_grading_container_is_removed(measured: dict[str, CaseStrength]) -> None:
    """Each wrong fix had a container of its own (as each run has), and none is left."""
    client = docker.from_env()
    try:
        left = client.containers.list(all=True, filters={"label": RUN_LABEL})
        assert not [c.name for c in left if c.labels[RUN_LABEL].startswith("strength-")]
    finally:
        client.close()
