"""Small things every service's capture shares."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from replay.base.errors import ReplayError
from replay.capture.report import Flag


class CaptureError(ReplayError):
    """A service answered something a capture cannot use (an error, an unexpected shape)."""


@dataclass
class Ledger:
    """What one capture dropped, rolled back and flagged."""

    dropped: Counter[str] = field(default_factory=Counter)
    rolled_back: list[str] = field(default_factory=list)
    flags: list[Flag] = field(default_factory=list)

    def flag(self, service: Any, item: str, problem: str) -> None:
        self.flags.append(Flag(service=service, item=item, problem=problem))


def when(value: Any) -> datetime:
    """An API timestamp (ISO 8601, ``Z`` or offset) as an aware datetime."""
    parsed = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def iso(value: datetime) -> str:
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")
