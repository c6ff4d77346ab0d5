"""What every resolver sees: the open session, the backend, the viewer, and how to spell URLs."""

from __future__ import annotations

import base64
import math
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sqlalchemy.orm import Session

from fakes.github.backend import GitHubBackend
from fakes.github.models import User

WEB = "https://github.com"
"""GitHub's web host: the ``url`` fields point there, as on github.com."""


@dataclass
class Context:
    """One GraphQL request: everything runs inside one session (one transaction)."""

    session: Session
    backend: GitHubBackend
    viewer: User
    cache: dict[Any, Any] = field(default_factory=dict)
    """Per-request memo for git reads (a pull request's changes, a commit's metadata)."""

    def memo(self, key: Any, make: Any) -> Any:
        if key not in self.cache:
            self.cache[key] = make()
        return self.cache[key]


def iso(value: datetime | None) -> str | None:
    """GitHub's DateTime: ISO 8601, UTC, whole seconds, ``Z``.

    A fraction of a second rounds *up* (as REST does), so whatever a run creates just after T
    never reads as T itself."""
    if value is None:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    seconds = math.ceil(value.timestamp())
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def legacy_id(raw: str) -> str:
    """GitHub's legacy global ID for an id whose tail is not a plain integer (commits)."""
    return base64.b64encode(raw.encode()).decode()
