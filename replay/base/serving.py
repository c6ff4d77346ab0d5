"""Serving an ASGI app with uvicorn in a thread, for as long as a block runs.

On 127.0.0.1 at a free port, or on a Unix socket (``uds=``); started before the block runs,
stopped after it. The contract targets, gh's evidence capture and the tests stand servers up
this one way.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import uvicorn

from replay.base.errors import ReplayError

START_TIMEOUT = 10.0
"""Seconds uvicorn has to start listening."""


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
    deadline = time.monotonic() + START_TIMEOUT
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            where_ = f"on the Unix socket {uds}" if uds is not None else "on 127.0.0.1"
            raise ReplayError(f"uvicorn did not start {where_}")
        time.sleep(0.01)
    try:
        if uds is not None:
            yield str(uds)
        else:
            yield f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
