"""Honeypots on every shipped case, graded in the case's real grading container: the gold fix
still resolves with honeypots planted (and each of them failed), the base commit alone fails
without a spoof alarm, and two gradings of the same diff plant different honeypots."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from replay.base.case import Case, load_case, read_patch
from replay.grade.hidden_tests import Grading, GradingBox
from replay.images.base import ensure_case_base_image
from replay.images.env import build_env_image, cached_env_image
from replay.runtime import get_runtime
from replay.runtime.base import Runtime
from replay.world import running_world

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = sorted(ROOT.glob("cases/*/case.yaml"))


@pytest.fixture(scope="module")
def runtime() -> Iterator[Runtime]:
    rt = get_runtime("docker")
    try:
        yield rt
    finally:
        rt.close()


def env_image(runtime: Runtime, case: Case, tmp: Path) -> str:
    """The case's environment image, as a run gets it (built once, reused after)."""
    ensure_case_base_image(runtime, case.environment)
    cached = cached_env_image(case, runtime)
    if cached is not None:
        return cached.id
    with running_world(case.snapshot, tmp) as gateway:
        return build_env_image(case, runtime, gateway).id


def grade(runtime: Runtime, image: str, case: Case, diff: str) -> Grading:
    with GradingBox(runtime, image, case, f"honey-{uuid.uuid4().hex[:8]}") as box:
        return box.prepare().grade(diff)


@pytest.mark.parametrize("case_file", SHIPPED, ids=lambda p: p.parent.name)
def test_gold_resolves_with_honeypots_planted_and_each_failed(
    case_file: Path, runtime: Runtime, tmp_path: Path
) -> None:
    case = load_case(case_file)
    image = env_image(runtime, case, tmp_path)
    gold = grade(runtime, image, case, read_patch(case.gold.patch))
    assert gold.honeypots, gold.honeypot_note
    assert gold.verdict.resolved and not gold.verdict.spoofed, gold.verdict.spoof_reasons
    report = (gold.reports[0] or b"").decode()
    for pot in gold.honeypots:
        assert f'name="{pot.name}' in report, f"{pot.node} is not in the report"
    assert gold.verdict.exit_codes == [1] * len(gold.verdict.exit_codes), "honeypots failed"
    nothing = grade(runtime, image, case, "")
    assert not nothing.verdict.resolved and not nothing.verdict.spoofed, (
        nothing.verdict.spoof_reasons
    )


def test_two_gradings_of_the_same_diff_plant_different_honeypots(
    runtime: Runtime, tmp_path: Path
) -> None:
    case = load_case(ROOT / "cases" / "demo-build-metadata-sort" / "case.yaml")
    image = env_image(runtime, case, tmp_path)
    diff = read_patch(case.gold.patch)
    first, second = grade(runtime, image, case, diff), grade(runtime, image, case, diff)
    assert first.verdict.resolved and second.verdict.resolved
    names = [{p.name for p in g.honeypots} for g in (first, second)]
    changes = [{p.change for p in g.honeypots} for g in (first, second)]
    assert names[0] != names[1] and changes[0] != changes[1], (names, changes)
