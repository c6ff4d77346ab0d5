"""The Slack fake's own control endpoints, for the world's control plane to mount.

``POST /ratelimit`` makes the next calls of a method answer 429 ``ratelimited`` with a
``Retry-After``; ``PUT /scopes`` sets the scopes of a kind of token or of one token. Meant to be
mounted under ``/_replay/slack`` (never on the Slack host itself, where an agent could reach it);
nothing here is an agent's mutation, so nothing is recorded.
"""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from fakes.slack.access import Access


class RateLimit(BaseModel):
    model_config = ConfigDict(extra="forbid")

    method: str = "*"
    """A Web API method (``chat.postMessage``), or ``*`` for every method."""
    times: int = Field(default=1, ge=0)
    """How many of the next calls get a 429 (0 lifts the limit)."""
    retry_after: int = Field(default=1, ge=0)
    """Seconds sent in ``Retry-After``."""


class Scopes(BaseModel):
    model_config = ConfigDict(extra="forbid")

    token: str = Field(min_length=1)
    """``bot``, ``user``, or one exact token."""
    scopes: list[str]


def control_router(access: Access) -> APIRouter:
    router = APIRouter()

    @router.post("/ratelimit")
    def ratelimit(limit: RateLimit) -> dict[str, bool]:
        access.rate_limit(limit.method, times=limit.times, retry_after=limit.retry_after)
        return {"ok": True}

    @router.put("/scopes")
    def scopes(grant: Scopes) -> dict[str, bool]:
        access.set_scopes(grant.token, set(grant.scopes))
        return {"ok": True}

    return router
