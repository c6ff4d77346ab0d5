"""What a run tells while it runs: the phase it is in (:class:`PhaseDetail`, told to a
:class:`PhaseWatcher` such as the live display) and, during ``agent``, the agent's model
calls so far, read from the world's event log as the gateway records them
(:func:`agent_calls`)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol, runtime_checkable

from replay.gateway.modelcalls import ModelCall
from replay.grade.wire import group_logical_calls


@dataclass(frozen=True)
class PhaseDetail:
    """What the runner tells beside a phase's name (to a :class:`PhaseWatcher`): where the
    run stands in its batch and, during ``agent``, the agent's model calls so far."""

    run: int | None = None
    """The run's place among the batch's :attr:`runs`, from 1 (a run made again after a wire
    failure keeps its place); None before the runs (``images``, ``world``)."""
    runs: int = 1
    """How many runs the batch makes (:attr:`RunOptions.runs`)."""
    turns: int = 0
    """The agent's model calls so far in this run, retries grouped as the grade groups them
    (:func:`replay.grade.wire.group_logical_calls`); 0 outside ``agent``."""
    tokens: int = 0
    """Input and output tokens those calls reported."""


@runtime_checkable
class PhaseWatcher(Protocol):
    """A :attr:`RunOptions.progress` that is told each phase with its :class:`PhaseDetail`
    (the live display), instead of the phase alone; during ``agent``, told the same phase
    again each time the agent's calls so far change."""

    def phase(self, case_id: str, attempt: int | None, name: str, detail: PhaseDetail) -> None:
        """``name`` has started (or, the same name again, its detail changed)."""


CALLS_EVERY = 1.0
"""Seconds between two looks at the agent's model calls while it runs (:func:`agent_calls`)."""


@contextmanager
def agent_calls(
    progress: object, case_id: str, attempt: int, where: PhaseDetail, db: Path
) -> Iterator[None]:
    """While the block runs (the harness), tell a :class:`PhaseWatcher` ``agent`` again each
    time the agent's model calls so far change: the world's event log (``db``, where the
    gateway records each call as it ends) read every :data:`CALLS_EVERY` seconds, and once
    more at the end. Nothing is read for any other ``progress`` (a run's
    :attr:`~replay.run.runner.RunOptions.progress`)."""
    if not isinstance(progress, PhaseWatcher):
        yield
        return
    watcher = progress
    calls = CallsSoFar(db)
    told = PhaseDetail()
    stop = threading.Event()

    def look() -> None:
        nonlocal told
        turns, tokens = calls.look()
        if (turns, tokens) != (told.turns, told.tokens):
            told = replace(where, turns=turns, tokens=tokens)
            watcher.phase(case_id, attempt, "agent", told)

    def watch() -> None:
        while not stop.wait(CALLS_EVERY):
            look()

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
        look()
        calls.close()


class CallsSoFar:
    """The model calls a world's event log holds (``db``, the live database, opened
    read-only), read a little more at each :meth:`look`."""

    def __init__(self, db: Path) -> None:
        from urllib.parse import quote

        from sqlalchemy import create_engine

        self._engine = create_engine(f"sqlite:///file:{quote(str(db))}?mode=ro&uri=true")
        self._seq = 0
        self._calls: list[ModelCall] = []

    def look(self) -> tuple[int, int]:
        """The calls so far, retries grouped as the grade groups them, and their tokens
        (input and output). What cannot be read now (the database busy, not there yet) is
        read at the next look; the grade counts every call anyway."""
        from sqlalchemy import select
        from sqlalchemy.exc import SQLAlchemyError

        from fakes.core.events import EventRow

        query = (
            select(EventRow.seq, EventRow.data)
            .where(EventRow.seq > self._seq, EventRow.kind == "model.call")
            .order_by(EventRow.seq)
        )
        try:
            with self._engine.connect() as conn:
                rows = conn.execute(query).all()
            new = [ModelCall.model_validate(data) for _, data in rows]
        except (SQLAlchemyError, ValueError):
            new = []
        else:
            self._seq = rows[-1][0] if rows else self._seq
        self._calls += new
        tokens = sum(c.usage.input_tokens + c.usage.output_tokens for c in self._calls if c.usage)
        return len(group_logical_calls(self._calls)), tokens

    def close(self) -> None:
        self._engine.dispose()


__all__ = ["CALLS_EVERY", "CallsSoFar", "PhaseDetail", "PhaseWatcher", "agent_calls"]
