"""The registry's errors: recording failed, or the index had nothing at T."""

from __future__ import annotations

from replay.base.errors import InputError, ReplayError


class RecordError(ReplayError):
    """Recording failed: an unreachable upstream, an unknown project, nothing at T."""


class NothingAtT(RecordError, InputError):
    """A requirement that the index had nothing for at T, though it has files for it now:
    the case's T or requirements must change (the message says which), exit status 2."""

    def __init__(self, problem: str) -> None:
        InputError.__init__(self, "recording the registry as of T", problem)


__all__ = ["NothingAtT", "RecordError"]
