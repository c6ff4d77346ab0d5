from __future__ import annotations

from pathlib import Path

import pytest

from replay.base.snapshot import Snapshot, load_snapshot
from replay.snapshot import build_snapshot
from tests import worlds


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
