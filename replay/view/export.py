"""``replay view --export DIR``: the viewer's pages as a folder that needs no server.

``index.html`` (every run), ``runs/<id>.html``, ``comparisons/index.html``,
``comparisons/<name>.html``, ``batches/index.html`` and ``batches/runs/<name>.html`` (the
runs page filtered by the batch: the one filter a static site has, since the batches page
links to it); every link is relative to its page and every page it links to is in the
folder, and no page fetches anything (no script, no stylesheet or image to load), so the
folder can be opened from disk, kept as a CI artifact or attached to a pull request. A name
that is not plain becomes a file name of its own (:func:`~replay.view.page.file_stem`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from replay.base.errors import InputError
from replay.view.filters import RunFilters
from replay.view.page import Links, file_stem
from replay.view.site import (
    batches_page,
    comparison_page,
    comparisons_page,
    index_page,
    run_page,
)
from replay.view.source import Source

Progress = Callable[[int, int], None]
"""Told ``(pages written, pages in all)`` after each page an export writes."""


@dataclass(frozen=True)
class Exported:
    """What an export wrote."""

    index: Path
    runs: int
    comparisons: int
    batches: int = 0
    pages: int = 0
    """Every page written, the lists included."""


def check_target(out: Path) -> None:
    """Refuse a target that is not a folder (:class:`InputError`), before any work."""
    if out.exists() and not out.is_dir():
        raise InputError(out, "is a file; --export writes a folder of pages (give a directory)")


def export_site(source: Source, out: Path, progress: Progress | None = None) -> Exported:
    """Write the site under ``out`` (made if missing; pages already there are replaced),
    telling ``progress`` after each page."""
    check_target(out)
    try:
        for folder in (out / "runs", out / "comparisons", out / "batches" / "runs"):
            folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(out, f"cannot make the folder: {exc.strerror or exc}") from exc
    top, below = Links(static=True, depth=0), Links(static=True, depth=1)
    runs, rows, batches = source.runs(), source.comparisons(), source.batches()
    # Listed first, rendered one by one: how many pages there are is known before the first.
    pages: list[tuple[Path, Callable[[], str]]] = [
        (out / "index.html", partial(index_page, source, RunFilters(), top)),
        (out / "comparisons" / "index.html", partial(comparisons_page, source, below)),
        (out / "batches" / "index.html", partial(batches_page, source, below)),
    ]
    pages += [
        (out / "runs" / f"{file_stem(run.id)}.html", partial(run_page, source, run, below))
        for run in runs
    ]
    pages += [
        (
            out / "comparisons" / f"{file_stem(c.name)}.html",
            partial(comparison_page, source, c, below),
        )
        for c in rows
    ]
    deep = Links(static=True, depth=2)
    pages += [
        (
            out / "batches" / "runs" / f"{file_stem(b.name)}.html",
            partial(index_page, source, RunFilters(batch=b.name), deep),
        )
        for b in batches
    ]
    for done, (path, render) in enumerate(pages, start=1):
        path.write_text(render(), encoding="utf-8")
        if progress is not None:
            progress(done, len(pages))
    return Exported(out / "index.html", len(runs), len(rows), len(batches), len(pages))
