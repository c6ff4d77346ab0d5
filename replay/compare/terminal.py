"""The comparison as the terminal shows it (Rich), from the document every report renders."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rich.table import Table

from replay.compare.fmt import strength_text

DECISIONS = {"ship": "ship B", "dont_ship": "don't ship B", "inconclusive": "inconclusive"}


def _ci(interval: list[float] | None, signed: bool = False) -> str:
    if interval is None:
        return "n/a"
    lo, hi = interval
    return f"{lo:+.2f}..{hi:+.2f}" if signed else f"{lo:.2f}-{hi:.2f}"


def _money(value: float | None) -> str:
    return "n/a" if value is None else f"${value:.4f}"


def _ks(entries: list[dict[str, Any]], mark: str) -> str:
    return " ".join(f"{mark}{e['k']} {e['value']:.2f}" for e in entries) or "n/a"


def arms_table(doc: dict[str, Any]) -> Table:
    table = Table(
        "arm", "candidate", "runs (healthy)", "pass", "model_fail", "transport", "protocol",
        "infra", "pass rate (95% CI)", "pass@k", "pass^k", "side effects", "tokens/solved",
        "cost/solved", box=None, pad_edge=False,
    )  # fmt: skip
    for label, arm in doc["arms"].items():
        o = arm["outcomes"]
        mean = arm["mean"]
        rate = "n/a" if mean is None else f"{mean['value']:.2f} ({_ci(mean['interval'])})"
        tps = arm["tokens_per_solved"]
        viol = arm["side_effect_violation_rate"]
        table.add_row(
            label,
            f"{arm['name']} ({arm['harness']} / {arm['model']})",
            f"{arm['runs']} ({arm['healthy_runs']})",
            str(o["pass"]),
            str(o["model_fail"]),
            str(o["transport_fail"]),
            str(o["protocol_fail"]),
            str(o["infra_fail"]),
            rate,
            _ks(arm["pass_at"], "@"),
            _ks(arm["pass_hat"], "^"),
            "n/a" if viol is None else f"{viol:.2f} violated",
            "n/a" if tps is None else f"{tps:.0f}",
            _money(arm["cost_per_solved_usd"]),
        )
    return table


def cases_table(doc: dict[str, Any]) -> Table:
    table = Table("case", "strength", "tags", "A", "B", "class", box=None, pad_edge=False)
    for row in doc["cases"]:
        table.add_row(
            row["case_id"],
            strength_text(row.get("strength")),
            ",".join(row["tags"]) or "-",
            f"{row['A']['passes']}/{row['A']['healthy']}",
            f"{row['B']['passes']}/{row['B']['healthy']}",
            row["class"].replace("_", " "),
        )
    return table


def tags_table(doc: dict[str, Any]) -> Table:
    table = Table("tag", "cases", "A", "B", "B - A (95% CI)", box=None, pad_edge=False)
    for entry in doc["by_tag"]:
        d = entry["difference"]
        table.add_row(
            entry["tag"],
            str(entry["cases"]),
            f"{entry['A']['rate']:.2f}",
            f"{entry['B']['rate']:.2f}",
            f"{d['estimate']:+.2f} ({_ci(d['interval'], signed=True)})"
            if d["interval"] is not None
            else f"{d['estimate']:+.2f} (one case)",
        )
    return table


def cutoff_table(doc: dict[str, Any]) -> Table:
    """The comparison per contamination group (``by_cutoff``): each arm's side of its own
    stated training cutoff, never pooled."""
    table = Table(
        "A's cutoff", "B's cutoff", "cases", "A", "B", "B - A (95% CI)", box=None, pad_edge=False
    )
    for entry in doc["by_cutoff"]:
        d = entry["difference"]
        sides = entry["contamination"]
        table.add_row(
            sides["A"] or "none stated",
            sides["B"] or "none stated",
            str(entry["cases"]),
            f"{entry['A']['rate']:.2f}",
            f"{entry['B']['rate']:.2f}",
            f"{d['estimate']:+.2f} ({_ci(d['interval'], signed=True)})"
            if d["interval"] is not None
            else f"{d['estimate']:+.2f} (one case)",
        )
    return table


def lines(doc: dict[str, Any]) -> Iterator[str]:
    """Everything but the tables, in reading order."""
    rule = doc["rule"]
    metric = rule["metric"] if rule["metric"] == "pass@1" else f"pass^{rule['k']}"
    yield (
        f"comparison {doc['name']}: rule {metric}, "
        f"margin {rule['margin']:+.2f}, confidence {rule['confidence']:.0%}, power "
        f"{rule['power']:.0%}, side-effect margin {rule['side_effects_margin']:.2f}, cost "
        f"ceiling {_money(rule['cost_ceiling_usd'])}; fixed {rule['fixed_at']} "
        f"(sha256 {rule['digest'][:12]}), {rule['runs_before_rule']} run(s) used were made "
        "before it"
    )
    diff = doc["difference"]
    if diff is not None:
        yield (
            f"B - A ({diff['metric']}): {diff['estimate']:+.2f}, 95% CI "
            f"{_ci(diff['interval'], signed=True)} (SE {diff['se']:.3f}, {diff['test']}, "
            f"p = {diff['p_value']:.3g}); case bootstrap "
            f"{_ci(diff['bootstrap_interval'], signed=True)}"
        )
    floor = doc["aa_floor"]
    if floor["mde"] is not None:
        aa = (
            f"{floor['estimate']:+.2f}, CI {_ci(floor['interval'], signed=True)}; "
            if floor["estimate"] is not None
            else ""
        )
        power = doc["rule"].get("power")
        often = f", the difference a study of them detects {power:.0%} of the time" if power else ""
        yield (
            f"A/A floor ({floor['method']}): {aa}minimum detectable effect "
            f"{floor['mde']:.2f} over {floor['cases']} cases{often}"
            + (
                " (more than any difference can be: so few cases tell only a large observed "
                "difference from noise, and the verdict says whether this one is)"
                if floor["mde"] > 1
                else ""
            )
        )
    else:
        yield f"A/A floor: {floor['method']}"
    for gate in doc["gates"]:
        yield f"gate {gate['name']}: {gate['status']}: {gate['detail']}"


def run_links(doc: dict[str, Any]) -> Iterator[str]:
    """Each run of the cases the arms disagree on (only A, only B, flaky): its files."""
    for row in doc["cases"]:
        if row["class"] in ("both", "neither"):
            continue
        for label in ("A", "B"):
            for run in row[label]["runs"]:
                files = [Path(f).name for f in (run["transcript"], run["diff"]) if f]
                yield (
                    f"  {row['case_id']} [{row['class'].replace('_', ' ')}] {label} run "
                    f"{run['attempt']} {run['outcome']}: {run['run_dir'] or 'no run directory'}"
                    + (f" ({', '.join(files)})" if files else "")
                )


def unhealthy(doc: dict[str, Any]) -> Iterator[str]:
    for label, arm in doc["arms"].items():
        for run in arm["unhealthy"]:
            yield (
                f"  excluded from quality: {label} {run['case_id']} run {run['attempt']} "
                f"{run['outcome']}: {run['reason']} ({run['run_dir']})"
            )


def verdict_line(doc: dict[str, Any]) -> str:
    verdict = doc["verdict"]
    text = f"verdict: {DECISIONS[verdict['decision']]}"
    if verdict["cases_needed"] is not None:
        text += f" (about {verdict['cases_needed']} cases needed to decide)"
    return text
