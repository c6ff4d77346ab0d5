"""``conversations.history`` and ``conversations.replies`` page in SQL and summarise threads
with aggregates; here their answers are compared with the previous implementation (every
message of the channel loaded, filtered and sliced in Python; every reply loaded for each
parent's summary), and their cost is counted at 2,000 replies against a dozen."""

from __future__ import annotations

from typing import Any

import httpx
from sqlalchemy import select

from fakes.slack.models import MessageRow, SlackBase
from fakes.slack.timestamps import Window, decode_ts_cursor, encode_cursor, from_us
from tests.fakes.cost import counted
from tests.fakes.slack.conftest import BOT, Served
from tests.serving import LOOPBACK_TIMEOUT

CHANNEL = "C0ENG"
BASE_US = 1773200000 * 1_000_000
USERS = ("U0ALICE", "U0BOB", "U0BOT")


def _add(served: Served, rows: list[dict[str, Any]]) -> None:
    with served.app.world.session() as s:
        for r in rows:
            s.add(MessageRow(channel_id=CHANNEL, ts=from_us(r["us"]), ts_us=r["us"], **r["more"]))


def _message(us: int, user: str, **more: Any) -> dict[str, Any]:
    return {"us": us, "more": {"user": user, "text": f"m{us}", **more}}


def _seed(served: Served) -> dict[str, str]:
    """Thirty top-level messages; one parent with nine replies (two broadcast), a deleted
    parent with live replies (a tombstone), a deleted one without (not shown)."""
    rows = [_message(BASE_US + i * 100_000, USERS[i % 3]) for i in range(30)]
    parent, tomb, gone = (from_us(BASE_US + i * 100_000) for i in (4, 11, 17))
    order = ("U0BOB", "U0ALICE", "U0BOB", "U0BOT", "U0ALICE", "U0BOB", "U0BOB", "U0ALICE", "U0BOT")
    for j, user in enumerate(order):
        rows.append(
            _message(BASE_US + 450_000 + j * 1000, user, thread_ts=parent, broadcast=j in (2, 6))
        )
    rows += [_message(BASE_US + 1_150_000 + j * 1000, "U0BOB", thread_ts=tomb) for j in range(3)]
    _add(served, rows)
    with served.app.world.session() as s:
        for ts in (tomb, gone):
            row = s.scalar(select(MessageRow).where(MessageRow.ts == ts))
            assert row is not None
            row.deleted = True
    return {"parent": parent, "tomb": tomb}


def _call(http: httpx.Client, method: str, **args: Any) -> Any:
    answer = http.post(f"/api/{method}", data={k: str(v) for k, v in args.items()})
    body = answer.json()
    assert body["ok"], body
    return body


SUMMARY = ("ts", "subtype", "reply_count", "reply_users_count", "latest_reply", "reply_users")


def _project(m: dict[str, Any]) -> dict[str, Any]:
    return {k: m.get(k) for k in SUMMARY}


def _live(served: Served, ts: str) -> list[MessageRow]:
    with served.app.world.session() as s:
        return list(
            s.scalars(
                select(MessageRow)
                .where(
                    MessageRow.channel_id == CHANNEL,
                    MessageRow.thread_ts == ts,
                    MessageRow.deleted.is_(False),
                )
                .order_by(MessageRow.ts_us)
            )
        )


def _walked_message(served: Served, m: MessageRow, summary: bool = True) -> dict[str, Any]:
    """The previous summary: every live reply loaded."""
    replies = _live(served, m.ts) if m.thread_ts is None else []
    out: dict[str, Any] = dict.fromkeys(SUMMARY)
    out["ts"] = m.ts
    out["subtype"] = "tombstone" if m.deleted else ("thread_broadcast" if m.broadcast else None)
    if replies and (summary or m.deleted):
        users: list[str] = []
        for r in replies:
            if r.user not in users:
                users.append(r.user)
        out.update(
            reply_count=len(replies),
            reply_users_count=len(users),
            latest_reply=replies[-1].ts,
            reply_users=users[:5],
        )
    return out


def _page(rows: list[MessageRow], limit: int) -> tuple[list[MessageRow], bool, str]:
    page, more = rows[:limit], rows[limit:]
    return page, bool(more), encode_cursor("next_ts", str(more[0].ts_us)) if more else ""


def _walked_history(served: Served, window: Window, limit: int, cursor: str | None) -> Any:
    with served.app.world.session() as s:
        every = list(
            s.scalars(
                select(MessageRow)
                .where(MessageRow.channel_id == CHANNEL)
                .order_by(MessageRow.ts_us)
            )
        )
    rows = [
        m
        for m in reversed(every)
        if (m.thread_ts is None or m.broadcast)
        and window.admits(m.ts_us)
        and (not m.deleted or _live(served, m.ts))
    ]
    if cursor:
        rows = [m for m in rows if m.ts_us <= decode_ts_cursor(cursor)]
    page, more, next_cursor = _page(rows, limit)
    return [_walked_message(served, m) for m in page], more, next_cursor


