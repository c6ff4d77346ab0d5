"""The reactions on a page of ``conversations.history`` or ``conversations.replies`` are read
in one query for the page; here they are compared with the previous implementation (each
message's reactions loaded as rows, one query a message), and a page's cost is counted with
a message carrying 2,000 reactions against one carrying three."""

from __future__ import annotations

from typing import Any

import httpx
from sqlalchemy import select

from fakes.slack import schemas as w
from fakes.slack.models import MessageRow, ReactionRow, SlackBase
from fakes.slack.timestamps import from_us
from tests.fakes.cost import counted
from tests.fakes.slack.conftest import BOT, Served
from tests.serving import LOOPBACK_TIMEOUT

CHANNEL = "C0ENG"
BASE_US = 1773300000 * 1_000_000
USERS = ("U0ALICE", "U0BOB", "U0BOT")
EMOJI = ("eyes", "tada", "+1", "rocket")
AUTH = {"Authorization": f"Bearer {BOT}", "Host": "slack.com"}


def _seed(served: Served) -> str:
    """Twelve messages (the ninth deleted) and a thread of five replies under the fourth;
    message i gets i % 9 reactions (emoji and users interleaved), the deleted
    parent keeps its reactions. Returns the thread's ts."""
    parent = from_us(BASE_US + 3 * 100_000)
    with served.app.world.session() as s:
        rows = [
            MessageRow(
                channel_id=CHANNEL,
                ts=from_us(BASE_US + i * 100_000),
                ts_us=BASE_US + i * 100_000,
                user=USERS[i % 3],
                text=f"r{i}",
                deleted=i == 8,
            )
            for i in range(12)
        ]
        rows += [
            MessageRow(
                channel_id=CHANNEL,
                ts=from_us(BASE_US + 350_000 + j * 1000),
                ts_us=BASE_US + 350_000 + j * 1000,
                user=USERS[j % 3],
                text=f"reply{j}",
                thread_ts=parent,
            )
            for j in range(5)
        ]
        s.add_all(rows)
        s.flush()
        for i, row in enumerate(rows):
            # Distinct pairs (k < 12), interleaving emoji and users.
            for k in range(i % 9):
                s.add(ReactionRow(message_id=row.id, name=EMOJI[(k + i) % 4], user_id=USERS[k % 3]))
    return parent


def _walked(served: Served, ts: str) -> list[dict[str, Any]] | None:
    """The previous per-message read: this message's reaction rows, grouped by name in
    insertion order."""
    with served.app.world.session() as s:
        message = s.scalar(
            select(MessageRow).where(MessageRow.channel_id == CHANNEL, MessageRow.ts == ts)
        )
        assert message is not None
        by_name: dict[str, list[str]] = {}
        for r in s.scalars(
            select(ReactionRow).where(ReactionRow.message_id == message.id).order_by(ReactionRow.id)
        ):
            by_name.setdefault(r.name, []).append(r.user_id)
        if not by_name or message.deleted:
            return None
        return [w.Reaction(name=n, users=u, count=len(u)).model_dump() for n, u in by_name.items()]


def _call(http: httpx.Client, method: str, **args: Any) -> Any:
    body = http.post(f"/api/{method}", data={k: str(v) for k, v in args.items()}).json()
    assert body["ok"], body
    return body


def test_reactions_on_history_and_reply_pages_match_the_walk(served: Served) -> None:
    parent = _seed(served)
    seen = 0
    with httpx.Client(timeout=LOOPBACK_TIMEOUT, base_url=served.url, headers=AUTH) as http:
        for method, args in (
            ("conversations.history", {}),
            ("conversations.replies", {"ts": parent}),
        ):
            for limit in (1, 4, 100):
                cursor = ""
                while True:
                    extra = {"cursor": cursor} if cursor else {}
                    got = _call(http, method, channel=CHANNEL, limit=limit, **args, **extra)
                    for m in got["messages"]:
                        assert m.get("reactions") == _walked(served, m["ts"]), (method, m)
                        seen += bool(m.get("reactions"))
                    cursor = got["response_metadata"]["next_cursor"]
                    if not cursor:
                        break
    assert seen > 10  # the pages did show reactions


def test_a_history_page_costs_the_same_with_2000_reactions_on_a_message(served: Served) -> None:
    """The same page of history and of the thread, one message on each with three reactions
    and then with 2,000 (500 users on four emoji): the same statements, the same rows loaded
    (no reaction is loaded as a row; one query reads the page's reactions)."""
    parent = _seed(served)
    reads = [
        ("conversations.history", {"channel": CHANNEL, "limit": 10}),
        ("conversations.replies", {"channel": CHANNEL, "ts": parent, "limit": 4}),
    ]
    with httpx.Client(timeout=LOOPBACK_TIMEOUT, base_url=served.url, headers=AUTH) as http:

        def costs() -> list[tuple[int, int, int]]:
            out = []
            for method, args in reads:
                with counted(served.app.world.engine, SlackBase) as cost:
                    got = _call(http, method, **args)
                out.append((cost.statements, cost.rows, len(got["messages"])))
            return out

        before = costs()
        with served.app.world.session() as s:
            for ts in (parent, from_us(BASE_US + 350_000)):
                message = s.scalar(select(MessageRow).where(MessageRow.ts == ts))
                assert message is not None
                s.add_all(
                    ReactionRow(message_id=message.id, name=EMOJI[i % 4], user_id=f"U{i // 4:05}")
                    for i in range(2000)
                )
        after = costs()
        shown = _call(http, "conversations.history", channel=CHANNEL, limit=10)["messages"]
    assert sum(r["count"] for m in shown for r in m.get("reactions", [])) > 2000
    assert before == after, (before, after)
