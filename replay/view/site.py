"""The viewer's pages, one function each, over the store and the case files: what the live
server (:mod:`replay.view.app`) answers and the export (:mod:`replay.view.export`) writes,
the difference being only where the links point (:class:`~replay.view.page.Links`)."""

from __future__ import annotations

from replay.results import RunRow
from replay.results.models import ComparisonRow
from replay.view.comparison import comparison_document, render_comparison
from replay.view.filters import RunFilters
from replay.view.listing import render_batches, render_comparisons, render_index
from replay.view.page import Links
from replay.view.rundir import load_run
from replay.view.runpage import render_run
from replay.view.source import Choices, Source


def index_page(source: Source, filters: RunFilters, links: Links) -> str:
    """The runs that pass ``filters`` (checked), and the comparisons."""
    # A static page has no form: what the filters could offer is not looked up for it.
    choices = Choices([], [], [], [], []) if links.static else source.choices()
    runs = source.runs(filters)
    strengths = {run.id: source.strength_of(run) for run in runs}
    return render_index(runs, filters, choices, source.comparisons(), links, strengths)


def comparisons_page(source: Source, links: Links) -> str:
    return render_comparisons(source.comparisons(), links)


def batches_page(source: Source, links: Links) -> str:
    return render_batches(source.batches(), links)


def run_page(source: Source, run: RunRow, links: Links) -> str:
    case, note = source.case_of(run)
    return render_run(run, load_run(run), case, note, links, source.strength_of(run))


def comparison_page(source: Source, row: ComparisonRow, links: Links) -> str:
    doc, said = comparison_document(source, row)
    return render_comparison(doc, said, links)
