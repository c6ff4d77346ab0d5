"""slack_sdk's WebClient against the fake: threads, history, reactions, edits, Slack's errors."""

from __future__ import annotations

import pytest
from slack_sdk.errors import SlackApiError

from tests.fakes.slack.conftest import USER, Served
from tests.fakes.slack.world import OPS, PARENT, QUESTION, REPLY, T_EPOCH


def error_of(call: object) -> str:
    assert isinstance(call, SlackApiError)
    return str(call.response["error"])


def test_auth_test_names_the_bot_and_its_user_token(served: Served) -> None:
    bot = served.client().auth_test()
    assert bot.status_code == 200
    assert bot.data == {
        "ok": True,
        "url": "https://acme.slack.com/",
        "team": "Acme",
        "user": "agent",
        "team_id": "T0ACME",
        "user_id": "U0BOT",
        "bot_id": "B0BOT",
        "is_enterprise_install": False,
    }
    user = served.client(USER).auth_test()
    assert user["user_id"] == "U0BOT" and "bot_id" not in user.data
    assert bot.headers["x-slack-req-id"]


def test_post_in_a_thread_then_read_it_back(served: Served) -> None:
    client = served.client()
    blocks = [{"type": "section", "text": {"type": "mrkdwn", "text": "*Looking* into it"}}]
    posted = client.chat_postMessage(
        channel="C0ENG", text="Looking into it", thread_ts=PARENT, blocks=blocks
    )
    ts = posted["ts"]
    assert posted["channel"] == "C0ENG"
    assert posted["message"]["thread_ts"] == PARENT
    assert posted["message"]["parent_user_id"] == "U0ALICE"
    assert posted["message"]["blocks"] == blocks
    assert posted["message"]["bot_id"] == "B0BOT" and posted["message"]["user"] == "U0BOT"
    # Dated by the frozen clock: just after T, never in the real present.
    assert T_EPOCH < float(ts) < T_EPOCH + 600

    # A top-level message by the channel name, and a reply broadcast to the channel.
    top = client.chat_postMessage(channel="#eng", text="status: investigating")
    broadcast = client.chat_postMessage(
        channel="C0ENG", text="root cause found", thread_ts=PARENT, reply_broadcast=True
    )
    stamps = [ts, top["ts"], broadcast["ts"]]
    assert stamps == sorted(stamps) and len(set(stamps)) == 3

    history = client.conversations_history(channel="C0ENG")
    by_ts = {m["ts"]: m for m in history["messages"]}
    assert [m["ts"] for m in history["messages"]] == [broadcast["ts"], top["ts"], QUESTION, PARENT]
    assert ts not in by_ts  # a plain reply stays in its thread
    assert by_ts[broadcast["ts"]]["subtype"] == "thread_broadcast"
    parent = by_ts[PARENT]
    assert parent["thread_ts"] == PARENT
    # Alice's scripted reply came in after the agent asked in her thread.
    assert parent["reply_count"] == 4
    assert parent["reply_users"] == ["U0BOB", "U0BOT", "U0ALICE"]
    assert parent["reply_users_count"] == 3
    assert history["has_more"] is False
    assert history["response_metadata"]["next_cursor"] == ""
    assert "reply_count" not in by_ts[QUESTION] and "thread_ts" not in by_ts[QUESTION]

    replies = client.conversations_replies(channel="C0ENG", ts=PARENT)
    texts = [m["text"] for m in replies["messages"]]
    assert texts[:3] == ["semverkit add() is broken", "I can reproduce it", "Looking into it"]
    assert parent["latest_reply"] == replies["messages"][-1]["ts"]
    # The ts of a reply names the whole thread too.
    again = client.conversations_replies(channel="C0ENG", ts=REPLY)
    assert [m["ts"] for m in again["messages"]] == [m["ts"] for m in replies["messages"]]

    posted_events = [e for e in served.events() if e["kind"] == "slack.message.posted"]
    assert [e["data"] for e in posted_events] == [
        {
            "channel": "C0ENG",
            "channel_name": "eng",
            "ts": ts,
            "thread_ts": PARENT,
            "text": "Looking into it",
        },
        {
            "channel": "C0ENG",
            "channel_name": "eng",
            "ts": top["ts"],
            "thread_ts": None,
            "text": "status: investigating",
        },
        {
            "channel": "C0ENG",
            "channel_name": "eng",
            "ts": broadcast["ts"],
            "thread_ts": PARENT,
            "text": "root cause found",
        },
    ]
    assert {e["actor"] for e in posted_events} == {"U0BOT"}
    assert posted_events[0]["object"] == {"type": "message", "id": f"C0ENG/{ts}"}