def _walked_replies(served: Served, ts: str, window: Window, limit: int, cursor: str | None) -> Any:
    with served.app.world.session() as s:
        parent = s.scalar(select(MessageRow).where(MessageRow.ts == ts))
    assert parent is not None
    thread = [parent] + [m for m in _live(served, ts) if window.admits(m.ts_us)]
    if cursor:
        thread = [m for m in thread if m.ts_us >= decode_ts_cursor(cursor)]
    page, more, next_cursor = _page(thread, limit)
    return [_walked_message(served, m) for m in page], more, next_cursor


WINDOWS: list[dict[str, Any]] = [
    {},
    {"oldest": from_us(BASE_US + 400_000)},
    {"latest": from_us(BASE_US + 1_500_000), "inclusive": "true"},
    {"oldest": from_us(BASE_US + 452_000), "latest": from_us(BASE_US + 2_000_000)},
    {"oldest": from_us(BASE_US + 452_000), "inclusive": "1"},
]


def _window(args: dict[str, Any]) -> Window:
    us = {k: round(float(v) * 1_000_000) for k, v in args.items() if k != "inclusive"}
    return Window(us.get("oldest"), us.get("latest"), "inclusive" in args)


def test_history_and_replies_match_the_walk(served: Served) -> None:
    threads = _seed(served)
    auth = {"Authorization": f"Bearer {BOT}", "Host": "slack.com"}
    with httpx.Client(timeout=LOOPBACK_TIMEOUT, base_url=served.url, headers=auth) as http:
        for args in WINDOWS:
            for limit in (1, 3, 7, 100):
                cursor: str | None = None
                for _ in range(4):  # the first pages, following the cursor
                    extra = {"cursor": cursor} if cursor else {}
                    got = _call(
                        http, "conversations.history", channel=CHANNEL, limit=limit, **args, **extra
                    )
                    want = _walked_history(served, _window(args), limit, cursor)
                    seen = ([_project(m) for m in got["messages"]], got["has_more"])
                    assert seen == want[:2], (args, limit, cursor)
                    assert got["response_metadata"]["next_cursor"] == want[2]
                    cursor = want[2] or None
                    if cursor is None:
                        break
                for ts in threads.values():
                    cursor = None
                    for _ in range(4):
                        extra = {"cursor": cursor} if cursor else {}
                        got = _call(
                            http,
                            "conversations.replies",
                            channel=CHANNEL,
                            ts=ts,
                            limit=limit,
                            **args,
                            **extra,
                        )
                        want = _walked_replies(served, ts, _window(args), limit, cursor)
                        seen = ([_project(m) for m in got["messages"]], got["has_more"])
                        assert seen == want[:2], (ts, args, limit, cursor)
                        assert got["response_metadata"]["next_cursor"] == want[2]
                        cursor = want[2] or None
                        if cursor is None:
                            break


def test_history_and_replies_cost_the_same_at_2000_replies(served: Served) -> None:
    """The same page of history (showing the thread's parent with its summary) and of the
    thread's replies costs the same statements and loads the same rows with a dozen replies
    and with 2,000: nothing loads the thread."""
    threads = _seed(served)
    auth = {"Authorization": f"Bearer {BOT}", "Host": "slack.com"}
    reads = [
        ("conversations.history", {"channel": CHANNEL, "limit": 10}),
        # Pages both threads fill already with their first replies (and one more to see).
        ("conversations.replies", {"channel": CHANNEL, "ts": threads["parent"], "limit": 3}),
        ("conversations.replies", {"channel": CHANNEL, "ts": threads["tomb"], "limit": 3}),
    ]
    with httpx.Client(timeout=LOOPBACK_TIMEOUT, base_url=served.url, headers=auth) as http:

        def costs() -> list[tuple[int, int]]:
            out = []
            for method, args in reads:
                with counted(served.app.world.engine, SlackBase) as cost:
                    _call(http, method, **args)
                out.append((cost.statements, cost.rows))
            return out

        before = costs()
        for ts, start in ((threads["parent"], 460_000), (threads["tomb"], 1_160_000)):
            _add(
                served,
                [
                    _message(BASE_US + start + j * 10, USERS[j % 3], thread_ts=ts)
                    for j in range(2000)
                ],
            )
        assert len(_live(served, threads["parent"])) == 2009
        after = costs()
    assert before == after
    assert all(rows <= 20 for _, rows in after), after
