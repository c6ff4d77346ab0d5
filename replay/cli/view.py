"""``replay view``: the run viewer, served on this machine or exported as a folder."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeRemainingColumn,
)

from replay.cli.common import out

QUIET_FOR = 3.0
"""Seconds an export runs before it shows its progress: a small store's says nothing."""
PLAIN_EVERY = 5.0
"""Seconds between two plain progress lines (not a terminal: a CI log gets a line now and
then, not one per page)."""


class PageCount:
    """The progress of ``--export``, told ``(pages written, pages in all)`` after each page.

    Once the export has run :data:`QUIET_FOR` seconds: on a terminal a bar that rich redraws
    (gone when the export ends); otherwise a plain line ``wrote N of M pages`` every
    ``every`` seconds. Use it as a context."""

    def __init__(
        self,
        console: Console,
        *,
        quiet_for: float = QUIET_FOR,
        every: float = PLAIN_EVERY,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.console, self.quiet_for, self.every, self.clock = console, quiet_for, every, clock
        self.started = clock()
        self.said: float | None = None
        """When the last plain line was printed."""
        self._bar: Progress | None = None
        self._task = TaskID(0)

    def __call__(self, done: int, total: int) -> None:
        now = self.clock()
        if self._bar is not None:
            self._bar.update(self._task, completed=done, total=total)
            return
        if now - self.started < self.quiet_for:
            return
        if self.console.is_terminal:
            self._bar = Progress(
                TextColumn("export"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("pages"),
                TimeRemainingColumn(),
                console=self.console,
                transient=True,
            )
            self._bar.start()
            self._task = self._bar.add_task("pages", total=total, completed=done)
        elif self.said is None or now - self.said >= self.every:
            self.said = now
            self.console.print(f"wrote {done} of {total} pages", markup=False, highlight=False)

    def __enter__(self) -> PageCount:
        self.started, self.said = self.clock(), None
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None


def view(
    ctx: typer.Context,
    cases: Annotated[
        list[Path] | None,
        typer.Option(
            "--cases",
            help="Case files or directories the gold patches and comparisons' cases come "
            "from (default: ./cases). Repeat for more.",
            show_default=False,
        ),
    ] = None,
    export: Annotated[
        Path | None,
        typer.Option(
            "--export",
            help="Write the pages into this folder (opened from disk, no server) instead of "
            "serving them.",
        ),
    ] = None,
    host: Annotated[str, typer.Option(help="Address to serve on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port to serve on.")] = 8765,
) -> None:
    """Browse the results store: the runs (filtered by case, outcome, comparison, candidate,
    harness, model, days, batch), one run (verdict, hidden tests, side effects with their
    events, transcript, diff beside gold, model calls, cost), the comparisons and the
    batches."""
    from replay.cli.results import _case_files
    from replay.view import Source, export_site, make_app
    from replay.view.export import check_target

    if export is not None:
        check_target(export)
    files, _shown = _case_files(cases)
    source = Source.open(ctx.obj.db, files)
    try:
        if export is not None:
            with PageCount(out, quiet_for=QUIET_FOR, every=PLAIN_EVERY) as count:
                done = export_site(source, export, count)
            out.print(
                f"wrote {done.runs} run page(s), {done.comparisons} comparison page(s) and "
                f"{done.batches} batch page(s): open {done.index}",
                markup=False,
            )
            return
        import uvicorn

        out.print(f"serving http://{host}:{port}/ (Ctrl-C stops)", markup=False)
        uvicorn.run(make_app(source), host=host, port=port, log_level="warning")
    finally:
        source.close()
