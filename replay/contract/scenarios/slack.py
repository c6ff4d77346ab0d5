"""Slack scenarios with slack_sdk's WebClient: post and read a thread, react, the workspace's
users, the errors."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import httpx
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.web import SlackResponse

from replay.contract.recording import Raw
from replay.contract.scenarios.base import Ctx, scenario


def client(ctx: Ctx, token: str | None = None) -> WebClient:
    """slack_sdk at the target; the workspace's own names (an unrecorded ``auth.test``)
    become aliases, so a real workspace and the fake's compare."""
    web = WebClient(token=token or ctx.target.slack_token, base_url=ctx.target.slack_url)
    if "<channel>" not in ctx.norm.aliases.values():
        ctx.norm.alias(ctx.target.channel, "channel")
        me = web.auth_test().data
        assert isinstance(me, dict)
        for key, name in (("user_id", "bot-user"), ("team_id", "workspace"), ("bot_id", "bot")):
            ctx.norm.alias(str(me.get(key, "")), name)
        for key, name in (("user", "bot-name"), ("team", "workspace-name")):
            ctx.norm.alias(str(me.get(key, "")), name)
        workspace = urlsplit(str(me.get("url", "")))
        ctx.norm.origins[f"{workspace.scheme}://{workspace.netloc}"] = "<workspace-url>"
    return web


def call(ctx: Ctx, step: str, method: str, fn: Callable[[], SlackResponse]) -> Any:
    """One Web API call, recorded; ``ok: false`` and 429 are recorded, not raised."""
    try:
        resp = fn()
    except SlackApiError as exc:
        resp = exc.response
    headers = {k: v if isinstance(v, str) else ",".join(v) for k, v in resp.headers.items()}
    data = resp.data if isinstance(resp.data, dict) else {"raw": str(resp.data)}
    ctx.rec.add(
        step,
        resp.http_verb,
        urlsplit(resp.api_url).path,
        Raw(resp.status_code, headers, data),
        operation=method,
    )
    return data


@scenario("slack")
def thread_and_reactions(ctx: Ctx) -> None:
    """Who the bot is and who else is there (``users.info``, two pages of ``users.list``), then
    post a message, reply in its thread, read the thread and the channel, react, edit, take
    the reaction back (twice: the second has none to take), read the channel's info and
    members, delete the second message."""
    web = client(ctx)
    channel = ctx.target.channel
    me = call(ctx, "auth test", "auth.test", web.auth_test)
    call(ctx, "bot info", "users.info", lambda: web.users_info(user=str(me.get("user_id", ""))))
    people = call(ctx, "list users page 1", "users.list", lambda: web.users_list(limit=2))
    cursor = str(people.get("response_metadata", {}).get("next_cursor", ""))
    call(
        ctx,
        "list users page 2",
        "users.list",
        lambda: web.users_list(limit=2, cursor=cursor),
    )
    top = call(
        ctx,
        "post",
        "chat.postMessage",
        lambda: web.chat_postMessage(channel=channel, text="Contract: is ENG-13 shipped?"),
    )
    ts = top["ts"]
    call(
        ctx,
        "reply",
        "chat.postMessage",
        lambda: web.chat_postMessage(channel=channel, text="Not yet.", thread_ts=ts),
    )
    call(
        ctx,
        "read thread",
        "conversations.replies",
        lambda: web.conversations_replies(channel=channel, ts=ts),
    )
    second = call(
        ctx,
        "post again",
        "chat.postMessage",
        lambda: web.chat_postMessage(channel=channel, text="Contract: a second message."),
    )
    # Only this run's messages (oldest = the first), one per page: a next_cursor is due.
    page = call(
        ctx,
        "read channel page 1",
        "conversations.history",
        lambda: web.conversations_history(channel=channel, oldest=ts, inclusive=True, limit=1),
    )
    cursor = str(page.get("response_metadata", {}).get("next_cursor", ""))
    call(
        ctx,
        "read channel page 2",
        "conversations.history",
        lambda: web.conversations_history(
            channel=channel, oldest=ts, inclusive=True, limit=1, cursor=cursor
        ),
    )
    call(
        ctx,
        "react",
        "reactions.add",
        lambda: web.reactions_add(channel=channel, timestamp=ts, name="eyes"),
    )
    call(
        ctx,
        "react again",
        "reactions.add",
        lambda: web.reactions_add(channel=channel, timestamp=ts, name="eyes"),
    )
    call(
        ctx,
        "edit",
        "chat.update",
        lambda: web.chat_update(channel=channel, ts=ts, text="Contract: ENG-13 shipped?"),
    )
    call(
        ctx,
        "permalink",
        "chat.getPermalink",
        lambda: web.chat_getPermalink(channel=channel, message_ts=ts),
    )
    call(
        ctx,
        "unreact",
        "reactions.remove",
        lambda: web.reactions_remove(channel=channel, timestamp=ts, name="eyes"),
    )
    call(
        ctx,
        "unreact again",
        "reactions.remove",
        lambda: web.reactions_remove(channel=channel, timestamp=ts, name="eyes"),
    )
    call(
        ctx,
        "channel info",
        "conversations.info",
        lambda: web.conversations_info(channel=channel),
    )
    call(
        ctx,
        "channel members",
        "conversations.members",
        lambda: web.conversations_members(channel=channel, limit=2),
    )
    call(
        ctx,
        "delete second",
        "chat.delete",
        lambda: web.chat_delete(channel=channel, ts=str(second["ts"])),
    )


