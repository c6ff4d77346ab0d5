"""An event of the world's log: every mutation an agent makes, in order, on the frozen clock.

The fakes record events (:class:`fakes.core.events.EventLog`), the gateway adds its own
(model calls, denied egress), the grader judges them (side-effect rules, the wire), people
read them years later: each line of a run's ``events.jsonl`` is one :class:`Event`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

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

    def document(self) -> dict[str, Any]:
        """The event as its ``events.jsonl`` line holds it (JSON types, ``schema`` by name):
        what a side-effect rule's field paths (``data.title``, ``object.id``) walk."""
        return self.model_dump(mode="json", by_alias=True)
