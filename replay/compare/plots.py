"""The comparison report's plots, drawn here as inline SVG.

Three small plots with fixed layouts (a forest plot, a two-point scatter, a timeline) need
no plotting library: matplotlib would add a large dependency and its SVG output embeds
glyph paths and ids that change between versions, where this is a few rectangles, lines and
text a test can read. Every string from the document is escaped; every plot has a
``<title>`` and a ``<desc>`` for screen readers.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from html import escape

from replay.compare.fmt import (
    OUTCOME_ORDER,
    Doc,
    all_runs,
    arm_title,
    confidence,
    interval,
    num,
    outcome_label,
    parse_time,
    signed,
    unhealthy_ids,
)

OUTCOME_COLOURS = {
    "pass": "#1b9e77",
    "model_fail": "#d95f02",
    "protocol_fail": "#7570b3",
    "transport_fail": "#e7298a",
    "infra_fail": "#666666",
}
"""Colour per outcome (a colour-blind-safe palette, ColorBrewer Dark2); never the only cue:
every mark also carries its outcome as text."""
OTHER_COLOUR = "#999999"
ARM_COLOURS = {"A": "#377eb8", "B": "#e41a1c"}
FONT = "font-family='system-ui, sans-serif' font-size='12'"


def _open(ident: str, width: int, height: int, title: str, desc: str) -> list[str]:
    return [
        f"<svg id='{ident}' class='plot' xmlns='http://www.w3.org/2000/svg' "
        f"width='{width}' height='{height}' viewBox='0 0 {width} {height}' role='img' "
        f"aria-labelledby='{ident}-title {ident}-desc' {FONT}>",
        f"<title id='{ident}-title'>{escape(title)}</title>",
        f"<desc id='{ident}-desc'>{escape(desc)}</desc>",
    ]


def _text(x: float, y: float, text: str, anchor: str = "start", extra: str = "") -> str:
    return f"<text x='{x:.1f}' y='{y:.1f}' text-anchor='{anchor}' {extra}>{escape(text)}</text>"


def nice_ticks(lo: float, hi: float, count: int = 6) -> list[float]:
    """Round tick values covering [lo, hi] (steps of 1, 2, 2.5 or 5 times a power of ten)."""
    span = hi - lo
    if span <= 0:
        return [lo]
    raw = span / count
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    first = math.ceil(lo / step - 1e-9)
    ticks: list[float] = []
    value = first * step
    while value <= hi + 1e-9 and len(ticks) < 50:
        ticks.append(round(value, 10))
        first += 1
        value = first * step
    return ticks


def difference_plot(doc: Doc) -> str:
    """The headline as a forest plot: B - A with its intervals, the A/A floor, the margin
    and the minimum detectable effect, on one axis of differences in the rule's metric."""
    diff = doc["difference"]
    floor = doc["aa_floor"]
    margin = float(doc["rule"]["margin"])
    level = confidence(doc)
    rows: list[tuple[str, float | None, list[float] | None, str]] = [
        (f"B - A ({level} CI)", diff["estimate"], diff["interval"], ARM_COLOURS["B"]),
    ]
    if diff.get("bootstrap_interval"):
        rows.append(("bootstrap over cases", diff["estimate"], diff["bootstrap_interval"], "#888"))
    rows.append((f"A/A floor ({level} CI)", floor["estimate"], floor["interval"], "#555"))
    mde = floor.get("mde")

    values = [0.0, margin]
    for _, estimate, bounds, _ in rows:
        values += [v for v in (estimate, *(bounds or [])) if v is not None]
    if mde is not None:
        values += [-mde, mde]
    lo, hi = min(values), max(values)
    pad = max((hi - lo) * 0.1, 0.05)
    lo, hi = max(-1.0, lo - pad), min(1.0, hi + pad)

    width, left, right, top, row_h = 1000, 200, 40, 30, 34
    height = top + row_h * len(rows) + 60
    plot_w = width - left - right
    bottom = top + row_h * len(rows)

    def x(value: float) -> float:
        return left + (value - lo) / (hi - lo) * plot_w

    desc = (
        f"B - A = {signed(diff['estimate'])}, {level} CI {interval(diff['interval'])}; "
        f"A/A floor {interval(floor['interval'])}; margin {signed(margin)}; "
        f"MDE {num(mde)}"
    )
    out = _open("plot-difference", width, height, f"Difference in {diff['metric']}", desc)
    if floor.get("interval"):
        a, b = floor["interval"]
        out.append(
            f"<rect class='aa-band' x='{x(a):.1f}' y='{top - 8}' width='{x(b) - x(a):.1f}' "
            f"height='{bottom - top + 16}' fill='#bbbbbb' fill-opacity='0.25'/>"
        )
    for tick in nice_ticks(lo, hi):
        out.append(
            f"<line x1='{x(tick):.1f}' x2='{x(tick):.1f}' y1='{bottom + 8}' y2='{bottom + 13}' "
            "stroke='#333'/>"
        )
        out.append(_text(x(tick), bottom + 26, signed(tick), "middle"))
    out.append(
        f"<line x1='{left}' x2='{left + plot_w}' y1='{bottom + 8}' y2='{bottom + 8}' "
        "stroke='#333'/>"
    )
    out.append(
        f"<line x1='{x(0):.1f}' x2='{x(0):.1f}' y1='{top - 12}' y2='{bottom + 8}' stroke='#333'/>"
    )
    out.append(_text(x(0), top - 16, "0", "middle"))
    if margin != 0:
        out.append(
            f"<line class='margin' x1='{x(margin):.1f}' x2='{x(margin):.1f}' y1='{top - 12}' "
            f"y2='{bottom + 8}' stroke='#b2182b' stroke-dasharray='5 3'/>"
        )
    out.append(
        _text(
            x(margin) + 4,
            top - 4 if margin == 0 else top - 16,
            f"margin {signed(margin)}",
            extra="fill='#b2182b'",
        )
    )
    if mde is not None:
        for edge in (-mde, mde):
            if lo <= edge <= hi:
                out.append(
                    f"<line class='mde' x1='{x(edge):.1f}' x2='{x(edge):.1f}' y1='{top - 8}' "
                    f"y2='{bottom + 8}' stroke='#2166ac' stroke-dasharray='2 3'/>"
                )
        out.append(
            _text(
                min(x(mde), left + plot_w) - 4,
                bottom - 2,
                f"MDE {num(mde)}",
                "end",
                "fill='#2166ac'",
            )
        )
    for index, (name, estimate, bounds, colour) in enumerate(rows):
        y = top + row_h * index + row_h / 2
        out.append(_text(left - 10, y + 4, name, "end"))
        if bounds:
            out.append(
                f"<line x1='{x(bounds[0]):.1f}' x2='{x(bounds[1]):.1f}' y1='{y:.1f}' "
                f"y2='{y:.1f}' stroke='{colour}' stroke-width='3'/>"
            )
            for edge in bounds:
                out.append(
                    f"<line x1='{x(edge):.1f}' x2='{x(edge):.1f}' y1='{y - 6:.1f}' "
                    f"y2='{y + 6:.1f}' stroke='{colour}' stroke-width='2'/>"
                )
        if estimate is not None:
            out.append(
                f"<rect x='{x(estimate) - 5:.1f}' y='{y - 5:.1f}' width='10' height='10' "
                f"fill='{colour}'><title>{escape(name)}: {signed(estimate)} "
                f"{escape(interval(bounds))}</title></rect>"
            )
        else:
            out.append(_text(left + 6, y + 4, "not available", extra="fill='#555'"))
    out.append(
        _text(
            left + plot_w / 2,
            height - 10,
            f"difference in {diff['metric']} (B - A); grey band: A/A floor",
            "middle",
        )
    )
    out.append("</svg>")
    return "\n".join(out)


