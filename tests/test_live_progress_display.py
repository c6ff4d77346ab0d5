"""Issue 35 item 2, the display's own part: the agent's turn and tokens during ``agent``, an
estimate of the time left once a run of a known count has finished (nothing before), the
same text on a terminal and, phase by phase only, in a log; and the runner's side of it (the
detail it tells, the model calls it reads from the world's log as the agent runs).

The display's clock is a fake one here: every time below is set, none is waited for."""

from __future__ import annotations

import io
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import pytest
from rich.console import Console
from sqlalchemy import Engine, create_engine, event
from sqlalchemy.orm import Session

from fakes.core.clock import FrozenClock
from fakes.core.events import EventBase, EventLog
from replay.cli import progress
from replay.cli.progress import Pace, PhaseDisplay, span
from replay.gateway.modelcalls import ModelCall, ModelCallObserver, TokenUsage
from replay.run import watch
from replay.run.runner import RunOptions
from replay.run.watch import PhaseDetail, PhaseWatcher


class Clock:
    """``time.monotonic`` for the display, moved by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    fake = Clock()
    monkeypatch.setattr(progress.time, "monotonic", fake)
    return fake


def _plain() -> tuple[Console, io.StringIO]:
    sink = io.StringIO()
    return Console(file=sink, force_terminal=False, width=200), sink


def _terminal() -> tuple[Console, io.StringIO]:
    sink = io.StringIO()
    return Console(file=sink, force_terminal=True, width=200), sink


def _run(n: int, of: int, turns: int = 0, tokens: int = 0) -> PhaseDetail:
    return PhaseDetail(run=n, runs=of, turns=turns, tokens=tokens)


# ----------------------------------------------------------------------------- the estimate


def test_no_estimate_before_a_run_has_finished_then_the_mean_of_the_finished_ones() -> None:
    pace = Pace()
    pace.at(1, 4, now=0.0)
    assert pace.left(now=30.0) is None, "nothing finished: no number"
    pace.at(2, 4, now=40.0)  # run 1 took 40 s
    assert pace.left(now=40.0) == pytest.approx(3 * 40.0)
    assert pace.left(now=50.0) == pytest.approx(3 * 40.0 - 10)
    pace.at(2, 4, now=55.0)  # told again (another phase of the same run): nothing moves
    pace.at(3, 4, now=100.0)  # runs 1 and 2: 100 s, 50 s each
    assert pace.left(now=100.0) == pytest.approx(2 * 50.0)
    assert pace.left(now=199.5) is None, "slower than the mean says: no made-up number"


def test_a_new_batch_starts_a_new_count() -> None:
    pace = Pace()
    pace.at(1, 3, now=0.0)
    pace.at(2, 3, now=10.0)
    pace.at(1, 3, now=50.0)  # back to run 1: the next batch (idle after gold)
    assert pace.left(now=51.0) is None
    pace.at(2, 3, now=70.0)
    assert pace.left(now=70.0) == pytest.approx(2 * 20.0)
    pace.at(1, 5, now=80.0)  # another count altogether
    assert pace.left(now=80.0) is None
    pace.clear()
    assert pace.left(now=90.0) is None


def test_a_span_is_short() -> None:
    assert [span(s) for s in (4.4, 59.4, 60, 185, 3725)] == ["4s", "59s", "1m00s", "3m05s", "1h02m"]


# ----------------------------------------------------------------------------- the display


def test_the_terminal_line_shows_the_agents_turn_and_tokens_and_the_time_left(
    clock: Clock,
) -> None:
    console, _ = _terminal()
    display = PhaseDisplay(console)
    display.label = " [stub:gold]"
    display.started = clock.now
    display.phase("demo-caret-zero", 1, "world reset", _run(1, 3))
    clock.now += 30
    display.phase("demo-caret-zero", 1, "agent", _run(1, 3))
    clock.now += 5
    assert display.line() == (
        "demo-caret-zero [stub:gold] run 1 of 3: agent (5s in this phase, 35s in all)"
    ), "no call yet, no run finished: neither turn nor estimate"
    display.phase("demo-caret-zero", 1, "agent", _run(1, 3, turns=4, tokens=1234))
    clock.now += 7
    assert display.line() == (
        "demo-caret-zero [stub:gold] run 1 of 3: agent, turn 4, 1,234 tokens "
        "(12s in this phase, 42s in all)"
    ), "the same phase told again: its time goes on"
    clock.now += 8
    display.phase("demo-caret-zero", 1, "grading", _run(1, 3))
    clock.now += 10
    display.phase("demo-caret-zero", 2, "world reset", _run(2, 3))  # run 1 took 60 s
    clock.now += 15
    assert display.line() == (
        "demo-caret-zero [stub:gold] run 2 of 3: world reset "
        "(15s in this phase, 75s in all, about 1m45s left)"
    )


def test_a_log_gets_a_line_per_phase_never_one_per_model_call(clock: Clock) -> None:
    console, sink = _plain()
    with PhaseDisplay(console) as display:
        display("demo-caret-zero", None, "images")
        clock.now += 2
        display.phase("demo-caret-zero", 1, "agent", _run(1, 2))
        for turn in range(1, 6):
            clock.now += 1
            display.phase("demo-caret-zero", 1, "agent", _run(1, 2, turns=turn, tokens=100 * turn))
        clock.now += 1
        display.phase("demo-caret-zero", 1, "grading", _run(1, 2))
        clock.now += 12
        display.phase("demo-caret-zero", 2, "world reset", _run(2, 2))
    assert sink.getvalue().splitlines() == [
        "[   0.0s] demo-caret-zero: images",
        "[   2.0s] demo-caret-zero run 1 of 2: agent",
        "[   8.0s] demo-caret-zero run 1 of 2: grading (agent: 5 turns, 500 tokens)",
        "[  20.0s] demo-caret-zero run 2 of 2: world reset (about 18s left)",
    ]


def test_on_a_terminal_the_live_line_is_redrawn_and_no_line_is_printed(clock: Clock) -> None:
    console, sink = _terminal()
    with PhaseDisplay(console) as display:
        display.phase("demo-caret-zero", 1, "sandbox", _run(1, 1))
        clock.now += 3
        display.phase("demo-caret-zero", 1, "agent", _run(1, 1))
        display.phase("demo-caret-zero", 1, "agent", _run(1, 1, turns=2, tokens=50))
        assert display._live is not None
        display._live.refresh()
        drawn = sink.getvalue()
    assert "demo-caret-zero run 1: agent, turn 2, 50 tokens (0s in this phase, 3s in all)" in drawn
    assert "[   0.0s]" not in drawn and "[   3.0s]" not in drawn, "no plain lines"
    assert "\x1b[" in drawn, "drawn by rich's live display, with the terminal's controls"


def test_a_run_made_again_and_a_resumed_batch_say_both_numbers(clock: Clock) -> None:
    console, sink = _plain()
    display = PhaseDisplay(console)
    display.phase("c", 5, "agent", _run(2, 3))
    display.phase("c", 1, "agent", _run(1, 1))
    display.phase("c", 1, "sandbox", None)
    assert [line.split("] ", 1)[1] for line in sink.getvalue().splitlines()] == [
        "c run 5 (2 of 3): agent",
        "c run 1: agent",
        "c run 1: sandbox",
    ]


def test_the_commands_own_count_leads_and_makes_the_estimate(clock: Clock) -> None:
    """``harness matrix``: batches of one run each, counted by the command."""
    console, sink = _plain()
    display = PhaseDisplay(console)
    display.started = clock.now
    for n, name in enumerate(["reference", "litellm"], 1):
        display.label = f" [{name}, stub:gold]"
        display.counter = (n, 4)
        display.phase("demo", None, "images", None)
        clock.now += 30
        display.phase("demo", 1, "agent", _run(1, 1))
        clock.now += 10
    assert [line.split("] ", 1)[1] for line in sink.getvalue().splitlines()] == [
        "[1/4] demo [reference, stub:gold]: images",
        "[1/4] demo [reference, stub:gold] run 1: agent",
        "[2/4] demo [litellm, stub:gold]: images (about 2m00s left)",
        "[2/4] demo [litellm, stub:gold] run 1: agent",
    ]
    clock.now += 5
    assert display.line() == (
        "[2/4] demo [litellm, stub:gold] run 1: agent "
        "(15s in this phase, 85s in all, about 1m15s left)"
    )


def test_between_batches_the_last_ones_estimate_is_not_shown(clock: Clock) -> None:
    console, sink = _plain()
    display = PhaseDisplay(console)
    display.phase("c", 1, "world reset", _run(1, 2))
    clock.now += 20
    display.phase("c", 2, "world reset", _run(2, 2))
    clock.now += 20
    display.phase("c", None, "images", PhaseDetail())
    assert sink.getvalue().splitlines()[-1].endswith("c: images")


def test_case_creates_steps_still_reach_it_as_three_arguments(clock: Clock) -> None:
    console, sink = _plain()
    display = PhaseDisplay(console)
    display("shapes-area", None, "history: reading the fix")
    display("shapes-area", None, "history: reading the fix")  # told twice: one line
    display("shapes-area", None, "environment: building")
    assert len(sink.getvalue().splitlines()) == 2


# ----------------------------------------------------------------------------- the runner's side


def test_the_display_is_a_watcher_and_a_plain_callable_keeps_its_three_arguments() -> None:
    assert isinstance(PhaseDisplay(_plain()[0]), PhaseWatcher)
    told: list[tuple[object, ...]] = []
    plain = RunOptions(progress=lambda *args: told.append(args))
    plain.phase("c", 1, "agent", PhaseDetail(run=1, turns=3))
    plain.phase("c", None, "images")
    assert told == [("c", 1, "agent"), ("c", None, "images")]

    @dataclass
    class Watcher:
        seen: list[tuple[object, ...]] = field(default_factory=list)

        def __call__(self, case_id: str, attempt: int | None, phase: str) -> None:
            raise AssertionError("a watcher is told through phase()")

        def phase(self, case_id: str, attempt: int | None, name: str, d: PhaseDetail) -> None:
            self.seen.append((case_id, attempt, name, d))

    watcher = Watcher()
    detailed = RunOptions(progress=watcher)
    detailed.phase("c", None, "world")
    detailed.phase("c", 2, "agent", PhaseDetail(run=2, runs=3, turns=1, tokens=9))
    assert watcher.seen == [
        ("c", None, "world", PhaseDetail()),
        ("c", 2, "agent", PhaseDetail(run=2, runs=3, turns=1, tokens=9)),
    ]


def _world_db(path: Path) -> Engine:
    """A world's database as ``replay world up`` keeps it: a file in write-ahead-log mode."""
    engine = create_engine(f"sqlite:///{path}")

    @event.listens_for(engine, "connect")
    def wal(conn: object, _record: object) -> None:
        conn.execute("PRAGMA journal_mode=WAL")  # type: ignore[attr-defined]

    EventBase.metadata.create_all(engine)
    return engine


