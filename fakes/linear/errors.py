"""Errors in Linear's shape: a GraphQL error whose ``extensions`` carry ``type`` (what the SDK
switches on), ``code``, ``statusCode``, ``userError`` and ``userPresentableMessage``.

Shapes come from Linear's SDK (``packages/sdk/src/error.ts`` maps ``extensions.type``; its
tests expect "Authentication required, not authenticated - You need to authenticate to access
this operation." and "Entity not found - Could not find referenced Issue") and from bodies
captured from the real API and quoted in public client tests.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from starlette.responses import JSONResponse, Response

ErrorType = Literal[
    "authentication error",
    "forbidden",
    "invalid input",
    "ratelimited",
    "graphql error",
    "internal error",
]


class ErrorExtensions(BaseModel):
    """``errors[].extensions`` as Linear sends it."""

    model_config = ConfigDict(populate_by_name=True)

    type: ErrorType
    code: str
    status_code: int = Field(serialization_alias="statusCode")
    user_error: bool | None = Field(default=None, serialization_alias="userError")
    user_presentable_message: str | None = Field(
        default=None, serialization_alias="userPresentableMessage"
    )


class LinearError(Exception):
    """Raised by the backend or a resolver; rendered as one entry of ``errors``."""

    http_status = 200
    """What the whole response's HTTP status becomes when this error is the first."""

    def __init__(self, message: str, extensions: ErrorExtensions) -> None:
        super().__init__(message)
        self.message = message
        self.extensions = extensions

    def wire(self) -> dict[str, Any]:
        return {
            "message": self.message,
            "extensions": self.extensions.model_dump(by_alias=True, exclude_none=True),
        }


class AuthenticationError(LinearError):
    """No key, an unknown key, or a key sent the wrong way (a personal key with ``Bearer``)."""

    http_status = 401

    def __init__(self) -> None:
        super().__init__(
            "Authentication required, not authenticated",
            ErrorExtensions(
                type="authentication error",
                code="AUTHENTICATION_ERROR",
                status_code=401,
                user_presentable_message="You need to authenticate to access this operation.",
            ),
        )


class EntityNotFound(LinearError):
    """``issue(id:)`` and friends with an id that names nothing (HTTP 200, ``data: null``)."""

    def __init__(self, entity: str) -> None:
        super().__init__(
            f"Entity not found: {entity}",
            ErrorExtensions(
                type="invalid input",
                code="INPUT_ERROR",
                status_code=400,
                user_error=True,
                user_presentable_message=f"Could not find referenced {entity}.",
            ),
        )


class InvalidInput(LinearError):
    """An argument that is well-typed but not acceptable (a state of another team...)."""

    def __init__(self, presentable: str) -> None:
        super().__init__(
            "Argument Validation Error",
            ErrorExtensions(
                type="invalid input",
                code="INVALID_INPUT",
                status_code=400,
                user_error=True,
                user_presentable_message=presentable,
            ),
        )


def graphql_error_extensions(status: int = 400) -> dict[str, Any]:
    """What Linear adds to a document that does not parse or validate (HTTP 400)."""
    return ErrorExtensions(
        type="graphql error",
        code="GRAPHQL_VALIDATION_FAILED",
        status_code=status,
        user_error=True,
    ).model_dump(by_alias=True, exclude_none=True)


class InternalError(LinearError):
    """Linear failing on its side (HTTP 500): what the net answers for a bug of the fake's."""

    http_status = 500

    def __init__(self) -> None:
        super().__init__(
            "Internal server error",
            ErrorExtensions(
                type="internal error",
                code="INTERNAL_SERVER_ERROR",
                status_code=500,
                user_presentable_message="An internal error occurred.",
            ),
        )


def not_found_response(scope: MutableMapping[str, Any]) -> Response:
    """A path Linear does not serve (only ``/graphql`` exists): a 404 in the error shape."""
    extensions = graphql_error_extensions(404)
    body = {"errors": [{"message": "Not Found", "extensions": extensions}]}
    return JSONResponse(body, status_code=404)


def failure_response(scope: MutableMapping[str, Any]) -> Response:
    """Linear's own failure: HTTP 500 with an ``internal error``."""
    error = InternalError()
    return JSONResponse({"errors": [error.wire()]}, status_code=error.http_status)
