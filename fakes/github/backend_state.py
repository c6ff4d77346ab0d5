"""What every part of the GitHub backend shares: the world, the git repositories, the push
lock, the clock and the event log, and the small helpers the parts have in common.

Each resource area (:mod:`fakes.github.backend_repos`, :mod:`fakes.github.backend_refs`,
:mod:`fakes.github.backend_issues`, :mod:`fakes.github.backend_pulls`) holds one
:class:`GitHubState`; :class:`fakes.github.backend.GitHubBackend` makes the one they share.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
import weakref
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy.orm import Session

from fakes.core.world import World
from fakes.github.gitstore import GitStore
from fakes.github.models import Issue, User


class GitHubState:
    """One world's GitHub plumbing: no operations of its own, only what they all need."""

    def __init__(self, world: World) -> None:
        self.world = world
        root = Path(tempfile.mkdtemp(prefix="replay-github-"))
        self._cleanup = weakref.finalize(self, shutil.rmtree, root, True)
        self.git = GitStore(root)
        self.push_lock = threading.Lock()
        """Held around a receive-pack and around every ref the API moves, so that the refs
        before and after a push differ by exactly that push."""

    def close(self) -> None:
        """Delete the git repositories now rather than when the state is collected."""
        self._cleanup()

    def viewer_login(self) -> str:
        return self.world.snapshot.github.viewer

    def now(self) -> datetime:
        return self.world.clock.now()

    def record(
        self, s: Session, actor: str | None, kind: str, obj: tuple[str, str], data: dict[str, Any]
    ) -> None:
        """Log one event in ``s``, so that it lands with the change it describes."""
        service = kind.split(".", 1)[0]
        self.world.events.record(
            s,
            service=service,
            kind=kind,
            actor=actor,
            object_type=obj[0],
            object_id=obj[1],
            data=data,
        )

    def comment_posted(
        self, s: Session, actor: str, issue: Issue, body: str, via: str, object_id: str
    ) -> None:
        """Log ``github.comment.posted`` beside the route's own event for the same comment."""
        self.record(
            s,
            actor,
            "github.comment.posted",
            ("comment", object_id),
            {
                "repo": issue.repo.full_name,
                "number": issue.number,
                "body": body,
                "pull_request": issue.is_pull,
                "via": via,
            },
        )


def noreply(user: User) -> str:
    return user.email or f"{user.id}+{user.login}@users.noreply.github.com"


def split_query(query: str) -> list[str]:
    """Whitespace-separated tokens, keeping ``"quoted phrases"`` (and ``key:"a b"``) whole."""
    tokens: list[str] = []
    current = ""
    quoted = False
    for ch in query:
        if ch == '"':
            quoted = not quoted
            current += ch
        elif ch.isspace() and not quoted:
            if current:
                tokens.append(current)
            current = ""
        else:
            current += ch
    if current:
        tokens.append(current)
    return tokens
