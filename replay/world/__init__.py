"""The world of one snapshot, as the runner sees it: fakes, registry and docs behind the gateway.

:class:`World` starts it (``replay world up`` in the gateway's own Python), resets it to the
snapshot and stops it, as a unit; its state is what a sandbox is given. :class:`WarmWorld`
keeps one running for the runs of a batch, reset between them, and writes each run's copy of
the world's files; :func:`keep_warm` shares it between batches. (The fakes' own database and
clock, also called a world, are :mod:`fakes.core.world`.)
"""

from __future__ import annotations

from replay.world.process import World, gateway_python, running_world
from replay.world.warm import WarmPool, WarmWorld, keep_warm, use_pool, warm_pool

__all__ = [
    "WarmPool",
    "WarmWorld",
    "World",
    "gateway_python",
    "keep_warm",
    "running_world",
    "use_pool",
    "warm_pool",
]
