"""Grading steps that hit a limit because of the agent's diff fail its tests, never void the
run: a tree whose listing is past the cap of what is read back from the grading container (the
cap lowered here so that a few thousand long names reach it)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from replay.base.case import load_case, read_patch
from replay.grade.hidden_tests import GradingBox
from replay.runtime.base import Runtime
from replay.runtime.bounded import Caps
from replay.runtime.docker import DockerRuntime
from tests.run.conftest import CARET, caret_env

__all__ = ["caret_env"]


@pytest.fixture()
def small_caps(caret_env: tuple[Runtime, str]) -> Iterator[tuple[Runtime, str]]:
    runtime = DockerRuntime(caps=Caps(exec_output=1024**2))
    try:
        yield runtime, caret_env[1]
    finally:
        runtime.close()


def many_files(count: int, name_length: int) -> str:
    """A diff adding ``count`` empty files with long names under ``data/``."""
    parts = []
    for i in range(count):
        path = f"data/{i:06d}-" + "x" * name_length
        parts.append(
            f"diff --git a/{path} b/{path}\nnew file mode 100644\nindex 0000000..e69de29\n"
        )
    return "".join(parts)


def test_a_tree_too_large_to_list_fails_its_tests_and_is_not_infra(
    small_caps: tuple[Runtime, str],
) -> None:
    runtime, image = small_caps
    case = load_case(CARET)
    diff = read_patch(case.gold.patch) + many_files(6000, 200)
    with GradingBox(runtime, image, case, f"listing-{uuid.uuid4().hex[:8]}") as box:
        grading = box.prepare().grade(diff)
    assert grading.limited and grading.stopped is not None
    assert grading.stopped.startswith("the tree the agent's diff left is too large to list")
    assert not grading.verdict.resolved
    # The same cap, the gold fix alone: the base's listing fits, gold resolves.
    with GradingBox(runtime, image, case, f"listing-{uuid.uuid4().hex[:8]}") as box:
        gold = box.prepare().grade(read_patch(case.gold.patch))
    assert gold.verdict.resolved and gold.stopped is None
