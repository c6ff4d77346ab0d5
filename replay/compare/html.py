"""The comparison as one static HTML file: readable offline, in any browser, years later.

One self-contained page (inline CSS, plots as inline SVG, no script, no font or image to
fetch), made from the ``replay.compare/1`` document alone. Every string from the document
is escaped, and the links to a run's files are the relative paths the document gives
(never a URL: see :func:`replay.compare.fmt.local_link`). Key elements carry stable ids
(``headline``, ``rule``, ``arm-summary``, ``gates``, ``case-grid``, ``plot-difference``,
``plot-cost-quality``, ``plot-wire-timeline``, ``by-tag``, ``left-out``, ``unhealthy-runs``)
for tests and for readers who link to a section.
"""

from __future__ import annotations

from html import escape
from typing import Any

from replay.compare.fmt import (
    CLASS_LABELS,
    DECISION_LABELS,
    OUTCOME_ORDER,
    Doc,
    arm_title,
    case_runs,
    check_schema,
    confidence,
    interval,
    local_link,
    num,
    outcome_label,
    signed,
    strength_text,
    unhealthy_ids,
)
from replay.compare.plots import (
    OUTCOME_COLOURS,
    cost_quality_plot,
    difference_plot,
    wire_timeline_plot,
)

_CSS = """
body { font-family: system-ui, sans-serif; margin: 24px auto; max-width: 1240px; color: #222;
       padding: 0 16px; line-height: 1.4; }
h1 { font-size: 1.5em; margin-bottom: 0; }
h2 { font-size: 1.2em; border-bottom: 1px solid #ccc; padding-bottom: 2px; margin-top: 2em; }
.meta { color: #555; font-size: 0.9em; }
table { border-collapse: collapse; margin: 8px 0; font-size: 0.92em; }
th, td { border: 1px solid #ccc; padding: 3px 7px; text-align: left; vertical-align: top; }
th { background: #f0f0f0; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
#headline { border: 2px solid #888; border-radius: 6px; padding: 12px 18px; margin: 16px 0; }
#headline.verdict-ship { border-color: #1b7837; background: #f0f8f0; }
#headline.verdict-dont_ship { border-color: #b2182b; background: #fcf0f0; }
#headline.verdict-inconclusive { border-color: #8c6d1f; background: #fcf8ec; }
#verdict { font-size: 1.6em; font-weight: bold; margin: 0; }
#difference { font-size: 1.15em; margin: 6px 0; }
.status { font-weight: bold; padding: 1px 6px; border-radius: 3px; }
.status-pass { background: #d9f0d3; } .status-fail { background: #f4c7c3; }
.status-unclear { background: #fde9b0; } .status-not_set { background: #e8e8e8; }
.class-only_a { background: #f4c7c3; } .class-only_b { background: #d9f0d3; }
.class-flaky { background: #fde9b0; }
td.case { min-width: 170px; }
td.class { white-space: nowrap; }
td.run { min-width: 76px; font-size: 0.85em; }
td.run .outcome { font-weight: bold; display: block; }
td.run a { margin-right: 4px; }
td.run .side-effects { display: block; color: #b2182b; font-weight: bold; }
td.run.unhealthy { outline: 2px dashed #000; outline-offset: -3px; }
td.run.none { background: #fafafa; color: #999; }
.tag { display: inline-block; background: #eef; border-radius: 3px; padding: 0 4px;
       margin: 1px; font-size: 0.85em; }
.warn { color: #b2182b; font-weight: bold; }
.side { display: flex; flex-wrap: wrap; gap: 24px; align-items: flex-start; }
figure { margin: 8px 0; }
svg.plot { max-width: 100%; height: auto; display: block; margin: 8px 0; }
"""


def _cell_style() -> str:
    # Light tints of the plots' outcome colours, dark text on them (the outcome is also text).
    rules = [
        f"td.run.outcome-{name} {{ background: {colour}33; border-left: 5px solid {colour}; }}"
        for name, colour in OUTCOME_COLOURS.items()
    ]
    return "\n".join(rules)


def _e(value: Any) -> str:
    return escape(str(value))


