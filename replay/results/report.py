"""``replay results report``: quality over healthy runs, reliability beside it, per configuration.

Only calibrated cases count (their gold run passed and idle run failed, see ``replay case
calibrate``); the others are listed as left out.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from replay.base.outcomes import SPOILED
from replay.results.stats import CaseStats, case_stats
from replay.results.store import Store


@dataclass(frozen=True)
class ReportRow:
    case_id: str
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
    """case id -> why it does not count."""


def build_report(store: Store) -> Report:
    calibrations = store.calibrations()
    groups: dict[tuple[str, str, str], list] = defaultdict(list)  # type: ignore[type-arg]
    left_out: dict[str, str] = {}
    for run in store.runs():
        if run.outcome is None:
            continue
        cal = calibrations.get(run.case_id)
        if cal is None or not cal.calibrated:
            left_out[run.case_id] = (
                "never calibrated"
                if cal is None
                else f"not calibrated (gold {cal.gold_passes}/{cal.runs} passed, "
                f"idle {cal.idle_fails}/{cal.runs} failed)"
            )
            continue
        if run.model.startswith("stub:"):
            continue  # calibration runs are the pipeline's, not a configuration's
        groups[(run.case_id, run.harness, run.model)].append(run)
    rows = []
    for (case_id, harness, model), runs in sorted(groups.items()):
        outcomes = [r.outcome for r in runs]
        stats = case_stats(case_id, outcomes, ks=sorted({1, min(3, len(runs))}))
        spoiled = sum(o in SPOILED for o in outcomes)
        costs = [r.cost_usd for r in runs]
        rows.append(
            ReportRow(
                case_id,
                harness,
                model,
                stats,
                f"{spoiled}/{len(runs)} spoiled",
                sum(r.input_tokens + r.output_tokens for r in runs),
                None if any(c is None for c in costs) else sum(c or 0 for c in costs),
            )
        )
    return Report(rows, left_out)
