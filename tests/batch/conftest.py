"""The batch tests run on both results stores: SQLite (one machine) and PostgreSQL (a server
of Debian's packages started for the session, one fresh database per test)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from replay.results import Store
from tests.postgres import fresh_database, postgres_server
from tests.run.conftest import caret_env  # noqa: F401 (the demo case's image, for real runs)


@pytest.fixture(scope="session")
def postgres() -> Iterator[str]:
    with postgres_server() as url:
        yield url


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path}/r.db"
    else:
        url = fresh_database(request.getfixturevalue("postgres"))
    store = Store(url)
    try:
        yield store
    finally:
        store.close()
