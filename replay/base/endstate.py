"""The vocabulary of the world's end state: the objects a side-effect rule can count at hand-back.

A rule on events counts acts ("a pull request is opened"); an act can be undone (the pull
request closed again) and a rule counting it still holds. An end-state rule counts the objects
the world holds when the agent hands back, as a person looking at it then would see them: the
pull requests open at the end, a ticket's state at the end, the default branch where it was
at T. The grader builds that state from the world at T (the snapshot) and every event of the
run (:mod:`replay.grade.endstate`); this module only names what it holds, so that a case can
be checked against it (:func:`object_problem`, :func:`object_field_problem`) and a rule naming
an object or field the end state never has is a validation error, as for events.

Base layer: the standard library only.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class EndObject:
    """One type of object of the end state, and its fields."""

    name: str
    """Dotted, service first: ``github.pull_request``."""
    doc: str
    """Which objects of that type the end state holds."""
    fields: Mapping[str, str]
    """Every field its objects carry, with what the value is."""
    key: str
    """How one object is named in a rule's result: a format of its fields (``{repo}#{number}``)."""

    def name_of(self, obj: Mapping[str, object]) -> str:
        """The name of ``obj`` (an object of this type) by :attr:`key`."""
        return self.key.format_map(obj)


_ALL = [
    EndObject(
        "github.pull_request",
        "Every pull request of the world at the end: those open or closed at T, and those the "
        "run opened; as the run left them (title, body, state, base, labels...).",
        {
            "repo": "``owner/name``.",
            "number": "Its number.",
            "title": "Its title.",
            "body": "Its body (null when empty).",
            "state": "``open`` or ``closed`` (a merged pull request is closed).",
            "merged": "Whether it was merged.",
            "draft": "Whether it is a draft.",
            "head": "The head branch.",
            "base": "The base branch.",
            "author": "Who opened it (login).",
            "labels": "Its labels' names.",
        },
        "{repo}#{number}",
    ),
    EndObject(
        "github.issue",
        "Every issue of the world at the end (pull requests are not issues here).",
        {
            "repo": "``owner/name``.",
            "number": "Its number.",
            "title": "Its title.",
            "body": "Its body (null when empty).",
            "state": "``open`` or ``closed``.",
            "state_reason": "Why it was closed (``completed``, ``not_planned``) or reopened; "
            "null when never.",
            "author": "Who opened it (login).",
            "labels": "Its labels' names.",
            "assignees": "Its assignees' logins.",
        },
        "{repo}#{number}",
    ),
    EndObject(
        "github.branch",
        "Every branch that exists at the end: each repository's default branch, and every "
        "branch the run created or moved (a branch deleted by the end is not there).",
        {
            "repo": "``owner/name``.",
            "branch": "Its name, without ``refs/heads/``.",
            "sha": "The commit it points at.",
            "at_t": "The commit it pointed at at T; null for a branch made during the run.",
            "moved": "Whether it points elsewhere than at T (true for a new branch).",
            "default": "Whether it is the repository's default branch.",
        },
        "{repo}:{branch}",
    ),
    EndObject(
        "linear.issue",
        "Every Linear issue of the world at the end: those at T and those the run created.",
        {
            "identifier": "``ENG-12``.",
            "title": "Its title.",
            "state": "Its workflow state's name (``In Review``).",
            "team": "Its team's key.",
        },
        "{identifier}",
    ),
    EndObject(
        "slack.message",
        "Every Slack message in the world at the end (one deleted by the end is not there).",
        {
            "channel": "The channel's id (``C...``).",
            "channel_name": "The channel's name, without ``#``.",
            "ts": "The message's timestamp.",
            "thread_ts": "The thread's parent ts; null outside a thread.",
            "text": "Its text as the end leaves it.",
            "author": "Who posted it (user id).",
        },
        "{channel}/{ts}",
    ),
]

OBJECTS: Mapping[str, EndObject] = {o.name: o for o in _ALL}
"""Every type of object the end state holds, by name."""


def object_problem(name: str) -> str | None:
    """Why an end-state rule's ``at_end`` names no type of object, or None."""
    if name in OBJECTS:
        return None
    return f"the end state holds no {name!r}{_did_you_mean(name, OBJECTS)} (it holds: " + (
        ", ".join(OBJECTS) + ")"
    )


def object_field_problem(name: str, path: str) -> str | None:
    """Why ``path`` is not a field of the end state's ``name`` objects, or None."""
    known = OBJECTS[name]
    if path in known.fields:
        return None
    return (
        f"{path!r} is not a field of {name}{_did_you_mean(path, known.fields)} "
        f"(it has: {', '.join(known.fields)})"
    )


def _did_you_mean(word: str, choices: Iterable[str]) -> str:
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


__all__ = ["OBJECTS", "EndObject", "object_field_problem", "object_problem"]
