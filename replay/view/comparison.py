"""A comparison's page: ``replay compare``'s own document and HTML report, judged now from
the results store, with every run linked to its page in the viewer.

The store keeps a comparison's name, its arms' candidate keys and its rule, not the document:
the document is built again by the comparison engine (:func:`replay.compare.engine.
build_document`, what ``replay compare --no-run`` does) over the case files given to the
viewer that have runs of either arm, and rendered by the report's own renderer
(:func:`replay.compare.html.render_html`): the figures are the engine's, never recomputed
here. What the viewer adds is a navigation bar, the discordant cases with their runs one
click away, and run links that point at the viewer's pages instead of the run's files.

An arm's settings are not in the store, only its key (name and a digest of the settings).
The candidate is rebuilt from its runs' harness and model; when that does not give the same
key (a candidate with other settings: faults, a seed, a training cutoff), the arm keeps its
key and says that its settings are unknown, and no training cutoff is set against the cases.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from replay.base.formats import parse_yaml, validate_data
from replay.cases.retired import partition_retired
from replay.compare.candidate import Candidate
from replay.compare.engine import build_document
from replay.compare.fmt import (
    CLASS_LABELS,
    DECISION_LABELS,
    Doc,
    arm_title,
    case_runs,
    outcome_label,
    strength_text,
)
from replay.compare.html import render_html
from replay.compare.rule import DecisionRule
from replay.results import RunRow
from replay.results.models import ComparisonRow
from replay.view.page import Links, e, frame, nav
from replay.view.source import Source

DISCORDANT = ("only_a", "only_b", "flaky")
"""Case classes where the arms disagree (the comparison's discordant pairs)."""


class StoredArm(Candidate):
    """An arm known only by its key: its settings are not in the store."""

    stored_key: str = ""

    @property
    def key(self) -> str:
        return self.stored_key

    @property
    def settings(self) -> dict[str, Any]:
        return {"settings": "not in the results store (only the candidate's key is)"}


def arm_of(key: str, runs: Sequence[RunRow]) -> Candidate:
    """The candidate of key ``key``, rebuilt from its runs' harness and model."""
    name = key.split(":", 1)[0]
    sample = runs[0] if runs else None
    harness = sample.harness if sample else "reference"
    model = sample.model if sample else "unknown"
    stub = model.removeprefix("stub:") if model.startswith("stub:") else None
    try:
        guess = (
            Candidate(name=name, harness=harness, stub=stub)
            if stub
            else Candidate(name=name, harness=harness, model=model)
        )
    except ValidationError:
        guess = None
    if guess is not None and guess.key == key:
        return guess
    return StoredArm.model_construct(
        name=name, harness=harness, model=model, stub=stub, stored_key=key
    )


def comparison_document(source: Source, row: ComparisonRow) -> tuple[Doc, list[str]]:
    """The comparison's document as ``replay compare --no-run`` would make it from the store,
    and what the viewer has to say about how it was made."""
    keys = {"A": row.arm_a, "B": row.arm_b}
    runs = {label: list(source.store.runs(candidate=key)) for label, key in keys.items()}
    arms = {label: arm_of(keys[label], runs[label]) for label in keys}
    where = Path(f"<rule of comparison {row.name}>")
    rule = validate_data(where, parse_yaml(where, row.rule), DecisionRule)
    case_ids = sorted({r.case_id for label in keys for r in runs[label]})
    given = [c for c in source.cases if c.id in case_ids]
    active, retired = partition_retired(given)
    doc = build_document(source.store, active, arms, rule, row)
    left = list(doc["left_out"])
    left += [{"case_id": c.id, "why": f"retired {r.at:%Y-%m-%d}: {r.reason}"} for c, r in retired]
    have = {c.id for c in given}
    left += [
        {"case_id": case_id, "why": "no case file of it was given to replay view (--cases)"}
        for case_id in case_ids
        if case_id not in have
    ]
    doc["left_out"] = sorted(left, key=lambda x: x["case_id"])
    said = [
        "Judged now from the results store by replay compare's engine, over the case files "
        f"given to the viewer that have runs of either arm ({', '.join(sorted(have)) or 'none'})."
    ]
    said += [
        f"Arm {label}'s settings are not in the store (only its key {arms[label].key}): "
        "no training cutoff is set against the cases."
        for label in keys
        if isinstance(arms[label], StoredArm)
    ]
    return doc, said


def _run_docs(doc: Doc) -> list[dict[str, Any]]:
    runs = [r for case in doc["cases"] for label in "AB" for r in case[label]["runs"]]
    return runs + [r for label in "AB" for r in doc["arms"][label]["unhealthy"]]


def with_run_links(doc: Doc, links: Links) -> Doc:
    """A copy of ``doc`` whose run links open the viewer's run pages (the transcript and the
    diff at their places on the page), never the run's files."""
    linked: Doc = copy.deepcopy(doc)
    for run in _run_docs(linked):
        run["transcript"] = links.run(run["run_id"], "transcript")
        run["diff"] = links.run(run["run_id"], "diff")
        run["run_dir"] = links.run(run["run_id"])
    return linked


def _discordant(doc: Doc, links: Links) -> str:
    rows = []
    for case in doc["cases"]:
        cls = str(case["class"])
        if cls not in DISCORDANT:
            continue
        cells = ""
        for label in "AB":
            items = " ".join(
                f"<a class='run-link' data-run-id='{e(run['run_id'])}' "
                f"href='{e(links.run(run['run_id']))}'>{e(outcome_label(str(run['outcome'])))} "
                f"(run {e(str(run['run_id'])[:8])})</a>"
                for run in case_runs(doc, case, label)
            )
            cells += f"<td>{items or '-'}</td>"
        rows.append(
            f"<tr class='discordant-case' data-case-id='{e(case['case_id'])}'>"
            f"<td><b>{e(case['case_id'])}</b></td>"
            f"<td class='strength'>{e(strength_text(case.get('strength')))}</td>"
            f"<td>{e(CLASS_LABELS.get(cls, cls))}</td>{cells}</tr>"
        )
    a, b = doc["arms"]["A"], doc["arms"]["B"]
    table = (
        f"<table><thead><tr><th>case</th><th>strength</th><th>passed in</th>"
        f"<th>{e(arm_title(a))}</th>"
        f"<th>{e(arm_title(b))}</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
        if rows
        else "<p>None: the arms agree on every compared case.</p>"
    )
    return (
        "<section id='discordant'><h2>Discordant cases</h2><p class='meta'>The cases the arms "
        f"disagree on, each run one click from its page.</p>{table}</section>"
    )


def _outcomes(doc: Doc) -> str:
    """Each arm's runs by outcome (what a report without a difference can still say)."""
    rows = "".join(
        f"<tr><th>{e(arm_title(arm))}</th><td>{e(arm['harness'])}</td><td>{e(arm['model'])}</td>"
        f"<td class='num'>{arm['healthy_runs']} of {arm['runs']}</td><td>"
        + e(", ".join(f"{n} {outcome_label(o)}" for o, n in arm["outcomes"].items() if n))
        + "</td></tr>"
        for arm in (doc["arms"]["A"], doc["arms"]["B"])
    )
    return (
        "<table id='arm-outcomes'><thead><tr><th>arm</th><th>harness</th><th>model</th>"
        f"<th>healthy runs</th><th>outcomes</th></tr></thead><tbody>{rows}</tbody></table>"
    )


def _without_difference(doc: Doc, said: Sequence[str], links: Links) -> str:
    """The page of a comparison with fewer than two paired cases: the engine gives it no
    difference, and the report's renderer draws none (it needs one), so the viewer shows the
    verdict, the gates, the arms' outcomes and every case's runs."""
    verdict = doc["verdict"]
    reasons = "".join(f"<li>{e(r)}</li>" for r in verdict["reasons"])
    gates = "".join(
        f"<tr data-gate='{e(g['name'])}'><td>{e(g['name'])}</td><td>{e(g['status'])}</td>"
        f"<td>{e(g['detail'])}</td></tr>"
        for g in doc["gates"]
    )
    left = "".join(f"<li><b>{e(x['case_id'])}</b>: {e(x['why'])}</li>" for x in doc["left_out"])
    notes = "".join(f"<p class='meta view-note'>{e(line)}</p>" for line in said)
    a, b = doc["arms"]["A"], doc["arms"]["B"]
    body = (
        f"<h1>Comparison {e(doc['name'])}: {e(a['name'])} vs {e(b['name'])}</h1>{notes}"
        f"<section id='headline'><p id='verdict'><b>"
        f"{e(DECISION_LABELS.get(verdict['decision'], verdict['decision']))}</b></p>"
        f"<ul id='reasons'>{reasons}</ul></section>"
        f"{_discordant(doc, links)}"
        "<section id='gates'><h2>Gates</h2><table><thead><tr><th>gate</th><th>status</th>"
        f"<th>detail</th></tr></thead><tbody>{gates}</tbody></table></section>"
        f"<section id='arm-summary'><h2>Arms</h2>{_outcomes(doc)}</section>"
        f"<section id='left-out'><h2>Cases left out</h2><ul>{left or '<li>none</li>'}</ul>"
        "</section>"
    )
    return frame(f"comparison {doc['name']}", body, links)


def render_comparison(doc: Doc, said: Sequence[str], links: Links) -> str:
    """The comparison report, with the viewer's navigation and the discordant cases first."""
    if doc.get("difference") is None:
        return _without_difference(doc, said, links)
    page = render_html(with_run_links(doc, links))
    anchor = "<body>\n"
    if anchor not in page:
        raise AssertionError("the comparison report's page has no <body> to add to")
    notes = "".join(f"<p class='meta view-note'>{e(line)}</p>" for line in said)
    added = f"{nav(links)}{notes}{_discordant(doc, links)}"
    return page.replace(anchor, anchor + added, 1)
