"""Assembling the GitHub fake: one ASGI app for all of GitHub's hosts.

Requests go, in order, to: git smart HTTP (any host, for paths shaped like
``/{owner}/{repo}[.git]/info/refs``, ``git-upload-pack`` or ``git-receive-pack``, so that
``git -c url.http://127.0.0.1:PORT/.insteadOf=https://github.com/`` works without a Host
override), raw files (``raw.githubusercontent.com``, and ``/raw/`` on any host as the
Enterprise layout has it), GraphQL (``/graphql`` and ``/api/graphql``), and REST (at the root
and under ``/api/v3``).
"""

from __future__ import annotations

import importlib
import json
from typing import Any

from fakes.core.gate import Gate
from fakes.core.server import ASGIApp, Receive, Scope, Send, host_of
from fakes.github.backend import GitHubBackend
from fakes.github.git_http import GitHTTP, is_git_path
from fakes.github.routes import make_rest_app

GRAPHQL_PATHS = ("/graphql", "/api/graphql")


def _graphql_app(backend: GitHubBackend) -> ASGIApp | None:
    try:
        module = importlib.import_module("fakes.github.graphql")
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.startswith("fakes.github.graphql"):
            return None
        raise
    make: Any = getattr(module, "make_graphql_app", None)
    return None if make is None else make(backend)


async def _not_found(scope: Scope, receive: Receive, send: Send) -> None:
    body = json.dumps(
        {
            "message": "Not Found",
            "documentation_url": "https://docs.github.com/rest",
            "status": "404",
        }
    ).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 404,
            "headers": [(b"content-type", b"application/json; charset=utf-8")],
        }
    )
    await send({"type": "http.response.body", "body": body})


class GitHubApp:
    """Dispatches one request to git, GraphQL or REST (see the module docstring)."""

    def __init__(self, backend: GitHubBackend) -> None:
        self.backend = backend
        self.git = GitHTTP(backend)
        self.rest = make_rest_app(backend)
        # REST is served through a gate (see fakes.core.gate). Git's long transfers must not
        # wait behind it; GraphQL is left as it was (not measured under load yet).
        self.gated_rest = Gate(self.rest)
        self.graphql = _graphql_app(backend)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.rest(scope, receive, send)
            return
        path: str = scope.get("path", "")
        if scope["type"] == "http" and is_git_path(path):
            await self.git(scope, receive, send)
            return
        if path in GRAPHQL_PATHS or any(path.startswith(p + "/") for p in GRAPHQL_PATHS):
            await (self.graphql or _not_found)(scope, receive, send)
            return
        if host_of(scope) == "raw.githubusercontent.com":
            scope = dict(scope)
            scope["path"] = "/raw" + path
            scope["raw_path"] = scope["path"].encode()
        await self.gated_rest(scope, receive, send)


def make_app(backend: GitHubBackend) -> ASGIApp:
    """The app serving every GitHub host for an already seeded backend."""
    return GitHubApp(backend)
