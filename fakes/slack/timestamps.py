"""Slack's ``ts``: epoch seconds with six decimals, kept exact as integer microseconds.

Also the opaque cursors Slack pages with: base64 of ``next_ts:<digits>`` for messages,
``team:<id>`` for channels and ``user:<id>`` for users, which is what Slack's own look like.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import ColumnElement, true
from sqlalchemy.orm import InstrumentedAttribute

from fakes.slack.errors import SlackError

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_TS = re.compile(r"^\d{1,10}(\.\d{1,6})?$")


def to_us(ts: str) -> int:
    """``"1773187200.000100"`` -> 1773187200000100. Raises ValueError on anything else."""
    if not _TS.match(ts):
        raise ValueError(f"not a Slack timestamp: {ts!r}")
    seconds, _, fraction = ts.partition(".")
    return int(seconds) * 1_000_000 + int(fraction.ljust(6, "0") or "0")


def from_us(us: int) -> str:
    return f"{us // 1_000_000}.{us % 1_000_000:06d}"


def datetime_us(at: datetime) -> int:
    return (at - EPOCH) // timedelta(microseconds=1)


def is_ts(value: str) -> bool:
    return bool(_TS.match(value))


def encode_cursor(kind: str, value: str) -> str:
    return base64.b64encode(f"{kind}:{value}".encode()).decode()


def decode_cursor(kind: str, cursor: str) -> str:
    """The value inside a cursor of this kind, or ``invalid_cursor``."""
    try:
        raw = base64.b64decode(cursor.encode(), validate=True).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError) as exc:
        raise SlackError("invalid_cursor") from exc
    found, sep, value = raw.partition(":")
    if found != kind or not sep or not value:
        raise SlackError("invalid_cursor")
    return value


def decode_ts_cursor(cursor: str) -> int:
    """The instant (microseconds) a message cursor points at, or ``invalid_cursor``."""
    value = decode_cursor("next_ts", cursor)
    if not value.isdigit():
        raise SlackError("invalid_cursor")
    return int(value)


@dataclass(frozen=True)
class Window:
    """``oldest``/``latest``/``inclusive`` of the history methods, in microseconds."""

    oldest: int | None = None
    latest: int | None = None
    inclusive: bool = False

    def admits(self, us: int) -> bool:
        if self.oldest is not None and (
            us < self.oldest or (us == self.oldest and not self.inclusive)
        ):
            return False
        return not (
            self.latest is not None
            and (us > self.latest or (us == self.latest and not self.inclusive))
        )

    def clause(self, us: InstrumentedAttribute[int]) -> ColumnElement[bool]:
        """:meth:`admits` as SQL, on a column of microseconds."""
        out: ColumnElement[bool] = true()
        if self.oldest is not None:
            out = out & (us >= self.oldest if self.inclusive else us > self.oldest)
        if self.latest is not None:
            out = out & (us <= self.latest if self.inclusive else us < self.latest)
        return out
