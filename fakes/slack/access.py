"""Who is calling, with which scopes, and whether the run has asked for a rate limit.

Tokens: ``xoxb-...`` is the agent's bot, ``xoxp-...`` a user token of the same identity (so
``search.messages`` works with it); any other token is ``invalid_auth`` and no token at all is
``not_authed``. Scopes are the defaults below unless a test or a run sets others, per kind of
token or per exact token. This configuration is not world state: a world reset keeps it.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Literal

from fakes.slack.errors import SlackError, ratelimited

TokenKind = Literal["bot", "user"]

READ_SCOPES = ("channels:read", "groups:read", "im:read", "mpim:read")
HISTORY_SCOPES = ("channels:history", "groups:history", "mpim:history", "im:history")

BOT_SCOPES = frozenset(
    {
        *READ_SCOPES,
        *HISTORY_SCOPES,
        "channels:join",
        "chat:write",
        "reactions:read",
        "reactions:write",
        "users:read",
    }
)
"""What a bot token holds by default: every scope the served methods need."""

USER_SCOPES = frozenset(
    {
        *READ_SCOPES,
        *HISTORY_SCOPES,
        "channels:write",
        "chat:write",
        "reactions:read",
        "reactions:write",
        "search:read",
        "users:read",
    }
)
"""What a user token holds by default (``conversations.join`` needs ``channels:write`` there)."""

PREFIXES: dict[str, TokenKind] = {"xoxb-": "bot", "xoxp-": "user"}


@dataclass(frozen=True)
class Caller:
    """The identity behind a token."""

    user_id: str
    kind: TokenKind
    scopes: frozenset[str]
    token: str


@dataclass
class _Limit:
    remaining: int
    retry_after: int


@dataclass
class Access:
    """Token to caller, scopes per token, and rate limits the run asked for."""

    user_id: str
    scopes: dict[TokenKind, frozenset[str]] = field(
        default_factory=lambda: {"bot": BOT_SCOPES, "user": USER_SCOPES}
    )
    token_scopes: dict[str, frozenset[str]] = field(default_factory=dict)
    """Scopes of one exact token, overriding the defaults of its kind."""
    _limits: dict[str, _Limit] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def authenticate(self, token: str | None) -> Caller:
        if not token:
            raise SlackError("not_authed")
        for prefix, kind in PREFIXES.items():
            if token.startswith(prefix) and len(token) > len(prefix):
                scopes = self.token_scopes.get(token, self.scopes[kind])
                return Caller(user_id=self.user_id, kind=kind, scopes=scopes, token=token)
        raise SlackError("invalid_auth")

    def set_scopes(self, who: TokenKind | str, scopes: set[str] | frozenset[str]) -> None:
        """Give a kind of token (``"bot"``, ``"user"``) or one exact token these scopes."""
        if who in ("bot", "user"):
            self.scopes["bot" if who == "bot" else "user"] = frozenset(scopes)
        else:
            self.token_scopes[who] = frozenset(scopes)

    def rate_limit(self, method: str = "*", times: int = 1, retry_after: int = 1) -> None:
        """Answer the next ``times`` calls of ``method`` (``*``: any method) with a 429."""
        if times < 0 or retry_after < 0:
            raise ValueError("times and retry_after must not be negative")
        with self._lock:
            self._limits[method] = _Limit(remaining=times, retry_after=retry_after)

    def check_rate(self, method: str) -> None:
        with self._lock:
            for key in (method, "*"):
                limit = self._limits.get(key)
                if limit is not None and limit.remaining > 0:
                    limit.remaining -= 1
                    raise ratelimited(limit.retry_after)