def _link(path: str | None, text: str) -> str:
    """A link to a run's file, or the path as plain text when it is not a local path."""
    target = local_link(path)
    if target is None:
        return f"<span class='nolink' title='{_e(path)}'>{_e(text)}</span>" if path else ""
    return f"<a href='{_e(target)}'>{_e(text)}</a>"


def _headline(doc: Doc) -> str:
    verdict, diff, floor, rule = doc["verdict"], doc["difference"], doc["aa_floor"], doc["rule"]
    decision = str(verdict["decision"])
    level = confidence(doc)
    reasons = "".join(f"<li>{_e(reason)}</li>" for reason in verdict["reasons"])
    needed = verdict.get("cases_needed")
    needed_text = (
        f"<p id='cases-needed'>Cases needed to decide: <b>{_e(needed)}</b></p>"
        if needed is not None
        else ""
    )
    a, b = doc["arms"]["A"], doc["arms"]["B"]
    return f"""
<section id="headline" class="verdict-{_e(decision)}" data-decision="{_e(decision)}">
<p id="verdict">{_e(DECISION_LABELS.get(decision, decision))}</p>
<p class="meta">A = <b>{_e(a["name"])}</b> ({_e(a["harness"])}, {_e(a["model"])})
&nbsp;·&nbsp; B = <b>{_e(b["name"])}</b> ({_e(b["harness"])}, {_e(b["model"])})</p>
{_difference(diff, floor, level)}
<p id="aa-floor">A/A floor ({_e(floor["method"])}): {signed(floor["estimate"])},
{level} CI {interval(floor["interval"])} &nbsp;·&nbsp;
minimum detectable effect <b id="mde">{num(floor["mde"])}</b> at power {num(rule["power"])}
over {_e(floor["cases"])} cases &nbsp;·&nbsp; margin {signed(rule["margin"])}</p>
{needed_text}
<ul id="reasons">{reasons}</ul>
{f"<figure>{difference_plot(doc)}</figure>" if diff is not None else ""}
</section>
"""


def _difference(diff: dict[str, Any] | None, floor: dict[str, Any], level: str) -> str:
    """The headline's difference, or why there is none (fewer than two paired cases)."""
    if diff is None:
        return (
            f"<p id='difference'>B &minus; A: <b>not available</b> "
            f"({_e(floor['method'])}: a difference needs at least two paired cases)</p>"
        )
    estimate = signed(diff["estimate"])
    return f"""<p id="difference">B &minus; A in {_e(diff["metric"])}: <b>{estimate}</b>,
{level} CI <b>{interval(diff["interval"])}</b>, SE {num(diff["se"], 3)},
p = {num(diff["p_value"], 3)} ({_e(diff["test"])}; {_e(diff["cases"])} cases);
bootstrap over cases {interval(diff.get("bootstrap_interval"))}</p>"""


def _rule(doc: Doc) -> str:
    rule = doc["rule"]
    metric = str(rule["metric"])
    if metric == "pass^k":
        metric = f"pass^{rule['k']}"
    ceiling = rule.get("cost_ceiling_usd")
    before = int(rule.get("runs_before_rule") or 0)
    warn = (
        f"<p class='warn'>{before} stored runs started before the rule was fixed.</p>"
        if before
        else ""
    )
    rows = [
        ("metric", metric),
        ("margin", signed(rule["margin"])),
        ("confidence", confidence(doc)),
        ("power", num(rule["power"])),
        ("effect of interest", num(rule["effect_of_interest"])),
        ("side-effect margin", num(rule["side_effects_margin"])),
        ("cost ceiling (USD per solved case, B)", "none" if ceiling is None else f"{ceiling:g}"),
        ("fixed at", rule["fixed_at"]),
        ("rule digest", rule["digest"]),
    ]
    body = "".join(f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in rows)
    return f"<section id='rule'><h2>Decision rule</h2>{warn}<table>{body}</table></section>"


