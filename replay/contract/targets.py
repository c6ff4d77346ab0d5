"""Where a contract scenario runs: the fake (default), or a live service named by environment.

The live target is built only from the environment, exactly as it would be for the real APIs
(``REPLAY_CONTRACT_LIVE=1`` with ``GITHUB_TOKEN``, ``SLACK_TOKEN``, ``LINEAR_API_KEY`` and the
sandbox's repository, channel and team). The base URLs default to the vendors' and can be
pointed elsewhere: CI points them at a *stand-in*, this project's fake served by uvicorn on
another loopback port, so the live code path (record, then compare) runs for real.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from fakes.core.server import CONTROL_PREFIX, ASGIApp, Receive, Scope, Send, WorldApp, build_world
from replay.base.errors import ReplayError
from replay.base.serving import serving
from replay.base.snapshot import load_snapshot

SERVICES = ("github", "slack", "linear")
Service = Literal["github", "slack", "linear"]
HOST = {"github": "api.github.com", "slack": "slack.com", "linear": "api.linear.app"}
DEFAULT_SNAPSHOT = Path(__file__).resolve().parents[2] / "snapshots" / "demo"

REAL_URLS = {
    "github": "https://api.github.com",
    "git": "https://github.com",
    "slack": "https://slack.com/api/",
    "linear": "https://api.linear.app/graphql",
}


class ContractSetupError(ReplayError):
    """A contract run cannot start: a variable or an option is missing or wrong."""


Wrap = Callable[[str, ASGIApp], ASGIApp]
"""Wraps one service's app (tests break a fake this way and check the suite notices)."""


@dataclass(frozen=True)
class Target:
    """Base URLs, credentials and sandbox names of the services a scenario talks to."""

    kind: Literal["fake", "stand-in", "real"]
    github_url: str
    git_url: str
    slack_url: str
    linear_url: str
    github_token: str
    slack_token: str
    linear_key: str
    repo: str
    """``owner/name`` of the sandbox repository; it needs a ``main`` branch."""
    channel: str
    """Slack channel id the bot is a member of."""
    team: str
    """Linear team key (``ENG``)."""
    control: str | None = None
    """The fake's control plane (``.../_replay``): only a fake or a stand-in has one; the
    scenarios that need it (a rate limit switched on, a scope taken away) skip elsewhere."""

    @property
    def is_live(self) -> bool:
        return self.kind != "fake"

    def origins(self) -> dict[str, str]:
        """Every origin this target's URLs may use -> the service name it becomes."""
        named = {
            "<github-api>": [self.github_url, REAL_URLS["github"]],
            "<github-web>": [self.git_url, REAL_URLS["git"]],
            "<slack>": [self.slack_url, "https://slack.com"],
            "<linear-api>": [self.linear_url, "https://api.linear.app"],
            "<linear-web>": ["https://linear.app"],
        }
        out: dict[str, str] = {}
        for name, urls in named.items():
            for url in urls:
                parts = urlsplit(url)
                out.setdefault(f"{parts.scheme}://{parts.netloc}", name)
        return out

    def url_for(self, service: str) -> str:
        return {"github": self.github_url, "slack": self.slack_url, "linear": self.linear_url}[
            service
        ]


class ServiceApp:
    """One service of a world on its own port: no Host routing, so clients may use
    ``http://127.0.0.1:PORT`` and the fake's own links point back at the same port."""

    def __init__(self, world: WorldApp, service: str, wrap: Wrap | None = None) -> None:
        self.world = world
        app = world.routes[HOST[service]]
        self.app = wrap(service, app) if wrap else app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path: str = scope.get("path", "")
        if scope["type"] == "lifespan" or path.startswith(CONTROL_PREFIX):
            await self.world(scope, receive, send)
            return
        await self.app(scope, receive, send)


@contextmanager
def serve_asgi(app: ASGIApp) -> Iterator[str]:
    """Serve ``app`` with uvicorn in a thread on 127.0.0.1 (any free port); yield its URL."""
    with serving(app, ws="none") as url:
        yield url


@dataclass(frozen=True)
class Served:
    """A world served one port per service."""

    urls: Mapping[str, str]
    world: WorldApp


@contextmanager
def serve_world(snapshot: Path = DEFAULT_SNAPSHOT, wrap: Wrap | None = None) -> Iterator[Served]:
    """The three fakes on one world (the demo snapshot by default), each on its own port."""
    world = build_world(load_snapshot(snapshot), SERVICES)
    try:
        with ExitStack() as stack:
            urls = {
                s: stack.enter_context(serve_asgi(ServiceApp(world, s, wrap))) for s in SERVICES
            }
            yield Served(urls, world)
    finally:
        close_world(world)


