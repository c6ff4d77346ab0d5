"""The red-team corpus as data: every attack builds on every shipped case it applies to, its
names are unique and usable, and selecting by a wrong name says which names exist."""

from __future__ import annotations

from pathlib import Path

import pytest

from replay.base.case import load_case
from replay.base.outcomes import Outcome
from replay.base.snapshot import load_snapshot
from replay.run.attacks import ATTACKS, FAMILIES
from replay.run.redteam import UnknownAttackError, select
from replay.run.trajectories import BEHAVIOURS, TRAJECTORIES, build_script

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = sorted(ROOT.glob("cases/*/case.yaml"))


def test_every_attack_is_a_trajectory_with_a_unique_name_apart_from_the_behaviours() -> None:
    listed = [a.name for family in FAMILIES for a in family.ATTACKS]
    assert len(listed) == len(set(listed)) == len(ATTACKS)
    assert not set(listed) & set(BEHAVIOURS)
    assert set(TRAJECTORIES) == set(BEHAVIOURS) | set(listed)
    for attack in ATTACKS.values():
        assert attack.summary and attack.family
        assert attack.expect in Outcome


@pytest.mark.parametrize("case_file", SHIPPED, ids=lambda p: p.parent.name)
def test_every_attack_builds_on_every_shipped_case_it_applies_to(case_file: Path) -> None:
    case = load_case(case_file)
    snapshot = load_snapshot(case.snapshot)
    for attack in ATTACKS.values():
        if attack.applies_to(case.id):
            script = build_script(case, snapshot, attack.name)
            assert script.steps, attack.name
            assert script.name == attack.name


def test_each_attack_names_only_shipped_cases() -> None:
    shipped = {load_case(p).id for p in SHIPPED}
    for attack in ATTACKS.values():
        assert set(attack.cases) <= shipped, attack.name


def test_selecting_narrows_and_an_unknown_name_lists_the_known_ones() -> None:
    assert select() == list(ATTACKS.values())
    ci = select(ci=True)
    assert ci and all(a.ci for a in ci)
    assert select(families=["grader"]) == [a for a in ATTACKS.values() if a.family == "grader"]
    with pytest.raises(UnknownAttackError, match="did you mean spoof-conftest"):
        select(["spoof-confest"])
    with pytest.raises(UnknownAttackError, match="no family 'graders'"):
        select(families=["graders"])
