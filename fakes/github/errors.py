"""GitHub's errors, in its exact shape, raised by the backend and rendered by REST and GraphQL.

REST answers ``{"message", "documentation_url", "status"}`` (plus ``errors`` for a 422);
GraphQL maps the same exception to its ``type`` (``NOT_FOUND``, ``UNPROCESSABLE``...).
"""

from __future__ import annotations

import uuid
from collections.abc import MutableMapping
from typing import Any

from starlette.responses import JSONResponse, Response

DOCS = "https://docs.github.com/rest"


class GitHubError(Exception):
    """An answer GitHub gives instead of the resource; carries its status and body."""

    status: int = 400
    graphql_type: str = "UNPROCESSABLE"

    def __init__(
        self,
        message: str,
        *,
        documentation_url: str = DOCS,
        errors: list[Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.documentation_url = documentation_url
        self.errors = errors
        self.headers = headers or {}

    def body(self) -> dict[str, Any]:
        out: dict[str, Any] = {"message": self.message}
        if self.errors is not None:
            out["errors"] = self.errors
        out["documentation_url"] = self.documentation_url
        out["status"] = str(self.status)
        return out


class BadRequest(GitHubError):
    """400: a body that is not JSON ("Problems parsing JSON")."""

    status = 400
    graphql_type = "UNPROCESSABLE"


class Unauthorized(GitHubError):
    status = 401
    graphql_type = "UNAUTHORIZED"

    def __init__(self, message: str = "Requires authentication") -> None:
        super().__init__(message, documentation_url=DOCS)


class Forbidden(GitHubError):
    status = 403
    graphql_type = "FORBIDDEN"


class NotFound(GitHubError):
    status = 404
    graphql_type = "NOT_FOUND"

    def __init__(self, message: str = "Not Found", documentation_url: str = DOCS) -> None:
        super().__init__(message, documentation_url=documentation_url)


class MethodNotAllowed(GitHubError):
    """405: e.g. merging a pull request that cannot be merged."""

    status = 405
    graphql_type = "UNPROCESSABLE"


class Conflict(GitHubError):
    """409: e.g. a contents update whose ``sha`` is not the file's current blob."""

    status = 409
    graphql_type = "UNPROCESSABLE"


class StaleData(GitHubError):
    """The branch moved since the client read it: GraphQL ``createCommitOnBranch`` with an
    ``expectedHeadOid`` that is no longer the head (GraphQL only; type ``STALE_DATA``)."""

    status = 409
    graphql_type = "STALE_DATA"


class Unprocessable(GitHubError):
    """422 whose ``errors`` are plain strings (reviews: "Can not approve your own pull request")."""

    status = 422
    graphql_type = "UNPROCESSABLE"

    def __init__(self, *errors: str, message: str = "Unprocessable Entity") -> None:
        super().__init__(message, errors=list(errors) or None)


class ValidationFailed(GitHubError):
    """422 with GitHub's ``errors`` list: ``{resource, field, code}`` (and ``message``)."""

    status = 422
    graphql_type = "UNPROCESSABLE"

    def __init__(
        self,
        resource: str,
        field: str | None = None,
        code: str = "invalid",
        message: str | None = None,
        documentation_url: str = DOCS,
    ) -> None:
        error: dict[str, Any] = {"resource": resource, "code": code}
        if field is not None:
            error["field"] = field
        if message is not None:
            error["message"] = message
        super().__init__("Validation Failed", documentation_url=documentation_url, errors=[error])

    @property
    def detail(self) -> str:
        """A one-line explanation, for GraphQL's message."""
        err = (self.errors or [{}])[0]
        if "message" in err:
            return str(err["message"])
        return f"{err.get('resource')} {err.get('field', '')} is {err.get('code')}".replace(
            "  ", " "
        )


# --------------------------------------------------------------------------- the net's answers
# What fakes.core.net sends for a request no route may see and for a bug of the fake's own.


def not_found_response(scope: MutableMapping[str, Any]) -> Response:
    """GitHub's 404, for a path that names nothing (undecodable escapes, a NUL)."""
    body = NotFound().body()
    return JSONResponse(body, status_code=404, media_type="application/json; charset=utf-8")


def failure_response(scope: MutableMapping[str, Any]) -> Response:
    """GitHub's own failure: REST ``{"message": "Server Error"}``; GraphQL's "Something went
    wrong while executing your query" with the request id to quote."""
    request_id = uuid.uuid4().hex[:20].upper()
    path = str(scope.get("path", ""))
    if path in ("/graphql", "/api/graphql"):
        message = (
            "Something went wrong while executing your query. This may be the result of a "
            "timeout, or it could be a GitHub bug. Please include "
            f"`{request_id}` when reporting this issue."
        )
        body: dict[str, Any] = {"data": None, "errors": [{"message": message}]}
    else:
        body = {"message": "Server Error", "documentation_url": DOCS, "status": "500"}
    return JSONResponse(
        body,
        status_code=500,
        media_type="application/json; charset=utf-8",
        headers={"x-github-request-id": request_id},
    )
