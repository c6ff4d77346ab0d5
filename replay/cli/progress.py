"""The live display of the long commands (``run``, ``compare``): which phase is running
(images, world, world reset, sandbox, agent, grading), for which case and run, how long it has
taken so far and how long everything has. On a terminal one line that rich redraws twice a
second; otherwise (a CI log) a plain line as each phase starts, with the elapsed time."""

from __future__ import annotations

import time
from types import TracebackType

from rich.console import Console
from rich.live import Live
from rich.text import Text


class PhaseDisplay:
    """Give it as :attr:`replay.run.runner.RunOptions.progress`; use it as a context."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.label = ""
        self.what = "starting"
        self.started = self.since = time.monotonic()
        self._live: Live | None = None

    def __call__(self, case_id: str, attempt: int | None, phase: str) -> None:
        run = f" run {attempt}" if attempt is not None else ""
        self.what = f"{case_id}{self.label}{run}: {phase}"
        self.since = time.monotonic()
        if self._live is None:
            total = self.since - self.started
            self.console.print(f"[{total:6.1f}s] {self.what}", markup=False, highlight=False)

    def __rich__(self) -> Text:
        now = time.monotonic()
        return Text(
            f"{self.what} ({now - self.since:.0f}s in this phase, {now - self.started:.0f}s in all)"
        )

    def __enter__(self) -> PhaseDisplay:
        self.started = self.since = time.monotonic()
        if self.console.is_terminal:
            self._live = Live(self, console=self.console, refresh_per_second=2, transient=True)
            self._live.__enter__()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._live is not None:
            self._live.__exit__(kind, exc, tb)
            self._live = None
