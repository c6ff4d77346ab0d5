"""The runs page's filters (the query string of ``/``), each read from what the results store
records of a run:

- ``case``: :attr:`RunRow.case_id`;
- ``outcome``: :attr:`RunRow.outcome` (an :class:`~replay.base.outcomes.Outcome`'s value);
- ``comparison``: the runs of the comparison's two candidates (:class:`ComparisonRow` arms
  against :attr:`RunRow.candidate`);
- ``candidate``: :attr:`RunRow.candidate`, by the candidate's name (``gold``) or its whole key
  (``gold:<settings digest>``); runs made outside ``compare`` and ``batch`` have none;
- ``harness`` and ``model``: :attr:`RunRow.harness` (the spec's name) and :attr:`RunRow.model`
  (as the harness spec names it; ``stub:<trajectory>`` for a stub);
- ``since`` and ``until``: days (``YYYY-MM-DD``, UTC, both included) of
  :attr:`RunRow.started_at`; one day is ``since=D&until=D``;
- ``batch``: the runs the batch's planned runs ended with (:attr:`BatchRunRow.run_id`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields
from datetime import UTC, date

from replay.base.outcomes import Outcome
from replay.results import RunRow

_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def parse_day(value: str) -> date | None:
    """The day ``YYYY-MM-DD`` names; None when it names none (``2026-13-01``, ``yesterday``)."""
    if not _DAY.match(value):
        return None
    try:
        return date.fromisoformat(value)
    except ValueError:
        return None


def started_day(run: RunRow) -> date:
    """The UTC day a run started (a store that keeps no time zone, SQLite, holds UTC)."""
    at = run.started_at
    return (at.astimezone(UTC) if at.tzinfo is not None else at).date()


@dataclass(frozen=True)
class RunFilters:
    """The runs page's filters; an empty one means any."""

    case: str = ""
    outcome: str = ""
    comparison: str = ""
    candidate: str = ""
    harness: str = ""
    model: str = ""
    since: str = ""
    until: str = ""
    batch: str = ""

    def chosen(self) -> dict[str, str]:
        """The filters given, by name, in the page's order."""
        return {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name)}

    def check(self) -> str | None:
        """What is wrong with the filters, in one line; None when nothing is. (Whether the
        comparison and the batch exist is the store's to say.)"""
        if self.outcome and self.outcome not in {o.value for o in Outcome}:
            return f"outcome {self.outcome!r} is not one of {', '.join(o.value for o in Outcome)}"
        for name in ("since", "until"):
            value = getattr(self, name)
            if value and parse_day(value) is None:
                return (
                    f"{name} {value!r} is not a day: give it as YYYY-MM-DD (UTC), e.g. 2026-12-01"
                )
        first, last = parse_day(self.since), parse_day(self.until)
        if first is not None and last is not None and first > last:
            return (
                f"since {self.since} is after until {self.until}: no day is in between "
                "(swap them; one day is since=D&until=D)"
            )
        return None

    def matches(self, run: RunRow) -> bool:
        """Whether ``run`` passes the filters that its own row answers (all but the
        comparison and the batch, which need the store); call :meth:`check` first."""
        if self.case and run.case_id != self.case:
            return False
        if self.outcome and run.outcome != self.outcome:
            return False
        if self.candidate and not _same_candidate(run.candidate, self.candidate):
            return False
        if self.harness and run.harness != self.harness:
            return False
        if self.model and run.model != self.model:
            return False
        first, last = parse_day(self.since), parse_day(self.until)
        if first is not None or last is not None:
            day = started_day(run)
            if (first is not None and day < first) or (last is not None and day > last):
                return False
        return True


def candidate_name(key: str) -> str:
    """A candidate's name from its key (``gold:<settings digest>``)."""
    return key.split(":", 1)[0]


def _same_candidate(key: str | None, wanted: str) -> bool:
    return key is not None and (key == wanted or candidate_name(key) == wanted)
