"""``https://slack.com/api/<method>``: parse the call, check token and scopes, call the backend.

Arguments come from the query string, a form body (urlencoded or multipart) or a JSON body, as
Slack accepts them; the token from ``Authorization: Bearer`` or the legacy ``token`` argument
(not inside a JSON body: Slack wants the header there). Booleans are ``1/0`` or ``true/false``.
Checks run in Slack's order: the method exists, the token is valid, its type is allowed, it has
a scope the method needs, the run's rate limit; then the arguments.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException

from fakes.slack import schemas as w
from fakes.slack.access import HISTORY_SCOPES, READ_SCOPES, Caller, TokenKind
from fakes.slack.backend import SlackBackend
from fakes.slack.errors import (
    EVERY_CALL,
    SlackError,
    invalid_arguments,
    missing_scope,
    not_found_response,
    unknown_method,
)
from fakes.slack.timestamps import Window, to_us

_TRUE = {"1", "true"}
_FALSE = {"0", "false", ""}


class Params:
    """One call's arguments, read the way Slack reads them."""

    def __init__(self, values: dict[str, Any]) -> None:
        self.values = values

    def text(self, name: str) -> str | None:
        value = self.values.get(name)
        if value is None:
            return None
        if isinstance(value, bool):
            return "true" if value else "false"
        return value if isinstance(value, str) else json.dumps(value)

    def flag(self, name: str, default: bool = False) -> bool:
        value = self.values.get(name)
        if value is None:
            return default
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in _TRUE:
            return True
        if text in _FALSE:
            return False
        raise invalid_arguments(f"[ERROR] invalid boolean value for field: {name}")

    def number(self, name: str, default: int, *, low: int = 0, high: int | None = None) -> int:
        value = self.values.get(name)
        if value is None or value == "":
            return default
        try:
            number = int(str(value))
        except ValueError as exc:
            raise invalid_arguments(f"[ERROR] invalid integer value for field: {name}") from exc
        if number < low:
            return default
        return min(number, high) if high is not None else number

    def ts(self, name: str) -> int | None:
        value = self.text(name)
        if value is None or value == "":
            return None
        try:
            return to_us(value)
        except ValueError as exc:
            raise SlackError(f"invalid_ts_{name}") from exc

    def blocks(self) -> list[dict[str, Any]] | None:
        value = self.values.get("blocks")
        if value is None or value == "":
            return None
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except json.JSONDecodeError as exc:
                raise SlackError("invalid_blocks_format") from exc
        if not isinstance(value, list) or not all(
            isinstance(b, dict) and isinstance(b.get("type"), str) for b in value
        ):
            raise SlackError("invalid_blocks")
        return value

    def window(self) -> Window:
        return Window(
            oldest=self.ts("oldest"), latest=self.ts("latest"), inclusive=self.flag("inclusive")
        )


Handler = Callable[[SlackBackend, Caller, Params], BaseModel]


@dataclass(frozen=True)
class Method:
    handler: Handler
    scopes: dict[TokenKind, tuple[str, ...]]
    """Per token type, the scopes of which the token needs one (none: no scope needed)."""
    public: bool = False
    """Answered without a token (``api.test``)."""
    errors: tuple[str, ...] = ()
    """The error codes this method's arguments and handler can answer; with the ones every
    call can get (:meth:`all_errors`), what the fake declares against Slack's spec."""

    def all_errors(self) -> frozenset[str]:
        """Every error code a call of this method can get from the fake: its own, the ones
        every call can get (token, body, rate limit, a failure), ``missing_scope`` where a
        scope is needed, ``not_allowed_token_type`` where a token type is refused."""
        out = {*EVERY_CALL, *self.errors}
        if self.public:
            return frozenset(out - {"not_authed", "invalid_auth", "ratelimited"})
        if any(self.scopes.values()):
            out.add("missing_scope")
        if set(self.scopes) != {"bot", "user"}:
            out.add("not_allowed_token_type")
        return frozenset(out)


def _api_test(values: dict[str, Any]) -> BaseModel:
    args = {k: v if isinstance(v, str) else json.dumps(v) for k, v in values.items()}
    if args.get("error"):
        raise SlackError(args["error"], extra={"args": args})
    return w.ApiTest(args=args)


