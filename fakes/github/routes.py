"""REST, served at the root (api.github.com) and under ``/api/v3`` (GitHub Enterprise).

Thin routes: parse the request, call the backend inside one session, render a wire schema.
This module holds the app, what every response shares (GitHub's headers, errors in GitHub's
shape, authentication, ``Link`` pagination) and the user and repository endpoints; issues
and pull requests live in :mod:`fakes.github.routes_issues` and
:mod:`fakes.github.routes_pulls`, issue events and timelines in
:mod:`fakes.github.routes_events`.
"""

import base64
import binascii
import json
import time
import uuid
from collections.abc import Callable, Sequence
from typing import Annotated, Any, TypeVar
from urllib.parse import parse_qsl, urlencode

from fastapi import APIRouter, Depends, FastAPI, Query, Request
from fastapi import Path as PathParam
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from sqlalchemy import func, select
from sqlalchemy.orm import Session
from starlette.exceptions import HTTPException as StarletteHTTPException

from fakes.core.server import ASGIApp, Message, Receive, Scope, Send
from fakes.github import render
from fakes.github import schemas as w
from fakes.github.backend import GitHubBackend
from fakes.github.errors import (
    DOCS,
    BadRequest,
    GitHubError,
    NotFound,
    Unauthorized,
    ValidationFailed,
)
from fakes.github.models import Issue, Repo, User

T = TypeVar("T")

SCOPES = "repo, read:org, workflow"
MEDIA_TYPE = "github.v3; format=json"
JSON_TYPE = "application/json; charset=utf-8"


# --------------------------------------------------------------------------- responses


class GitHubJSON(JSONResponse):
    media_type = JSON_TYPE

    def render(self, content: Any) -> bytes:
        return json.dumps(content, ensure_ascii=False, separators=(",", ":")).encode()


def wire(
    value: w.Wire | Sequence[w.Wire], status: int = 200, headers: dict[str, str] | None = None
) -> Response:
    body = [v.wire() for v in value] if isinstance(value, Sequence) else value.wire()
    return GitHubJSON(body, status_code=status, headers=headers or None)


def error_response(exc: GitHubError) -> Response:
    return GitHubJSON(exc.body(), status_code=exc.status, headers=exc.headers or None)


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


# --------------------------------------------------------------------------- shared parts


class Ctx:
    """What a route needs: the backend and the authenticated login."""

    def __init__(self, backend: GitHubBackend, login: str) -> None:
        self.backend = backend
        self.login = login

    def run(self, fn: Callable[[Session], T]) -> T:
        with self.backend.world.session() as s:
            return fn(s)


def make_auth(backend: GitHubBackend) -> Callable[[Request], Ctx]:
    def auth(request: Request) -> Ctx:
        login = backend.authenticate(request.headers.get("authorization"))
        if login is None:
            raise Unauthorized()
        return Ctx(backend, login)

    return auth


