from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from replay.registry.blobs import ENV


@pytest.fixture(scope="package", autouse=True)
def blob_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Captures without ``blobs`` keep their git history in the default blob store: make that
    a fresh one for these tests (and the processes they start), not the checkout's."""
    root = tmp_path_factory.mktemp("blobs")
    before = os.environ.get(ENV)
    os.environ[ENV] = str(root)
    try:
        yield root
    finally:
        if before is None:
            os.environ.pop(ENV, None)
        else:
            os.environ[ENV] = before