@scenario("slack")
def errors(ctx: Ctx) -> None:
    """Unknown channel, unknown thread, bad arguments, an unknown user, a bad token, a bot
    token on search."""
    web = client(ctx)
    call(
        ctx,
        "unknown channel",
        "chat.postMessage",
        lambda: web.chat_postMessage(channel="C0NOSUCHCH", text="hello"),
    )
    call(
        ctx,
        "unknown thread",
        "conversations.replies",
        lambda: web.conversations_replies(channel=ctx.target.channel, ts="1000000000.000100"),
    )
    with warnings.catch_warnings():
        # slack_sdk warns when text is missing; the point of this step is Slack's answer.
        warnings.simplefilter("ignore", UserWarning)
        call(
            ctx,
            "no text",
            "chat.postMessage",
            lambda: web.chat_postMessage(channel=ctx.target.channel),
        )
    call(
        ctx,
        "unknown user",
        "users.info",
        lambda: web.users_info(user="U0NOSUCHUSR"),
    )
    call(
        ctx,
        "bad token",
        "auth.test",
        lambda: WebClient(token="xoxb-not-a-real-token", base_url=ctx.target.slack_url).auth_test(),
    )
    call(
        ctx,
        "search with a bot token",
        "search.messages",
        lambda: web.search_messages(query="ENG-13"),
    )


@scenario("slack")
def scope_and_rate_limit(ctx: Ctx) -> None:
    """Missing scope, then a 429 with Retry-After (switched on through the control plane)."""
    control = ctx.require_control("a real workspace cannot be told to rate-limit or drop a scope")
    token = f"xoxb-contract-limited-{ctx.run_id}"
    with httpx.Client() as http:
        http.put(f"{control}/slack/scopes", json={"token": token, "scopes": ["chat:write"]})
        call(
            ctx,
            "missing scope",
            "conversations.history",
            lambda: client(ctx, token).conversations_history(channel=ctx.target.channel),
        )
        http.post(
            f"{control}/slack/ratelimit",
            json={"method": "chat.postMessage", "times": 1, "retry_after": 30},
        )
        try:
            call(
                ctx,
                "rate limited",
                "chat.postMessage",
                lambda: client(ctx).chat_postMessage(channel=ctx.target.channel, text="x"),
            )
        finally:
            http.post(f"{control}/slack/ratelimit", json={"method": "chat.postMessage", "times": 0})
