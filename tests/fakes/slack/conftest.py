"""A Slack world served by uvicorn on 127.0.0.1, and slack_sdk clients pointed at it.

The clients keep Slack's real host in the ``Host`` header (``headers={"Host": "slack.com"}``):
slack_sdk passes it through urllib and aiohttp unchanged, so the world's host router sends the
calls to the Slack fake exactly as the gateway will.
"""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import pytest
from slack_sdk import WebClient
from slack_sdk.http_retry import RetryHandler
from slack_sdk.web.async_client import AsyncWebClient

from fakes.core import WorldApp, build_world
from fakes.slack import SlackBackend
from replay.base.snapshot import load_snapshot
from tests.fakes.slack import world as slack_world
from tests.serving import serving

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
    with serving(app) as url:
        yield Served(app=app, url=url)