def _arms(doc: Doc) -> str:
    a, b = doc["arms"]["A"], doc["arms"]["B"]

    def row(name: str, left: str, right: str, numeric: bool = True) -> str:
        cls = " class='num'" if numeric else ""
        return f"<tr><th>{_e(name)}</th><td{cls}>{left}</td><td{cls}>{right}</td></tr>"

    def both(get: Any, numeric: bool = True, name: str = "") -> str:
        return row(name, get(a), get(b), numeric)

    def settings(arm: Doc) -> str:
        return "<br>".join(f"{_e(k)} = {_e(v)}" for k, v in sorted(arm["settings"].items()))

    def usd(value: float | None) -> str:
        return "n/a" if value is None else f"{value:.4f}"

    rows = [
        both(lambda arm: _e(arm["key"]), False, "key"),
        both(lambda arm: _e(arm["harness"]), False, "harness"),
        both(lambda arm: _e(arm["model"]), False, "model"),
        both(settings, False, "settings"),
        both(lambda arm: f"{arm['healthy_runs']} of {arm['runs']}", name="healthy runs"),
    ]
    rows += [
        both(lambda arm, o=o: _e(arm["outcomes"].get(o, 0)), name=outcome_label(o))
        for o in OUTCOME_ORDER
    ]
    level = confidence(doc)

    def mean(arm: Doc) -> str:
        found = arm.get("mean")
        if not found:  # no calibrated case with healthy runs in this arm
            return "n/a"
        return (
            f"{num(found['value'])} "
            f"{interval(found['interval'], sign=False)} (SE {num(found['se'], 3)})"
        )

    rows.append(both(mean, name=f"mean pass rate, {level} CI"))
    ks = sorted({int(p["k"]) for arm in (a, b) for p in arm["pass_at"]})
    for key, name in (("pass_at", "pass@{k}"), ("pass_hat", "pass^{k}")):
        for k in ks:

            def value(arm: Doc, key: str = key, k: int = k) -> str:
                found = [p["value"] for p in arm[key] if int(p["k"]) == k]
                return num(found[0]) if found else "n/a"

            rows.append(both(value, name=name.format(k=k)))
    rows += [
        both(lambda arm: num(arm["solved_cases"]), name="solved cases (sum of case rates)"),
        both(lambda arm: _e(arm["tokens"]), name="tokens"),
        both(lambda arm: usd(arm.get("cost_usd")), name="cost (USD)"),
        both(lambda arm: num(arm.get("tokens_per_solved"), 0), name="tokens per solved case"),
        both(lambda arm: usd(arm.get("cost_per_solved_usd")), name="cost per solved case (USD)"),
        both(
            lambda arm: num(arm["side_effect_violation_rate"]),
            name="side-effect violation rate",
        ),
        both(lambda arm: _e(len(arm["unhealthy"])), name="unhealthy runs (excluded)"),
    ]
    return (
        "<section id='arm-summary'><h2>Arms</h2><div class='side'><table><thead><tr><th></th>"
        f"<th>{_e(arm_title(a))}</th><th>{_e(arm_title(b))}</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
        f"<figure>{cost_quality_plot(doc)}</figure></div></section>"
    )


def _gates(doc: Doc) -> str:
    rows = "".join(
        f"<tr data-gate='{_e(gate['name'])}'><td>{_e(gate['name'])}</td>"
        f"<td><span class='status status-{_e(gate['status'])}'>{_e(gate['status'])}</span></td>"
        f"<td>{_e(gate['detail'])}</td></tr>"
        for gate in doc["gates"]
    )
    return (
        "<section id='gates'><h2>Gates</h2><table><thead><tr><th>gate</th><th>status</th>"
        f"<th>detail</th></tr></thead><tbody>{rows}</tbody></table></section>"
    )


