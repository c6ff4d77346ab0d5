"""REST, served at the root (api.github.com) and under ``/api/v3`` (GitHub Enterprise).

This module assembles the app: the route modules' routers (each a plain ``APIRouter``; the
routes get the backend and the login through :mod:`fakes.github.routes_common`'s
dependencies, and page through :mod:`fakes.core.paging`), GitHub's errors in GitHub's shape,
and the headers every response carries. Thin routes: parse the request, call the backend
inside one session, render a wire schema.
"""

from __future__ import annotations

import re
import time
import uuid

from fastapi import APIRouter, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from fakes.core.server import ASGIApp, Message, Receive, Scope, Send
from fakes.github import (
    routes_events,
    routes_issues,
    routes_pulls,
    routes_repos,
    routes_users,
)
from fakes.github import schemas as w
from fakes.github.backend import GitHubBackend
from fakes.github.errors import DOCS, BadRequest, GitHubError, NotFound, ValidationFailed
from fakes.github.models import Repo
from fakes.github.routes_common import GitHubJSON, error_response

SCOPES = "repo, read:org, workflow"
MEDIA_TYPE = "github.v3; format=json"

ROUTERS: tuple[APIRouter, ...] = (
    routes_users.router,
    routes_repos.router,
    routes_events.router,  # before /issues/{number} claims /issues/events
    routes_issues.router,
    routes_pulls.router,
)
"""Every REST route, in the order they are matched."""


class RateBucket:
    """One of GitHub's rate limits: so many requests per window, counted as GitHub does."""

    def __init__(self, name: str, limit: int, window: int) -> None:
        self.name = name
        self.limit = limit
        self.window = window
        self.used = 0
        self.reset_at = int(time.time()) + window

    def count(self) -> tuple[int, int]:
        """Requests used in the current window (this one included) and when it ends."""
        now = int(time.time())
        if now >= self.reset_at:
            self.used = 0
            self.reset_at = now + self.window
        self.used += 1
        return self.used, self.reset_at


class GitHubHeaders:
    """Adds what GitHub puts on every response: rate limits, media type, request id.

    Search has its own bucket (``X-RateLimit-Resource: search``, 30 a minute), apart from
    the core 5,000 an hour, as api.github.com answers (octokit's recordings)."""

    WINDOW = 3600

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.core = RateBucket("core", 5000, self.WINDOW)
        self.search = RateBucket("search", 30, 60)

    def bucket(self, path: str) -> RateBucket:
        """The rate limit a request counts against."""
        bare = path.removeprefix("/api/v3")
        return self.search if bare.startswith("/search/") else self.core

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        bucket = self.bucket(scope.get("path", ""))
        used, reset = bucket.count()
        version = w.OLD_VERSION
        for key, value in scope.get("headers", []):
            if key == b"x-github-api-version" and value.decode("latin-1") >= w.NEW_VERSION:
                version = w.NEW_VERSION

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                names = {k.lower() for k, _ in headers}
                extra = {
                    b"x-github-media-type": MEDIA_TYPE,
                    b"x-github-api-version-selected": version,
                    b"x-ratelimit-limit": str(bucket.limit),
                    b"x-ratelimit-remaining": str(max(bucket.limit - used, 0)),
                    b"x-ratelimit-reset": str(reset),
                    b"x-ratelimit-used": str(used),
                    b"x-ratelimit-resource": bucket.name,
                    b"x-oauth-scopes": SCOPES,
                    b"x-accepted-oauth-scopes": "",
                    b"x-github-request-id": uuid.uuid4().hex[:20].upper(),
                }
                for key, value in extra.items():
                    if key not in names:
                        headers.append((key, value.encode()))
                message = {**message, "headers": headers}
            await send(message)

        token = w.API_VERSION.set(version)
        try:
            await self.app(scope, receive, send_with_headers)
        finally:
            w.API_VERSION.reset(token)


