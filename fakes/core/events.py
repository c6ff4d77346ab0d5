"""The event log: every mutation an agent makes to the world, in order, on the frozen clock.

Graders read it (side-effect rules match its events); people read it years later. The wire
form of an event is :class:`Event`; each line of ``events.jsonl`` is one.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy import JSON, DateTime, Integer, String, select
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

from fakes.core.clock import FrozenClock
from replay.base.eventkinds import check_record

EVENT_SCHEMA = 1


class EventObject(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    type: str
    """What was touched: ``issue``, ``pull_request``, ``comment``, ``message``, ``ref``..."""
    id: str
    """Its identity in the service: ``acme/semverkit#7``, ``ENG-12``, ``C0ENG/1773...``."""


class Event(BaseModel):
    """One recorded mutation (or denied request, or human intervention)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_: int = Field(default=EVENT_SCHEMA, alias="schema")
    seq: int
    """Position in the run's log, from 1."""
    at: datetime
    """When it happened on the world's frozen clock (T plus elapsed run time)."""
    recorded_at: datetime
    """When it happened on the real clock."""
    service: str
    """``github``, ``git``, ``linear``, ``slack``, ``egress``, ``docs``, ``model``, ``gateway``."""
    kind: str
    """Dotted name, service first: ``github.pull_request.opened``, ``git.push``; one of
    :data:`replay.base.eventkinds.KINDS`, which also lists each kind's ``data`` keys."""
    actor: str | None
    """Who did it: the login, user id or token owner; None when unauthenticated."""
    object: EventObject
    data: dict[str, Any]
    """What changed: the fields set, before and after values, the text posted."""


class EventBase(DeclarativeBase):
    pass


class EventRow(EventBase):
    __tablename__ = "replay_events"

    seq: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    recorded_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    service: Mapped[str] = mapped_column(String(20))
    kind: Mapped[str] = mapped_column(String(100), index=True)
    actor: Mapped[str | None] = mapped_column(String(200))
    object_type: Mapped[str] = mapped_column(String(50))
    object_id: Mapped[str] = mapped_column(String(300))
    data: Mapped[dict[str, Any]] = mapped_column(JSON)

    def to_event(self) -> Event:
        return Event(
            seq=self.seq,
            at=_aware(self.at),
            recorded_at=_aware(self.recorded_at),
            service=self.service,
            kind=self.kind,
            actor=self.actor,
            object=EventObject(type=self.object_type, id=self.object_id),
            data=self.data,
        )


def _aware(value: datetime) -> datetime:
    # SQLite gives back naive datetimes; everything we store is UTC.
    return value if value.tzinfo else value.replace(tzinfo=UTC)


class EventLog:
    """Appends events inside the caller's session, so an event lands with its mutation.

    Only what :data:`replay.base.eventkinds.KINDS` lists is recorded: a kind, service or ``data``
    key it does not have raises :class:`replay.base.eventkinds.EventVocabularyError` (a bug in the
    recorder, so the vocabulary that case files are checked against never drifts from it).
    """

    def __init__(self, clock: FrozenClock) -> None:
        self.clock = clock
        self._lock = threading.Lock()

    def record(
        self,
        session: Session,
        *,
        service: str,
        kind: str,
        actor: str | None,
        object_type: str,
        object_id: str,
        data: dict[str, Any] | None = None,
    ) -> EventRow:
        check_record(service, kind, data or ())
        row = EventRow(
            at=self.clock.now(),
            recorded_at=datetime.now(UTC),
            service=service,
            kind=kind,
            actor=actor,
            object_type=object_type,
            object_id=object_id,
            data=data or {},
        )
        session.add(row)
        session.flush()
        return row

    @staticmethod
    def read(session: Session, since: int = 0) -> list[Event]:
        rows = session.scalars(select(EventRow).where(EventRow.seq > since).order_by(EventRow.seq))
        return [r.to_event() for r in rows]
