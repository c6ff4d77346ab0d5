"""A Linear world served by uvicorn on 127.0.0.1, reached as ``api.linear.app``.

Clients keep Linear's real host in the ``Host`` header, so the world's host router sends the
calls to the Linear fake exactly as the gateway will.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from fakes.core import WorldApp, build_world
from replay.base.snapshot import load_snapshot
from tests.fakes.linear import world as linear_world
from tests.serving import serving

API_KEY = "lin_api_0123456789abcdefABCDEF"
OAUTH = "lin_oauth_0123456789abcdef"
HOST = {"Host": "api.linear.app"}


@dataclass
class Served:
    app: WorldApp
    url: str

    @property
    def graphql_url(self) -> str:
        return self.url + "/graphql"

    def post(self, body: dict[str, Any], auth: str | None = API_KEY) -> httpx.Response:
        """A request as Linear's SDK sends it: JSON, ``Authorization`` as given."""
        headers = {**HOST, "Content-Type": "application/json", "User-Agent": "@linear/sdk@tests"}
        if auth is not None:
            headers["Authorization"] = auth
        return httpx.post(self.graphql_url, headers=headers, content=json.dumps(body))

    def events(self) -> list[dict[str, Any]]:
        resp = httpx.get(self.url + "/_replay/events", headers=HOST)
        resp.raise_for_status()
        return [json.loads(line) for line in resp.text.splitlines()]


@pytest.fixture(scope="session")
def linear_snapshot_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return linear_world.build(tmp_path_factory.mktemp("linear-world"))


@contextmanager
def serve(snapshot_dir: Path) -> Iterator[Served]:
    app = build_world(load_snapshot(snapshot_dir), ["linear"], humans=linear_world.HUMANS)
    with serving(app) as url:
        yield Served(app=app, url=url)


@pytest.fixture()
def served(linear_snapshot_dir: Path) -> Iterator[Served]:
    """A fresh world for each test that writes."""
    with serve(linear_snapshot_dir) as s:
        yield s


@pytest.fixture(scope="module")
def shared(linear_snapshot_dir: Path) -> Iterator[Served]:
    """One world for a module's read-only tests."""
    with serve(linear_snapshot_dir) as s:
        yield s
