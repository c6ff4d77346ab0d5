"""``replay view --export DIR``: the viewer's pages as a folder that needs no server.

``index.html`` (every run), ``runs/<id>.html``, ``comparisons/index.html`` and
``comparisons/<name>.html``; every link is relative to its page and every page it links to
is in the folder, and no page fetches anything (no script, no stylesheet or image to load),
so the folder can be opened from disk, kept as a CI artifact or attached to a pull request.
A name that is not plain becomes a file name of its own (:func:`~replay.view.page.file_stem`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from replay.base.errors import InputError
from replay.view.page import Links, file_stem
from replay.view.site import comparison_page, comparisons_page, index_page, run_page
from replay.view.source import RunFilters, Source


@dataclass(frozen=True)
class Exported:
    """What an export wrote."""

    index: Path
    runs: int
    comparisons: int


def check_target(out: Path) -> None:
    """Refuse a target that is not a folder (:class:`InputError`), before any work."""
    if out.exists() and not out.is_dir():
        raise InputError(out, "is a file; --export writes a folder of pages (give a directory)")


def export_site(source: Source, out: Path) -> Exported:
    """Write the site under ``out`` (made if missing; pages already there are replaced)."""
    check_target(out)
    try:
        (out / "runs").mkdir(parents=True, exist_ok=True)
        (out / "comparisons").mkdir(exist_ok=True)
    except OSError as exc:
        raise InputError(out, f"cannot make the folder: {exc.strerror or exc}") from exc
    top, below = Links(static=True, depth=0), Links(static=True, depth=1)
    index = out / "index.html"
    index.write_text(index_page(source, RunFilters(), top), encoding="utf-8")
    (out / "comparisons" / "index.html").write_text(
        comparisons_page(source, below), encoding="utf-8"
    )
    runs = source.runs()
    for run in runs:
        page = out / "runs" / f"{file_stem(run.id)}.html"
        page.write_text(run_page(source, run, below), encoding="utf-8")
    rows = source.comparisons()
    for row in rows:
        page = out / "comparisons" / f"{file_stem(row.name)}.html"
        page.write_text(comparison_page(source, row, below), encoding="utf-8")
    return Exported(index, len(runs), len(rows))
