"""Nothing from after T is served; scripted people answer once, after the agent asks."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

import pytest

import fakes.slack
from fakes.core import build_world
from fakes.slack import HOSTS, ScriptError
from replay.base.case import ScriptedReply
from replay.base.snapshot import load_snapshot
from tests.fakes.slack.conftest import USER, Served
from tests.fakes.slack.world import LATE_MESSAGE, LATE_REPLY, PARENT, QUESTION, T_EPOCH


def test_nothing_dated_after_t_is_served(served: Served) -> None:
    client = served.client()
    history = client.conversations_history(channel="C0ENG")["messages"]
    assert LATE_MESSAGE not in {m["ts"] for m in history}
    parent = next(m for m in history if m["ts"] == PARENT)
    assert [r["name"] for r in parent["reactions"]] == ["eyes"]  # tada came on 2026-03-14
    assert parent["reply_count"] == 1 and parent["latest_reply"] < f"{T_EPOCH}"
    replies = client.conversations_replies(channel="C0ENG", ts=PARENT)["messages"]
    assert LATE_REPLY not in {m["ts"] for m in replies}
    names = [c["name"] for c in client.conversations_list()["channels"]]
    assert "postmortem" not in names
    with pytest.raises(Exception, match="channel_not_found"):
        client.conversations_info(channel="C0LATE")
    searcher = served.client(USER)
    for query in ("fixed", "release cut"):
        assert searcher.search_messages(query=query)["messages"]["total"] == 0
    with urllib.request.urlopen(served.url + "/_replay/state") as resp:
        state = json.loads(resp.read())["slack"]
    stamps = [float(m["ts"]) for c in state["channels"] for m in c["messages"]]
    assert stamps and max(stamps) <= T_EPOCH


def test_a_scripted_reply_arrives_after_the_agents_question_once(served: Served) -> None:
    client = served.client()
    elsewhere = client.chat_postMessage(channel="C0ENG", text="unrelated", thread_ts=QUESTION)
    assert served.events()[-1]["kind"] == "slack.message.posted"  # nobody was asked yet
    question = client.chat_postMessage(
        channel="C0ENG", text="Has anyone found a workaround?", thread_ts=PARENT
    )
    events = served.events()
    assert [e["kind"] for e in events] == [
        "slack.message.posted",
        "slack.message.posted",
        "slack.human.replied",
    ]
    human = events[-1]
    assert human["actor"] == "U0ALICE" and human["service"] == "slack"
    assert human["data"] == {
        "person": "U0ALICE",
        "thread": f"#eng/{PARENT}",
        "text": "Try parse(strict=False) first, that is what I did",
        "trigger": "asks_in_thread",
    }
    replies = client.conversations_replies(channel="C0ENG", ts=PARENT)["messages"]
    answer = replies[-1]
    assert answer["user"] == "U0ALICE" and answer["text"].startswith("Try parse")
    assert float(answer["ts"]) > float(question["ts"]) > float(elsewhere["ts"])
    assert human["object"]["id"] == f"C0ENG/{answer['ts']}"

    # Asking again gets no second copy.
    client.chat_postMessage(channel="C0ENG", text="Thanks!", thread_ts=PARENT)
    kinds = [e["kind"] for e in served.events()]
    assert kinds.count("slack.human.replied") == 1
    # The person's reply is an intervention, never counted as the agent's message.
    posted = [e for e in served.events() if e["kind"] == "slack.message.posted"]
    assert {e["actor"] for e in posted} == {"U0BOT"} and len(posted) == 3


def test_mentioning_a_person_brings_their_reply(served: Served) -> None:
    client = served.client()
    client.chat_postMessage(channel="C0ENG", text="who owns the parser?")
    assert [e["kind"] for e in served.events()] == ["slack.message.posted"]
    client.chat_postMessage(channel="G0OPS", text="<@U0BOB> do you know about the parser?")
    human = served.events()[-1]
    assert human["kind"] == "slack.human.replied"
    assert human["data"]["trigger"] == "mentions_person" and human["actor"] == "U0BOB"
    replies = client.conversations_replies(channel="C0ENG", ts=QUESTION)["messages"]
    assert [m["user"] for m in replies] == ["U0ALICE", "U0BOB"]
    assert replies[-1]["text"] == "I'm on the parser, see branch parser-fix"


def test_reset_forgets_the_run(served: Served) -> None:
    client = served.client()
    client.chat_postMessage(channel="C0ENG", text="question", thread_ts=PARENT)
    client.reactions_add(channel="C0ENG", timestamp=PARENT, name="eyes")
    request = urllib.request.Request(served.url + "/_replay/reset", method="POST")
    with urllib.request.urlopen(request) as resp:
        assert json.loads(resp.read()) == {"ok": True}
    assert served.events() == []
    assert len(client.conversations_replies(channel="C0ENG", ts=PARENT)["messages"]) == 2
    client.chat_postMessage(channel="C0ENG", text="question again", thread_ts=PARENT)
    assert [e["kind"] for e in served.events()] == ["slack.message.posted", "slack.human.replied"]


@pytest.mark.parametrize(
    ("thread", "person", "problem"),
    [
        ("eng/1773187200.000100", "U0ALICE", "must be '#channel-name/<thread ts>'"),
        ("#nope/1773187200.000100", "U0ALICE", "no channel #nope"),
        ("#eng/1773187200.999999", "U0ALICE", "no message 1773187200.999999"),
        (f"#eng/{PARENT}", "U0GHOST", "no user U0GHOST"),
    ],
)
def test_a_script_that_cannot_play_is_refused(
    slack_snapshot_dir: Path, thread: str, person: str, problem: str
) -> None:
    reply = ScriptedReply(person=person, service="slack", thread=thread, text="hi")
    with pytest.raises(ScriptError, match=problem.replace("(", r"\(")):
        build_world(load_snapshot(slack_snapshot_dir), ["slack"], humans=[reply])


def test_exports() -> None:
    assert HOSTS == ("slack.com", "api.slack.com")
    for name in fakes.slack.__all__:
        assert hasattr(fakes.slack, name)
    public = {
        n
        for n, v in vars(fakes.slack).items()
        if n == "install"
        or (n[0].isupper() and str(getattr(v, "__module__", "")).startswith("fakes.slack"))
    }
    assert public <= set(fakes.slack.__all__)