def test_reply_to_a_reply_files_under_the_parent(served: Served) -> None:
    posted = served.client().chat_postMessage(channel="C0ENG", text="+1", thread_ts=REPLY)
    assert posted["message"]["thread_ts"] == PARENT


def test_permalinks(served: Served) -> None:
    client = served.client()
    assert client.chat_getPermalink(channel="C0ENG", message_ts=PARENT).data == {
        "ok": True,
        "channel": "C0ENG",
        "permalink": "https://acme.slack.com/archives/C0ENG/p1773187200000100",
    }
    reply = client.chat_getPermalink(channel="C0ENG", message_ts=REPLY)["permalink"]
    assert reply.endswith(f"/p1773190800000200?thread_ts={PARENT}&cid=C0ENG")
    with pytest.raises(SlackApiError) as missing:
        client.chat_getPermalink(channel="C0ENG", message_ts="1773187200.999999")
    assert missing.value.response["error"] == "message_not_found"


def test_react_and_unreact(served: Served) -> None:
    client = served.client()
    assert client.reactions_add(channel="C0ENG", timestamp=PARENT, name="eyes").data == {"ok": True}
    with pytest.raises(SlackApiError) as again:
        client.reactions_add(channel="C0ENG", timestamp=PARENT, name="eyes")
    assert error_of(again.value) == "already_reacted"
    client.reactions_add(channel="C0ENG", timestamp=PARENT, name="white_check_mark")
    parent = client.conversations_history(channel="C0ENG", latest=PARENT, inclusive=True, limit=1)
    assert parent["messages"][0]["ts"] == PARENT
    assert parent["messages"][0]["reactions"] == [
        {"name": "eyes", "users": ["U0BOB", "U0BOT"], "count": 2},
        {"name": "white_check_mark", "users": ["U0BOT"], "count": 1},
    ]
    client.reactions_remove(channel="C0ENG", timestamp=PARENT, name="white_check_mark")
    for name, code in [("white_check_mark", "no_reaction"), ("tada", "no_reaction")]:
        with pytest.raises(SlackApiError) as gone:
            client.reactions_remove(channel="C0ENG", timestamp=PARENT, name=name)
        assert error_of(gone.value) == code
    with pytest.raises(SlackApiError) as missing:
        client.reactions_add(channel="C0ENG", timestamp="1773187200.999999", name="eyes")
    assert error_of(missing.value) == "message_not_found"
    with pytest.raises(SlackApiError) as nowhere:
        client.reactions_add(channel="C0NOPE", timestamp=PARENT, name="eyes")
    assert error_of(nowhere.value) == "channel_not_found"
    kinds = [(e["kind"], e["data"]) for e in served.events()]
    assert kinds == [
        ("slack.reaction.added", {"channel": "C0ENG", "ts": PARENT, "name": "eyes"}),
        ("slack.reaction.added", {"channel": "C0ENG", "ts": PARENT, "name": "white_check_mark"}),
        ("slack.reaction.removed", {"channel": "C0ENG", "ts": PARENT, "name": "white_check_mark"}),
    ]


def test_update_and_delete_only_your_own_messages(served: Served) -> None:
    client = served.client()
    mine = client.chat_postMessage(channel="C0ENG", text="draft")["ts"]
    updated = client.chat_update(channel="C0ENG", ts=mine, text="final")
    assert updated["text"] == "final" and updated["ts"] == mine
    assert updated["message"]["edited"]["user"] == "U0BOT"
    for call, code in [
        (lambda: client.chat_update(channel="C0ENG", ts=QUESTION, text="x"), "cant_update_message"),
        (lambda: client.chat_delete(channel="C0ENG", ts=QUESTION), "cant_delete_message"),
        (lambda: client.chat_update(channel="C0ENG", ts="1.000001", text="x"), "message_not_found"),
    ]:
        with pytest.raises(SlackApiError) as refused:
            call()
        assert error_of(refused.value) == code
    assert client.chat_delete(channel="C0ENG", ts=mine).data == {
        "ok": True,
        "channel": "C0ENG",
        "ts": mine,
    }
    with pytest.raises(SlackApiError) as twice:
        client.chat_delete(channel="C0ENG", ts=mine)
    assert error_of(twice.value) == "message_not_found"
    assert mine not in [m["ts"] for m in client.conversations_history(channel="C0ENG")["messages"]]

    # A parent with replies leaves Slack's tombstone behind.
    parent = client.chat_postMessage(channel="C0ENG", text="thread start")["ts"]
    client.chat_postMessage(channel="C0ENG", text="a reply", thread_ts=parent)
    client.chat_delete(channel="C0ENG", ts=parent)
    stone = client.conversations_replies(channel="C0ENG", ts=parent)["messages"][0]
    assert stone["subtype"] == "tombstone" and stone["text"] == "This message was deleted."
    assert stone["reply_count"] == 1

    events = [(e["kind"], e["data"]) for e in served.events() if "posted" not in e["kind"]]
    assert events == [
        (
            "slack.message.updated",
            {"channel": "C0ENG", "ts": mine, "text": "final", "previous_text": "draft"},
        ),
        ("slack.message.deleted", {"channel": "C0ENG", "ts": mine}),
        ("slack.message.deleted", {"channel": "C0ENG", "ts": parent}),
    ]