def _both(*scopes: str) -> dict[TokenKind, tuple[str, ...]]:
    return {"bot": scopes, "user": scopes}


METHODS: dict[str, Method] = {
    "api.test": Method(lambda b, c, p: _api_test(p.values), _both(), public=True),
    "auth.test": Method(lambda b, c, p: b.auth_test(c), _both()),
    "chat.postMessage": Method(
        lambda b, c, p: b.post_message(
            c,
            p.text("channel"),
            p.text("text"),
            blocks=p.blocks(),
            thread_ts=p.text("thread_ts") or None,
            reply_broadcast=p.flag("reply_broadcast"),
        ),
        _both("chat:write"),
        errors=(
            "channel_not_found",
            "is_archived",
            "not_in_channel",
            "no_text",
            "msg_too_long",
            "thread_not_found",
            "invalid_blocks",
            "invalid_blocks_format",
            "invalid_arguments",
        ),
    ),
    "chat.update": Method(
        lambda b, c, p: b.update_message(
            c, p.text("channel"), p.text("ts"), p.text("text"), blocks=p.blocks()
        ),
        _both("chat:write"),
        errors=(
            "channel_not_found",
            "message_not_found",
            "cant_update_message",
            "is_inactive",
            "no_text",
            "msg_too_long",
            "invalid_blocks",
            "invalid_blocks_format",
        ),
    ),
    "chat.delete": Method(
        lambda b, c, p: b.delete_message(c, p.text("channel"), p.text("ts")),
        _both("chat:write"),
        errors=("channel_not_found", "message_not_found", "cant_delete_message"),
    ),
    "chat.getPermalink": Method(
        lambda b, c, p: b.permalink(c, p.text("channel"), p.text("message_ts")),
        _both(),
        errors=("channel_not_found", "message_not_found"),
    ),
    "conversations.list": Method(
        lambda b, c, p: b.list_conversations(
            c,
            [t.strip() for t in (p.text("types") or "public_channel").split(",") if t.strip()],
            p.flag("exclude_archived"),
            p.number("limit", 100, low=1, high=1000),
            p.text("cursor") or None,
        ),
        _both(*READ_SCOPES),
        errors=("invalid_types", "invalid_cursor", "invalid_arguments"),
    ),
    "conversations.info": Method(
        lambda b, c, p: b.conversation_info(c, p.text("channel"), p.flag("include_num_members")),
        _both(*READ_SCOPES),
        errors=("channel_not_found", "invalid_arguments"),
    ),
    "conversations.history": Method(
        lambda b, c, p: b.history(
            c,
            p.text("channel"),
            p.window(),
            p.number("limit", 100, low=1, high=999),
            p.text("cursor") or None,
        ),
        _both(*HISTORY_SCOPES),
        errors=(
            "channel_not_found",
            "not_in_channel",
            "invalid_cursor",
            "invalid_ts_oldest",
            "invalid_ts_latest",
            "invalid_arguments",
        ),
    ),
    "conversations.replies": Method(
        lambda b, c, p: b.replies(
            c,
            p.text("channel"),
            p.text("ts"),
            p.window(),
            p.number("limit", 1000, low=1, high=1000),
            p.text("cursor") or None,
        ),
        _both(*HISTORY_SCOPES),
        errors=(
            "channel_not_found",
            "thread_not_found",
            "invalid_cursor",
            "invalid_ts_oldest",
            "invalid_ts_latest",
            "invalid_arguments",
        ),
    ),
    "conversations.members": Method(
        lambda b, c, p: b.members(
            c,
            p.text("channel"),
            p.number("limit", 100, low=1, high=1000),
            p.text("cursor") or None,
        ),
        _both(*READ_SCOPES),
        errors=("channel_not_found", "invalid_cursor", "invalid_arguments"),
    ),
    "conversations.join": Method(
        lambda b, c, p: b.join(c, p.text("channel")),
        {"bot": ("channels:join",), "user": ("channels:write",)},
        errors=("channel_not_found", "method_not_supported_for_channel_type", "is_archived"),
    ),
    "users.list": Method(
        lambda b, c, p: b.list_users(c, p.number("limit", 0, high=1000), p.text("cursor") or None),
        _both("users:read"),
        errors=("invalid_cursor", "invalid_arguments"),
    ),
    "users.info": Method(
        lambda b, c, p: b.user_info(c, p.text("user")),
        _both("users:read"),
        errors=("user_not_found",),
    ),
    "reactions.add": Method(
        lambda b, c, p: b.add_reaction(c, p.text("channel"), p.text("timestamp"), p.text("name")),
        _both("reactions:write"),
        errors=(
            "no_item_specified",
            "invalid_name",
            "channel_not_found",
            "bad_timestamp",
            "message_not_found",
            "is_archived",
            "already_reacted",
        ),
    ),
    "reactions.remove": Method(
        lambda b, c, p: b.remove_reaction(
            c, p.text("channel"), p.text("timestamp"), p.text("name")
        ),
        _both("reactions:write"),
        errors=(
            "no_item_specified",
            "invalid_name",
            "channel_not_found",
            "bad_timestamp",
            "message_not_found",
            "no_reaction",
        ),
    ),
    "search.messages": Method(
        lambda b, c, p: b.search_messages(
            c,
            p.text("query"),
            p.number("count", 20, low=1, high=100),
            p.number("page", 1, low=1, high=100),
            (p.text("sort_dir") or "desc").lower(),
        ),
        {"user": ("search:read",)},
        errors=("no_query", "invalid_arguments"),
    ),
}
"""Every method the fake serves; any other name is ``unknown_method``."""


