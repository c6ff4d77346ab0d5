"""A gate in front of a fake's app: at most so many of its requests at work at once, the rest
waiting on the event loop.

Every request's state work runs under the world's one lock (:class:`fakes.core.world.World`),
so more than a couple of them in worker threads at once buys nothing: they wait on the lock
and fight over the GIL, and under 16 clients that convoy cost the GitHub fake about a third
of its throughput (measured side by side, issue 19). Waiting on an ``asyncio.Semaphore`` costs
nothing. Two at a time, not one, so that a slow request (a large diff read from git) does not
stall every other.
"""

from __future__ import annotations

import asyncio
import weakref

from fakes.core.server import ASGIApp, Receive, Scope, Send

LIMIT = 2
"""Requests at work at once (1 and 2 measured alike under 16 clients; 16 a third slower)."""


class Gate:
    """ASGI middleware: at most ``limit`` HTTP requests inside ``app`` at once."""

    def __init__(self, app: ASGIApp, limit: int = LIMIT) -> None:
        self.app = app
        self.limit = limit
        # One semaphore per event loop: an app may be served from more than one (tests).
        self._gates: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore]
        self._gates = weakref.WeakKeyDictionary()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        loop = asyncio.get_running_loop()
        gate = self._gates.get(loop)
        if gate is None:
            gate = self._gates[loop] = asyncio.Semaphore(self.limit)
        async with gate:
            await self.app(scope, receive, send)
