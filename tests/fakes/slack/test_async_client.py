"""slack_sdk's AsyncWebClient (aiohttp) against the fake: the same thread, the same errors."""

from __future__ import annotations

import asyncio

import pytest
from slack_sdk.errors import SlackApiError

from tests.fakes.slack.conftest import Served
from tests.fakes.slack.world import PARENT


def test_async_thread_history_replies_and_reactions(served: Served) -> None:
    async def scenario() -> None:
        client = served.async_client()
        assert (await client.auth_test())["user_id"] == "U0BOT"
        posted = await client.chat_postMessage(
            channel="C0ENG", text="on it, checking the parser", thread_ts=PARENT
        )
        await client.reactions_add(channel="C0ENG", timestamp=PARENT, name="eyes")
        history = await client.conversations_history(
            channel="C0ENG", limit=1, latest=PARENT, inclusive=True
        )
        parent = history["messages"][0]
        assert parent["reply_count"] == 3  # Bob's, the agent's, then Alice's scripted reply
        assert {"name": "eyes", "users": ["U0BOB", "U0BOT"], "count": 2} in parent["reactions"]
        replies = await client.conversations_replies(channel="C0ENG", ts=PARENT)
        stamps = [m["ts"] for m in replies["messages"]]
        assert posted["ts"] in stamps and stamps == sorted(stamps)
        for call, code in [
            (client.chat_postMessage(channel="C0RANDOM", text="x"), "not_in_channel"),
            (
                client.reactions_add(channel="C0ENG", timestamp=PARENT, name="eyes"),
                "already_reacted",
            ),
            (client.conversations_info(channel="C0NOPE"), "channel_not_found"),
            (served.async_client("nope").auth_test(), "invalid_auth"),
            (served.async_client(None).auth_test(), "not_authed"),
            (client.search_messages(query="parser"), "not_allowed_token_type"),
        ]:
            with pytest.raises(SlackApiError) as refused:
                await call
            assert refused.value.response.status_code == 200
            assert refused.value.response["error"] == code

    asyncio.run(scenario())
    kinds = [e["kind"] for e in served.events()]
    assert kinds == ["slack.message.posted", "slack.human.replied", "slack.reaction.added"]
