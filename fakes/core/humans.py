"""Scripted people: replies real people gave, posted when the agent asks for them.

A case lists them (:class:`replay.base.case.ScriptedReply`: person, service, thread, text,
trigger). Each fake says when the agent asked for a reply (its own reading of the trigger) and
how a reply is posted (a Linear comment, a Slack message), and marks it fired in its own
table; what is the same everywhere lives here: each reply is played at most once per run and
logged as ``<service>.human.replied``, a human intervention, never an agent mutation.

A fake's ``humans.py`` builds on its backend; the backend only calls the hook ``install()``
gives it, so it never imports its scripted people.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TypeVar

from sqlalchemy.orm import Session

from fakes.core.world import World
from replay.base.case import ScriptedReply


@dataclass(frozen=True)
class Script:
    """One scripted reply and the number its fake marks it fired by."""

    index: int
    reply: ScriptedReply


@dataclass(frozen=True)
class Posted:
    """Where a reply landed, in the event log's words (``comment`` ``ENG-12``)."""

    object_type: str
    object_id: str


S = TypeVar("S", bound=Script)


def scripts(world: World, service: str) -> list[Script]:
    """The case's replies for ``service``, numbered by their place among all of the case's."""
    return [Script(i, r) for i, r in enumerate(world.humans) if r.service == service]


def play(
    world: World,
    s: Session,
    scripts: Iterable[S],
    *,
    fired: Callable[[S], bool],
    asked: Callable[[S], bool],
    post: Callable[[S], Posted],
) -> None:
    """Post every reply the agent just asked for and that was not posted yet, and log it.

    ``post`` writes the reply as its person and marks it fired, in ``s``."""
    for script in scripts:
        if fired(script) or not asked(script):
            continue
        where = post(script)
        reply = script.reply
        world.events.record(
            s,
            service=reply.service,
            kind=f"{reply.service}.human.replied",
            actor=reply.person,
            object_type=where.object_type,
            object_id=where.object_id,
            data={
                "person": reply.person,
                "thread": reply.thread,
                "text": reply.text,
                "trigger": reply.trigger,
            },
        )
