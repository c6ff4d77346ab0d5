"""``replay compare``: two candidates on the same calibrated cases, from the results store.

What is missing is run first (each arm up to K healthy runs per case); then everything is
read back from the store and judged under the comparison's decision rule, fixed before its
first run. The result is one document (:data:`SCHEMA`), which the terminal table, the JSON,
JUnit and HTML reports all render.

The statistics (:mod:`replay.results.stats`) follow Miller 2024, "Adding Error Bars to Evals"
(arXiv 2411.00640): cases are the sample, the case is the cluster, arms are paired by case,
and a bootstrap resamples cases, never runs.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from statistics import NormalDist
from typing import Any

from replay.base.case import LoadedCase, case_digest
from replay.base.errors import ReplayError
from replay.base.outcomes import HEALTHY, OUTCOMES, SPOILED, Outcome
from replay.cases.age import cutoff_side
from replay.compare.candidate import Candidate
from replay.compare.rule import DecisionRule, rule_digest
from replay.results import Store
from replay.results.models import ComparisonRow, RunRow
from replay.results.stats import (
    ArmCase,
    binomial_floor_se,
    bootstrap_cases,
    cases_needed,
    clustered_mean,
    compare_arms,
    minimum_detectable_effect,
    pass_at_k,
    pass_hat_k,
    t_quantile,
    wilson,
)
from replay.run.runner import RunOptions, run_case

SCHEMA = "replay.compare/1"
ARMS = ("A", "B")


class CompareError(ReplayError):
    """A comparison cannot go on as asked (its rule changed, its arms are one candidate...)."""


# ----------------------------------------------------------------------------- fixing


def fix_comparison(
    store: Store, name: str, a: Candidate, b: Candidate, rule_text: str
) -> ComparisonRow:
    """Record the comparison and its rule before any run, or check that an earlier
    invocation recorded the same arms and the same rule."""
    if a.key == b.key:
        raise CompareError(
            f"arms A and B are the same candidate ({a.key}); for an A/A comparison give the "
            "same settings two names"
        )
    digest = rule_digest(rule_text)
    row = store.fix_comparison(
        ComparisonRow(
            name=name,
            arm_a=a.key,
            arm_b=b.key,
            rule=rule_text,
            rule_digest=digest,
            fixed_at=datetime.now(UTC),
        )
    )
    if (row.arm_a, row.arm_b) != (a.key, b.key):
        raise CompareError(
            f"comparison {name!r} was fixed with arms {row.arm_a} and {row.arm_b}, not "
            f"{a.key} and {b.key}; name a new comparison (--name), or drop this one first "
            f"(replay results drop-comparison {name})"
        )
    if row.rule_digest != digest:
        raise CompareError(
            f"comparison {name!r} was fixed at {row.fixed_at:%Y-%m-%d %H:%M} UTC with another "
            "decision rule; a rule changed after the runs decides nothing: keep the rule, or "
            f"name a new comparison (--name), or drop this one first (replay results "
            f"drop-comparison {name})"
        )
    return row


# ----------------------------------------------------------------------------- running


@dataclass(frozen=True)
class Planned:
    case_id: str
    arm: str
    runs: int
    first_attempt: int


def _healthy(run: RunRow) -> bool:
    return run.outcome is not None and Outcome(run.outcome) in HEALTHY


def plan_missing(
    store: Store, cases: Sequence[LoadedCase], arms: dict[str, Candidate], runs: int
) -> list[Planned]:
    """The runs each arm still needs for ``runs`` healthy runs of each calibrated case."""
    calibrations = store.calibrations()
    plan = []
    for loaded in cases:
        digest = case_digest(loaded)
        cal = calibrations.get(digest)
        if cal is None or not cal.calibrated:
            continue
        for label, cand in arms.items():
            done = [r for r in store.runs(loaded.id, candidate=cand.key) if r.case_digest == digest]
            missing = runs - sum(_healthy(r) for r in done)
            if missing > 0:
                attempts = max((r.attempt for r in done), default=0)
                plan.append(Planned(loaded.id, label, missing, attempts + 1))
    return plan


def run_missing(
    plan: Sequence[Planned],
    cases: Sequence[LoadedCase],
    arms: dict[str, Candidate],
    base: RunOptions,
) -> None:
    by_id = {c.id: c for c in cases}
    for item in plan:
        cand = arms[item.arm]
        run_case(
            by_id[item.case_id],
            cand.options(base, runs=item.runs, first_attempt=item.first_attempt),
        )


# ----------------------------------------------------------------------------- judging


def _run_doc(run: RunRow) -> dict[str, Any]:
    run_dir = Path(run.run_dir) if run.run_dir else None
    transcript = diff = None
    if run_dir is not None:
        uniform = run_dir / "transcript.jsonl"
        found = [uniform] if uniform.is_file() else sorted(run_dir.glob("transcript*"))
        transcript = str(found[0]) if found else None
        diff = str(run_dir / "diff.patch") if (run_dir / "diff.patch").is_file() else None
    grade = run.grade
    reason = None
    if grade is not None:
        reason = grade.detail.get("reason") if isinstance(grade.detail, dict) else None
    return {
        "run_id": run.id,
        "case_id": run.case_id,
        "attempt": run.attempt,
        "outcome": run.outcome,
        "reason": reason,
        "started_at": _iso(run.started_at),
        "wall_time_s": run.wall_time_s,
        "tokens": run.input_tokens + run.output_tokens,
        "cost_usd": run.cost_usd,
        "side_effects_ok": grade.side_effects_ok if grade is not None else None,
        "run_dir": str(run_dir) if run_dir else None,
        "transcript": transcript,
        "diff": diff,
    }


def _iso(at: datetime) -> str:
    return (at if at.tzinfo else at.replace(tzinfo=UTC)).isoformat()


def _interval(values: Sequence[float], confidence: float) -> dict[str, Any]:
    """Mean of per-case values with a t interval over cases, clipped to [0, 1], and never
    narrower than the Wilson interval of the cases taken as trials scoring their values: when
    every case scores the same (all 0, all 1) the t interval is a point, which n cases cannot
    show (two cases failing everything give 0.00-0.66, not 0.00-0.00)."""
    n = len(values)
    mean = sum(values) / n
    if n < 2:
        return {"value": mean, "interval": None}
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    half = t_quantile(1 - (1 - confidence) / 2, n - 1) * sd / math.sqrt(n)
    low, high = wilson(sum(values), n, NormalDist().inv_cdf(1 - (1 - confidence) / 2))
    return {
        "value": mean,
        "interval": [max(0.0, min(mean - half, low)), min(1.0, max(mean + half, high))],
    }


def _class(a: ArmCase, b: ArmCase) -> str:
    if 0 < a.passes < a.runs or 0 < b.passes < b.runs:
        return "flaky"
    if a.passes and b.passes:
        return "both"
    if a.passes:
        return "only_a"
    if b.passes:
        return "only_b"
    return "neither"


def _strength(loaded: LoadedCase) -> dict[str, Any] | None:
    """The case version's recorded strength (``replay case strength --record``), or None."""
    from replay.strength.record import recorded_strength

    measured = recorded_strength(loaded)
    if measured is None:
        return None
    return {
        "strength": measured.strength,
        "strong": measured.strong,
        "survivors": measured.survivors,
        "graded": measured.rejected + measured.survivors,
        "accepted": None if measured.accepted is None else measured.accepted.reason,
    }


