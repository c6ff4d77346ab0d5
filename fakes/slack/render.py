"""Rows to wire models, read inside the session that loaded them.

Thread parents carry the reply summary Slack computes (``reply_count``, ``reply_users``,
``latest_reply``); bots' messages carry a ``bot_id``; a parent deleted while it still had
replies is Slack's tombstone.
"""

from __future__ import annotations

import hashlib
import uuid
from datetime import datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from sqlalchemy import select
from sqlalchemy.orm import Session

from fakes.slack import schemas as w
from fakes.slack.models import ChannelRow, MemberRow, MessageRow, ReactionRow, UserRow
from replay.base.worldstate import SlackTeam

TOMBSTONE_TEXT = "This message was deleted."


def bot_id(user_id: str) -> str:
    """Slack gives each bot user a ``B...`` id beside its ``U...`` one; derived, stable."""
    return "B" + user_id[1:]


def live_replies(s: Session, channel_id: str, thread_ts: str) -> list[MessageRow]:
    return list(
        s.scalars(
            select(MessageRow)
            .where(
                MessageRow.channel_id == channel_id,
                MessageRow.thread_ts == thread_ts,
                MessageRow.deleted.is_(False),
            )
            .order_by(MessageRow.ts_us)
        )
    )


def reactions(s: Session, message_id: int) -> list[w.Reaction] | None:
    rows = s.scalars(
        select(ReactionRow).where(ReactionRow.message_id == message_id).order_by(ReactionRow.id)
    )
    by_name: dict[str, list[str]] = {}
    for r in rows:
        by_name.setdefault(r.name, []).append(r.user_id)
    if not by_name:
        return None
    return [w.Reaction(name=n, users=u, count=len(u)) for n, u in by_name.items()]


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
        replies = live_replies(self.s, m.channel_id, m.ts) if m.thread_ts is None else []
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
            reactions=reactions(self.s, m.id),
        )
        if m.thread_ts is not None:
            parent = self.s.scalar(
                select(MessageRow.user).where(
                    MessageRow.channel_id == m.channel_id, MessageRow.ts == m.thread_ts
                )
            )
            out.thread_ts = m.thread_ts
            out.parent_user_id = parent
        elif replies and summary:
            self._summarise(out, m, replies)
        return out

    def _summarise(self, out: w.Message, m: MessageRow, replies: list[MessageRow]) -> None:
        users: list[str] = []
        for r in replies:
            if r.user not in users:
                users.append(r.user)
        out.thread_ts = m.ts
        out.reply_count = len(replies)
        out.reply_users_count = len(users)
        out.latest_reply = replies[-1].ts
        out.reply_users = users[:5]
        out.is_locked = False
        out.subscribed = False

    def _tombstone(self, m: MessageRow, replies: list[MessageRow]) -> w.Message:
        out = w.Message(
            subtype="tombstone", ts=m.ts, user="USLACKBOT", text=TOMBSTONE_TEXT, hidden=True
        )
        if replies:
            self._summarise(out, m, replies)
        return out

    def visible(self, m: MessageRow) -> bool:
        """A deleted parent stays (as a tombstone) only while it has replies."""
        return not m.deleted or bool(live_replies(self.s, m.channel_id, m.ts))

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