class ById:
    """``/repositories/{id}/...`` answered as ``/repos/{owner}/{name}/...``: GitHub's own
    pagination links point there (octokit's recordings), so clients follow them."""

    PATH = re.compile(r"^(/api/v3)?/repositories/(\d+)(/.+)$")

    def __init__(self, app: ASGIApp, backend: GitHubBackend) -> None:
        self.app = app
        self.backend = backend

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        m = self.PATH.match(scope.get("path", "")) if scope["type"] == "http" else None
        if m is not None and int(m.group(2)) <= 2**63 - 1:
            with self.backend.world.session() as s:
                row = s.get(Repo, int(m.group(2)))
                name = row.full_name if row is not None else None
            if name is not None:
                path = f"{m.group(1) or ''}/repos/{name}{m.group(3)}"
                scope = {**scope, "path": path, "raw_path": path.encode()}
        await self.app(scope, receive, send)


class JSONBodies:
    """A request body is read as JSON whatever its ``Content-Type``, as GitHub reads it (the
    curl examples of GitHub's REST docs send ``-d '{...}'``, which curl labels
    ``application/x-www-form-urlencoded``). FastAPI parses only a JSON type, and answered any
    other with a 422 quoting the body's Python bytes; now a valid body works and one that does
    not parse is GitHub's 400 "Problems parsing JSON", whatever it is labelled."""

    METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope.get("method") in self.METHODS:
            headers = list(scope.get("headers", []))
            kind = next((v for k, v in headers if k == b"content-type"), b"")
            media = kind.split(b";")[0].strip().lower()
            json_type = media.startswith(b"application/") and (
                media == b"application/json" or media.endswith(b"+json")
            )
            if not json_type:
                headers = [(k, v) for k, v in headers if k != b"content-type"]
                scope = {**scope, "headers": [*headers, (b"content-type", b"application/json")]}
        await self.app(scope, receive, send)


def make_rest_app(backend: GitHubBackend) -> ASGIApp:
    """The REST app: every route at the root and again under ``/api/v3``."""
    app = FastAPI(docs_url=None, redoc_url=None, openapi_url=None)
    app.state.backend = backend

    @app.exception_handler(GitHubError)
    async def github_error(request: Request, exc: GitHubError) -> Response:
        return error_response(exc)

    @app.exception_handler(RequestValidationError)
    async def bad_body(request: Request, exc: RequestValidationError) -> Response:
        # A path error comes first, as when paging was not yet a dependency of its own
        # (FastAPI lists a dependency's errors before the route's own path parameters).
        errors = sorted(exc.errors(), key=lambda e: (e.get("loc") or ("",))[0] != "path")
        first = errors[0] if errors else {}
        where = "/".join(str(p) for p in first.get("loc", ())[1:])
        source = first.get("loc", ("",))[0]
        if source == "path":
            # GitHub's routes only match numbers where a number goes (and none past int64).
            return error_response(NotFound())
        if source == "query":
            return error_response(ValidationFailed("Query", where or None, "invalid"))
        if first.get("type") == "json_invalid":
            return error_response(BadRequest("Problems parsing JSON"))
        if first.get("type") == "missing":
            detail = f'"{where}" wasn\'t supplied.'
        else:
            detail = f"For 'properties/{where}', {first.get('input')!r} is not valid."
        return GitHubJSON(
            {
                "message": f"Invalid request.\n\n{detail}",
                "documentation_url": DOCS,
                "status": "422",
            },
            status_code=422,
        )

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        if exc.status_code in (404, 405):
            return error_response(NotFound())
        return GitHubJSON({"message": str(exc.detail), "documentation_url": DOCS}, exc.status_code)

    for prefix in ("", "/api/v3"):
        for router in ROUTERS:
            app.include_router(router, prefix=prefix)
    app.add_middleware(ById, backend=backend)
    app.add_middleware(JSONBodies)
    return GitHubHeaders(app)
