"""Slack's errors: HTTP 200 with ``{"ok": false, "error": "<code>"}``, and 429 when rate limited.

Some errors carry more fields beside the code: ``missing_scope`` names the scopes ``needed`` and
``provided``; ``unknown_method`` echoes ``req_method``; ``invalid_arguments`` explains itself in
``response_metadata.messages``. A rate limit is the one error sent with another status (429)
and a ``Retry-After`` header.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any

from fastapi.responses import HTMLResponse, JSONResponse, Response

EVERY_CALL = (
    "not_authed",
    "invalid_auth",
    "ratelimited",
    "invalid_json",
    "json_not_object",
    "fatal_error",
)
"""Codes any call can get before its method runs: no or a bad token, the run's rate limit, a
JSON body that is not an object, or a failure injected on Slack's side."""


class SlackError(Exception):
    """An answer of ``ok: false``; raised by the backend, rendered by the routes."""

    def __init__(
        self,
        code: str,
        *,
        status: int = 200,
        extra: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(code)
        self.code = code
        self.status = status
        self.extra = dict(extra or {})
        self.headers = dict(headers or {})

    def body(self) -> dict[str, Any]:
        return {"ok": False, "error": self.code, **self.extra}

    def response(self, headers: dict[str, str] | None = None) -> JSONResponse:
        return JSONResponse(
            self.body(), status_code=self.status, headers={**(headers or {}), **self.headers}
        )


def missing_scope(needed: list[str] | tuple[str, ...], provided: frozenset[str]) -> SlackError:
    """Slack joins both lists with commas: ``needed: "chat:write"``, ``provided: "a,b"``."""
    return SlackError(
        "missing_scope", extra={"needed": ",".join(needed), "provided": ",".join(sorted(provided))}
    )


def invalid_arguments(*messages: str) -> SlackError:
    return SlackError(
        "invalid_arguments", extra={"response_metadata": {"messages": list(messages)}}
    )


def unknown_method(method: str) -> SlackError:
    return SlackError("unknown_method", extra={"req_method": method})


def ratelimited(retry_after: int) -> SlackError:
    return SlackError("ratelimited", status=429, headers={"Retry-After": str(retry_after)})


def not_found_response(scope: MutableMapping[str, Any]) -> Response:
    """A path that names no method: ``unknown_method`` under ``/api/``; elsewhere slack.com's
    web server answers a plain 404 page."""
    path = str(scope.get("path", ""))
    if path.startswith("/api/"):
        name = path.removeprefix("/api/").encode("utf-8", "replace").decode("utf-8")
        return unknown_method(name.replace("\x00", "\ufffd")).response()
    return HTMLResponse("<html><body><h1>Not Found</h1></body></html>", status_code=404)


def failure_response(scope: MutableMapping[str, Any]) -> Response:
    """Slack failing on its side: ``fatal_error``, sent like every other error (HTTP 200)."""
    return SlackError("fatal_error").response()