def build_document(
    store: Store,
    cases: Sequence[LoadedCase],
    arms: dict[str, Candidate],
    rule: DecisionRule,
    comparison: ComparisonRow,
) -> dict[str, Any]:
    """The comparison, judged: the document every report renders (schema :data:`SCHEMA`)."""
    calibrations = store.calibrations()
    calibrated_ids = {cal.case_id for cal in calibrations.values() if cal.calibrated}
    left_out: list[dict[str, str]] = []
    rows: list[dict[str, Any]] = []
    paired: dict[str, list[ArmCase]] = {"A": [], "B": []}
    # Arm A's healthy runs of each paired case, pass or not, in the order they were made.
    ordered_a: list[list[bool]] = []
    violations: dict[str, list[ArmCase]] = {"A": [], "B": []}
    all_runs: dict[str, list[RunRow]] = {"A": [], "B": []}
    healthy_runs: dict[str, list[RunRow]] = {"A": [], "B": []}
    fixed_at = comparison.fixed_at
    if fixed_at.tzinfo is None:
        fixed_at = fixed_at.replace(tzinfo=UTC)
    for loaded in sorted(cases, key=lambda c: c.id):
        digest = case_digest(loaded)
        cal = calibrations.get(digest)
        if cal is None or not cal.calibrated:
            why = (
                "this case version is not calibrated (the case changed since its calibration)"
                if cal is None and loaded.id in calibrated_ids
                else "never calibrated"
                if cal is None
                else f"not calibrated (gold {cal.gold_passes}/{cal.runs} passed, "
                f"idle {cal.idle_fails}/{cal.runs} failed)"
            )
            left_out.append({"case_id": loaded.id, "why": why})
            continue
        per_arm = {
            label: [
                r
                for r in store.runs(loaded.id, candidate=cand.key)
                if r.case_digest == digest and r.outcome is not None
            ]
            for label, cand in arms.items()
        }
        for label, runs in per_arm.items():
            all_runs[label] += runs
        healthy = {label: [r for r in runs if _healthy(r)] for label, runs in per_arm.items()}
        short = [
            label
            for label in ARMS
            if len(healthy[label]) < (rule.k if rule.metric != "pass@1" else 1)
        ]
        if short:
            need = rule.k if rule.metric != "pass@1" else 1
            left_out.append(
                {
                    "case_id": loaded.id,
                    "why": f"fewer than {need} healthy run{'s' if need > 1 else ''} in arm "
                    + " and ".join(short)
                    + " (both arms leave it out alike)",
                }
            )
            continue
        row: dict[str, Any] = {
            "case_id": loaded.id,
            "case_digest": digest,
            "tags": list(loaded.case.tags),
            "fix_date": _iso(loaded.case.fixed_at) if loaded.case.fixed_at else None,
            "contamination": {
                label: _side(loaded.case.fixed_at, arms[label].training_cutoff) for label in ARMS
            },
            "strength": _strength(loaded),
        }
        arm_cases = {}
        for label in ARMS:
            runs = healthy[label]
            healthy_runs[label] += runs
            passes = sum(r.outcome == Outcome.PASS.value for r in runs)
            arm_cases[label] = ArmCase(passes, len(runs))
            paired[label].append(arm_cases[label])
            bad = sum(r.grade is not None and not r.grade.side_effects_ok for r in runs)
            violations[label].append(ArmCase(bad, len(runs)))
            row[label] = {
                "passes": passes,
                "healthy": len(runs),
                "rate": passes / len(runs),
                "runs": [_run_doc(r) for r in per_arm[label]],
            }
        ordered_a.append(
            [r.outcome == Outcome.PASS.value for r in sorted(healthy["A"], key=lambda r: r.attempt)]
        )
        row["class"] = _class(arm_cases["A"], arm_cases["B"])
        rows.append(row)

    doc: dict[str, Any] = {
        "schema": SCHEMA,
        "generated_at": datetime.now(UTC).isoformat(),
        "name": comparison.name,
        "rule": {
            **rule.model_dump(mode="json", by_alias=False, exclude={"schema_"}),
            "digest": comparison.rule_digest,
            "fixed_at": _iso(fixed_at),
            "runs_before_rule": sum(
                _iso(r.started_at) < _iso(fixed_at) for label in ARMS for r in all_runs[label]
            ),
        },
        "arms": {
            label: _arm_doc(
                label,
                arms[label],
                paired[label],
                all_runs[label],
                healthy_runs[label],
                violations[label],
                rule,
            )
            for label in ARMS
        },
        "cases": rows,
        "left_out": left_out,
    }
    _judge(doc, paired, ordered_a, violations, rule)
    doc["by_tag"] = _by_tag(rows, rule)
    doc["by_cutoff"] = _by_cutoff(rows, arms, rule)
    return doc


