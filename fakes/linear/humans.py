"""Scripted people: a case's real replies, posted when the agent asks for them.

A reply for Linear names its person (a Linear user id) and its thread (an issue identifier).
With the trigger ``asks_in_thread`` any comment of the agent on that issue calls for it; with
``mentions_person`` the comment must mention the person (``@displayName``, ``@name``, or a
link to their profile, which is how Linear's editor writes a mention). Each reply is posted
once, as a comment by that person in the thread of the agent's comment, after it, and logged
as ``linear.human.replied``: a human intervention, not an agent mutation.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from sqlalchemy import select
from sqlalchemy.orm import Session

from fakes.linear.models import Comment, Issue, ScriptedReplyFired, User

if TYPE_CHECKING:
    from fakes.linear.backend import LinearBackend

SERVICE = "linear"


def mentions(s: Session, url_key: str, body: str, person: str) -> bool:
    user = s.get(User, person)
    if user is None:
        return False
    text = body.lower()
    names = {user.display_name.lower(), user.name.lower()}
    profile = f"linear.app/{url_key}/profiles/{user.display_name}".lower()
    return profile in text or any(
        re.search(rf"@{re.escape(n)}(?![\w.-])", text) for n in names if n
    )


def reply_to(backend: LinearBackend, s: Session, issue: Issue, comment: Comment) -> None:
    """Post the case's scripted replies that ``comment`` calls for, once each."""
    world = backend.world
    fired = set(s.scalars(select(ScriptedReplyFired.index)))
    url_key = backend.organization(s).url_key
    for index, reply in enumerate(world.humans):
        if reply.service != SERVICE or index in fired:
            continue
        if reply.thread.upper() != issue.identifier or reply.person == comment.user_id:
            continue
        if s.get(User, reply.person) is None:
            continue  # not a Linear user of this snapshot: nobody to answer
        if reply.trigger == "mentions_person" and not mentions(
            s, url_key, comment.body, reply.person
        ):
            continue
        # Linear threads are one level deep: answer in the thread of the agent's comment.
        root = comment.parent or comment
        posted = backend.add_comment(s, issue, reply.person, reply.text, root)
        s.add(ScriptedReplyFired(index=index, comment_id=posted.id))
        world.events.record(
            s,
            service=SERVICE,
            kind="linear.human.replied",
            actor=reply.person,
            object_type="comment",
            object_id=issue.identifier,
            data={
                "person": reply.person,
                "thread": reply.thread,
                "text": reply.text,
                "trigger": reply.trigger,
            },
        )
