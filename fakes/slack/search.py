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