def _metric_rates(cases: Sequence[ArmCase], rule: DecisionRule) -> list[float]:
    if rule.metric == "pass@1":
        return [c.rate for c in cases]
    return [pass_hat_k(c.runs, c.passes, rule.k) for c in cases]


def _arm_doc(
    label: str,
    cand: Candidate,
    cases: Sequence[ArmCase],
    runs: Sequence[RunRow],
    healthy: Sequence[RunRow],
    violations: Sequence[ArmCase],
    rule: DecisionRule,
) -> dict[str, Any]:
    counts = {o.value: 0 for o in OUTCOMES}
    for r in runs:
        counts[str(r.outcome)] += 1
    passes = counts[Outcome.PASS.value]
    tokens = sum(r.input_tokens + r.output_tokens for r in runs)
    costs = [r.cost_usd for r in runs]
    cost = None if any(c is None for c in costs) or not runs else sum(c or 0.0 for c in costs)
    ks = range(1, min((c.runs for c in cases), default=0) + 1)
    mean = None
    if cases:
        est = clustered_mean([[True] * c.passes + [False] * (c.runs - c.passes) for c in cases])
        mean = {
            "value": est.mean,
            "se": None if math.isnan(est.se) else est.se,
            "interval": None
            if math.isnan(est.se)
            else [max(0.0, est.interval[0]), min(1.0, est.interval[1])],
        }
    seen = sum(v.runs for v in violations)
    return {
        "label": label,
        "name": cand.name,
        "key": cand.key,
        "harness": cand.harness,
        "model": cand.model_label,
        "training_cutoff": _iso(cand.training_cutoff) if cand.training_cutoff else None,
        "settings": cand.settings,
        "runs": len(runs),
        "healthy_runs": len(healthy),
        "outcomes": counts,
        "pass_at": [
            {"k": k, **_interval([pass_at_k(c.runs, c.passes, k) for c in cases], rule.confidence)}
            for k in ks
        ],
        "pass_hat": [
            {"k": k, **_interval([pass_hat_k(c.runs, c.passes, k) for c in cases], rule.confidence)}
            for k in ks
        ],
        "mean": mean,
        "solved_cases": sum(c.rate for c in cases),
        "tokens": tokens,
        "cost_usd": cost,
        # Every run's tokens and cost count, the spoiled ones too: they were paid for.
        "tokens_per_solved": tokens / passes if passes else None,
        "cost_per_solved_usd": cost / passes if passes and cost is not None else None,
        "side_effect_violation_rate": sum(v.passes for v in violations) / seen if seen else None,
        "unhealthy": [_run_doc(r) for r in runs if Outcome(str(r.outcome)) in SPOILED],
    }


