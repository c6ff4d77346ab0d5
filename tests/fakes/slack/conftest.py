"""A Slack world served by uvicorn on 127.0.0.1, and slack_sdk clients pointed at it.

The clients keep Slack's real host in the ``Host`` header (``headers={"Host": "slack.com"}``):
slack_sdk passes it through urllib and aiohttp unchanged, so the world's host router sends the
calls to the Slack fake exactly as the gateway will.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import pytest
import uvicorn
from slack_sdk import WebClient
from slack_sdk.http_retry import RetryHandler
from slack_sdk.web.async_client import AsyncWebClient

from fakes.core import WorldApp, build_world
from fakes.slack import SlackBackend
from replay.snapshot.load import load_snapshot
from tests.fakes.slack import world as slack_world

BOT = "xoxb-1-agent"
USER = "xoxp-1-agent"


@dataclass
class Served:
    app: WorldApp
    url: str

    @property
    def backend(self) -> SlackBackend:
        return cast(SlackBackend, self.app.world.fakes["slack"])

    @property
    def base_url(self) -> str:
        return self.url + "/api/"

    def client(
        self, token: str | None = BOT, retry_handlers: list[RetryHandler] | None = None
    ) -> WebClient:
        return WebClient(
            token=token,
            base_url=self.base_url,
            headers={"Host": "slack.com"},
            retry_handlers=retry_handlers,
        )

    def async_client(self, token: str | None = BOT) -> AsyncWebClient:
        return AsyncWebClient(token=token, base_url=self.base_url, headers={"Host": "slack.com"})

    def events(self) -> list[dict[str, Any]]:
        with urllib.request.urlopen(self.url + "/_replay/events") as resp:
            return [json.loads(line) for line in resp.read().decode().splitlines()]


@pytest.fixture(scope="session")
def slack_snapshot_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return slack_world.build(tmp_path_factory.mktemp("slack-world"))


@pytest.fixture()
def served(slack_snapshot_dir: Path) -> Iterator[Served]:
    app = build_world(load_snapshot(slack_snapshot_dir), ["slack"], humans=slack_world.HUMANS)
    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield Served(app=app, url=f"http://127.0.0.1:{port}")
    finally:
        server.should_exit = True
        thread.join(timeout=10)
