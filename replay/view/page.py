"""What every page of the viewer shares: escaping, the links between pages, the frame.

The same page functions serve two sites: the live one (``replay view``: ``/runs/<id>``) and
the exported one (``replay view --export DIR``: ``runs/<id>.html``, every link relative to
the page, so the folder can be opened from disk or attached to a pull request). The
difference is all in :class:`Links`. Every string that comes from the store or a run's
files is escaped here (:func:`e`); a page holds no script and fetches nothing (its content
security policy says so to the browser).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from html import escape
from typing import Any
from urllib.parse import quote, urlencode

from replay.compare.fmt import outcome_label
from replay.compare.plots import OUTCOME_COLOURS
from replay.results import RunRow

_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,100}$")


def e(value: Any) -> str:
    """Escaped text for an element's content or a quoted attribute."""
    return escape(str(value), quote=True)


def file_stem(name: str) -> str:
    """A file name for a run id or a comparison name in the exported site: the name itself
    when it is plain (letters, digits, ``.``, ``_``, ``-``), else a plain part of it and a
    digest, so that two names never share a file and none escapes its folder. ``index`` is
    each folder's own list (``comparisons/index.html``): a comparison of that name gets a
    digest too."""
    if _SAFE_NAME.match(name) and name not in (".", "..", "index"):
        return name
    plain = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip(".-")[:60] or "x"
    return f"{plain}-{hashlib.sha256(name.encode()).hexdigest()[:10]}"


@dataclass(frozen=True)
class Links:
    """Where a page's links point: the live server's paths, or the exported files relative
    to the page (``depth``: how many folders below the site's root the page is)."""

    static: bool = False
    depth: int = 0

    def _root(self) -> str:
        return "../" * self.depth if self.static else "/"

    def index(self, **filters: str) -> str:
        """The runs (filters only on the live server: a static page cannot filter; a batch's
        runs are a page of their own there, :meth:`batch_runs`)."""
        if self.static:
            return f"{self._root()}index.html"
        chosen = {k: v for k, v in filters.items() if v}
        return "/" + (f"?{urlencode(chosen)}" if chosen else "")

    def batches(self) -> str:
        return f"{self._root()}batches/index.html" if self.static else "/batches"

    def batch_runs(self, name: str) -> str:
        """The runs of batch ``name``: the runs page filtered by it, or its exported copy
        (``batches/runs/<name>.html``, apart from ``batches/index.html`` whatever the name)."""
        if self.static:
            return f"{self._root()}batches/runs/{quote(file_stem(name))}.html"
        return self.index(batch=name)

    def run(self, run_id: str, anchor: str = "") -> str:
        mark = f"#{anchor}" if anchor else ""
        if self.static:
            return f"{self._root()}runs/{quote(file_stem(run_id))}.html{mark}"
        return f"/runs/{quote(run_id, safe='')}{mark}"

    def comparisons(self) -> str:
        return f"{self._root()}comparisons/index.html" if self.static else "/comparisons"

    def comparison(self, name: str) -> str:
        if self.static:
            return f"{self._root()}comparisons/{quote(file_stem(name))}.html"
        return f"/comparisons/{quote(name, safe='')}"


CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
"""Nothing but the page itself and its inline style: no script, no request anywhere."""