def test_channels_list_info_and_join(served: Served) -> None:
    client = served.client()
    public = client.conversations_list()
    assert [c["name"] for c in public["channels"]] == ["eng", "random"]
    assert public["response_metadata"]["next_cursor"] == ""
    eng = public["channels"][0]
    assert eng["is_member"] is True and eng["is_channel"] is True and eng["num_members"] == 3
    assert eng["topic"]["value"] == "Engineering" and eng["parent_conversation"] is None
    both = client.conversations_list(types="public_channel,private_channel", exclude_archived=True)
    # A private channel the bot is not in does not exist for it.
    assert [c["id"] for c in both["channels"]] == ["C0ENG", "C0RANDOM", "G0OPS"]

    pages, cursor = [], None
    while True:
        page = client.conversations_list(
            types="public_channel,private_channel", limit=1, cursor=cursor
        )
        pages.append([c["id"] for c in page["channels"]])
        cursor = page["response_metadata"]["next_cursor"]
        if not cursor:
            break
    assert pages == [["C0ENG"], ["C0RANDOM"], ["G0OPS"]]

    info = client.conversations_info(channel="G0OPS", include_num_members=True)["channel"]
    assert info["is_private"] is True and info["is_group"] is True and info["num_members"] == 2
    with pytest.raises(SlackApiError) as hidden:
        client.conversations_info(channel="G0SECRET")
    assert error_of(hidden.value) == "channel_not_found"

    assert client.conversations_info(channel="C0RANDOM")["channel"]["is_member"] is False
    joined = client.conversations_join(channel="C0RANDOM")
    assert joined["channel"]["is_member"] is True and "warning" not in joined.data
    again = client.conversations_join(channel="C0RANDOM")
    assert again["warning"] == "already_in_channel"
    assert again["response_metadata"]["warnings"] == ["already_in_channel"]
    with pytest.raises(SlackApiError) as private:
        client.conversations_join(channel="G0OPS")
    assert error_of(private.value) == "method_not_supported_for_channel_type"
    assert [(e["kind"], e["data"]) for e in served.events()] == [
        ("slack.channel.joined", {"channel": "C0RANDOM"})
    ]
    # Now a member, the bot can post and read there.
    client.chat_postMessage(channel="C0RANDOM", text="hello")
    assert len(client.conversations_history(channel="C0RANDOM")["messages"]) == 2


def test_history_window_and_cursor(served: Served) -> None:
    client = served.client()
    for i in range(3):
        client.chat_postMessage(channel="G0OPS", text=f"deploy step {i}")
    seen: list[str] = []
    cursor = None
    while True:
        page = client.conversations_history(channel="G0OPS", limit=2, cursor=cursor)
        seen += [m["text"] for m in page["messages"]]
        cursor = page["response_metadata"]["next_cursor"]
        assert page["has_more"] is bool(cursor)
        if not cursor:
            break
    assert seen == ["deploy step 2", "deploy step 1", "deploy step 0", "deploy at five"]

    def texts(**kw: object) -> list[str]:
        return [m["text"] for m in client.conversations_history(channel="C0ENG", **kw)["messages"]]

    assert texts(latest=QUESTION) == ["semverkit add() is broken"]
    assert texts(latest=QUESTION, inclusive=True) == [
        "anyone on the parser?",
        "semverkit add() is broken",
    ]
    assert texts(oldest=PARENT) == ["anyone on the parser?"]
    assert texts(oldest=OPS, latest="1773300000") == ["anyone on the parser?"]
    for kw, code in [
        ({"cursor": "bm9wZQ=="}, "invalid_cursor"),
        ({"cursor": "bmV4dF90czpub3Bl"}, "invalid_cursor"),  # next_ts:nope
        ({"cursor": "dGVhbTpDMEVORw=="}, "invalid_cursor"),  # a channel list's cursor
        ({"latest": "yesterday"}, "invalid_ts_latest"),
    ]:
        with pytest.raises(SlackApiError) as bad:
            client.conversations_history(channel="C0ENG", **kw)
        assert error_of(bad.value) == code