def close_world(world: WorldApp) -> None:
    """Close every fake of a built world (those that hold resources) and its database."""
    for fake in world.world.fakes.values():
        close: Any = getattr(fake, "close", None)
        if callable(close):
            close()
    world.world.engine.dispose()


DEMO = {"repo": "acme/semverkit", "channel": "C04QL1ENG", "team": "ENG"}
FAKE_TOKENS = {
    "github": "ghp_contracttest000000000000000000000",
    "slack": "xoxb-contract-test",
    "linear": "lin_api_contracttest",
}


def fake_target(served: Served, kind: Literal["fake", "stand-in"] = "fake") -> Target:
    """The target for a served world (the demo snapshot's repository, channel and team)."""
    return Target(
        kind=kind,
        github_url=served.urls["github"],
        git_url=served.urls["github"],
        slack_url=served.urls["slack"] + "/api/",
        linear_url=served.urls["linear"] + "/graphql",
        github_token=FAKE_TOKENS["github"],
        slack_token=FAKE_TOKENS["slack"],
        linear_key=FAKE_TOKENS["linear"],
        repo=DEMO["repo"],
        channel=DEMO["channel"],
        team=DEMO["team"],
        control=served.urls["github"] + CONTROL_PREFIX,
    )


def stand_in_env(served: Served) -> dict[str, str]:
    """The environment that makes :func:`live_target` use a served fake as the live service."""
    t = fake_target(served)
    return {
        "REPLAY_CONTRACT_LIVE": "1",
        "GITHUB_TOKEN": t.github_token,
        "SLACK_TOKEN": t.slack_token,
        "LINEAR_API_KEY": t.linear_key,
        "REPLAY_CONTRACT_GITHUB_REPO": t.repo,
        "REPLAY_CONTRACT_SLACK_CHANNEL": t.channel,
        "REPLAY_CONTRACT_LINEAR_TEAM": t.team,
        "REPLAY_CONTRACT_GITHUB_URL": t.github_url,
        "REPLAY_CONTRACT_GIT_URL": t.git_url,
        "REPLAY_CONTRACT_SLACK_URL": t.slack_url,
        "REPLAY_CONTRACT_LINEAR_URL": t.linear_url,
        "REPLAY_CONTRACT_CONTROL_URL": t.control or "",
    }


LIVE_NEEDS = {
    "github": ("GITHUB_TOKEN", "REPLAY_CONTRACT_GITHUB_REPO"),
    "slack": ("SLACK_TOKEN", "REPLAY_CONTRACT_SLACK_CHANNEL"),
    "linear": ("LINEAR_API_KEY", "REPLAY_CONTRACT_LINEAR_TEAM"),
}


def live_requested(env: Mapping[str, str] | None = None) -> bool:
    return (os.environ if env is None else env).get("REPLAY_CONTRACT_LIVE") == "1"


def live_target(service: str, env: Mapping[str, str] | None = None) -> Target:
    """The live target from the environment; a :class:`ContractSetupError` names what is
    missing."""
    env = os.environ if env is None else env
    missing = [name for name in LIVE_NEEDS[service] if not env.get(name)]
    if missing:
        raise ContractSetupError(f"live {service} contract run needs {', '.join(missing)} set")
    url = {k: env.get(f"REPLAY_CONTRACT_{k.upper()}_URL") or v for k, v in REAL_URLS.items()}
    loopback = all(
        urlsplit(url[s]).hostname in ("127.0.0.1", "localhost", "::1") for s in (service,)
    )
    return Target(
        kind="stand-in" if loopback else "real",
        github_url=url["github"],
        git_url=url["git"],
        slack_url=url["slack"],
        linear_url=url["linear"],
        github_token=env.get("GITHUB_TOKEN", ""),
        slack_token=env.get("SLACK_TOKEN", ""),
        linear_key=env.get("LINEAR_API_KEY", ""),
        repo=env.get("REPLAY_CONTRACT_GITHUB_REPO", ""),
        channel=env.get("REPLAY_CONTRACT_SLACK_CHANNEL", ""),
        team=env.get("REPLAY_CONTRACT_LINEAR_TEAM", ""),
        control=env.get("REPLAY_CONTRACT_CONTROL_URL") or None,
    )