CSS = """
body { font-family: system-ui, sans-serif; margin: 16px auto; max-width: 1400px; color: #222;
       padding: 0 16px; line-height: 1.4; }
nav { border-bottom: 1px solid #ccc; padding: 4px 0 8px; margin-bottom: 8px; }
nav a { margin-right: 14px; }
h1 { font-size: 1.4em; margin: 8px 0 4px; }
h2 { font-size: 1.15em; border-bottom: 1px solid #ccc; padding-bottom: 2px; margin-top: 1.8em; }
h3 { font-size: 1em; margin: 1em 0 4px; }
.meta { color: #555; font-size: 0.9em; }
table { border-collapse: collapse; margin: 8px 0; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 3px 7px; text-align: left; vertical-align: top; }
th { background: #f0f0f0; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
pre { background: #f7f7f7; border: 1px solid #e2e2e2; padding: 6px 8px; margin: 4px 0;
      white-space: pre-wrap; word-break: break-word; font-size: 0.85em; }
.outcome { font-weight: bold; padding: 1px 6px; border-radius: 3px; white-space: nowrap; }
.status-passed { background: #d9f0d3; } .status-failed, .status-error { background: #f4c7c3; }
.status-skipped, .status-missing { background: #fde9b0; }
.ok { color: #1b7837; font-weight: bold; } .broken { color: #b2182b; font-weight: bold; }
tr.offending td { background: #fbe3e1; }
tr.offending td:first-child { border-left: 5px solid #b2182b; }
#verdict { border: 2px solid #888; border-radius: 6px; padding: 8px 14px; margin: 10px 0; }
#verdict.outcome-pass { border-color: #1b7837; background: #f0f8f0; }
#verdict.outcome-model_fail { border-color: #b2182b; background: #fcf0f0; }
.findings li { margin: 2px 0; }
#headline { border: 2px solid #888; border-radius: 6px; padding: 8px 14px; margin: 10px 0; }
#headline #verdict { border: none; padding: 0; margin: 0; font-size: 1.3em; }
.turn { border-left: 4px solid #ccc; margin: 8px 0; padding: 2px 10px; }
.turn.role-assistant { border-color: #377eb8; } .turn.role-tool { border-color: #999; }
.turn.role-user { border-color: #1b9e77; } .turn.role-system { border-color: #bbb; }
.turn .who { font-weight: bold; font-size: 0.85em; color: #444; }
.call { margin: 4px 0 4px 12px; } .call .name { font-family: monospace; font-weight: bold; }
.diffs { display: grid; grid-template-columns: 1fr 1fr; gap: 12px; }
.diffs > div { min-width: 0; }
pre.diff span { display: block; }
pre.diff .add { background: #e6ffec; } pre.diff .del { background: #ffebe9; }
pre.diff .hunk { color: #6f42c1; } pre.diff .file { font-weight: bold; }
pre.diff .skipmark { background: #ffd7a8; outline: 1px solid #d95f02; }
.bar { position: relative; height: 10px; min-width: 160px; background: #f3f3f3; }
.bar span { position: absolute; top: 0; height: 10px; background: #377eb8; min-width: 2px; }
.bar span.fail { background: #b2182b; }
form.filters { margin: 8px 0; } form.filters label { margin-right: 10px; white-space: nowrap; }
.note { color: #8c6d1f; }
"""


def outcome_style() -> str:
    """One tint per outcome, the comparison report's palette (the word is always shown)."""
    return "\n".join(
        f".outcome-{name} {{ background: {colour}33; }}" for name, colour in OUTCOME_COLOURS.items()
    )


def outcome_badge(outcome: str | None, status: str = "") -> str:
    """The outcome as a word on its colour (``model fail``), or the run's status."""
    if outcome is None:
        return f"<span class='outcome'>{e(status or 'not graded')}</span>"
    return f"<span class='outcome outcome-{e(outcome)}'>{e(outcome_label(outcome))}</span>"


def nav(links: Links) -> str:
    return (
        f"<nav><a href='{e(links.index())}'>Runs</a> · "
        f"<a href='{e(links.comparisons())}'>Comparisons</a> · "
        f"<a href='{e(links.batches())}'>Batches</a></nav>"
    )


def frame(title: str, body: str, links: Links) -> str:
    """A whole page: the head (inline style, the content policy), the navigation, ``body``."""
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="{CSP}">
<title>{e(title)}</title>
<style>{CSS}{outcome_style()}</style>
</head>
<body>
{nav(links)}
<main>
{body}
</main>
</body>
</html>
"""


def not_found(what: str) -> str:
    """The one-line page of a missing run or comparison."""
    return (
        f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>not found</title>"
        f"</head><body><p id='not-found'>{e(what)}</p></body></html>\n"
    )


def run_label(run: RunRow) -> str:
    """Who played the run: the comparison candidate, the stub trajectory, or the harness and
    model."""
    if run.candidate:
        return run.candidate.split(":", 1)[0]
    if run.model.startswith("stub:"):
        return run.model.removeprefix("stub:")
    return f"{run.harness} / {run.model}"


def run_reason(run: RunRow) -> str:
    """The run's outcome in one line, as its grade says it (or why it stopped)."""
    detail = run.grade.detail if run.grade is not None else {}
    reason = detail.get("reason") if isinstance(detail, dict) else None
    return str(reason or run.stop_reason or "")


def seconds(value: float | None) -> str:
    if value is None:
        return "-"
    if value < 120:
        return f"{value:.0f} s"
    return f"{value / 60:.1f} min"


def usd(value: float | None) -> str:
    return "-" if value is None else f"${value:.4f}"
