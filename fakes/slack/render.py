"""Rows to wire models, read inside the session that loaded them.

Thread parents carry the reply summary Slack computes (``reply_count``, ``reply_users``,
``latest_reply``); bots' messages carry a ``bot_id``; a parent deleted while it still had
replies is Slack's tombstone.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from sqlalchemy import ColumnElement, Select, and_, distinct, exists, func, or_, select
from sqlalchemy.orm import Session, aliased

from fakes.slack import schemas as w
from fakes.slack.models import ChannelRow, MemberRow, MessageRow, ReactionRow, UserRow
from replay.base.worldstate import SlackTeam

TOMBSTONE_TEXT = "This message was deleted."


def bot_id(user_id: str) -> str:
    """Slack gives each bot user a ``B...`` id beside its ``U...`` one; derived, stable."""
    return "B" + user_id[1:]


def _live(channel_id: str | ColumnElement[str], thread_ts: str | ColumnElement[str]) -> Any:
    return and_(
        MessageRow.channel_id == channel_id,
        MessageRow.thread_ts == thread_ts,
        MessageRow.deleted.is_(False),
    )


def has_live_replies(s: Session, channel_id: str, thread_ts: str) -> bool:
    """Whether a thread has a reply not deleted: one ``EXISTS``, whatever its length."""
    return bool(s.scalar(select(exists().where(_live(channel_id, thread_ts)))))


def visible_clause() -> ColumnElement[bool]:
    """SQL for :meth:`Renderer.visible` on :class:`MessageRow`: a deleted parent stays while a
    reply of its is live."""
    reply = aliased(MessageRow)
    live_reply = exists().where(
        reply.channel_id == MessageRow.channel_id,
        reply.thread_ts == MessageRow.ts,
        reply.deleted.is_(False),
    )
    return or_(MessageRow.deleted.is_(False), live_reply)


def live_replies_query(channel_id: str, thread_ts: str) -> Select[Any]:
    """A thread's live replies, oldest first (page it with ``LIMIT``)."""
    return select(MessageRow).where(_live(channel_id, thread_ts)).order_by(MessageRow.ts_us)


@dataclass(frozen=True)
class ReplySummary:
    """What a thread's parent says of its replies (Slack computes it; so do we, in SQL)."""

    count: int
    users_count: int
    latest: str
    """The newest live reply's ``ts``."""
    users: list[str]
    """The first five repliers, in the order of their first reply."""


def reply_summary(s: Session, channel_id: str, thread_ts: str) -> ReplySummary | None:
    """A thread's summary in three aggregate statements, never loading its replies; None
    when it has no live reply."""
    live = _live(channel_id, thread_ts)
    count, users_count, latest_us = s.execute(
        select(
            func.count(), func.count(distinct(MessageRow.user)), func.max(MessageRow.ts_us)
        ).where(live)
    ).one()
    if not count:
        return None
    latest = s.scalar(select(MessageRow.ts).where(live, MessageRow.ts_us == latest_us).limit(1))
    users = s.scalars(
        select(MessageRow.user)
        .where(live)
        .group_by(MessageRow.user)
        .order_by(func.min(MessageRow.ts_us))
        .limit(5)
    )
    return ReplySummary(int(count), int(users_count), str(latest), list(users))


def reactions(s: Session, message_id: int) -> list[w.Reaction] | None:
    return reactions_of(s, [message_id]).get(message_id)


def reactions_of(s: Session, message_ids: Sequence[int]) -> dict[int, list[w.Reaction]]:
    """The reactions of a page's messages in one query, by message (those without any left
    out): a page costs one statement however many messages it has, and no reaction is built
    as an ORM object. Every reacting user is in the answer (as Slack lists them), so what the
    query returns is what the answer shows."""
    if not message_ids:
        return {}
    rows = s.execute(
        select(ReactionRow.message_id, ReactionRow.name, ReactionRow.user_id)
        .where(ReactionRow.message_id.in_(message_ids))
        .order_by(ReactionRow.id)
    )
    by_message: dict[int, dict[str, list[str]]] = {}
    for message_id, name, user_id in rows:
        by_message.setdefault(message_id, {}).setdefault(name, []).append(user_id)
    return {
        m: [w.Reaction(name=n, users=u, count=len(u)) for n, u in by_name.items()]
        for m, by_name in by_message.items()
    }


