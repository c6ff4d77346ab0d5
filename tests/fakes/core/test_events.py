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
