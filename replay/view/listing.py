"""The viewer's lists: the runs (``/``, filtered by case, outcome and comparison) and the
comparisons (``/comparisons``).

Ids: ``filters`` (the form; the live site only), ``runs`` (the table; one ``tr.run`` per run
with ``data-run-id``), ``comparison-list``.
"""

from __future__ import annotations

from collections.abc import Sequence

from replay.base.outcomes import OUTCOMES
from replay.compare.fmt import outcome_label
from replay.results import RunRow
from replay.results.models import ComparisonRow
from replay.view.page import (
    Links,
    e,
    frame,
    outcome_badge,
    run_label,
    run_reason,
    seconds,
    usd,
)
from replay.view.source import RunFilters


def _select(name: str, label: str, chosen: str, options: Sequence[tuple[str, str]]) -> str:
    items = "".join(
        f"<option value='{e(value)}'{' selected' if value == chosen else ''}>{e(text)}</option>"
        for value, text in [("", "any"), *options]
    )
    return f"<label>{e(label)} <select name='{e(name)}'>{items}</select></label>"


def _filters(
    filters: RunFilters, cases: Sequence[str], comparisons: Sequence[ComparisonRow]
) -> str:
    outcomes = [(o.value, outcome_label(o.value)) for o in OUTCOMES]
    return (
        "<form class='filters' id='filters' method='get' action='/'>"
        f"{_select('case', 'case', filters.case, [(c, c) for c in cases])}"
        f"{_select('outcome', 'outcome', filters.outcome, outcomes)}"
        f"{_select('comparison', 'comparison', filters.comparison, [(c.name, c.name) for c in comparisons])}"  # noqa: E501
        "<button type='submit'>show</button></form>"
    )


def _row(run: RunRow, links: Links) -> str:
    case = (
        e(run.case_id)
        if links.static
        else f"<a href='{e(links.index(case=run.case_id))}'>{e(run.case_id)}</a>"
    )
    return (
        f"<tr class='run' data-run-id='{e(run.id)}' data-outcome='{e(run.outcome or '')}'>"
        f"<td><a href='{e(links.run(run.id))}'>{e(run.id[:8])}</a></td>"
        f"<td>{run.started_at:%Y-%m-%d %H:%M}</td><td>{case}</td>"
        f"<td>{e(run_label(run))}</td><td>{e(run.harness)}</td><td>{e(run.model)}</td>"
        f"<td>{outcome_badge(run.outcome, run.status)}</td><td>{e(run_reason(run))}</td>"
        f"<td class='num'>{seconds(run.wall_time_s)}</td>"
        f"<td class='num'>{usd(run.cost_usd)}</td></tr>"
    )


def render_index(
    runs: Sequence[RunRow],
    filters: RunFilters,
    cases: Sequence[str],
    comparisons: Sequence[ComparisonRow],
    links: Links,
) -> str:
    """The runs, newest first, with the filters (live) and the comparisons."""
    chosen = [f"{k} {v}" for k, v in vars(filters).items() if v]
    shown = f"{len(runs)} run(s)" + (f" of {', '.join(chosen)}" if chosen else "")
    form = (
        "<p class='meta'>Every run of the store; filtering needs the server "
        "(<code>replay view</code>).</p>"
        if links.static
        else _filters(filters, cases, comparisons)
    )
    rows = "".join(_row(run, links) for run in runs)
    listed = "".join(
        f"<li><a href='{e(links.comparison(c.name))}'>{e(c.name)}</a></li>" for c in comparisons
    )
    return frame(
        "replay: runs",
        f"<h1>Runs</h1>{form}<p id='shown'>{e(shown)}</p>"
        "<table id='runs'><thead><tr><th>run</th><th>started (UTC)</th><th>case</th>"
        "<th>played by</th><th>harness</th><th>model</th><th>outcome</th><th>why</th>"
        f"<th>time</th><th>cost</th></tr></thead><tbody>{rows}</tbody></table>"
        f"<h2>Comparisons</h2><ul>{listed or '<li>none</li>'}</ul>",
        links,
    )


def render_comparisons(comparisons: Sequence[ComparisonRow], links: Links) -> str:
    """The comparisons fixed in the store."""
    rows = "".join(
        f"<tr data-comparison='{e(c.name)}'><td><a href='{e(links.comparison(c.name))}'>"
        f"{e(c.name)}</a></td><td>{e(c.arm_a)}</td><td>{e(c.arm_b)}</td>"
        f"<td>{c.fixed_at:%Y-%m-%d %H:%M} UTC</td>"
        + (
            ""
            if links.static
            else f"<td><a href='{e(links.index(comparison=c.name))}'>its runs</a></td>"
        )
        + "</tr>"
        for c in comparisons
    )
    runs_head = "" if links.static else "<th>runs</th>"
    body = (
        "<table id='comparison-list'><thead><tr><th>comparison</th><th>arm A</th>"
        f"<th>arm B</th><th>fixed</th>{runs_head}</tr></thead><tbody>{rows}</tbody></table>"
        if comparisons
        else "<p>No comparison yet (<code>replay compare</code> fixes one with its first run).</p>"
    )
    return frame("replay: comparisons", f"<h1>Comparisons</h1>{body}", links)
