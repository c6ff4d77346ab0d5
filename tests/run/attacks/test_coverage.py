"""Every attack class of ``tests/redteam`` is a trajectory of the red-team corpus, and every
trajectory of the corpus can be carried into a sandbox and run there.

A module added to ``tests/redteam`` without its trajectories here fails the first test: the
corpus (``make redteam``, end to end through ``replay run``) is where the red team's attacks
are held on every demo case, the tests are where their details are.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from replay.base.case import load_case
from replay.base.snapshot import load_snapshot
from replay.run.attacks import ATTACKS
from replay.run.attacks.carry import ARG_LIMIT
from replay.run.trajectories import build_script

ROOT = Path(__file__).resolve().parents[3]
REDTEAM = ROOT / "tests" / "redteam"
SHIPPED = sorted(ROOT.glob("cases/*/case.yaml"))

IN_THE_CORPUS = {
    "test_answer": ("answer-in-sandbox", "answer-in-world"),
    "test_control_plane": ("control-plane-reset",),
    "test_crash": ("malformed-requests",),
    "test_egress": ("direct-egress", "egress-through-proxy"),
    "test_large_body": ("large-bodies",),
    "test_model_key": ("model-key-hunt",),
    "test_open_proxy": ("open-proxy-loopback",),
    "test_sandbox": ("rewrite-machinery",),
    "test_wire": ("abandoned-model-call",),
}
"""Module of ``tests/redteam`` -> the corpus's trajectories for the attack classes it holds."""


def test_every_red_team_module_has_its_attacks_in_the_corpus() -> None:
    modules = sorted(p.stem for p in REDTEAM.glob("test_*.py"))
    assert modules, f"no red-team tests under {REDTEAM}"
    unmapped = sorted(set(modules) - set(IN_THE_CORPUS))
    assert unmapped == [], f"tests/redteam modules with no trajectory in the corpus: {unmapped}"
    gone = sorted(set(IN_THE_CORPUS) - set(modules))
    assert gone == [], f"mapped modules that are no longer in tests/redteam: {gone}"
    missing = [n for names in IN_THE_CORPUS.values() for n in names if n not in ATTACKS]
    assert missing == [], f"not in the corpus: {missing}"


def test_each_mapped_attack_has_a_check_of_its_point() -> None:
    """What the red team's tests assert beyond an outcome, the corpus checks on the run."""
    unchecked = [n for names in IN_THE_CORPUS.values() for n in names if ATTACKS[n].check is None]
    assert unchecked == []


PROGRAM = re.compile(r"python3 - <<'REDTEAM_PY'\n(.*?)\nREDTEAM_PY", re.S)


@pytest.mark.parametrize("case_file", SHIPPED, ids=lambda p: p.parent.name)
def test_every_step_fits_one_argument_and_every_driver_compiles(case_file: Path) -> None:
    """A bash step is one argument of ``bash -c`` (128 KiB at most); the Python a driver
    runs in the sandbox is at least valid Python."""
    case = load_case(case_file)
    snapshot = load_snapshot(case.snapshot)
    drivers = 0
    for attack in ATTACKS.values():
        if not attack.applies_to(case.id):
            continue
        for step in build_script(case, snapshot, attack.name).steps:
            command = step.bash or ""
            assert len(command.encode()) <= ARG_LIMIT, (attack.name, len(command.encode()))
            for program in PROGRAM.findall(command):
                compile(program, f"<{attack.name}>", "exec")
                drivers += 1
    assert drivers >= sum(len(names) for names in IN_THE_CORPUS.values())
