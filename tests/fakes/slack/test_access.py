"""Tokens, scopes and rate limits, as slack_sdk sees them."""

from __future__ import annotations

import asyncio
import time

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_async_handlers import AsyncRateLimitErrorRetryHandler
from slack_sdk.http_retry.builtin_handlers import RateLimitErrorRetryHandler

from fakes.slack.access import BOT_SCOPES
from tests.fakes.slack.conftest import BOT, USER, Served
from tests.fakes.slack.world import PARENT


def test_search_needs_a_user_token(served: Served) -> None:
    with pytest.raises(SlackApiError) as bot:
        served.client().search_messages(query="semverkit")
    assert bot.value.response.data == {"ok": False, "error": "not_allowed_token_type"}

    found = served.client(USER).search_messages(query="semverkit")
    matches = found["messages"]["matches"]
    # Public channels and private ones the agent is in; #secret stays secret.
    assert [(m["channel"]["name"], m["ts"]) for m in matches] == [
        ("eng", "1773187200.000100"),
        ("random", "1773100000.000100"),
    ]
    assert found["messages"]["total"] == 2 and found["messages"]["paging"]["pages"] == 1
    first = matches[0]
    assert first["username"] == "alice" and first["team"] == "T0ACME"
    assert first["permalink"] == "https://acme.slack.com/archives/C0ENG/p1773187200000100"
    narrowed = served.client(USER).search_messages(query="semverkit in:#random from:@bob")
    assert [m["text"] for m in narrowed["messages"]["matches"]] == ["lunch? semverkit talk"]
    phrase = served.client(USER).search_messages(query='"can reproduce" before:2026-03-12')
    assert [m["user"] for m in phrase["messages"]["matches"]] == ["U0BOB"]
    paged = served.client(USER).search_messages(query="semverkit", count=1, page=2)
    assert paged["messages"]["pagination"] == {
        "total_count": 2,
        "page": 2,
        "per_page": 1,
        "page_count": 2,
        "first": 2,
        "last": 2,
    }
    with pytest.raises(SlackApiError) as empty:
        served.client(USER).search_messages(query="")
    assert empty.value.response["error"] == "no_query"


def test_user_tokens_read_public_channels_they_are_not_in(served: Served) -> None:
    with pytest.raises(SlackApiError) as bot:
        served.client().conversations_history(channel="C0RANDOM")
    assert bot.value.response["error"] == "not_in_channel"
    texts = [
        m["text"] for m in served.client(USER).conversations_history(channel="C0RANDOM")["messages"]
    ]
    assert texts == ["lunch? semverkit talk"]
    with pytest.raises(SlackApiError) as posting:
        served.client(USER).chat_postMessage(channel="C0RANDOM", text="hi")
    assert posting.value.response["error"] == "not_in_channel"


def test_api_test_needs_no_token(served: Served) -> None:
    anonymous = served.client(token=None)
    assert anonymous.api_test(foo="bar").data == {"ok": True, "args": {"foo": "bar"}}
    with pytest.raises(SlackApiError) as echoed:
        anonymous.api_test(error="my_error")
    assert echoed.value.response.data == {
        "ok": False,
        "error": "my_error",
        "args": {"error": "my_error"},
    }


