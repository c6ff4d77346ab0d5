"""``replay results report``: quality over healthy runs, reliability beside it, per configuration.

Only calibrated cases count (their gold run passed and idle run failed, see ``replay case
calibrate``); the others are listed as left out, and so are retired cases
(``replay case retire``). A calibration holds for the case version it ran (the case digest);
runs are grouped by case version too, so versions are never pooled.

Beside the rows, the same runs are broken down by case tag (line of work), by case age (the
time from the case's fix to the run, or to a date asked for) and, given a model's training
cutoff, by which side of it each fix lies: each group with its own pass rate, interval and
case count. Groups overlap (a case has several tags) and are never added up into one score.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from replay.base.case import LoadedCase
from replay.base.outcomes import HEALTHY, SPOILED, Outcome
from replay.cases.age import AGE_BUCKETS, NO_FIX_DATE, age_bucket, cutoff_side
from replay.cases.retired import retirement_of
from replay.results.models import RunRow
from replay.results.stats import CaseStats, MeanEstimate, case_stats, clustered_mean, wilson
from replay.results.store import Store

NOT_GIVEN = "(case file not given)"
"""The group of runs whose case file the report was not given (no tags, no fix date)."""
UNTAGGED = "(untagged)"


@dataclass(frozen=True)
class ReportRow:
    case_id: str
    case_digest: str
    """The case version the runs replayed."""
    harness: str
    model: str
    stats: CaseStats
    reliability: str
    """Runs spoiled by the wire or the sandbox, out of all runs."""
    tokens: int
    cost_usd: float | None


@dataclass(frozen=True)
class GroupRow:
    """One group of a breakdown (a tag, an age, a side of the training cutoff) for one
    configuration: its own pass rate and interval, over its own cases."""

    dimension: str
    """``tag``, ``age`` or ``training cutoff``."""
    group: str
    """The tag; the age bucket (:data:`replay.cases.age.AGE_BUCKETS`, or ``no fix date``);
    ``after-cutoff`` (clean: fixed after the model's training cutoff) or ``before-cutoff``."""
    harness: str
    model: str
    cases: int
    """Cases with a healthy run in the group."""
    healthy: int
    """Healthy runs in the group: the denominator of the pass rate."""
    passes: int
    pass_rate: float
    """Passes over healthy runs."""
    interval: tuple[float, float]
    """95% interval of the pass rate: normal, with a standard error clustered by case, for
    two cases or more; Wilson's over the runs for one case, or when every run agrees (the
    clustered one is then a point); see :attr:`method`."""
    method: str
    """How :attr:`interval` was computed."""


@dataclass(frozen=True)
class Report:
    rows: list[ReportRow]
    left_out: dict[str, str]
    """case id (with the version's digest prefix when it has one) -> why it does not count."""
    overall: dict[tuple[str, str], MeanEstimate] = field(default_factory=dict)
    """(harness, model) -> the mean pass rate over healthy runs of its calibrated cases (each
    at its latest calibrated version), with a standard error clustered by case (Miller
    2024)."""
    breakdown: list[GroupRow] = field(default_factory=list)
    """The same runs as :attr:`overall` by tag, by case age and (given a cutoff) by the side
    of the training cutoff, in that order; groups of one dimension may overlap."""


def build_report(
    store: Store,
    cases: Sequence[LoadedCase] = (),
    *,
    as_of: datetime | None = None,
    training_cutoff: datetime | None = None,
) -> Report:
    """The report over the store's runs. ``cases`` give each case's tags, fix date and
    retirement (runs of other cases are grouped as :data:`NOT_GIVEN`); a case's age is
    measured at each run's start, or at ``as_of`` when given; ``training_cutoff`` adds the
    split by the side of it each case's fix lies."""
    calibrations = store.calibrations()
    groups: dict[tuple[str, str, str, str], list] = defaultdict(list)  # type: ignore[type-arg]
    left_out: dict[str, str] = {}
    calibrated_ids = {cal.case_id for cal in calibrations.values()}
    given = {c.id: c for c in cases}
    retired = {case_id: r for case_id, c in given.items() if (r := retirement_of(c)) is not None}
    for case_id, retirement in retired.items():
        left_out[case_id] = f"retired {retirement.at:%Y-%m-%d}: {retirement.reason}"
    for run in store.runs():
        if run.outcome is None or run.case_id in retired:
            continue
        if run.case_digest is None:
            left_out[run.case_id] = "runs without a case digest (recorded before versions were)"
            continue
        cal = calibrations.get(run.case_digest)
        if cal is None or not cal.calibrated:
            left_out[f"{run.case_id}@{run.case_digest[:8]}"] = (
                (
                    "this case version is not calibrated (the case changed since its calibration)"
                    if run.case_id in calibrated_ids
                    else "never calibrated"
                )
                if cal is None
                else f"not calibrated (gold {cal.gold_passes}/{cal.runs} passed, "
                f"idle {cal.idle_fails}/{cal.runs} failed)"
            )
            continue
        if run.model.startswith("stub:"):
            continue  # calibration runs are the pipeline's, not a configuration's
        groups[(run.case_id, run.case_digest, run.harness, run.model)].append(run)
    rows = []
    for (case_id, digest, harness, model), runs in sorted(groups.items()):
        outcomes = [r.outcome for r in runs]
        stats = case_stats(case_id, outcomes)
        spoiled = sum(o in SPOILED for o in outcomes)
        costs = [r.cost_usd for r in runs]
        rows.append(
            ReportRow(
                case_id,
                digest,
                harness,
                model,
                stats,
                f"{spoiled}/{len(runs)} spoiled",
                sum(r.input_tokens + r.output_tokens for r in runs),
                None if any(c is None for c in costs) else sum(c or 0 for c in costs),
            )
        )
    # The overall mean counts each case once: its latest calibrated version.
    latest = {
        cal.case_id: digest
        for digest, cal in sorted(calibrations.items(), key=lambda item: item[1].id)
        if cal.calibrated
    }
    clusters: dict[tuple[str, str], list[list[bool]]] = defaultdict(list)
    for row in rows:
        st = row.stats
        if st.healthy and latest.get(row.case_id) == row.case_digest:
            clusters[(row.harness, row.model)].append(
                [True] * st.passes + [False] * (st.healthy - st.passes)
            )
    overall = {config: clustered_mean(cases) for config, cases in sorted(clusters.items())}
    counted = [
        run
        for (case_id, digest, _, _), runs in groups.items()
        if latest.get(case_id) == digest
        for run in runs
        if Outcome(run.outcome) in HEALTHY
    ]
    breakdown = _breakdown(counted, given, as_of, training_cutoff)
    return Report(rows, left_out, overall, breakdown)


def _breakdown(
    runs: Sequence[RunRow],
    given: dict[str, LoadedCase],
    as_of: datetime | None,
    cutoff: datetime | None,
) -> list[GroupRow]:
    # (dimension, group, harness, model) -> case id -> pass or not, per healthy run.
    found: dict[tuple[str, str, str, str], dict[str, list[bool]]] = defaultdict(
        lambda: defaultdict(list)
    )
    for run in runs:
        loaded = given.get(run.case_id)
        passed = run.outcome == Outcome.PASS.value
        config = (run.harness, run.model)
        if loaded is None:
            keys = [("tag", NOT_GIVEN), ("age", NOT_GIVEN)]
            if cutoff is not None:
                keys.append(("training cutoff", NOT_GIVEN))
        else:
            fixed_at = loaded.case.fixed_at
            keys = [("tag", tag) for tag in loaded.case.tags or [UNTAGGED]]
            keys.append(("age", age_bucket(fixed_at, as_of or run.started_at)))
            if cutoff is not None:
                keys.append(("training cutoff", cutoff_side(fixed_at, cutoff)))
        for dimension, group in keys:
            found[(dimension, group, *config)][run.case_id].append(passed)
    order = {name: i for i, (name, _) in enumerate(AGE_BUCKETS)}
    order |= {NO_FIX_DATE: len(order), NOT_GIVEN: len(order) + 1}
    order |= {"after-cutoff": 0, "before-cutoff": 1}
    dims = {"tag": 0, "age": 1, "training cutoff": 2}

    def sort_key(key: tuple[str, str, str, str]) -> tuple[int, int, str, str, str]:
        dimension, group, harness, model = key
        rank = 0 if dimension == "tag" and group != NOT_GIVEN else order.get(group, 99)
        return (dims[dimension], rank, group, harness, model)

    rows = []
    for key in sorted(found, key=sort_key):
        per_case = list(found[key].values())
        healthy = sum(len(c) for c in per_case)
        passes = sum(sum(c) for c in per_case)
        est = clustered_mean(per_case)
        if math.isnan(est.se):
            interval, method = wilson(passes, healthy), "Wilson, one case"
        elif est.se == 0:
            # Every run agrees: the clustered SE is 0 and its interval a point; Wilson's is not.
            interval, method = wilson(passes, healthy), "Wilson, all runs agree"
        else:
            interval = (max(0.0, est.interval[0]), min(1.0, est.interval[1]))
            method = "clustered by case"
        rows.append(GroupRow(*key, len(per_case), healthy, passes, est.mean, interval, method))
    return rows