def cost_quality_plot(doc: Doc) -> str:
    """Cost against quality, one point per arm: x the cost per solved case (tokens per
    solved case when either arm has no cost), y the mean pass rate with its interval."""
    arms = [doc["arms"]["A"], doc["arms"]["B"]]
    use_cost = all(arm.get("cost_per_solved_usd") is not None for arm in arms)
    key = "cost_per_solved_usd" if use_cost else "tokens_per_solved"
    axis = "cost per solved case (USD)" if use_cost else "tokens per solved case"
    placed = [arm for arm in arms if arm.get(key) is not None and arm.get("mean")]
    missing = [arm for arm in arms if arm not in placed]

    def mean_of(arm: Doc) -> str:
        found = arm.get("mean")
        if not found:  # no calibrated case with healthy runs in this arm
            return "n/a"
        return f"{num(found['value'])} {interval(found['interval'], sign=False)}"

    ceiling = doc["rule"].get("cost_ceiling_usd") if use_cost else None

    width, height, left, right, top, bottom = 440, 350, 60, 30, 30, 70
    plot_w, plot_h = width - left - right, height - top - bottom
    top_x = max([float(arm[key]) for arm in placed] + [float(ceiling or 0)] + [0.0])
    x_hi = top_x * 1.2 if top_x > 0 else 1.0

    def x(value: float) -> float:
        return left + value / x_hi * plot_w

    def y(value: float) -> float:
        return top + (1 - value) * plot_h

    desc = "; ".join(
        f"{arm_title(arm)}: {axis} {num(arm.get(key))}, mean {mean_of(arm)}" for arm in arms
    )
    out = _open("plot-cost-quality", width, height, "Cost against quality", desc)
    out.append(
        f"<rect x='{left}' y='{top}' width='{plot_w}' height='{plot_h}' fill='none' stroke='#333'/>"
    )
    for tick in nice_ticks(0, 1, 5):
        out.append(
            f"<line x1='{left - 5}' x2='{left}' y1='{y(tick):.1f}' y2='{y(tick):.1f}' "
            "stroke='#333'/>"
        )
        out.append(_text(left - 8, y(tick) + 4, num(tick, 1), "end"))
    for tick in nice_ticks(0, x_hi, 5):
        label = f"{tick:.4g}"
        out.append(
            f"<line x1='{x(tick):.1f}' x2='{x(tick):.1f}' y1='{top + plot_h}' "
            f"y2='{top + plot_h + 5}' stroke='#333'/>"
        )
        out.append(_text(x(tick), top + plot_h + 18, label, "middle"))
    out.append(_text(left + plot_w / 2, top + plot_h + 36, axis, "middle"))
    out.append(
        _text(
            14,
            top + plot_h / 2,
            "mean pass rate",
            "middle",
            f"transform='rotate(-90 14 {top + plot_h / 2:.1f})'",
        )
    )
    if ceiling is not None:
        out.append(
            f"<line class='ceiling' x1='{x(ceiling):.1f}' x2='{x(ceiling):.1f}' y1='{top}' "
            f"y2='{top + plot_h}' stroke='#b2182b' stroke-dasharray='5 3'/>"
        )
        out.append(_text(x(ceiling) + 4, top + 14, f"ceiling {ceiling:g}", extra="fill='#b2182b'"))
    for arm in placed:
        colour = ARM_COLOURS.get(arm["label"], OTHER_COLOUR)
        cx = x(float(arm[key]))
        mean = arm["mean"]
        out.append(f"<g class='point' data-arm='{escape(arm['label'])}'>")
        if mean.get("interval"):
            lo, hi = mean["interval"]
            out.append(
                f"<line x1='{cx:.1f}' x2='{cx:.1f}' y1='{y(hi):.1f}' y2='{y(lo):.1f}' "
                f"stroke='{colour}' stroke-width='2'/>"
            )
            for edge in (lo, hi):
                out.append(
                    f"<line x1='{cx - 5:.1f}' x2='{cx + 5:.1f}' y1='{y(edge):.1f}' "
                    f"y2='{y(edge):.1f}' stroke='{colour}' stroke-width='2'/>"
                )
        # A is a ring and B a dot, and their labels sit on either side: two arms at the same
        # point (an A/A comparison) both stay visible.
        ring = arm["label"] == "A"
        fill = "none" if ring else colour
        out.append(
            f"<circle cx='{cx:.1f}' cy='{y(mean['value']):.1f}' r='{8 if ring else 5}' "
            f"fill='{fill}' stroke='{colour}' stroke-width='3'>"
            f"<title>{escape(arm_title(arm))}: {escape(axis)} {num(arm[key])}, mean "
            f"{num(mean['value'])} {interval(mean['interval'], sign=False)}</title></circle>"
        )
        anchor = "end" if ring else "start"
        if anchor == "end" and cx - left < plot_w * 0.25:
            anchor = "start"
        elif anchor == "start" and cx - left > plot_w * 0.75:
            anchor = "end"
        dx = -12 if anchor == "end" else 12
        out.append(
            _text(
                cx + dx,
                y(mean["value"]) - 8,
                arm_title(arm),
                anchor,
                f"fill='{colour}' font-weight='bold'",
            )
        )
        out.append("</g>")
    for index, arm in enumerate(missing):
        out.append(
            _text(
                left,
                height - 14 - 14 * (len(missing) - 1 - index),
                f"{arm_title(arm)}: not plotted, no solved case (mean {mean_of(arm)})",
                extra="fill='#555'",
            )
        )
    out.append("</svg>")
    return "\n".join(out)


