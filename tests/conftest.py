from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from replay.base.snapshot import Snapshot, load_snapshot
from replay.snapshot import build_snapshot
from tests import worlds

# Debian's index of package contents (what a failed build lacks: replay.images.system) is read
# from nowhere by the tests, which serve their own where they look one up: a test never sends
# anything off this machine (port 9, discard, answers no connection here). Set before any
# fixture runs, and inherited by the commands the tests start.
os.environ["REPLAY_DEBIAN_CONTENTS"] = "http://127.0.0.1:9/debian"

# `make test` runs the suite on three pytest-xdist workers, one per group below: the tests
# that build images (harness layers, release and mined images) on one, the tests that run
# sandboxes, worlds and gradings on another, and the rest (fakes, gateway, contracts: no
# container) on the third. Each group runs whole and in order on its worker, as the suite did
# on one: no two tests of a group share the engine at once, and a module's fixtures (and what
# one test leaves for the next) are as without xdist.
GROUPS = {
    "images": ("tests/harness/", "tests/images/", "tests/mine/", "tests/casebuild/"),
    "runs": (
        "tests/run/",
        "tests/batch/",
        "tests/runtime/",
        "tests/redteam/",
        "tests/grade/",
        "tests/strength/",
        "tests/results/",
        "tests/view/",
        "tests/registry/",
        "tests/cases_alive/",
        "tests/test_demo.py",
        "tests/test_real_cases.py",
        "tests/test_bench_rows.py",
        "tests/test_compare_demo.py",
        "tests/test_quickstart.py",
        "tests/contract/test_cli.py",
        "contract_tests/test_live_stand_in.py",
    ),
}


def group_of(nodeid: str) -> str:
    """The worker group of a test, by its path: ``images``, ``runs`` or ``rest``."""
    for name, prefixes in GROUPS.items():
        if nodeid.startswith(prefixes):
            return name
    return "rest"


@pytest.hookimpl(optionalhook=True)  # pytest-xdist's hook: `-n N` hands out whole groups
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    # (xdist's own --dist loadgroup marks cannot be used: pytest 9 no longer reads the
    # node ids it rewrites.)
    from xdist.scheduler import LoadScopeScheduling

    class ByGroup(LoadScopeScheduling):  # type: ignore[misc]
        def _split_scope(self, nodeid: str) -> str:
            return group_of(nodeid)

    return ByGroup(config, log)


@pytest.fixture(scope="session")
def tiny_sources(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return worlds.make_sources(tmp_path_factory.mktemp("tiny"))


@pytest.fixture(scope="session")
def tiny_snapshot_dir(tiny_sources: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("snap") / "tiny"
    build_snapshot(tiny_sources, out)
    return out


@pytest.fixture()
def tiny_snapshot(tiny_snapshot_dir: Path) -> Snapshot:
    return load_snapshot(tiny_snapshot_dir)


@pytest.fixture()
def tiny_case(tmp_path: Path, tiny_snapshot: Snapshot) -> Path:
    base = tiny_snapshot.manifest.repositories[0].base_commit
    return worlds.write_case(tmp_path / "case", tiny_snapshot.path, base)
