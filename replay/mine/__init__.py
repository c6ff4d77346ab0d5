"""Mining a repository's history for the cases that teach most (``replay case mine``)."""

from replay.mine.detect import KINDS, Candidate, Kind, MineOptions, mine
from replay.mine.history import History, read_commits
from replay.mine.read import Sources, read_history

__all__ = [
    "KINDS",
    "Candidate",
    "History",
    "Kind",
    "MineOptions",
    "Sources",
    "mine",
    "read_commits",
    "read_history",
]
