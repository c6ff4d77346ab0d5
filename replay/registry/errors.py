"""The registry's errors: recording failed, or the index had nothing at T."""

from __future__ import annotations

from replay.base.errors import InputError, ReplayError


class RecordError(ReplayError):
    """Recording failed: an unreachable upstream, an unknown project, nothing at T."""


class NothingAtT(RecordError, InputError):
    """A requirement that the index had nothing for at T, though it has files for it now:
    the case's T or requirements must change (the message says which), exit status 2."""

    def __init__(
        self, problem: str, project: str | None = None, absent: bool = False, asked: bool = False
    ) -> None:
        InputError.__init__(self, "recording the registry as of T", problem)
        self.project = project
        """The project nothing fit for (its canonical name), when known."""
        self.absent = absent
        """The index holds no file of the project from at or before T at all (all of them
        uploaded later: the project deleted and uploaded again, codecov in 2023)."""
        self.asked = asked
        """It was asked for (a test requirement), not wanted by a dependency."""


__all__ = ["NothingAtT", "RecordError"]
