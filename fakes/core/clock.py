"""The frozen clock: the world's time is T plus the time the run has been going."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime, timedelta


class FrozenClock:
    """``now()`` is T plus the seconds elapsed since the clock was (re)started.

    Objects created during a run are therefore dated just after T, in the order they were
    made, and nothing the world says is ever dated in the real present.
    """

    def __init__(self, at: datetime, monotonic: Callable[[], float] = time.monotonic) -> None:
        if at.tzinfo is None:
            raise ValueError("the frozen clock needs a timezone-aware T")
        self.at = at
        self._monotonic = monotonic
        self._start = monotonic()

    def now(self) -> datetime:
        # Strictly after T, even on the very first call, so "created during the run" is clear.
        elapsed = max(self._monotonic() - self._start, 0.0)
        return self.at + timedelta(seconds=elapsed, microseconds=1)

    def restart(self) -> None:
        self._start = self._monotonic()