def test_a_scope_taken_away_is_missing_scope_with_needed_and_provided(served: Served) -> None:
    served.backend.access.set_scopes("bot", BOT_SCOPES - {"chat:write"})
    with pytest.raises(SlackApiError) as refused:
        served.client().chat_postMessage(channel="C0ENG", text="hello")
    data = refused.value.response.data
    assert data["error"] == "missing_scope" and data["needed"] == "chat:write"
    assert data["provided"] == ",".join(sorted(BOT_SCOPES - {"chat:write"}))
    assert refused.value.response.headers["x-accepted-oauth-scopes"] == "chat:write"
    # The user token keeps its own scopes.
    served.client(USER).chat_postMessage(channel="C0ENG", text="hello")

    # One exact token can hold fewer scopes than its kind.
    served.backend.access.set_scopes("xoxb-2-reader", {"channels:read"})
    reader = served.client("xoxb-2-reader")
    reader.conversations_list()
    with pytest.raises(SlackApiError) as history:
        reader.conversations_history(channel="C0ENG")
    assert history.value.response.data == {
        "ok": False,
        "error": "missing_scope",
        "needed": "channels:history,groups:history,mpim:history,im:history",
        "provided": "channels:read",
    }
    with pytest.raises(SlackApiError) as private:
        reader.conversations_list(types="private_channel")
    assert private.value.response["needed"] == "groups:read"
    assert served.client(BOT).conversations_list(types="private_channel")["ok"]


def test_ratelimited_without_retries_raises_with_retry_after(served: Served) -> None:
    served.backend.access.rate_limit("chat.postMessage", times=1, retry_after=7)
    client = served.client()
    with pytest.raises(SlackApiError) as limited:
        client.chat_postMessage(channel="C0ENG", text="hello")
    response = limited.value.response
    assert response.status_code == 429
    assert response.data == {"ok": False, "error": "ratelimited"}
    assert response.headers["Retry-After"] == "7"
    # Other methods are not limited; the next call of this one goes through.
    client.auth_test()
    assert client.chat_postMessage(channel="C0ENG", text="hello")["ok"]
    assert [e["kind"] for e in served.events()] == ["slack.message.posted"]


def test_ratelimited_with_the_retry_handler_waits_and_succeeds(served: Served) -> None:
    served.backend.access.rate_limit("*", times=1, retry_after=1)
    client = served.client(retry_handlers=[RateLimitErrorRetryHandler(max_retry_count=1)])
    started = time.monotonic()
    posted = client.chat_postMessage(channel="C0ENG", text="after a pause")
    assert posted["ok"] and time.monotonic() - started >= 1.0
    assert [e["data"]["text"] for e in served.events()] == ["after a pause"]


def test_async_client_sees_the_same_limits(served: Served) -> None:
    async def scenario() -> None:
        served.backend.access.rate_limit("conversations.history", times=2, retry_after=0)
        client = served.async_client()
        with pytest.raises(SlackApiError) as limited:
            await client.conversations_history(channel="C0ENG")
        assert limited.value.response.status_code == 429
        assert limited.value.response.headers["Retry-After"] == "0"
        client.retry_handlers.append(AsyncRateLimitErrorRetryHandler(max_retry_count=1))
        history = await client.conversations_history(channel="C0ENG")
        assert history["ok"]

    asyncio.run(scenario())


def test_control_endpoints_set_limits_and_scopes(served: Served) -> None:
    # Mounted the way the world's control plane would mount them.
    control = FastAPI()
    control.include_router(served.backend.control, prefix="/_replay/slack")
    with TestClient(control) as plane:
        limited = plane.post(
            "/_replay/slack/ratelimit",
            json={"method": "reactions.add", "times": 1, "retry_after": 3},
        )
        assert limited.json() == {"ok": True}
        assert plane.put(
            "/_replay/slack/scopes", json={"token": "user", "scopes": ["users:read"]}
        ).json() == {"ok": True}
        assert plane.post("/_replay/slack/ratelimit", json={"times": -1}).status_code == 422
    with pytest.raises(SlackApiError) as refused:
        served.client().reactions_add(channel="C0ENG", timestamp=PARENT, name="eyes")
    assert refused.value.response.status_code == 429
    assert refused.value.response.headers["Retry-After"] == "3"
    with pytest.raises(SlackApiError) as scoped:
        served.client(USER).search_messages(query="semverkit")
    assert scoped.value.response.data == {
        "ok": False,
        "error": "missing_scope",
        "needed": "search:read",
        "provided": "users:read",
    }
    assert served.events() == []
