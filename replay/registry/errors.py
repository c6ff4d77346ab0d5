"""The registry's errors."""

from __future__ import annotations

from replay.base.errors import ReplayError


class RecordError(ReplayError):
    """Recording failed: an unreachable upstream, an unknown project, nothing at T."""


__all__ = ["RecordError"]