def _run_cell(run: Doc | None, bad: set[tuple[str, str]]) -> str:
    if run is None:
        return "<td class='run none'>-</td>"
    outcome = str(run["outcome"])
    unhealthy = (run["run_id"], run["case_id"]) in bad
    tip = f"run {run['run_id']}, attempt {run['attempt']}, started {run['started_at']}"
    if run.get("reason"):
        tip += f": {run['reason']}"
    links = " ".join(
        link
        for link in (
            _link(run.get("transcript"), "transcript"),
            _link(run.get("diff"), "diff"),
            _link(run.get("run_dir"), "dir"),
        )
        if link
    )
    label = outcome_label(outcome) + (" (excluded)" if unhealthy else "")
    effects = (
        "<span class='side-effects'>side effects violated</span>"
        if run.get("side_effects_ok") is False
        else ""
    )
    classes = f"run outcome-{_e(outcome)}" + (" unhealthy" if unhealthy else "")
    return (
        f"<td class='{classes}' data-outcome='{_e(outcome)}' data-run-id='{_e(run['run_id'])}' "
        f"title='{_e(tip)}'><span class='outcome'>{_e(label)}</span>{effects}{links}</td>"
    )


def _case_grid(doc: Doc) -> str:
    runs = {
        label: {case["case_id"]: case_runs(doc, case, label) for case in doc["cases"]}
        for label in "AB"
    }
    width = {label: max([len(r) for r in runs[label].values()] + [1]) for label in "AB"}
    bad = {label: unhealthy_ids(doc, label) for label in "AB"}
    head = "<tr><th rowspan='2'>case</th><th rowspan='2'>class</th>"
    sub = ""
    for label in "AB":
        title = _e(arm_title(doc["arms"][label]))
        head += f"<th colspan='{width[label] + 1}' class='arm-{label}'>{title}</th>"
        sub += "".join(f"<th>run {i + 1}</th>" for i in range(width[label]))
        sub += "<th>rate</th>"
    head += f"</tr><tr>{sub}</tr>"
    rows = []
    for case in doc["cases"]:
        case_id, cls = case["case_id"], str(case["class"])
        tags = "".join(f"<span class='tag'>{_e(tag)}</span>" for tag in case["tags"])
        cells = (
            f"<td class='case'><b>{_e(case_id)}</b><br>{tags}"
            f"<br><small title='{_e(case['case_digest'])}'>digest "
            f"{_e(str(case['case_digest'])[:12])}</small>"
            f"<br><small class='strength'>strength {_e(strength_text(case.get('strength')))}"
            "</small></td>"
            f"<td class='class class-{_e(cls)}'>{_e(CLASS_LABELS.get(cls, cls))}</td>"
        )
        for label in "AB":
            mine = runs[label][case_id]
            cells += "".join(
                _run_cell(mine[i] if i < len(mine) else None, bad[label])
                for i in range(width[label])
            )
            arm_case = case[label]
            cells += (
                f"<td class='num'>{num(arm_case['rate'])}<br>"
                f"<small>{_e(arm_case['passes'])}/{_e(arm_case['healthy'])}</small></td>"
            )
        rows.append(
            f"<tr class='case-row' data-case-id='{_e(case_id)}' data-class='{_e(cls)}'>{cells}</tr>"
        )
    return (
        "<section id='cases'><h2>Cases</h2>"
        "<p class='meta'>Each cell is one run: its outcome in words and colour, with links "
        "to its transcript, diff and run directory. A dashed outline marks a run excluded as "
        "unhealthy (it counts in neither arm's rates).</p>"
        f"<table id='case-grid'><thead>{head}</thead>"
        f"<tbody>{''.join(rows)}</tbody></table></section>"
    )


def _by_tag(doc: Doc) -> str:
    rows = "".join(
        f"<tr data-tag='{_e(row['tag'])}'><td>{_e(row['tag'])}</td>"
        f"<td class='num'>{_e(row['cases'])}</td>"
        f"<td class='num'>{num(row['A']['rate'])}</td><td class='num'>{num(row['B']['rate'])}</td>"
        f"<td class='num'>{signed(row['difference']['estimate'])}</td>"
        f"<td>{interval(row['difference']['interval'])}</td></tr>"
        for row in doc["by_tag"]
    )
    return (
        "<section id='by-tag'><h2>By tag</h2><table><thead><tr><th>tag</th><th>cases</th>"
        "<th>A rate</th><th>B rate</th><th>B &minus; A</th>"
        f"<th>{confidence(doc)} CI</th></tr></thead>"
        f"<tbody>{rows}</tbody></table></section>"
    )