class Renderer:
    """Renders messages, channels and users for one team and one caller."""

    def __init__(self, s: Session, team: SlackTeam, viewer: str) -> None:
        self.s = s
        self.team = team
        self.viewer = viewer
        self._bots = set(s.scalars(select(UserRow.id).where(UserRow.is_bot.is_(True))))

    # ----------------------------------------------------------------- messages

    def message(self, m: MessageRow, *, summary: bool = True) -> w.Message:
        """One message; ``summary`` adds the reply summary when it is a thread's parent."""
        return self.messages([m], summary=summary)[0]

    def messages(self, rows: Sequence[MessageRow], *, summary: bool = True) -> list[w.Message]:
        """A page of messages, their reactions read in one query for the whole page."""
        found = reactions_of(self.s, [m.id for m in rows if not m.deleted])
        return [self._message(m, found.get(m.id), summary) for m in rows]

    def _message(self, m: MessageRow, reacted: list[w.Reaction] | None, summary: bool) -> w.Message:
        replies = None
        if m.thread_ts is None and (summary or m.deleted):
            replies = reply_summary(self.s, m.channel_id, m.ts)
        if m.deleted:
            return self._tombstone(m, replies)
        out = w.Message(
            subtype="thread_broadcast" if m.broadcast else None,
            ts=m.ts,
            user=m.user,
            text=m.text,
            team=self.team.id,
            bot_id=bot_id(m.user) if m.user in self._bots else None,
            blocks=m.blocks,
            edited=w.Edited(user=m.edited_by, ts=m.edited_ts)
            if m.edited_by and m.edited_ts
            else None,
            reactions=reacted,
        )
        if m.thread_ts is not None:
            parent = self.s.scalar(
                select(MessageRow.user).where(
                    MessageRow.channel_id == m.channel_id, MessageRow.ts == m.thread_ts
                )
            )
            out.thread_ts = m.thread_ts
            out.parent_user_id = parent
        elif replies is not None and summary:
            self._summarise(out, m, replies)
        return out

    def _summarise(self, out: w.Message, m: MessageRow, replies: ReplySummary) -> None:
        out.thread_ts = m.ts
        out.reply_count = replies.count
        out.reply_users_count = replies.users_count
        out.latest_reply = replies.latest
        out.reply_users = replies.users
        out.is_locked = False
        out.subscribed = False

    def _tombstone(self, m: MessageRow, replies: ReplySummary | None) -> w.Message:
        out = w.Message(
            subtype="tombstone", ts=m.ts, user="USLACKBOT", text=TOMBSTONE_TEXT, hidden=True
        )
        if replies is not None:
            self._summarise(out, m, replies)
        return out

    def visible(self, m: MessageRow) -> bool:
        """A deleted parent stays (as a tombstone) only while it has replies."""
        return not m.deleted or has_live_replies(self.s, m.channel_id, m.ts)

    # ----------------------------------------------------------------- channels

    def channel(self, c: ChannelRow, *, num_members: bool = False) -> w.Channel:
        member_ids = list(
            self.s.scalars(select(MemberRow.user_id).where(MemberRow.channel_id == c.id))
        )
        return w.Channel(
            id=c.id,
            name=c.name,
            is_channel=not c.is_private,
            is_group=c.is_private,
            is_private=c.is_private,
            created=c.created,
            is_archived=c.is_archived,
            is_general=c.name == "general",
            name_normalized=c.name.lower(),
            context_team_id=self.team.id,
            updated=c.created * 1000,
            creator=c.creator,
            shared_team_ids=[self.team.id],
            is_member=self.viewer in member_ids,
            topic=w.Topic(
                value=c.topic, creator=c.creator if c.topic else "", last_set=_set_at(c, c.topic)
            ),
            purpose=w.Topic(
                value=c.purpose,
                creator=c.creator if c.purpose else "",
                last_set=_set_at(c, c.purpose),
            ),
            num_members=len(member_ids) if num_members else None,
        )

    def search_channel(self, c: ChannelRow) -> w.SearchChannel:
        return w.SearchChannel(
            id=c.id,
            is_channel=not c.is_private,
            is_group=c.is_private,
            name=c.name,
            is_private=c.is_private,
        )

    # ----------------------------------------------------------------- users

    def user(self, u: UserRow, at: datetime) -> w.User:
        label, offset = _zone(u.tz, at)
        return w.User(
            id=u.id,
            team_id=self.team.id,
            name=u.name,
            deleted=u.deleted,
            color=hashlib.sha256(u.id.encode()).hexdigest()[:6],
            real_name=u.real_name,
            tz=u.tz,
            tz_label=label,
            tz_offset=offset,
            profile=w.Profile(
                real_name=u.real_name,
                display_name=u.name,
                real_name_normalized=u.real_name,
                display_name_normalized=u.name,
                avatar_hash="g" + hashlib.sha256(f"avatar:{u.id}".encode()).hexdigest()[:11],
                team=self.team.id,
                bot_id=bot_id(u.id) if u.is_bot else None,
                always_active=False if u.is_bot else None,
            ),
            is_bot=u.is_bot,
            updated=int(at.timestamp()),
        )

    def iid(self, m: MessageRow) -> str:
        return str(uuid.uuid5(uuid.NAMESPACE_URL, f"slack:{self.team.id}:{m.channel_id}:{m.ts}"))

    def permalink(self, m: MessageRow) -> str:
        link = (
            f"https://{self.team.domain}.slack.com/archives/{m.channel_id}/p{m.ts.replace('.', '')}"
        )
        if m.thread_ts is not None:
            link += f"?thread_ts={m.thread_ts}&cid={m.channel_id}"
        return link


def is_member(s: Session, channel_id: str, user_id: str) -> bool:
    return s.get(MemberRow, {"channel_id": channel_id, "user_id": user_id}) is not None


def _set_at(c: ChannelRow, value: str) -> int:
    return c.created if value else 0


def _zone(name: str, at: datetime) -> tuple[str, int]:
    try:
        local = at.astimezone(ZoneInfo(name))
    except (ZoneInfoNotFoundError, ValueError):
        return name, 0
    offset = local.utcoffset()
    seconds = int(offset.total_seconds()) if offset is not None else 0
    if name == "UTC":
        return "Coordinated Universal Time", seconds
    return local.tzname() or name, seconds
