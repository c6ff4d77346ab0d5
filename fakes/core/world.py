"""One world: the snapshot, the frozen clock, the database and the event log every fake shares."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol

from fastapi import APIRouter
from sqlalchemy import Engine, create_engine, event
from sqlalchemy.orm import DeclarativeBase, Session, sessionmaker
from sqlalchemy.pool import StaticPool

from fakes.core.clock import FrozenClock
from fakes.core.events import EventBase, EventLog
from replay.base.case import ScriptedReply
from replay.base.snapshot import Snapshot


class Fake(Protocol):
    """What a service fake gives the world: its tables, how to seed them, a state dump."""

    service: str
    base: type[DeclarativeBase]

    def seed(self, session: Session) -> None: ...

    def dump(self, session: Session) -> dict[str, Any]: ...


def control_router(fake: Fake) -> APIRouter | None:
    """A fake's own control endpoints (a rate limit to switch on...), if it has any."""
    router = getattr(fake, "control", None)
    return router if isinstance(router, APIRouter) else None


@dataclass
class World:
    """Shared by every fake of one run. Sessions are serialised by one lock.

    One in-process lock in front of SQLite measured faster than letting writers contend
    (field notes, 13), and it makes each request's read-modify-write atomic.
    """

    snapshot: Snapshot
    db_url: str = "sqlite://"
    humans: list[ScriptedReply] = field(default_factory=list)
    """The case's scripted people: replies the world posts when the agent asks them."""
    clock: FrozenClock = field(init=False)
    events: EventLog = field(init=False)
    engine: Engine = field(init=False)
    fakes: dict[str, Fake] = field(default_factory=dict)
    _lock: threading.RLock = field(default_factory=threading.RLock)

    def __post_init__(self) -> None:
        self.clock = FrozenClock(self.snapshot.at)
        self.events = EventLog(self.clock)
        if self.db_url == "sqlite://":
            self.engine = create_engine(
                self.db_url, poolclass=StaticPool, connect_args={"check_same_thread": False}
            )
        else:
            self.engine = create_engine(self.db_url)
        if self.engine.dialect.name == "sqlite":
            event.listen(self.engine, "connect", _foreign_keys)
            if self.engine.url.database not in (None, "", ":memory:"):
                event.listen(self.engine, "connect", _wal)
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)
        EventBase.metadata.create_all(self.engine)

    def add(self, fake: Fake) -> None:
        self.fakes[fake.service] = fake
        fake.base.metadata.create_all(self.engine)
        with self.session() as s:
            fake.seed(s)

    @contextmanager
    def session(self) -> Iterator[Session]:
        """A transaction: committed on success, rolled back on any exception."""
        with self._lock, self._sessions() as session, session.begin():
            yield session

    def reset(self) -> None:
        """Back to the snapshot: every fake reseeded, the event log emptied, the clock at T."""
        with self._lock:
            for fake in self.fakes.values():
                fake.base.metadata.drop_all(self.engine)
            EventBase.metadata.drop_all(self.engine)
            EventBase.metadata.create_all(self.engine)
            for fake in self.fakes.values():
                fake.base.metadata.create_all(self.engine)
                with self.session() as s:
                    fake.seed(s)
            self.clock.restart()

    def run(self, fn: Callable[[Session], Any]) -> Any:
        with self.session() as s:
            return fn(s)


def _wal(dbapi_conn: Any, _record: Any) -> None:
    """A world's database in a file (``replay world up``): write-ahead log, synced at
    checkpoints rather than at every commit, as SQLite advises for WAL and as the floor the
    fakes are measured against (bench/floor.py) is set. In the default rollback journal every
    request that writes waited on an fsync: 10-17 ms a comment on this machine against about
    1 ms of work. A commit is still atomic, and survives the process being killed; only an
    OS crash or power loss may take the last commits with it, which ends the run anyway."""
    cursor = dbapi_conn.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


def _foreign_keys(dbapi_conn: Any, _record: Any) -> None:
    cursor = dbapi_conn.cursor()
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()
