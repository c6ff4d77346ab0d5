"""Serving an ASGI app with uvicorn in a thread: the one way every test stands up a server.

On 127.0.0.1 at a free port (or on a Unix socket with ``uds=``), started before the block
runs and stopped after it; traffic never leaves the machine.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import uvicorn

LOOPBACK_TIMEOUT = 60.0
"""Seconds a test's client waits for a server it started on loopback: httpx's default (5 s)
is less than one answer took on CI's busy machine (a ReadTimeout in a fakes test)."""


@contextmanager
def serving(app: Any, *, uds: Path | None = None, **options: Any) -> Iterator[str]:
    """Yield ``http://127.0.0.1:PORT`` (or the socket's path with ``uds``) while ``app`` is
    served; ``options`` go to ``uvicorn.Config`` (``http="h11"``, ``ws="none"``...)."""
    where: dict[str, Any] = {"uds": str(uds)} if uds is not None else {"port": 0}
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        **where,
        **{"log_level": "warning", "lifespan": "off", **options},
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.01)
    try:
        if uds is not None:
            yield str(uds)
        else:
            yield f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def port_of(url: str) -> int:
    return int(url.rsplit(":", 1)[1])
