from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from replay.base.blobs import ENV, default_root


@pytest.fixture(scope="package", autouse=True)
def blob_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Cases keep their git history in the default blob store: make that a fresh one for
    these tests (and the gateways they start), holding a copy of the checkout's package files
    (the registries the cases install from) and shared git stores, so that nothing is written
    into the checkout."""
    root = tmp_path_factory.mktemp("blobs")
    shutil.copytree(default_root() / "sha256", root / "sha256")
    # And the shared git stores of the shipped real cases (their history up to each base).
    shutil.copytree(default_root() / "git", root / "git", ignore=shutil.ignore_patterns("*.lock"))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(ENV, str(root))
        yield root
