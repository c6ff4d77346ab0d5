"""The part of Slack's search syntax the fake understands.

Words (all must appear, case-insensitively), ``"quoted phrases"``, ``-word`` to exclude,
``in:#channel`` (or ``in:channel``, ``in:<#C123|name>``), ``from:@name`` (or ``from:name``,
``from:<@U123>``), ``before:``/``after:``/``on:`` a ``YYYY-MM-DD`` date, and ``is:thread``.
Anything else of the form ``key:value`` is treated as a word, as Slack does with unknown keys.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session

from fakes.slack import schemas as w
from fakes.slack.models import ChannelRow, MessageRow, UserRow
from fakes.slack.render import Renderer, has_live_replies, is_member

_CHANNEL_REF = re.compile(r"^<#(?P<id>[A-Z0-9]+)(\|(?P<name>[^>]*))?>$")
_USER_REF = re.compile(r"^<@(?P<id>[A-Z0-9]+)(\|[^>]*)?>$")


@dataclass
class Query:
    words: list[str] = field(default_factory=list)
    excluded: list[str] = field(default_factory=list)
    channels: list[str] = field(default_factory=list)
    """Channel ids or names (without ``#``)."""
    users: list[str] = field(default_factory=list)
    """User ids or names (without ``@``)."""
    after_us: int | None = None
    before_us: int | None = None
    threads_only: bool = False

    def matches_text(self, text: str) -> bool:
        low = text.lower()
        return all(word in low for word in self.words) and not any(
            word in low for word in self.excluded
        )


def _day_us(value: str) -> int | None:
    try:
        day = date.fromisoformat(value)
    except ValueError:
        return None
    start = datetime(day.year, day.month, day.day, tzinfo=UTC)
    return int(start.timestamp()) * 1_000_000


def parse(query: str) -> Query:
    try:
        parts = shlex.split(query)
    except ValueError:
        parts = query.split()
    q = Query()
    day = timedelta(days=1) // timedelta(microseconds=1)
    for part in parts:
        key, sep, value = part.partition(":")
        key = key.lower()
        if sep and key == "in" and value:
            ref = _CHANNEL_REF.match(value)
            q.channels.append(ref.group("id") if ref else value.lstrip("#"))
        elif sep and key == "from" and value:
            ref = _USER_REF.match(value)
            q.users.append(ref.group("id") if ref else value.lstrip("@"))
        elif sep and key in ("before", "after", "on") and _day_us(value) is not None:
            start = _day_us(value)
            assert start is not None
            if key == "before":
                q.before_us = start
            elif key == "after":
                q.after_us = start + day
            else:
                q.after_us, q.before_us = start, start + day
        elif sep and key == "is" and value.lower() == "thread":
            q.threads_only = True
        elif part.startswith("-") and len(part) > 1:
            q.excluded.append(part[1:].lower())
        elif part:
            q.words.append(part.lower())
    return q


def _hits(s: Session, q: Query, viewer: str) -> list[tuple[ChannelRow, MessageRow]]:
    by_name = {u.name.lower(): u.id for u in s.scalars(select(UserRow))}
    users = {by_name.get(u.lower(), u) for u in q.users}
    channels = {c.lower() for c in q.channels}
    hits: list[tuple[ChannelRow, MessageRow]] = []
    for ch in s.scalars(select(ChannelRow).order_by(ChannelRow.position)):
        if ch.is_private and not is_member(s, ch.id, viewer):
            continue
        if channels and not {ch.id.lower(), ch.name.lower()} & channels:
            continue
        for m in s.scalars(select(MessageRow).where(MessageRow.channel_id == ch.id)):
            if m.deleted or not q.matches_text(m.text) or (users and m.user not in users):
                continue
            if q.after_us is not None and m.ts_us < q.after_us:
                continue
            if q.before_us is not None and m.ts_us >= q.before_us:
                continue
            if q.threads_only and m.thread_ts is None and not has_live_replies(s, ch.id, m.ts):
                continue
            hits.append((ch, m))
    return hits


def search(
    s: Session, view: Renderer, query: str, count: int, page: int, sort_dir: str
) -> w.Search:
    """``search.messages``: what the viewer may read, newest first unless ``sort_dir=asc``.

    Without Slack's relevance model, ``sort=score`` orders by recency as ``timestamp`` does.
    """
    hits = _hits(s, parse(query), view.viewer)
    hits.sort(key=lambda hit: hit[1].ts_us, reverse=sort_dir != "asc")
    names = {u.id: u.name for u in s.scalars(select(UserRow))}
    total = len(hits)
    pages = max(1, -(-total // count))
    chunk = hits[(page - 1) * count : page * count]
    first = (page - 1) * count + 1 if chunk else 0
    return w.Search(
        query=query,
        messages=w.SearchMessages(
            total=total,
            pagination=w.Pagination(
                total_count=total,
                page=page,
                per_page=count,
                page_count=pages,
                first=first,
                last=first + len(chunk) - 1 if chunk else 0,
            ),
            paging=w.Paging(count=count, total=total, page=page, pages=pages),
            matches=[
                w.SearchMatch(
                    iid=view.iid(m),
                    team=view.team.id,
                    channel=view.search_channel(ch),
                    user=m.user,
                    username=names.get(m.user, m.user),
                    ts=m.ts,
                    text=m.text,
                    permalink=view.permalink(m),
                )
                for ch, m in chunk
            ],
        ),
    )
