from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from replay.base.blobs import ENV


@pytest.fixture(scope="package", autouse=True)
def blob_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Captures without ``blobs`` keep their git history in the default blob store: make that
    a fresh one for these tests (and the processes they start), not the checkout's."""
    root = tmp_path_factory.mktemp("blobs")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(ENV, str(root))
        yield root
