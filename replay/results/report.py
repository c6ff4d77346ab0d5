"""``replay results report``: quality over healthy runs, reliability beside it, per configuration.

Only calibrated cases count (their gold run passed and idle run failed, see ``replay case
calibrate``); the others are listed as left out. A calibration holds for the case version it
ran (the case digest); runs are grouped by case version too, so versions are never pooled.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from replay.base.outcomes import SPOILED
from replay.results.stats import CaseStats, MeanEstimate, case_stats, clustered_mean
from replay.results.store import Store


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
class Report:
    rows: list[ReportRow]
    left_out: dict[str, str]
    """case id (with the version's digest prefix when it has one) -> why it does not count."""
    overall: dict[tuple[str, str], MeanEstimate] = field(default_factory=dict)
    """(harness, model) -> the mean pass rate over healthy runs of its calibrated cases (each
    at its latest calibrated version), with a standard error clustered by case (Miller
    2024)."""


def build_report(store: Store) -> Report:
    calibrations = store.calibrations()
    groups: dict[tuple[str, str, str, str], list] = defaultdict(list)  # type: ignore[type-arg]
    left_out: dict[str, str] = {}
    calibrated_ids = {cal.case_id for cal in calibrations.values()}
    for run in store.runs():
        if run.outcome is None:
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
    return Report(rows, left_out, overall)