def paginate(
    request: Request, items: Sequence[T], per_page: int, page: int
) -> tuple[list[T], dict[str, str]]:
    """One page and GitHub's ``Link`` header (on the URL the request came in on)."""
    per_page = max(1, min(per_page, 100))
    page = max(page, 1)
    last = max((len(items) + per_page - 1) // per_page, 1)
    chunk = list(items[(page - 1) * per_page : page * per_page])
    return chunk, page_links(request, per_page, page, page < last, last)


def page_links(
    request: Request, per_page: int, page: int, has_next: bool, last: int | None = None
) -> dict[str, str]:
    """GitHub's ``Link`` header; ``last`` is left out where counting would cost a full walk
    (GitHub leaves it out of commit lists too)."""
    params = dict(parse_qsl(request.url.query, keep_blank_values=True))
    base = str(request.url.replace(query=""))

    def link(n: int, rel: str) -> str:
        return f'<{base}?{urlencode({**params, "per_page": per_page, "page": n})}>; rel="{rel}"'

    rels = []
    if page > 1:
        rels += [link(page - 1, "prev")]
    if has_next:
        rels += [link(page + 1, "next")]
        if last is not None:
            rels += [link(last, "last")]
    if page > 1:
        rels += [link(1, "first")]
    return {"Link": ", ".join(rels)} if rels else {}


PerPage = Annotated[int, Query(ge=1)]
Page = Annotated[int, Query(ge=1)]
INT64_MAX = 2**63 - 1
Id = Annotated[int, PathParam(ge=0, le=INT64_MAX)]
"""A number or id in the path: GitHub's are 64-bit, and anything else names nothing (404)."""


def open_issue_count(s: Session, r: Repo) -> int:
    q = select(func.count()).select_from(Issue).where(Issue.repo_id == r.id, Issue.state == "open")
    return int(s.scalar(q) or 0)


def users_by_email(s: Session) -> dict[str, User]:
    out: dict[str, User] = {}
    for u in s.scalars(select(User)):
        out[f"{u.id}+{u.login}@users.noreply.github.com".lower()] = u
        if u.email:
            out[u.email.lower()] = u
    return out


# --------------------------------------------------------------------------- routes


def user_routes(router: APIRouter, auth: Callable[[Request], Ctx]) -> None:
    @router.get("/user")
    def get_user(ctx: Annotated[Ctx, Depends(auth)]) -> Response:
        def go(s: Session) -> w.Wire:
            u = ctx.backend.user(s, ctx.login)
            owned = list(s.scalars(select(Repo).where(Repo.owner_id == u.id)))
            private = sum(1 for r in owned if r.private)
            return render.private_user(u, len(owned) - private, private)

        return wire(ctx.run(go))

    @router.get("/users/{login}")
    def get_user_by_login(login: str, ctx: Annotated[Ctx, Depends(auth)]) -> Response:
        def go(s: Session) -> w.Wire:
            u = ctx.backend.user(s, login)
            q = select(Repo).where(Repo.owner_id == u.id, Repo.private.is_(False))
            return render.public_user(u, len(list(s.scalars(q))))

        return wire(ctx.run(go))


def root_document(base: str) -> dict[str, str]:
    return {
        "current_user_url": f"{base}/user",
        "current_user_authorizations_html_url": "https://github.com/settings/connections/applications{/client_id}",
        "code_search_url": f"{base}/search/code?q={{query}}{{&page,per_page,sort,order}}",
        "commit_search_url": f"{base}/search/commits?q={{query}}{{&page,per_page,sort,order}}",
        "emails_url": f"{base}/user/emails",
        "emojis_url": f"{base}/emojis",
        "events_url": f"{base}/events",
        "feeds_url": f"{base}/feeds",
        "followers_url": f"{base}/user/followers",
        "following_url": f"{base}/user/following{{/target}}",
        "gists_url": f"{base}/gists{{/gist_id}}",
        "issue_search_url": f"{base}/search/issues?q={{query}}{{&page,per_page,sort,order}}",
        "issues_url": f"{base}/issues",
        "keys_url": f"{base}/user/keys",
        "label_search_url": (
            f"{base}/search/labels?q={{query}}&repository_id={{repository_id}}{{&page,per_page}}"
        ),
        "notifications_url": f"{base}/notifications",
        "organization_url": f"{base}/orgs/{{org}}",
        "organization_repositories_url": f"{base}/orgs/{{org}}/repos{{?type,page,per_page,sort}}",
        "organization_teams_url": f"{base}/orgs/{{org}}/teams",
        "public_gists_url": f"{base}/gists/public",
        "rate_limit_url": f"{base}/rate_limit",
        "repository_url": f"{base}/repos/{{owner}}/{{repo}}",
        "repository_search_url": (
            f"{base}/search/repositories?q={{query}}{{&page,per_page,sort,order}}"
        ),
        "current_user_repositories_url": f"{base}/user/repos{{?type,page,per_page,sort}}",
        "starred_url": f"{base}/user/starred{{/owner}}{{/repo}}",
        "starred_gists_url": f"{base}/gists/starred",
        "topic_search_url": f"{base}/search/topics?q={{query}}{{&page,per_page}}",
        "user_url": f"{base}/users/{{user}}",
        "user_organizations_url": f"{base}/user/orgs",
        "user_repositories_url": f"{base}/users/{{user}}/repos{{?type,page,per_page,sort}}",
        "user_search_url": f"{base}/search/users?q={{query}}{{&page,per_page,sort,order}}",
    }


def make_rest_app(backend: GitHubBackend) -> ASGIApp:
    """The REST app: every route at the root and again under ``/api/v3``."""
    from fakes.github import routes_events, routes_issues, routes_pulls, routes_repos

    app = FastAPI(docs_url=None, redoc_url=None, openapi_url=None)
    auth = make_auth(backend)

    @app.exception_handler(GitHubError)
    async def github_error(request: Request, exc: GitHubError) -> Response:
        return error_response(exc)

    @app.exception_handler(RequestValidationError)
    async def bad_body(request: Request, exc: RequestValidationError) -> Response:
        first = exc.errors()[0] if exc.errors() else {}
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
        router = APIRouter()

        @router.get("/")
        def root(request: Request, ctx: Annotated[Ctx, Depends(auth)]) -> Response:
            base = "https://api.github.com"
            if request.url.path.startswith("/api/v3"):
                base = f"{request.url.scheme}://{request.url.netloc}/api/v3"
            return GitHubJSON(root_document(base))

        @router.get("/rate_limit")
        def rate_limit(ctx: Annotated[Ctx, Depends(auth)]) -> Response:
            core = {"limit": 5000, "used": 0, "remaining": 5000, "reset": int(time.time()) + 3600}
            return GitHubJSON(
                {"resources": {"core": core, "search": core, "graphql": core}, "rate": core}
            )

        user_routes(router, auth)
        routes_repos.add(router, auth)
        routes_events.add(router, auth)  # before /issues/{number} claims /issues/events
        routes_issues.add(router, auth)
        routes_pulls.add(router, auth)
        app.include_router(router, prefix=prefix)
    return GitHubHeaders(app)


def decode_content(text: str) -> bytes:
    try:
        return base64.b64decode(text, validate=False)
    except (binascii.Error, ValueError) as exc:
        raise ValidationFailed("Commit", "content", "invalid") from exc