async def _arguments(request: Request) -> tuple[dict[str, Any], str | None]:
    """The call's arguments and the token they carry (header first, then ``token``)."""
    values: dict[str, Any] = dict(request.query_params)
    ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
    legacy: str | None = values.get("token")
    if request.method == "POST":
        if ctype == "application/json":
            raw = await request.body()
            if raw.strip():
                try:
                    data = json.loads(raw)
                except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                    raise SlackError("invalid_json") from exc
                if not isinstance(data, dict):
                    raise SlackError("json_not_object")
                values.update({k: v for k, v in data.items() if k != "token"})
        elif ctype in ("application/x-www-form-urlencoded", "multipart/form-data"):
            form = await request.form()
            for key, value in form.multi_items():
                if isinstance(value, str):
                    values[key] = value
            legacy = values.get("token", legacy)
    auth = request.headers.get("authorization", "")
    scheme, _, credential = auth.partition(" ")
    token = credential.strip() if scheme.lower() == "bearer" and credential.strip() else None
    values.pop("token", None)
    return values, token or legacy


def _authorise(backend: SlackBackend, name: str, method: Method, caller: Caller) -> None:
    if caller.kind not in method.scopes:
        raise SlackError("not_allowed_token_type")
    needed = method.scopes[caller.kind]
    if needed and not set(needed) & caller.scopes:
        raise missing_scope(needed, caller.scopes)
    backend.access.check_rate(name)


def _headers(caller: Caller | None, method: Method | None) -> dict[str, str]:
    headers = {"x-slack-req-id": uuid.uuid4().hex}
    if caller is not None:
        headers["x-oauth-scopes"] = ",".join(sorted(caller.scopes))
    if caller is not None and method is not None:
        headers["x-accepted-oauth-scopes"] = ",".join(method.scopes.get(caller.kind, ()))
    return headers


def router(backend: SlackBackend) -> FastAPI:
    app = FastAPI(
        title="Slack Web API (replay fake)", docs_url=None, redoc_url=None, openapi_url=None
    )

    @app.exception_handler(StarletteHTTPException)
    async def no_route(request: Request, exc: StarletteHTTPException) -> Response:
        return not_found_response(request.scope)

    @app.api_route("/api/{name}", methods=["GET", "POST"])
    async def call(name: str, request: Request) -> Response:
        caller: Caller | None = None
        method = METHODS.get(name)
        try:
            if method is None:
                raise unknown_method(name)
            values, token = await _arguments(request)
            if method.public:
                return JSONResponse(w.body(_api_test(values)), headers=_headers(None, None))
            caller = backend.access.authenticate(token)
            _authorise(backend, name, method, caller)
            result = await run_in_threadpool(method.handler, backend, caller, Params(values))
        except SlackError as err:
            return err.response(_headers(caller, method))
        return JSONResponse(w.body(result), headers=_headers(caller, method))

    return app
