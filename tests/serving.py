"""Serving an ASGI app with uvicorn in a thread: the one way every test stands up a server
(:func:`replay.base.serving.serving`, which the contract targets use too).

On 127.0.0.1 at a free port (or on a Unix socket with ``uds=``), started before the block
runs and stopped after it; traffic never leaves the machine.
"""

from __future__ import annotations

from replay.base.serving import serving as serving

LOOPBACK_TIMEOUT = 60.0
"""Seconds a test's client waits for a server it started on loopback: httpx's default (5 s)
is less than one answer took on CI's busy machine (a ReadTimeout in a fakes test)."""


def port_of(url: str) -> int:
    return int(url.rsplit(":", 1)[1])
