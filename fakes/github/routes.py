"""REST, served at the root (api.github.com) and under ``/api/v3`` (GitHub Enterprise).

This module assembles the app: the route modules' routers (each a plain ``APIRouter``; the
routes get the backend and the login through :mod:`fakes.github.routes_common`'s
dependencies, and page through :mod:`fakes.core.paging`), GitHub's errors in GitHub's shape,
and the headers every response carries. Thin routes: parse the request, call the backend
inside one session, render a wire schema.
"""

from __future__ import annotations

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


class GitHubHeaders:
    """Adds what GitHub puts on every response: rate limits, media type, request id."""

    WINDOW = 3600

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.used = 0
        self.reset_at = int(time.time()) + self.WINDOW

    def _count(self) -> tuple[int, int]:
        """Requests used in the current hour and when it ends, as GitHub's core limit counts."""
        now = int(time.time())
        if now >= self.reset_at:
            self.used = 0
            self.reset_at = now + self.WINDOW
        self.used += 1
        return self.used, self.reset_at

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        used, reset = self._count()
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
                    b"x-ratelimit-limit": "5000",
                    b"x-ratelimit-remaining": str(max(5000 - used, 0)),
                    b"x-ratelimit-reset": str(reset),
                    b"x-ratelimit-used": str(used),
                    b"x-ratelimit-resource": "core",
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
    return GitHubHeaders(app)
