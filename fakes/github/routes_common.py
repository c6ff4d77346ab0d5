"""What every REST route module shares: GitHub's JSON response, the dependencies that give a
route its backend and its authenticated login, the id path type, and a few reads."""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable, Sequence
from typing import Annotated, Any, TypeVar

from fastapi import Depends, Request
from fastapi import Path as PathParam
from fastapi.responses import JSONResponse, Response
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from fakes.github import schemas as w
from fakes.github.backend import GitHubBackend
from fakes.github.errors import GitHubError, Unauthorized, ValidationFailed
from fakes.github.models import Issue, Repo, User

T = TypeVar("T")

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


# --------------------------------------------------------------------------- dependencies


class Ctx:
    """What a route needs: the backend and the authenticated login."""

    def __init__(self, backend: GitHubBackend, login: str) -> None:
        self.backend = backend
        self.login = login

    def run(self, fn: Callable[[Session], T]) -> T:
        with self.backend.world.session() as s:
            return fn(s)


async def get_backend(request: Request) -> GitHubBackend:
    """The backend the REST app was made for (``app.state.backend``). Dependencies are
    ``async`` (they never block) so that FastAPI calls them inline, not each in a worker
    thread of its own: a request makes one thread hop, for its route, not three."""
    backend: GitHubBackend = request.app.state.backend
    return backend


async def get_ctx(request: Request, backend: Annotated[GitHubBackend, Depends(get_backend)]) -> Ctx:
    """The request's login from its ``Authorization`` header; 401 without a token."""
    login = backend.authenticate(request.headers.get("authorization"))
    if login is None:
        raise Unauthorized()
    return Ctx(backend, login)


Auth = Annotated[Ctx, Depends(get_ctx)]
"""An authenticated route's parameter: ``def get_thing(..., ctx: Auth)``."""

INT64_MAX = 2**63 - 1
Id = Annotated[int, PathParam(ge=0, le=INT64_MAX)]
"""A number or id in the path: GitHub's are 64-bit, and anything else names nothing (404)."""


# --------------------------------------------------------------------------- shared reads


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


def decode_content(text: str) -> bytes:
    try:
        return base64.b64decode(text, validate=False)
    except (binascii.Error, ValueError) as exc:
        raise ValidationFailed("Commit", "content", "invalid") from exc
