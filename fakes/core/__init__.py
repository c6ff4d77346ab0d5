"""What every fake shares: the world (database, lock), the frozen clock, the event log,
the control plane and the host router; the steps the GraphQL fakes (GitHub, Linear) share:
execution (``graphql``) and Relay pagination (``relay``); scripted people (``humans``, Linear
and Slack); GitHub's REST paging as a FastAPI dependency (``paging``)."""

from __future__ import annotations

from fakes.core.clock import FrozenClock
from fakes.core.events import Event, EventLog, EventObject
from fakes.core.server import (
    CONTROL_PREFIX,
    FAKES,
    HostRouter,
    UnknownFake,
    WorldApp,
    build_world,
)
from fakes.core.world import Fake, World

__all__ = [
    "CONTROL_PREFIX",
    "FAKES",
    "Event",
    "EventLog",
    "EventObject",
    "Fake",
    "FrozenClock",
    "HostRouter",
    "UnknownFake",
    "World",
    "WorldApp",
    "build_world",
]
