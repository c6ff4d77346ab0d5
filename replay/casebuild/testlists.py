"""FAIL_TO_PASS and PASS_TO_PASS, measured: the hidden tests run before and after the gold
patch in the case's environment image, several times each; a test whose result flips is
dropped (SWE-bench ran once and let flaky tests in; later datasets repeat the gold)."""

from __future__ import annotations

import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path

import yaml

from replay.base.case import load_case
from replay.grade.hidden_tests import grade_hidden_tests
from replay.grade.junit import TestStatus, parse_junit
from replay.images.base import ensure_base_image
from replay.images.env import build_env_image
from replay.runtime.base import Runtime
from replay.world import running_world

MIN_REPEATS = 3


@dataclass(frozen=True)
class TestLists:
    fail_to_pass: list[str]
    pass_to_pass: list[str]
    flaky: list[str]
    """Tests whose result changed between repeats of the same side: left out of both lists."""


def _statuses(reports: list[bytes | None]) -> list[dict[str, TestStatus]]:
    return [parse_junit(r) if r is not None else {} for r in reports]


def classify(before: list[dict[str, TestStatus]], after: list[dict[str, TestStatus]]) -> TestLists:
    """Sort every test seen into F2P, P2P or flaky; tests failing after the fix are neither."""
    names = sorted({n for run in [*before, *after] for n in run})
    f2p, p2p, flaky = [], [], []
    for name in names:
        b = {run.get(name, "missing") for run in before}
        a = {run.get(name, "missing") for run in after}
        if len(b) > 1 or len(a) > 1:
            flaky.append(name)
        elif a == {"passed"} and b == {"passed"}:
            p2p.append(name)
        elif a == {"passed"}:
            f2p.append(name)
    return TestLists(f2p, p2p, flaky)


def measure(case_path: Path, runtime: Runtime, repeats: int = MIN_REPEATS) -> TestLists:
    """Run the case's hidden tests without and with the gold patch, ``repeats`` times each."""
    if repeats < MIN_REPEATS:
        raise ValueError(f"at least {MIN_REPEATS} repeats are needed to see flaky tests")
    case = load_case(case_path)
    case = case.model_copy(
        update={"hidden_tests": case.hidden_tests.model_copy(update={"repeat": repeats})}
    )
    ensure_base_image(runtime)
    with (
        tempfile.TemporaryDirectory(prefix="replay-casebuild-") as tmp,
        running_world(case.snapshot, Path(tmp)) as gateway,
    ):
        env = build_env_image(case, runtime, gateway)
    run_id = f"casebuild-{uuid.uuid4().hex[:12]}"
    before = grade_hidden_tests(runtime, env.id, case, "", f"{run_id}-before")
    after = grade_hidden_tests(runtime, env.id, case, case.gold.patch.read_text(), run_id)
    return classify(_statuses(before.reports), _statuses(after.reports))


def write_lists(case_path: Path, lists: TestLists) -> None:
    """Put the measured lists into the case file (the rest of it is left as it was)."""
    data = yaml.safe_load(case_path.read_text())
    data["hidden_tests"]["fail_to_pass"] = lists.fail_to_pass
    data["hidden_tests"]["pass_to_pass"] = lists.pass_to_pass
    case_path.write_text(yaml.safe_dump(data, sort_keys=False, width=100))
    load_case(case_path)
