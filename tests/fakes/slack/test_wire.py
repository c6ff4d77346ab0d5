"""Every way a client can send a call: query string, urlencoded and multipart forms, JSON,
the Bearer header or the legacy ``token`` argument; booleans as 1/0 or true/false."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from slack_sdk.errors import SlackApiError

from tests.fakes.slack.conftest import BOT, Served
from tests.fakes.slack.world import PARENT, QUESTION
from tests.serving import LOOPBACK_TIMEOUT


def test_urlencoded_multipart_and_json_bodies(served: Served) -> None:
    client = served.client()
    # slack_sdk sends `params` as an urlencoded body, `data` as multipart, `json` as JSON.
    form = client.api_call("chat.postMessage", params={"channel": "C0ENG", "text": "form"})
    multi = client.api_call("chat.postMessage", data={"channel": "C0ENG", "text": "multipart"})
    body = client.api_call("chat.postMessage", json={"channel": "C0ENG", "text": "json"})
    blocks = client.api_call(
        "chat.postMessage",
        params={"channel": "C0ENG", "text": "b", "blocks": '[{"type": "divider"}]'},
    )
    assert [r["message"]["text"] for r in (form, multi, body)] == ["form", "multipart", "json"]
    assert blocks["message"]["blocks"] == [{"type": "divider"}]
    for bad, code in [
        ("not json", "invalid_blocks_format"),
        ('[{"no": "type"}]', "invalid_blocks"),
    ]:
        with pytest.raises(SlackApiError) as refused:
            client.api_call("chat.postMessage", params={"channel": "C0ENG", "blocks": bad})
        assert refused.value.response["error"] == code


def test_query_string_with_get(served: Served) -> None:
    async def scenario() -> None:
        client = served.async_client()
        # AsyncWebClient honours http_verb: GET puts every argument in the query string.
        got = await client.api_call(
            "conversations.history",
            http_verb="GET",
            params={"channel": "C0ENG", "latest": QUESTION, "inclusive": "true", "limit": "1"},
        )
        assert [m["ts"] for m in got["messages"]] == [QUESTION]
        legacy = served.async_client(token=None)
        who = await legacy.api_call("auth.test", http_verb="GET", params={"token": BOT})
        assert who["user_id"] == "U0BOT"

    asyncio.run(scenario())


def test_legacy_token_argument_and_json_needs_the_header(served: Served) -> None:
    # slack_sdk moves a token found in params or json into the header; in a multipart body
    # it leaves it where it is, as the legacy argument.
    anonymous = served.client(token=None)
    assert anonymous.api_call("auth.test", data={"token": BOT})["user_id"] == "U0BOT"
    # curl-style calls, as Slack's docs write them: a token in the query or the form works,
    # a token inside a JSON body does not (Slack wants the header for JSON).
    with httpx.Client(
        timeout=LOOPBACK_TIMEOUT, base_url=served.base_url, headers={"Host": "slack.com"}
    ) as raw:
        assert raw.get("auth.test", params={"token": BOT}).json()["user_id"] == "U0BOT"
        assert raw.post("auth.test", data={"token": BOT}).json()["user_id"] == "U0BOT"
        sent = raw.post("chat.postMessage", json={"token": BOT, "channel": "C0ENG", "text": "x"})
        assert (sent.status_code, sent.json()) == (200, {"ok": False, "error": "not_authed"})
        broken = raw.post(
            "chat.postMessage",
            content=b"{not json",
            headers={"Authorization": f"Bearer {BOT}", "Content-Type": "application/json"},
        )
        assert broken.json() == {"ok": False, "error": "invalid_json"}


@pytest.mark.parametrize(("yes", "no"), [("1", "0"), ("true", "false"), (True, False)])
def test_booleans(served: Served, yes: object, no: object) -> None:
    client = served.client()

    def newest(inclusive: object) -> list[str]:
        page = client.conversations_history(channel="C0ENG", latest=QUESTION, inclusive=inclusive)
        return [m["ts"] for m in page["messages"]]

    assert newest(yes) == [QUESTION, PARENT]
    assert newest(no) == [PARENT]
    with pytest.raises(SlackApiError) as refused:
        client.conversations_history(channel="C0ENG", inclusive="maybe")
    assert refused.value.response["error"] == "invalid_arguments"
