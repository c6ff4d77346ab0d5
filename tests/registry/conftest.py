from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime

import pytest

from replay.base.manifest import PythonFile, RegistryIndex
from replay.registry import BlobStore, Registry, record_python, registry_app
from replay.registry.record import merge_python
from tests.registry.helpers import PythonUpstream, T, after, standard_upstream
from tests.serving import serving

SPECS = ["alpha", "alpha==1.0", "gamma-pkg"]


@dataclass
class Recorded:
    upstream: PythonUpstream
    upstream_url: str
    blobs: BlobStore
    files: list[PythonFile]
    """Recorded at T and again two days later, so it holds releases from after T too."""

    def registry(self, at: datetime = T) -> Registry:
        return Registry(RegistryIndex(schema=1, python=self.files), at, self.blobs)


@pytest.fixture(scope="session")
def upstream() -> Iterator[tuple[PythonUpstream, str]]:
    up = standard_upstream()
    with serving(up.app()) as url:
        yield up, url + "/simple/"


@pytest.fixture(scope="session")
def recorded(
    upstream: tuple[PythonUpstream, str], tmp_path_factory: pytest.TempPathFactory
) -> Recorded:
    up, url = upstream
    blobs = BlobStore(tmp_path_factory.mktemp("blobs"))
    at_t = record_python(SPECS, T, url, blobs)
    later = record_python(SPECS, after(days=2), url, blobs)
    return Recorded(up, url, blobs, merge_python(at_t, later))


@pytest.fixture()
def served(recorded: Recorded) -> Iterator[str]:
    """The registry recorded after T, served as of T, on one local origin."""
    with serving(registry_app(recorded.registry())) as url:
        yield url
