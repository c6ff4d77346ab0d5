"""Serving a world over real HTTP on 127.0.0.1, one server per service host."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from tests.serving import serving


class HostAs:
    """Presents every request to the world under one service's host name."""

    def __init__(self, app: Any, host: str) -> None:
        self.app, self.host = app, host.encode()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = [(k, v) for k, v in scope["headers"] if k != b"host"]
            scope = {**scope, "headers": [*headers, (b"host", self.host)]}
        await self.app(scope, receive, send)


@contextmanager
def serve(app: Any) -> Iterator[str]:
    """``app`` on 127.0.0.1 at a free port; yields its base URL."""
    with serving(app, ws="none") as url:
        yield url
