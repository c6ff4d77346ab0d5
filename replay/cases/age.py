"""How old a case is, and on which side of a model's training cutoff its fix lies.

A case's age is the time from its fix (:attr:`replay.base.case.Case.fixed_at`) to a run of
it (or to a date a report is asked for): a fix a year old has had a year to reach a model's
training data, a fix after the model's stated training cutoff cannot be in it.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Literal

AGE_BUCKETS: tuple[tuple[str, timedelta | None], ...] = (
    ("<3 months", timedelta(days=91)),
    ("3-12 months", timedelta(days=365)),
    (">1 year", None),
)
"""The age groups, youngest first: each holds ages below its bound (the last has none)."""

NO_FIX_DATE = "no fix date"
"""The group of a case whose file gives no fix date."""

CutoffSide = Literal["after-cutoff", "before-cutoff", "no fix date"]


def aware(at: datetime) -> datetime:
    """``at`` with a time zone: a naive time (SQLite keeps none) is taken as UTC."""
    return at if at.tzinfo is not None else at.replace(tzinfo=UTC)


def age_bucket(fixed_at: datetime | None, when: datetime) -> str:
    """The :data:`AGE_BUCKETS` name of a fix made at ``fixed_at``, seen at ``when``; a run
    before the fix (a date given before it) counts as the youngest group."""
    if fixed_at is None:
        return NO_FIX_DATE
    age = aware(when) - aware(fixed_at)
    for name, bound in AGE_BUCKETS:
        if bound is None or age < bound:
            return name
    raise AssertionError("the last bucket has no bound")


def cutoff_side(fixed_at: datetime | None, cutoff: datetime) -> CutoffSide:
    """``after-cutoff``: the fix came after the model's training cutoff, so it cannot be in
    its training data (clean); ``before-cutoff``: the public fix may be in it."""
    if fixed_at is None:
        return "no fix date"
    return "after-cutoff" if aware(fixed_at) > aware(cutoff) else "before-cutoff"


def parse_date(value: str) -> datetime:
    """A date (``2025-04-01``, midnight UTC) or an ISO 8601 time; ``ValueError`` otherwise."""
    at = datetime.fromisoformat(value.replace("Z", "+00:00"))
    return aware(at)
