"""What the report renderers share: the schema they read, number formats and labels.

The renderers (:mod:`replay.compare.html`, :mod:`replay.compare.junit`) read the
``replay compare --json`` document (schema ``replay.compare/1``, documented field by field in
``docs/compare-report.md``) and nothing else, so that a report can be made again from a
saved document.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from replay.base.errors import ReplayError

SCHEMA = "replay.compare/1"
"""The one version of the comparison document the renderers read."""

Doc = dict[str, Any]
"""A comparison document, as parsed from JSON."""

DECISION_LABELS = {"ship": "Ship B", "dont_ship": "Don't ship B", "inconclusive": "Inconclusive"}
CLASS_LABELS = {
    "only_a": "only A",
    "only_b": "only B",
    "flaky": "flaky",
    "both": "both",
    "neither": "neither",
}
OUTCOME_LABELS = {
    "pass": "pass",
    "model_fail": "model fail",
    "transport_fail": "transport fail",
    "protocol_fail": "protocol fail",
    "infra_fail": "infra fail",
}
OUTCOME_ORDER = ("pass", "model_fail", "protocol_fail", "transport_fail", "infra_fail")


class ReportSchemaError(ReplayError):
    """The document is not a ``replay.compare/1`` comparison."""


def check_schema(doc: Doc) -> None:
    """Refuse a document of another schema version before reading any of it."""
    found = doc.get("schema") if isinstance(doc, dict) else None
    if found != SCHEMA:
        raise ReportSchemaError(f"comparison document: schema is {found!r}, expected {SCHEMA!r}")


def num(value: float | None, digits: int = 2) -> str:
    """A number with fixed decimals, or ``n/a`` when the document has none."""
    return "n/a" if value is None else f"{value:.{digits}f}"


def signed(value: float | None, digits: int = 2) -> str:
    """A difference, always with its sign (``+0.25``, ``-0.10``)."""
    return "n/a" if value is None else f"{value:+.{digits}f}"


def interval(bounds: list[float] | None, digits: int = 2, sign: bool = True) -> str:
    """``[lo, hi]`` as text, or ``n/a``."""
    if not bounds:
        return "n/a"
    show = signed if sign else num
    return f"[{show(bounds[0], digits)}, {show(bounds[1], digits)}]"


def confidence(doc: Doc) -> str:
    """The rule's confidence level as a percentage label (``95%``)."""
    return f"{float(doc['rule']['confidence']) * 100:g}%"


def outcome_label(outcome: str) -> str:
    return OUTCOME_LABELS.get(outcome, outcome)


def arm_title(arm: Doc) -> str:
    """``A · cheat``."""
    return f"{arm['label']} · {arm['name']}"


_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def local_link(path: str | None) -> str | None:
    """A run's file as a link target: only paths (relative or absolute), never a URL.

    The document's paths are where the runner wrote files; anything with a scheme
    (``javascript:``, ``http:``) is not one, and is shown as text instead of linked.
    """
    if not path or _SCHEME.match(path):
        return None
    return path


def parse_time(text: str) -> datetime:
    """An ISO 8601 time from the document, as an aware UTC datetime."""
    when = datetime.fromisoformat(text)
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when.astimezone(UTC)


def all_runs(doc: Doc, label: str) -> Iterator[Doc]:
    """Every run of one arm: those of the paired cases, then the unhealthy ones not among
    them (the document lists an excluded run under its arm, and may leave it out of the
    case rows)."""
    seen: set[tuple[str, str]] = set()
    for case in doc["cases"]:
        for run in case[label]["runs"]:
            seen.add((run["run_id"], run["case_id"]))
            yield run
    for run in doc["arms"][label]["unhealthy"]:
        if (run["run_id"], run["case_id"]) not in seen:
            seen.add((run["run_id"], run["case_id"]))
            yield run


def unhealthy_ids(doc: Doc, label: str) -> set[tuple[str, str]]:
    """(run id, case id) of the runs an arm excluded as unhealthy."""
    return {(run["run_id"], run["case_id"]) for run in doc["arms"][label]["unhealthy"]}


def case_runs(doc: Doc, case: Doc, label: str) -> list[Doc]:
    """One arm's runs of one case, the unhealthy ones included (marked by the caller)."""
    runs = list(case[label]["runs"])
    seen = {run["run_id"] for run in runs}
    runs += [
        run
        for run in doc["arms"][label]["unhealthy"]
        if run["case_id"] == case["case_id"] and run["run_id"] not in seen
    ]
    return runs


def strength_text(strength: dict[str, Any] | None) -> str:
    """A case's recorded strength in a report's cell: ``96%``, ``81% weak``, ``81% weak,
    accepted``, ``not measured``."""
    from replay.strength.model import strength_label

    if strength is None or strength.get("strength") is None:
        return "not measured"
    accepted = strength.get("accepted") is not None
    return strength_label(strength["strength"], strength["strong"], accepted)