def _call(key: str, t: float, tokens: tuple[int, int] | None, failed: bool = False) -> ModelCall:
    obs = ModelCallObserver()
    obs.begin("POST", "https://api.openai.com/v1/chat/completions", {}, key.encode(), t)
    call = obs.error("reset", "x", t + 1)  # a template; what matters is set below
    usage = None if tokens is None else TokenUsage(input_tokens=tokens[0], output_tokens=tokens[1])
    return call.model_copy(
        update={
            "error_class": "reset" if failed else None,
            "verdict": "transport_fail" if failed else "ok",
            "status": None if failed else 200,
            "usage": usage,
        }
    )


def _record(engine: Engine, *calls: ModelCall) -> None:
    log = EventLog(FrozenClock(datetime(2025, 1, 1, tzinfo=UTC)))
    with Session(engine) as s, s.begin():
        # Not a model call: not counted.
        data = {"url": "https://docs.test/p", "host": "docs.test"}
        log.record(
            s, service="docs", kind="docs.miss", actor=None, object_type="page", object_id="p",
            data=data,
        )  # fmt: skip
        for c in calls:
            log.record(
                s, service="model", kind="model.call", actor=None, object_type="model_call",
                object_id=c.request_id, data=c.model_dump(),
            )  # fmt: skip


