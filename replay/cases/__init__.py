"""Keeping the case set alive: how old each case is against a date or a model's training
cutoff (:mod:`.age`), retired cases (:mod:`.retired`), and the staleness rule (:mod:`.stale`)."""

from replay.cases.age import AGE_BUCKETS, NO_FIX_DATE, age_bucket, cutoff_side
from replay.cases.retired import (
    REGISTRY,
    Retirement,
    partition_retired,
    retire,
    retirement_of,
)

__all__ = [
    "AGE_BUCKETS",
    "NO_FIX_DATE",
    "REGISTRY",
    "Retirement",
    "age_bucket",
    "cutoff_side",
    "partition_retired",
    "retire",
    "retirement_of",
]
