"""The last resort around each fake: a request it cannot read, or a bug it hits, still gets
the vendor's own answer, never a dropped connection or a bare traceback.

A fake that crashes on a request the agent chose must neither leave the agent hanging nor
void its run (that would let an agent cancel a losing run with one GET). So:

- A path that is not text (an undecodable percent-escape such as ``%ff``, which the gateway
  hands on as a lone surrogate) or that holds a NUL names nothing any vendor has: it gets the
  vendor's not-found answer before any route sees it.
- Any exception a fake lets escape becomes the vendor's own server-error answer, and is
  logged. The request's transaction was rolled back by :meth:`World.session`, so nothing it
  did is kept or recorded as the agent's mutation. The net also writes what happened into
  the request's scope under :data:`FAILURE`, where the gateway reads it and records the
  world's defect (``gateway.world_error``) beside the run's verdict.

The net is not the fix: each fake answers malformed input itself, and the fuzz tests
(``tests/fakes/*/test_fuzz.py``) assert the net never fires.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from starlette.responses import Response

from fakes.core.server import ASGIApp, Message, Receive, Scope, Send

log = logging.getLogger("fakes.net")

FAILURE = "replay.failure"
"""Scope key the net sets, to one line naming the exception, when it caught one."""

KEPT = 100
"""How many caught failures a net lists (a run that hits a bug in a loop stays bounded)."""

Answer = Callable[[Scope], Response]
"""Builds the vendor's response for a request (its scope)."""


def readable(text: str) -> bool:
    """Whether ``text`` is plain Unicode text: no lone surrogates, no NUL."""
    if "\x00" in text:
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


@dataclass
class Net:
    """ASGI middleware: the vendor's answer for unreadable paths and for escaped exceptions."""

    app: ASGIApp
    service: str
    not_found: Answer
    """The vendor's answer for a path that names nothing."""
    failure: Answer
    """The vendor's answer when it fails on its side (its 5xx shape)."""
    failures: list[str] = field(default_factory=list)
    """One line per exception caught (the first :data:`KEPT`), for tests and operators: the
    net should stay empty."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if not readable(str(scope.get("path", ""))):
            await self.not_found(scope)(scope, receive, send)
            return
        started = done = False
        held: list[Message] = []

        async def tracking(message: Message) -> None:
            # A server error is held back until the app returns: Starlette's own last resort
            # sends a plain-text 500 and then re-raises, and that is not the vendor's answer.
            nonlocal started, done
            if message["type"] == "http.response.start":
                started = True
                if int(message.get("status", 200)) >= 500:
                    held.append(message)
                    return
            elif held:
                held.append(message)
                return
            elif not message.get("more_body", False):
                done = True
            await send(message)

        try:
            await self.app(scope, receive, tracking)
        except Exception as exc:
            where = f"{scope.get('method')} {scope.get('path')!r}"
            scope[FAILURE] = f"{type(exc).__name__}: {exc}"
            if len(self.failures) < KEPT:
                self.failures.append(f"{where}: {type(exc).__name__}: {exc}")
            log.exception("%s fake failed on %s", self.service, where)
            if held or not started:
                await self.failure(scope)(scope, receive, send)
            elif not done:
                # Headers are out: end the body so the client is not left hanging.
                await send({"type": "http.response.body", "body": b"", "more_body": False})
            return
        for message in held:
            await send(message)