@pytest.fixture
def world_db(tmp_path: Path) -> Iterator[tuple[Path, Engine]]:
    (tmp_path / "a world?#1").mkdir()  # what a URI would otherwise misread
    path = tmp_path / "a world?#1" / "world.db"
    engine = _world_db(path)
    yield path, engine
    engine.dispose()


def test_the_calls_so_far_are_read_from_the_live_log_as_the_grade_counts_them(
    world_db: tuple[Path, Engine],
) -> None:
    path, engine = world_db
    calls = watch.CallsSoFar(path)
    try:
        assert calls.look() == (0, 0)
        _record(engine, _call("a", 1, None, failed=True), _call("a", 3, (100, 20)))
        assert calls.look() == (1, 120), "a retry is the same turn"
        _record(engine, _call("b", 5, (300, 4)), _call("c", 7, None))
        assert calls.look() == (3, 424)
        assert calls.look() == (3, 424), "read again: nothing counted twice"
    finally:
        calls.close()


def test_a_log_not_there_yet_is_no_call_and_no_error(tmp_path: Path) -> None:
    calls = watch.CallsSoFar(tmp_path / "missing.db")
    try:
        assert calls.look() == (0, 0)
    finally:
        calls.close()


def test_the_agent_phase_is_told_again_as_its_calls_come(
    world_db: tuple[Path, Engine], monkeypatch: pytest.MonkeyPatch
) -> None:
    path, engine = world_db
    monkeypatch.setattr(watch, "CALLS_EVERY", 0.01)
    seen: list[PhaseDetail] = []
    arrived = threading.Event()

    class Watcher:
        def __call__(self, case_id: str, attempt: int | None, phase: str) -> None:
            raise AssertionError("a watcher is told through phase()")

        def phase(self, case_id: str, attempt: int | None, name: str, d: PhaseDetail) -> None:
            assert (case_id, attempt, name) == ("c", 2, "agent")
            seen.append(d)
            arrived.set()

    options = RunOptions(progress=Watcher())
    where = PhaseDetail(run=2, runs=3)
    with watch.agent_calls(options.progress, "c", 2, where, path):
        _record(engine, _call("a", 1, (10, 5)))
        # Told while the agent still runs, not only at its end.
        assert arrived.wait(60), "the first call was never told"
        _record(engine, _call("b", 2, (20, 5)))
    assert seen[0] == PhaseDetail(run=2, runs=3, turns=1, tokens=15)
    assert seen[-1] == PhaseDetail(run=2, runs=3, turns=2, tokens=40)
    assert len(seen) == 2, "told when the calls change, not at every look"


def test_nothing_is_read_for_a_plain_progress(tmp_path: Path) -> None:
    made: list[Path] = []
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(watch, "CallsSoFar", made.append)
        for options in (RunOptions(progress=lambda *a: None), RunOptions()):
            with watch.agent_calls(options.progress, "c", 1, PhaseDetail(), tmp_path / "world.db"):
                pass
    assert made == []