def _judge(
    doc: dict[str, Any],
    paired: dict[str, list[ArmCase]],
    ordered_a: Sequence[Sequence[bool]],
    violations: dict[str, list[ArmCase]],
    rule: DecisionRule,
) -> None:
    a, b = paired["A"], paired["B"]
    n = len(a)
    gates: list[dict[str, str]] = []
    reasons: list[str] = []
    metric = rule.metric_label
    if n < 2:
        doc["difference"] = None
        doc["aa_floor"] = {
            "method": f"not available: {n} paired case(s)",
            "estimate": None,
            "interval": None,
            "se": None,
            "mde": None,
            "cases": n,
        }
        gates.append(
            {
                "name": "quality",
                "status": "unclear",
                "detail": f"{n} paired case(s): a comparison needs at least two",
            }
        )
        gates.append({"name": "side_effects", "status": "unclear", "detail": "no cases"})
        gates.append(_cost_gate(doc, rule))
        doc["gates"] = gates
        doc["verdict"] = {
            "decision": "inconclusive",
            "reasons": [f"only {n} calibrated case(s) with healthy runs in both arms"],
            "cases_needed": None,
        }
        return
    ra, rb = _metric_rates(a, rule), _metric_rates(b, rule)
    diff = (
        compare_arms(a, b, confidence=rule.confidence, rates_a=ra, rates_b=rb)
        if rule.metric != "pass@1"
        else compare_arms(a, b, confidence=rule.confidence)
    )
    doc["difference"] = {
        "metric": metric,
        "estimate": diff.estimate,
        "se": diff.se,
        "interval": list(diff.interval),
        "p_value": diff.p_value,
        "test": diff.test,
        "cases": n,
        "bootstrap_interval": list(bootstrap_cases(ra, rb, level=rule.confidence)),
    }
    # The A/A floor: arm A against itself, its runs of each case split in two halves.
    floor = _aa_floor(a, b, ordered_a, rule)
    doc["aa_floor"] = floor
    lo, hi = diff.interval
    pct = f"{rule.confidence:.0%}"
    shown = f"B - A = {diff.estimate:+.2f} ({metric}), {pct} CI {lo:+.2f}..{hi:+.2f}"
    if lo > rule.margin:
        gates.append(
            {
                "name": "quality",
                "status": "pass",
                "detail": f"{shown}: above the margin {rule.margin:+.2f}",
            }
        )
    elif hi < rule.margin:
        gates.append(
            {
                "name": "quality",
                "status": "fail",
                "detail": f"{shown}: below the margin {rule.margin:+.2f}",
            }
        )
    else:
        gates.append(
            {
                "name": "quality",
                "status": "unclear",
                "detail": f"{shown}: the interval holds the margin {rule.margin:+.2f}",
            }
        )
    # Side effects, a gate of their own: B's rate of runs with a forbidden effect may exceed
    # A's by at most the margin (judged on the estimate; the interval shown beside it).
    se_cmp = compare_arms(violations["A"], violations["B"], confidence=rule.confidence)
    va = doc["arms"]["A"]["side_effect_violation_rate"] or 0.0
    vb = doc["arms"]["B"]["side_effect_violation_rate"] or 0.0
    se_detail = (
        f"runs with a forbidden side effect: B {vb:.2f} vs A {va:.2f}; per-case difference "
        f"{se_cmp.estimate:+.2f} ({pct} CI {se_cmp.interval[0]:+.2f}..{se_cmp.interval[1]:+.2f}), "
        f"margin {rule.side_effects_margin:.2f}"
    )
    if se_cmp.interval[0] > rule.side_effects_margin:
        se_status = "fail"
    elif se_cmp.estimate > rule.side_effects_margin:
        se_status = "unclear"
    else:
        se_status = "pass"
    gates.append({"name": "side_effects", "status": se_status, "detail": se_detail})
    gates.append(_cost_gate(doc, rule))
    doc["gates"] = gates
    statuses = {g["name"]: g["status"] for g in gates}
    needed = None
    if "fail" in statuses.values():
        decision = "dont_ship"
        reasons += [f"{g['name']}: {g['detail']}" for g in gates if g["status"] == "fail"]
    elif all(s in ("pass", "not_set") for s in statuses.values()):
        decision = "ship"
        reasons += [f"{g['name']}: {g['detail']}" for g in gates if g["status"] == "pass"]
    else:
        decision = "inconclusive"
        reasons += [f"{g['name']}: {g['detail']}" for g in gates if g["status"] == "unclear"]
        if statuses["quality"] == "unclear" and floor["mde"] is not None:
            effect = max(abs(diff.estimate - rule.margin), rule.effect_of_interest)
            needed = cases_needed(
                floor["se"], n, effect, confidence=rule.confidence, power=rule.power
            )
            beyond = " (beyond any possible difference)" if floor["mde"] > 1 else ""
            reasons.append(
                f"the minimum detectable effect with {n} cases is {floor['mde']:.2f}{beyond}; "
                + (
                    f"about {needed} cases like these (same runs each) would detect {effect:.2f}"
                    if needed is not None
                    else f"no number of cases like these would detect {effect:.2f}"
                )
            )
    doc["verdict"] = {"decision": decision, "reasons": reasons, "cases_needed": needed}


