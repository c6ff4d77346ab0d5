"""The viewer's lists: the runs (``/``, filtered by case, outcome, comparison, candidate,
harness, model, days and batch: :mod:`replay.view.filters`), the comparisons
(``/comparisons``) and the batches (``/batches``).

Ids: ``filters`` (the form; the live site only), ``shown`` (how many runs, of which filters),
``runs`` (the table; one ``tr.run`` per run with ``data-run-id``), ``comparison-list``,
``batch-list`` (one ``tr.batch`` per batch with ``data-batch``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from replay.base.outcomes import OUTCOMES
from replay.compare.fmt import outcome_label
from replay.results import RunRow
from replay.results.models import ComparisonRow
from replay.view.batches import BatchSummary
from replay.view.filters import RunFilters
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
from replay.view.source import Choices


def _select(name: str, label: str, chosen: str, options: Sequence[tuple[str, str]]) -> str:
    items = "".join(
        f"<option value='{e(value)}'{' selected' if value == chosen else ''}>{e(text)}</option>"
        for value, text in [("", "any"), *options]
    )
    return f"<label>{e(label)} <select name='{e(name)}'>{items}</select></label>"


def _day(name: str, label: str, chosen: str) -> str:
    # Text, not type=date: Chromium draws a date input's picker from an image it loads (a
    # data: URL), and a page of the viewer loads nothing. The server checks the day anyway.
    return (
        f"<label>{e(label)} <input type='text' name='{e(name)}' value='{e(chosen)}' "
        "placeholder='YYYY-MM-DD' pattern='\\d{4}-\\d{2}-\\d{2}' size='10'></label>"
    )


def _filters(filters: RunFilters, choices: Choices, comparisons: Sequence[ComparisonRow]) -> str:
    def plain(values: Sequence[str]) -> list[tuple[str, str]]:
        return [(v, v) for v in values]

    outcomes = [(o.value, outcome_label(o.value)) for o in OUTCOMES]
    named = plain([c.name for c in comparisons])
    return (
        "<form class='filters' id='filters' method='get' action='/'>"
        f"{_select('case', 'case', filters.case, plain(choices.cases))}"
        f"{_select('outcome', 'outcome', filters.outcome, outcomes)}"
        f"{_select('comparison', 'comparison', filters.comparison, named)}"
        f"{_select('candidate', 'candidate', filters.candidate, plain(choices.candidates))}"
        f"{_select('harness', 'harness', filters.harness, plain(choices.harnesses))}"
        f"{_select('model', 'model', filters.model, plain(choices.models))}"
        f"{_select('batch', 'batch', filters.batch, plain(choices.batches))}"
        f"{_day('since', 'started from', filters.since)}{_day('until', 'to', filters.until)}"
        "<button type='submit'>show</button></form>"
    )


def _row(run: RunRow, links: Links, strength: str) -> str:
    case = (
        e(run.case_id)
        if links.static
        else f"<a href='{e(links.index(case=run.case_id))}'>{e(run.case_id)}</a>"
    )
    return (
        f"<tr class='run' data-run-id='{e(run.id)}' data-outcome='{e(run.outcome or '')}'>"
        f"<td><a href='{e(links.run(run.id))}'>{e(run.id[:8])}</a></td>"
        f"<td>{run.started_at:%Y-%m-%d %H:%M}</td><td>{case}</td>"
        f"<td class='strength'>{e(strength)}</td><td>{e(run_label(run))}</td>"
        f"<td>{e(run.harness)}</td><td>{e(run.model)}</td>"
        f"<td>{outcome_badge(run.outcome, run.status)}</td><td>{e(run_reason(run))}</td>"
        f"<td class='num'>{seconds(run.wall_time_s)}</td>"
        f"<td class='num'>{usd(run.cost_usd)}</td></tr>"
    )


def render_index(
    runs: Sequence[RunRow],
    filters: RunFilters,
    choices: Choices,
    comparisons: Sequence[ComparisonRow],
    links: Links,
    strengths: Mapping[str, str] | None = None,
) -> str:
    """The runs, newest first, with the filters (live) and the comparisons. ``strengths``:
    by run id, the strength of the case version it replayed (empty: no case file given)."""
    said = {"since": "started from", "until": "started until"}
    chosen = [f"{said.get(k, k)} {v}" for k, v in filters.chosen().items()]
    shown = f"{len(runs)} run(s)" + (f": {', '.join(chosen)}" if chosen else "")
    if not links.static:
        form = _filters(filters, choices, comparisons)
    elif filters.batch:
        form = (
            f"<p class='meta'>The runs of batch {e(filters.batch)} (the last run of each of "
            "its planned runs); other filters need the server (<code>replay view</code>).</p>"
        )
    else:
        form = (
            "<p class='meta'>Every run of the store; filtering needs the server "
            "(<code>replay view</code>).</p>"
        )
    rows = "".join(_row(run, links, (strengths or {}).get(run.id, "")) for run in runs)
    listed = "".join(
        f"<li><a href='{e(links.comparison(c.name))}'>{e(c.name)}</a></li>" for c in comparisons
    )
    return frame(
        "replay: runs",
        f"<h1>Runs</h1>{form}<p id='shown'>{e(shown)}</p>"
        "<table id='runs'><thead><tr><th>run</th><th>started (UTC)</th><th>case</th>"
        "<th>strength</th><th>played by</th><th>harness</th><th>model</th><th>outcome</th>"
        "<th>why</th>"
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


def _outcome_counts(one: BatchSummary) -> str:
    order = [o.value for o in OUTCOMES] + sorted(set(one.outcomes) - {o.value for o in OUTCOMES})
    return " ".join(
        f"{outcome_badge(name)} {one.outcomes[name]}" for name in order if one.outcomes[name]
    )


def _cost(one: BatchSummary) -> str:
    if not one.priced:
        return "-"
    return usd(one.cost_usd) + (f" ({one.unpriced} run(s) not priced)" if one.unpriced else "")


def _batch_row(one: BatchSummary, links: Links) -> str:
    when = "-" if one.created_at is None else f"{one.created_at:%Y-%m-%d %H:%M} UTC"
    last = "-" if one.last_claim is None else f"{one.last_claim:%Y-%m-%d %H:%M} UTC"
    plan = (
        f"<details><summary>plan</summary><pre>{e(one.plan)}</pre></details>" if one.plan else "-"
    )
    return (
        f"<tr class='batch' data-batch='{e(one.name)}'>"
        f"<td><a href='{e(links.batch_runs(one.name))}'>{e(one.name)}</a></td>"
        f"<td>{when}</td><td>{last}</td><td class='num'>{one.keys}</td>"
        f"<td class='num'>{one.running}</td><td class='num runs'>{one.runs}</td>"
        f"<td class='outcomes'>{_outcome_counts(one) or '-'}</td>"
        f"<td class='num'>{one.tokens}</td><td class='num cost'>{_cost(one)}</td>"
        f"<td>{plan}</td></tr>"
    )


def render_batches(batches: Sequence[BatchSummary], links: Links) -> str:
    """The batches of the store, the latest first, each linking to its runs."""
    rows = "".join(_batch_row(one, links) for one in batches)
    body = (
        "<p class='meta'>Planned runs are counted once each, by their last try; the runs "
        "link lists the store's runs they ended with.</p>"
        "<table id='batch-list'><thead><tr><th>batch</th><th>fixed (first run)</th>"
        "<th>last claimed</th><th>planned runs claimed</th><th>running</th>"
        "<th>runs in the store</th><th>outcomes</th><th>tokens</th><th>cost</th>"
        f"<th>plan</th></tr></thead><tbody>{rows}</tbody></table>"
        if batches
        else "<p>No batch yet (<code>replay batch run PLAN</code> records one when it "
        "first runs).</p>"
    )
    return frame("replay: batches", f"<h1>Batches</h1>{body}", links)