def test_users_list_and_info(served: Served) -> None:
    client = served.client()
    everyone = client.users_list()
    assert [u["name"] for u in everyone["members"]] == ["agent", "alice", "bob", "carol"]
    assert everyone["response_metadata"]["next_cursor"] == ""
    first = client.users_list(limit=3)
    assert len(first["members"]) == 3
    rest = client.users_list(limit=3, cursor=first["response_metadata"]["next_cursor"])
    assert [u["id"] for u in rest["members"]] == ["U0CAROL"] and rest["members"][0]["deleted"]
    alice = client.users_info(user="U0ALICE")["user"]
    assert alice["real_name"] == "Alice Liddell" and alice["profile"]["display_name"] == "alice"
    assert alice["tz"] == "Europe/Paris" and alice["tz_offset"] == 3600
    bot = client.users_info(user="U0BOT")["user"]
    assert bot["is_bot"] is True and bot["profile"]["bot_id"] == "B0BOT"
    with pytest.raises(SlackApiError) as nobody:
        client.users_info(user="U0NOBODY")
    assert error_of(nobody.value) == "user_not_found"


def test_wrong_calls_get_slacks_codes(served: Served) -> None:
    client = served.client()
    cases = [
        (lambda: client.chat_postMessage(channel="C0NOPE", text="x"), "channel_not_found"),
        (lambda: client.chat_postMessage(channel="G0SECRET", text="x"), "channel_not_found"),
        (lambda: client.chat_postMessage(channel="C0RANDOM", text="x"), "not_in_channel"),
        (lambda: client.api_call("chat.postMessage", json={"channel": "C0ENG"}), "no_text"),
        (
            lambda: client.chat_postMessage(channel="C0ENG", text="x", thread_ts="1.000001"),
            "thread_not_found",
        ),
        (lambda: client.conversations_history(channel="C0RANDOM"), "not_in_channel"),
        (lambda: client.conversations_replies(channel="C0ENG", ts="1.000001"), "thread_not_found"),
        (lambda: client.conversations_history(channel="C0NOPE"), "channel_not_found"),
        (lambda: served.client("xoxq-not-a-token").auth_test(), "invalid_auth"),
        (
            lambda: served.client("bogus").chat_postMessage(channel="C0ENG", text="x"),
            "invalid_auth",
        ),
        (lambda: served.client(None).chat_postMessage(channel="C0ENG", text="x"), "not_authed"),
    ]
    for call, code in cases:
        with pytest.raises(SlackApiError) as refused:
            call()
        assert refused.value.response.status_code == 200
        assert refused.value.response.data == {"ok": False, "error": code}, code
    with pytest.raises(SlackApiError) as unknown:
        client.api_call("chat.fly")
    assert unknown.value.response.data == {
        "ok": False,
        "error": "unknown_method",
        "req_method": "chat.fly",
    }
    # None of the refused calls changed the world.
    assert served.events() == []


def test_conversations_members_pages_and_follows_joins(served: Served) -> None:
    client = served.client()
    assert client.conversations_members(channel="C0ENG")["members"] == [
        "U0ALICE",
        "U0BOB",
        "U0BOT",
    ]
    # slack_sdk follows the cursor itself when iterated.
    pages = [p["members"] for p in client.conversations_members(channel="C0ENG", limit=2)]
    assert pages == [["U0ALICE", "U0BOB"], ["U0BOT"]]
    # A public channel the bot is not in can be listed; a private one it is not in cannot.
    assert client.conversations_members(channel="C0RANDOM")["members"] == ["U0ALICE", "U0BOB"]
    client.conversations_join(channel="C0RANDOM")
    assert "U0BOT" in client.conversations_members(channel="C0RANDOM")["members"]
    for channel, cursor, error in [
        ("G0SECRET", None, "channel_not_found"),
        ("C0NOPE", None, "channel_not_found"),
        ("C0ENG", "dXNlcjpVME5PQk9EWQ==", "invalid_cursor"),  # user:U0NOBODY
        ("C0ENG", "not a cursor", "invalid_cursor"),
    ]:
        with pytest.raises(SlackApiError) as failed:
            client.conversations_members(channel=channel, cursor=cursor)
        assert error_of(failed.value) == error