def wire_timeline_plot(doc: Doc) -> str:
    """Every run of each arm at its start time, one lane per arm, coloured by outcome; the
    runs excluded as unhealthy are drawn larger, ringed and crossed."""
    lanes = [(label, list(all_runs(doc, label)), unhealthy_ids(doc, label)) for label in "AB"]
    times = [parse_time(run["started_at"]) for _, runs, _ in lanes for run in runs]
    width, left, right, top, lane_h = 1000, 160, 30, 20, 56
    height = top + lane_h * len(lanes) + 80
    plot_w = width - left - right
    start = min(times) if times else None
    span = max((max(times) - start).total_seconds(), 1.0) if times and start else 1.0

    def x(seconds: float) -> float:
        return left + 10 + seconds / span * (plot_w - 20)

    total = sum(len(runs) for _, runs, _ in lanes)
    bad = sum(len(ids) for _, _, ids in lanes)
    out = _open(
        "plot-wire-timeline",
        width,
        height,
        "Wire health over time",
        f"{total} runs, {bad} excluded as unhealthy, by start time, one lane per arm",
    )
    axis_y = top + lane_h * len(lanes)
    for index, (label, runs, bad_ids) in enumerate(lanes):
        arm = doc["arms"][label]
        lane_top = top + lane_h * index
        out.append(
            f"<rect x='{left}' y='{lane_top}' width='{plot_w}' height='{lane_h - 6}' "
            f"fill='{'#f6f6f6' if index % 2 == 0 else '#ffffff'}' stroke='#ddd'/>"
        )
        out.append(
            _text(left - 8, lane_top + lane_h / 2, arm_title(arm), "end", "font-weight='bold'")
        )
        out.append(
            _text(
                left - 8,
                lane_top + lane_h / 2 + 14,
                f"{len(bad_ids)} of {len(runs)} unhealthy",
                "end",
                "fill='#555'",
            )
        )
        # Runs that start together are stacked in sub-rows so that none hides another.
        last_in_row: list[float] = []
        for run in sorted(runs, key=lambda r: parse_time(r["started_at"])):
            assert start is not None
            cx = x((parse_time(run["started_at"]) - start).total_seconds())
            row = next((i for i, last in enumerate(last_in_row) if cx - last >= 14), None)
            if row is None and len(last_in_row) < 3:
                last_in_row.append(cx)
                row = len(last_in_row) - 1
            elif row is None:
                row = min(range(3), key=lambda i: last_in_row[i])
            last_in_row[row] = cx
            cy = lane_top + 12 + row * 13
            outcome = str(run["outcome"])
            colour = OUTCOME_COLOURS.get(outcome, OTHER_COLOUR)
            unhealthy = (run["run_id"], run["case_id"]) in bad_ids
            tip = escape(
                f"{run['run_id']} · {run['case_id']} · attempt {run['attempt']} · "
                f"{outcome_label(outcome)} · {run['started_at']}"
                + (f" · {run['reason']}" if run.get("reason") else "")
                + (" · excluded as unhealthy" if unhealthy else "")
            )
            kind = "unhealthy" if unhealthy else "healthy"
            out.append(
                f"<g class='run-mark {kind}' data-outcome='{escape(outcome)}'><title>{tip}</title>"
            )
            if unhealthy:
                out.append(
                    f"<circle cx='{cx:.1f}' cy='{cy + 6:.1f}' r='9' fill='{colour}' "
                    "stroke='#000' stroke-width='2.5'/>"
                )
                out.append(
                    f"<path d='M{cx - 4:.1f} {cy + 2:.1f} l8 8 m0 -8 l-8 8' stroke='#fff' "
                    "stroke-width='2'/>"
                )
            else:
                out.append(f"<circle cx='{cx:.1f}' cy='{cy + 6:.1f}' r='5' fill='{colour}'/>")
            out.append("</g>")
    out.append(
        f"<line x1='{left}' x2='{left + plot_w}' y1='{axis_y}' y2='{axis_y}' stroke='#333'/>"
    )
    if start is not None:
        with_date = span > 86400 or start.date() != max(times).date()
        for index in range(5):
            seconds = span * index / 4
            when = start.timestamp() + seconds
            stamp = datetime.fromtimestamp(when, UTC)
            label = stamp.strftime("%m-%d %H:%M" if with_date else "%H:%M:%S")
            out.append(
                f"<line x1='{x(seconds):.1f}' x2='{x(seconds):.1f}' y1='{axis_y}' "
                f"y2='{axis_y + 5}' stroke='#333'/>"
            )
            out.append(_text(x(seconds), axis_y + 18, label, "middle"))
        out.append(_text(left + plot_w / 2, axis_y + 34, "start time (UTC)", "middle"))
    legend_x = float(left)
    legend_y = height - 14
    for outcome in OUTCOME_ORDER:
        out.append(
            f"<circle cx='{legend_x + 5:.1f}' cy='{legend_y - 4}' r='5' "
            f"fill='{OUTCOME_COLOURS[outcome]}'/>"
        )
        out.append(_text(legend_x + 14, legend_y, outcome_label(outcome)))
        legend_x += 24 + 7 * len(outcome_label(outcome))
    out.append(
        f"<circle cx='{legend_x + 9:.1f}' cy='{legend_y - 4}' r='8' fill='#ccc' stroke='#000' "
        "stroke-width='2.5'/>"
    )
    out.append(_text(legend_x + 22, legend_y, "excluded (unhealthy)"))
    out.append("</svg>")
    return "\n".join(out)