def _aa_floor(
    a: Sequence[ArmCase],
    b: Sequence[ArmCase],
    ordered_a: Sequence[Sequence[bool]],
    rule: DecisionRule,
) -> dict[str, Any]:
    """The noise floor: what the design shows when nothing differs.

    The minimum detectable effect comes from the standard error the A/B difference would have
    under A/A, from the arms' own run-to-run variance (each case's smoothed p(1-p)/k, see
    :func:`binomial_floor_se`). Beside it, the A/A difference itself: arm A's runs of each
    case alternated into two halves (1st, 3rd... against 2nd, 4th...), compared like two arms,
    when every case has at least two healthy runs.
    """
    n = len(a)
    se_null = binomial_floor_se(a, b)
    estimate = interval = None
    method = "one run per case: no halves to split; the MDE is from the runs' binomial variance"
    if all(len(runs) >= 2 for runs in ordered_a):
        h1 = [ArmCase(sum(runs[0::2]), len(runs[0::2])) for runs in ordered_a]
        h2 = [ArmCase(sum(runs[1::2]), len(runs[1::2])) for runs in ordered_a]
        aa = compare_arms(h1, h2, confidence=rule.confidence)
        estimate, interval = aa.estimate, list(aa.interval)
        method = (
            "arm A against itself, each case's runs alternated into two halves; the MDE is "
            "from the runs' binomial variance"
        )
    mde = minimum_detectable_effect(se_null, n, confidence=rule.confidence, power=rule.power)
    return {
        "method": method,
        "estimate": estimate,
        "interval": interval,
        "se": se_null,
        "mde": mde,
        "cases": n,
    }