def _by_cutoff(doc: Doc) -> str:
    if not doc.get("by_cutoff"):
        return ""
    rows = "".join(
        f"<tr><td>{_e(row['contamination']['A'] or 'none stated')}</td>"
        f"<td>{_e(row['contamination']['B'] or 'none stated')}</td>"
        f"<td class='num'>{_e(row['cases'])}</td>"
        f"<td class='num'>{num(row['A']['rate'])}</td><td class='num'>{num(row['B']['rate'])}</td>"
        f"<td class='num'>{signed(row['difference']['estimate'])}</td>"
        f"<td>{interval(row['difference']['interval'])}</td></tr>"
        for row in doc["by_cutoff"]
    )
    return (
        "<section id='by-cutoff'><h2>By training cutoff</h2><p class='meta'>after-cutoff: the "
        "case was fixed after the arm's stated training cutoff (clean); before-cutoff: the "
        "public fix may be in its training data.</p><table><thead><tr><th>A's cutoff</th>"
        "<th>B's cutoff</th><th>cases</th><th>A rate</th><th>B rate</th><th>B &minus; A</th>"
        f"<th>{confidence(doc)} CI</th></tr></thead>"
        f"<tbody>{rows}</tbody></table></section>"
    )


def _left_out(doc: Doc) -> str:
    items = "".join(
        f"<li data-case-id='{_e(item['case_id'])}'><b>{_e(item['case_id'])}</b>: "
        f"{_e(item['why'])}</li>"
        for item in doc["left_out"]
    )
    body = f"<ul>{items}</ul>" if items else "<p>None: every case was compared.</p>"
    return f"<section id='left-out'><h2>Cases left out</h2>{body}</section>"


def _unhealthy(doc: Doc) -> str:
    rows = []
    for label in "AB":
        for run in doc["arms"][label]["unhealthy"]:
            links = " ".join(
                link
                for link in (
                    _link(run.get("transcript"), "transcript"),
                    _link(run.get("diff"), "diff"),
                    _link(run.get("run_dir"), "dir"),
                )
                if link
            )
            rows.append(
                f"<tr data-run-id='{_e(run['run_id'])}'><td>{_e(label)}</td>"
                f"<td>{_e(run['run_id'])}</td><td>{_e(run['case_id'])}</td>"
                f"<td class='num'>{_e(run['attempt'])}</td>"
                f"<td>{_e(outcome_label(str(run['outcome'])))}</td>"
                f"<td>{_e(run.get('reason') or '')}</td><td>{_e(run['started_at'])}</td>"
                f"<td>{links}</td></tr>"
            )
    table = (
        "<table><thead><tr><th>arm</th><th>run</th><th>case</th><th>attempt</th>"
        "<th>outcome</th><th>reason</th><th>started</th><th>files</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
        if rows
        else "<p>None: every run's wire and sandbox were healthy.</p>"
    )
    return (
        "<section id='unhealthy-runs'><h2>Wire health</h2>"
        f"<figure>{wire_timeline_plot(doc)}</figure>"
        "<p class='meta'>Runs excluded from both arms the same way, as unhealthy:</p>"
        f"{table}</section>"
    )


def render_html(doc: Doc) -> str:
    """The comparison document as one self-contained HTML page (no script, no network)."""
    check_schema(doc)
    a, b = doc["arms"]["A"], doc["arms"]["B"]
    title = f"replay compare {doc['name']}: {a['name']} vs {b['name']}"
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy"
 content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<meta name="generator" content="replay ({_e(doc["schema"])})">
<title>{_e(title)}</title>
<style>{_CSS}{_cell_style()}</style>
</head>
<body>
<header>
<h1>{_e(title)}</h1>
<p class="meta">Generated {_e(doc["generated_at"])} · schema {_e(doc["schema"])} ·
rates over healthy runs only</p>
</header>
<main>
{_headline(doc)}
{_gates(doc)}
{_rule(doc)}
{_arms(doc)}
{_case_grid(doc)}
{_by_tag(doc)}
{_by_cutoff(doc)}
{_unhealthy(doc)}
{_left_out(doc)}
</main>
</body>
</html>
"""
