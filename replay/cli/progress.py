"""The live display of the long commands (``run``, ``compare``, ``case create``, ``case
calibrate``, ``harness matrix``): which phase is running (images, world, world reset, sandbox,
agent, grading), for which case and run, during ``agent`` the agent's turn (its model calls so
far) and tokens, how long the phase and everything have taken, and, once a run of a known
count has finished, about how long is left. On a terminal one line that rich redraws twice a
second; otherwise (a CI log) a plain line as each phase starts, never one per model call."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING

from rich.console import Console
from rich.live import Live
from rich.text import Text

if TYPE_CHECKING:
    from replay.run.watch import PhaseDetail


class Pace:
    """Time left from the steps finished so far: the steps still to come (the current one
    included) at the mean time of the finished ones, less what the current one has taken.

    Told as each step starts (:meth:`at`); a step numbered lower than the current one, or
    out of another total, starts a new count.
    """

    def __init__(self) -> None:
        self.total = 0
        """How many steps there are; 0 while nothing is counted."""
        self.position = 0
        """The current step, from 1."""
        self._first = 0
        """The step the count began at."""
        self._began = 0.0
        """When :attr:`_first` started (``time.monotonic()``)."""
        self._current = 0.0
        """When the current step started."""

    def at(self, position: int, total: int, now: float) -> None:
        """Step ``position`` of ``total`` is running (told at its start and then again)."""
        if total == self.total and position == self.position:
            return
        if total != self.total or position < self.position:
            self.total, self._first, self._began = total, position, now
        self.position, self._current = position, now

    def clear(self) -> None:
        """Nothing is counted (between two counts: no estimate)."""
        self.total = self.position = 0

    def left(self, now: float) -> float | None:
        """Seconds left, about; None before a step has finished, or when the current one
        has already taken longer than the mean says is left (no number is better than a
        made-up one)."""
        finished = self.position - self._first
        if not self.total or finished < 1:
            return None
        mean = (self._current - self._began) / finished
        left = mean * (self.total - self.position + 1) - (now - self._current)
        return left if left >= 1 else None


@dataclass(frozen=True)
class _Agent:
    """The agent's model calls so far (from :class:`~replay.run.runner.PhaseDetail`)."""

    turns: int = 0
    tokens: int = 0

    def words(self) -> str:
        """``turn 4, 1,234 tokens``, as the agent runs; empty before its first call."""
        if not self.turns:
            return ""
        return f"turn {self.turns}" + self._tokens()

    def summary(self) -> str:
        """``agent: 4 turns, 1,234 tokens``, once it has ended; empty if it made no call."""
        if not self.turns:
            return ""
        return f"agent: {self.turns} turn{'s' if self.turns > 1 else ''}" + self._tokens()

    def _tokens(self) -> str:
        return f", {self.tokens:,} tokens" if self.tokens else ""


def span(seconds: float) -> str:
    """``45s``, ``3m05s``, ``1h02m``."""
    whole = round(seconds)
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m{whole % 60:02d}s"
    return f"{whole // 3600}h{whole % 3600 // 60:02d}m"


class PhaseDisplay:
    """Give it as :attr:`replay.run.runner.RunOptions.progress`; use it as a context.

    It is a :class:`replay.run.runner.PhaseWatcher` (told each phase with its detail, and
    ``agent`` again as the agent's calls come), and a plain ``(case id, attempt, phase)``
    callable for whatever tells it phases alone (``case create``'s steps).
    """

    def __init__(self, console: Console) -> None:
        self.console = console
        self.label = ""
        """Said after the case id (`` [stub:gold]``, `` [arm B: idle]``)."""
        self.counter: tuple[int, int] | None = None
        """The command's own count, (this one, of how many), when it makes many batches of
        one run (``harness matrix``): said first (``[3/12]``), and the estimate counts it
        instead of the runs of a batch."""
        self.what = "starting"
        self.started = self.since = time.monotonic()
        self._key: tuple[str, str, int | None, str] | None = None
        self._agent = _Agent()
        self._pace = Pace()
        self._lock = threading.Lock()
        self._live: Live | None = None

    def __call__(self, case_id: str, attempt: int | None, phase: str) -> None:
        self.phase(case_id, attempt, phase, None)

    def phase(
        self, case_id: str, attempt: int | None, name: str, detail: PhaseDetail | None
    ) -> None:
        """``name`` has started; told it again (the same case, run and phase), only its
        detail is new: the agent's calls so far."""
        now = time.monotonic()
        agent = _Agent(detail.turns, detail.tokens) if detail is not None else _Agent()
        with self._lock:
            key = (case_id, self.label, attempt, name)
            if key == self._key:
                self._agent = agent
                return
            ended = self._agent if self._key is not None and self._key[3] == "agent" else _Agent()
            self._key, self._agent, self.since = key, agent, now
            step = self._pace.position
            self._count(detail, now)
            counter = f"[{self.counter[0]}/{self.counter[1]}] " if self.counter else ""
            self.what = f"{counter}{case_id}{self.label}{_run(attempt, detail)}: {name}"
            # A log says the time left as each run (or counted step) starts, not at each phase.
            left = self._pace.left(now) if self._pace.position != step else None
        if self._live is None:
            notes = [ended.summary()] if ended.turns else []
            notes += [f"about {span(left)} left"] if left is not None else []
            more = f" ({'; '.join(notes)})" if notes else ""
            line = f"[{now - self.started:6.1f}s] {self.what}{more}"
            self.console.print(line, markup=False, highlight=False)

    def _count(self, detail: PhaseDetail | None, now: float) -> None:
        if self.counter is not None:
            self._pace.at(*self.counter, now)
        elif detail is not None and detail.run is not None:
            self._pace.at(detail.run, detail.runs, now)
        else:
            self._pace.clear()  # between batches: the last one's count says nothing here

    def line(self) -> str:
        """What the terminal shows now."""
        now = time.monotonic()
        with self._lock:
            doing = self.what
            if self._agent.turns:
                doing += f", {self._agent.words()}"
            times = f"{now - self.since:.0f}s in this phase, {now - self.started:.0f}s in all"
            left = self._pace.left(now)
        if left is not None:
            times += f", about {span(left)} left"
        return f"{doing} ({times})"

    def __rich__(self) -> Text:
        return Text(self.line())

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


def _run(attempt: int | None, detail: PhaseDetail | None) -> str:
    """`` run 2``; `` run 2 of 3`` in a batch of 3 (`` run 5 (2 of 3)`` where the batch
    continues earlier runs: a resumed comparison, a run made again)."""
    if attempt is None:
        return ""
    if detail is None or detail.run is None or detail.runs < 2:
        return f" run {attempt}"
    if detail.run == attempt:
        return f" run {attempt} of {detail.runs}"
    return f" run {attempt} ({detail.run} of {detail.runs})"
