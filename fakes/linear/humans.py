"""Scripted people: a case's real replies, posted when the agent asks for them.

A reply for Linear names its person (a Linear user id) and its thread (an issue identifier).
With the trigger ``asks_in_thread`` any comment of the agent on that issue calls for it; with
``mentions_person`` the comment must mention the person (``@displayName``, ``@name``, or a
link to their profile, which is how Linear's editor writes a mention). Each reply is posted
once, as a comment by that person in the thread of the agent's comment, after it, and logged
as ``linear.human.replied``: a human intervention, not an agent mutation (see
:mod:`fakes.core.humans`). ``install()`` hands :meth:`Humans.heard` to the backend, which
calls it after each comment the agent creates.
"""

from __future__ import annotations

import re

from sqlalchemy import select
from sqlalchemy.orm import Session

from fakes.core import humans
from fakes.core.humans import Posted, Script
from fakes.linear.backend import SERVICE, LinearBackend
from fakes.linear.models import Comment, Issue, ScriptedReplyFired, User


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


class Humans:
    """The case's Linear replies, answering the agent's comments."""

    def __init__(self, backend: LinearBackend) -> None:
        self.backend = backend
        self.scripts = humans.scripts(backend.world, SERVICE)

    def heard(self, s: Session, issue: Issue, comment: Comment) -> None:
        """Post the case's scripted replies that ``comment`` calls for, once each."""
        backend = self.backend
        fired = set(s.scalars(select(ScriptedReplyFired.index)))
        url_key = backend.organization(s).url_key

        def asked(script: Script) -> bool:
            reply = script.reply
            if reply.thread.upper() != issue.identifier or reply.person == comment.user_id:
                return False
            if s.get(User, reply.person) is None:
                return False  # not a Linear user of this snapshot: nobody to answer
            return reply.trigger != "mentions_person" or mentions(
                s, url_key, comment.body, reply.person
            )

        def post(script: Script) -> Posted:
            # Linear threads are one level deep: answer in the thread of the agent's comment.
            root = comment.parent or comment
            posted = backend.add_comment(s, issue, script.reply.person, script.reply.text, root)
            s.add(ScriptedReplyFired(index=script.index, comment_id=posted.id))
            return Posted("comment", issue.identifier)

        humans.play(
            backend.world,
            s,
            self.scripts,
            fired=lambda script: script.index in fired,
            asked=asked,
            post=post,
        )
