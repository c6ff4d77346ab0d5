"""The demo world's whole history, served by the fakes on loopback, and a clone of its
repository: what ``replay case mine`` reads in these tests."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import pytest

from fakes.core import build_world
from replay.base import gitrepo
from replay.base.blobs import ENV, default_root
from replay.snapshot import build_snapshot, load_snapshot
from tests.capture.serving import HostAs, serve

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ROOT / "snapshots" / "sources" / "demo"
LATE = datetime.fromisoformat("2026-05-01T00:00:00Z")
"""After the demo world's last event: the cut holds its whole history."""


@dataclass(frozen=True)
class Served:
    clone: Path
    github: str
    linear: str
    slack: str


@pytest.fixture(scope="package", autouse=True)
def blob_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Built cases keep their git history in the default blob store: a fresh one here,
    holding the checkout's package files (the registry the cases install from)."""
    root = tmp_path_factory.mktemp("blobs")
    shutil.copytree(default_root() / "sha256", root / "sha256")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(ENV, str(root))
        yield root


@pytest.fixture(scope="package")
def demo_history(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    tmp = tmp_path_factory.mktemp("demo-history")
    build_snapshot(SOURCES, tmp / "late", LATE)
    snapshot = load_snapshot(tmp / "late")
    bundle = tmp / "late" / snapshot.manifest.repositories[0].bundle  # type: ignore[operator]
    gitrepo.run(tmp, "clone", "-q", "-b", "main", str(bundle), str(tmp / "clone"))
    world = build_world(snapshot)
    try:
        with ExitStack() as stack:
            gh = stack.enter_context(serve(HostAs(world, "api.github.com")))
            lin = stack.enter_context(serve(HostAs(world, "api.linear.app")))
            sl = stack.enter_context(serve(HostAs(world, "slack.com")))
            yield Served(tmp / "clone", gh, f"{lin}/graphql", f"{sl}/api/")
    finally:
        world.world.engine.dispose()