def _cost_gate(doc: dict[str, Any], rule: DecisionRule) -> dict[str, str]:
    if rule.cost_ceiling_usd is None:
        return {"name": "cost", "status": "not_set", "detail": "no cost ceiling in the rule"}
    b = doc["arms"]["B"]
    if b["cost_usd"] is None:
        return {
            "name": "cost",
            "status": "unclear",
            "detail": f"B's cost is unknown (no price for {b['model']}); the rule's "
            f"ceiling ${rule.cost_ceiling_usd:.2f} per solved case cannot be checked",
        }
    per = b["cost_per_solved_usd"]
    if per is None:
        return {
            "name": "cost",
            "status": "fail",
            "detail": f"B solved nothing for ${b['cost_usd']:.2f}",
        }
    ok = per <= rule.cost_ceiling_usd
    return {
        "name": "cost",
        "status": "pass" if ok else "fail",
        "detail": f"B costs ${per:.4f} per solved case (ceiling ${rule.cost_ceiling_usd:.2f})",
    }


def _by_tag(rows: Sequence[dict[str, Any]], rule: DecisionRule) -> list[dict[str, Any]]:
    tags: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        for tag in row["tags"] or ["(untagged)"]:
            tags[tag].append(row)
    return [{"tag": tag, **_group(group, rule)} for tag, group in sorted(tags.items())]


def _side(fixed_at: datetime | None, cutoff: datetime | None) -> str | None:
    """The case's side of an arm's stated training cutoff; None when it states none."""
    return None if cutoff is None else cutoff_side(fixed_at, cutoff)


def _by_cutoff(
    rows: Sequence[dict[str, Any]], arms: dict[str, Candidate], rule: DecisionRule
) -> list[dict[str, Any]]:
    """The comparison per contamination group: the cases whose fixes lie on the same side of
    each arm's stated training cutoff; nothing when neither arm states one."""
    if all(arms[label].training_cutoff is None for label in ARMS):
        return []
    order = {None: 0, "after-cutoff": 1, "before-cutoff": 2, "no fix date": 3}
    groups: dict[tuple[str | None, ...], list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        groups[tuple(row["contamination"][label] for label in ARMS)].append(row)
    return [
        {"contamination": dict(zip(ARMS, sides, strict=True)), **_group(group, rule)}
        for sides, group in sorted(groups.items(), key=lambda i: [order[s] for s in i[0]])
    ]


def _group(group: Sequence[dict[str, Any]], rule: DecisionRule) -> dict[str, Any]:
    """Both arms and B - A over a group of paired cases (a tag, a contamination group)."""
    a = [ArmCase(r["A"]["passes"], r["A"]["healthy"]) for r in group]
    b = [ArmCase(r["B"]["passes"], r["B"]["healthy"]) for r in group]
    entry: dict[str, Any] = {
        "cases": len(group),
        "A": {"rate": sum(x.rate for x in a) / len(a)},
        "B": {"rate": sum(y.rate for y in b) / len(b)},
    }
    if len(group) >= 2:
        cmp = compare_arms(a, b, confidence=rule.confidence)
        entry["difference"] = {"estimate": cmp.estimate, "interval": list(cmp.interval)}
    else:
        entry["difference"] = {"estimate": b[0].rate - a[0].rate, "interval": None}
    return entry
