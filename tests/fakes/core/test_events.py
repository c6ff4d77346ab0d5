"""The event log records only the vocabulary (replay/base/eventkinds.py): kinds, services, keys.

A refused event is a bug in its recorder; it raises inside the recorder's session, so the
mutation it came with is rolled back with it and nothing lands in the log.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from fakes.core import World
from replay.base.errors import ReplayError
from replay.base.eventkinds import EventVocabularyError


@pytest.fixture()
def world(tiny_snapshot) -> World:  # type: ignore[no-untyped-def]
    return World(tiny_snapshot)


def record(world: World, service: str, kind: str, data: dict[str, Any] | None = None) -> None:
    with world.session() as s:
        world.events.record(
            s,
            service=service,
            kind=kind,
            actor="agent",
            object_type="ref",
            object_id="acme/tiny:refs/heads/main",
            data=data,
        )


REFUSED = {
    "misspelt kind": (
        ("github", "github.pull_reqest.opened", {}),
        "unknown event kind 'github.pull_reqest.opened' "
        "(did you mean 'github.pull_request.opened'?); add it to replay.base.eventkinds",
    ),
    "kind nobody emits": (("notes", "notes.note.created", {}), "unknown event kind"),
    "another service's kind": (
        ("slack", "git.push", {"ref": "refs/heads/main"}),
        "event kind 'git.push' must start with its service 'slack'",
    ),
    "undeclared data key": (
        ("git", "git.push", {"ref": "refs/heads/main", "reff": "x"}),
        "git.push has no data key 'reff' (it has: repo, ref, before, after, forced, created,",
    ),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_the_log_refuses_what_the_vocabulary_lacks_and_keeps_nothing(
    world: World, name: str
) -> None:
    (service, kind, data), message = REFUSED[name]
    with pytest.raises(EventVocabularyError, match=re.escape(message)) as exc:
        record(world, service, kind, data)
    assert isinstance(exc.value, ReplayError)
    with world.session() as s:
        assert world.events.read(s) == []


def test_the_log_records_a_kind_with_some_of_its_keys(world: World) -> None:
    record(world, "git", "git.push", {"ref": "refs/heads/fix"})
    record(world, "git", "git.push")
    with world.session() as s:
        events = world.events.read(s)
    assert [(e.kind, e.data) for e in events] == [
        ("git.push", {"ref": "refs/heads/fix"}),
        ("git.push", {}),
    ]


def test_an_event_is_written_in_its_changes_transaction_and_numbered_in_call_order(
    world: World,
) -> None:
    """Each event is one INSERT at once (no ORM flush): it still commits or rolls back with
    the request's transaction, and ``seq`` follows the order of the calls."""
    from fakes.core.events import EventLog

    with pytest.raises(RuntimeError), world.session() as s:
        world.events.record(
            s,
            service="git",
            kind="git.push",
            actor="agent",
            object_type="ref",
            object_id="acme/tiny:refs/heads/gone",
            data={"ref": "refs/heads/gone"},
        )
        assert [e.object.id for e in EventLog.read(s)] == ["acme/tiny:refs/heads/gone"]
        raise RuntimeError("the change fails after its event was recorded")
    with world.session() as s:
        assert EventLog.read(s) == []
    for name in ("a", "b", "c"):
        record(world, "git", "git.push", {"ref": f"refs/heads/{name}"})
    with world.session() as s:
        events = EventLog.read(s)
    assert [e.data["ref"] for e in events] == ["refs/heads/a", "refs/heads/b", "refs/heads/c"]
    assert [e.seq for e in events] == sorted(e.seq for e in events)


def test_a_world_in_a_file_writes_ahead_and_syncs_at_checkpoints(tiny_snapshot, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """As the floor is set (bench/floor.py): WAL, ``synchronous=NORMAL``; in memory, neither."""
    from sqlalchemy import text

    on_disk = World(tiny_snapshot, db_url=f"sqlite:///{tmp_path / 'world.db'}")
    with on_disk.session() as s:
        assert s.scalar(text("PRAGMA journal_mode")) == "wal"
        assert s.scalar(text("PRAGMA synchronous")) == 1  # NORMAL
        assert s.scalar(text("PRAGMA foreign_keys")) == 1
    on_disk.engine.dispose()
    with World(tiny_snapshot).session() as s:
        assert s.scalar(text("PRAGMA journal_mode")) == "memory"
