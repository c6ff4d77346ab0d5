"""Events for tests of the grading path, built as the log builds them (typed, validated)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from replay.base.events import Event, EventObject

T = datetime(2026, 3, 11, 16, 0, tzinfo=UTC)


def event(
    seq: int,
    service: str,
    kind: str,
    *,
    actor: str | None = "acme-agent",
    obj: tuple[str, str] = ("x", "y"),
    **data: Any,
) -> Event:
    """An event of ``kind`` at position ``seq`` with ``data``."""
    return Event(
        seq=seq,
        at=T,
        recorded_at=T,
        service=service,
        kind=kind,
        actor=actor,
        object=EventObject(type=obj[0], id=obj[1]),
        data=data,
    )
