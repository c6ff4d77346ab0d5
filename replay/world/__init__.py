"""The world of one snapshot, as the runner sees it: fakes, registry and docs behind the gateway.

:class:`World` starts it (``replay world up`` in the gateway's own Python), resets it to the
snapshot and stops it, as a unit; its state is what a sandbox is given. (The fakes' own
database and clock, also called a world, are :mod:`fakes.core.world`.)
"""

from __future__ import annotations

from replay.world.process import World, gateway_python, running_world

__all__ = ["World", "gateway_python", "running_world"]
