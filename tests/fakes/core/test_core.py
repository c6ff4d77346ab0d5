"""The shared core of the fakes: frozen clock, event log, reset, control plane, host routing."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import String, select
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

from fakes.core import FrozenClock, World, WorldApp
from fakes.core.server import UnknownFake, _module, control_app

T = datetime(2026, 3, 12, 9, tzinfo=UTC)


def test_clock_is_t_plus_elapsed() -> None:
    ticks = iter([100.0, 100.0, 102.5, 200.0, 200.0])
    clock = FrozenClock(T, monotonic=lambda: next(ticks))
    first = clock.now()
    assert T < first < T + timedelta(milliseconds=1)
    assert clock.now() - T == timedelta(seconds=2.5, microseconds=1)
    clock.restart()
    assert clock.now() - T == timedelta(microseconds=1)


def test_clock_refuses_naive_t() -> None:
    with pytest.raises(ValueError, match="timezone"):
        FrozenClock(datetime(2026, 3, 12))


class NoteBase(DeclarativeBase):
    pass


class Note(NoteBase):
    __tablename__ = "notes"
    id: Mapped[str] = mapped_column(String, primary_key=True)
    text: Mapped[str] = mapped_column(String)


class NoteFake:
    """A one-table fake: enough to exercise the world without a real service."""

    service = "notes"
    base = NoteBase

    def __init__(self, world: World) -> None:
        self.world = world

    def seed(self, session: Session) -> None:
        session.add(Note(id="n1", text="seeded"))

    def dump(self, session: Session) -> dict[str, Any]:
        return {n.id: n.text for n in session.scalars(select(Note))}

    def write(self, note_id: str, text: str) -> None:
        with self.world.session() as s:
            s.add(Note(id=note_id, text=text))
            self.world.events.record(
                s,
                # The log records only the vocabulary's kinds (replay/base/eventkinds.py).
                service="slack",
                kind="slack.message.posted",
                actor="agent",
                object_type="note",
                object_id=note_id,
                data={"text": text},
            )


@pytest.fixture()
def world(tiny_snapshot) -> World:  # type: ignore[no-untyped-def]
    return World(tiny_snapshot)


def test_events_land_with_their_mutation_and_reset_restores(world: World) -> None:
    fake = NoteFake(world)
    world.add(fake)
    fake.write("n2", "hello")
    with pytest.raises(RuntimeError), world.session() as s:
        s.add(Note(id="n3", text="doomed"))
        world.events.record(
            s,
            service="slack",
            kind="slack.message.posted",
            actor="agent",
            object_type="note",
            object_id="n3",
        )
        raise RuntimeError("the request failed after writing")
    with world.session() as s:
        assert fake.dump(s) == {"n1": "seeded", "n2": "hello"}
        (event,) = world.events.read(s)
    assert event.seq == 1 and event.kind == "slack.message.posted"
    assert event.at > T and event.data == {"text": "hello"}
    world.reset()
    with world.session() as s:
        assert fake.dump(s) == {"n1": "seeded"}
        assert world.events.read(s) == []


def test_event_kind_must_name_its_service(world: World) -> None:
    with pytest.raises(ValueError, match="must start with its service"), world.session() as s:
        world.events.record(
            s,
            service="slack",
            kind="github.issue.opened",
            actor=None,
            object_type="issue",
            object_id="x",
        )


def test_control_plane_and_host_routing(world: World) -> None:
    fake = NoteFake(world)
    world.add(fake)
    notes = FastAPI()

    @notes.post("/notes/{note_id}")
    def create(note_id: str) -> dict[str, str]:
        fake.write(note_id, "via http")
        return {"id": note_id}

    client = TestClient(WorldApp(world, {"notes.example": notes}))
    assert client.post("/notes/a", headers={"host": "notes.example:443"}).status_code == 200
    other = client.post("/notes/b", headers={"host": "elsewhere.example"})
    assert other.status_code == 421
    assert "elsewhere.example" in other.json()["message"]
    # The control plane answers on any host and records nothing itself.
    lines = client.get("/_replay/events", headers={"host": "notes.example"}).text.splitlines()
    assert [json.loads(line)["object"]["id"] for line in lines] == ["a"]
    assert client.get("/_replay/events?since=1").text == ""
    assert client.get("/_replay/state").json() == {"notes": {"n1": "seeded", "a": "via http"}}
    assert client.post("/_replay/reset").json() == {"ok": True}
    assert client.get("/_replay/state").json() == {"notes": {"n1": "seeded"}}
    assert client.get("/_replay/events").text == ""
    health = client.get("/_replay/health").json()
    assert health["at"] == T.isoformat() and health["fakes"] == ["notes"]


def test_unknown_fake_lists_the_known_ones() -> None:
    with pytest.raises(UnknownFake, match="no fake named 'jira'; known: github, linear, slack"):
        _module("jira")


def test_control_app_is_plain_fastapi(world: World) -> None:
    assert isinstance(control_app(world), FastAPI)


def test_a_fake_can_add_control_routes(world: World) -> None:
    from fastapi import APIRouter

    router = APIRouter()
    flags: dict[str, bool] = {}

    @router.post("/slow")
    def slow() -> dict[str, bool]:
        flags["slow"] = True
        return {"ok": True}

    fake = NoteFake(world)
    fake.control = router  # type: ignore[attr-defined]
    world.add(fake)
    client = TestClient(WorldApp(world, {}))
    response = client.post("/_replay/notes/slow", headers={"host": "any.example"})
    assert response.json() == {"ok": True}
    assert flags == {"slow": True}


def test_the_slack_fakes_switches_are_on_the_control_plane(tiny_snapshot) -> None:  # type: ignore[no-untyped-def]
    from fakes.core import build_world

    client = TestClient(build_world(tiny_snapshot, ["slack"]))
    switched = client.post("/_replay/slack/ratelimit", json={"method": "auth.test", "times": 1})
    assert switched.status_code == 200, switched.text
    limited = client.post(
        "/api/auth.test", headers={"host": "slack.com", "authorization": "Bearer xoxb-1"}
    )
    assert limited.status_code == 429 and limited.json()["error"] == "ratelimited"
