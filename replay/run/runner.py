"""``replay run``: replay a case end to end, K times, and grade every run.

One run: the world (fakes, registry, docs, gateway) at the snapshot's T (one process per
batch, reset between its runs: :mod:`replay.world.warm`), the case's
environment image with the harness put in its own prefix, the harness run in a sandbox whose
only way out is the gateway, the final diff taken, the hidden tests run in a fresh container
without network, and the event log judged. Everything lands in the run's directory and in
the results store.
"""

from __future__ import annotations

import json
import os
import posixpath
import shutil
import tempfile
import threading
import time
import traceback
import uuid
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from replay.base.case import Case, LoadedCase, case_digest, read_case
from replay.base.errors import ReplayError
from replay.base.events import Event
from replay.base.outcomes import Outcome
from replay.base.snapshot import Snapshot
from replay.grade import Grade, RunToGrade, grade_run
from replay.grade.hidden_tests import GradingBox
from replay.harness.install import HarnessImage, ensure_harness_image, needs_image
from replay.harness.spec import PREFIX, HarnessSpec, load_harness
from replay.harness.transcript import write_uniform
from replay.images.audit import image_leaks_cached
from replay.images.base import ensure_case_base_image
from replay.images.env import EnvImage, build_env_image, cached_env_image
from replay.results import GradeRow, RunRow, Store
from replay.run.crash import CRASH_FILE, crash_grade, write_cuts
from replay.run.prices import PriceTable, load_prices
from replay.run.task import render_task
from replay.run.watch import PhaseDetail, PhaseWatcher, agent_calls
from replay.runtime import get_runtime
from replay.runtime.base import Limits, Mount, Owner, Runtime
from replay.runtime.bounded import Caps
from replay.runtime.sandbox import (
    AGENT_GID,
    AGENT_UID,
    AGENT_USER,
    ROOT,
    Sandbox,
    SandboxConfig,
)
from replay.snapshot import load_snapshot
from replay.snapshot.audit import audit_cached
from replay.world import World
from replay.world.warm import WarmWorld, warm_pool

RUN_FILES = "/tmp/replay-run"


class RunError(ReplayError):
    """A case cannot be run at all (a leaking snapshot, a missing image...)."""


@dataclass(frozen=True)
class RunOptions:
    harness: str = "reference"
    model: str = "gpt-4.1"
    runs: int = 1
    model_upstream: str | None = None
    """Send the model route here (a provider-compatible server) instead of the real API."""
    stub: str | None = None
    """Play this stub trajectory (gold, cheat, reckless, asks, idle) as the model."""
    stub_faults: tuple[str, ...] = ()
    """Wire faults for the stub, as ``KIND=RATE`` or ``KIND=every:N``."""
    stub_seed: int = 0
    stub_think_seconds: float = 0.0
    """Seconds the stub waits before each answer (a model that thinks: I/O-bound runs)."""
    harness_env: dict[str, str] = field(default_factory=dict)
    """Extra variables for the harness (e.g. REPLAY_MODEL_RETRIES=0)."""
    out: Path = Path(".replay") / "runs"
    db: str | None = None
    runtime: str = "docker"
    clock: bool = False
    wire_retries: int = 0
    """Replay a run spoiled by the wire (transport_fail) up to this many more times; the
    spoiled runs stay in the results, in the reliability figures, never in quality."""
    prices: Path | None = None
    """A price table (USD per million tokens); the built-in one when None."""
    candidate: str | None = None
    """The ``replay compare`` candidate the runs are made for (stored with each run)."""
    first_attempt: int = 1
    """The attempt number of the first run (a comparison resuming its runs continues it)."""
    caps: Caps = field(default_factory=Caps.from_env)
    """How much of what the sandbox sends back is kept (the harness's output, its transcript,
    the diff); ``REPLAY_CAP_*`` in the environment by default."""
    progress: Callable[[str, int | None, str], None] | None = field(default=None, compare=False)
    """Told each phase as it starts: (case id, attempt or None before the runs, phase):
    ``images``, ``world``, then per run ``world reset``, ``sandbox``, ``agent``, ``grading``
    (the live display of ``replay run`` and ``compare``). One that is a
    :class:`PhaseWatcher` is told them through :meth:`PhaseWatcher.phase`, with their
    :class:`PhaseDetail`."""

    def phase(
        self, case_id: str, attempt: int | None, name: str, detail: PhaseDetail | None = None
    ) -> None:
        progress = self.progress
        if isinstance(progress, PhaseWatcher):
            progress.phase(case_id, attempt, name, detail or PhaseDetail())
        elif progress is not None:
            progress(case_id, attempt, name)

    @property
    def model_label(self) -> str:
        """What the results call the model: the stub's trajectory, or the model's name."""
        return f"stub:{self.stub}" if self.stub else self.model


@dataclass(frozen=True)
class RunResult:
    run_id: str
    case_id: str
    attempt: int
    outcome: Outcome
    reason: str
    run_dir: Path
    grade: Grade
    crashed: str | None = None
    """The runner's traceback when the run crashed it (recorded as ``infra_fail``)."""


# ----------------------------------------------------------------------------- many runs


def run_case(case_file: LoadedCase | Path, options: RunOptions) -> list[RunResult]:
    """Replay the case ``options.runs`` times; every run graded and stored.

    The case is read once (from its file, when given a path) and handed to every run.
    """
    loaded = case_file if isinstance(case_file, LoadedCase) else read_case(case_file)
    case = loaded.case
    snapshot = load_snapshot(case.snapshot)
    # The full audit, the answer included; cached by the snapshot's and case's hashes.
    leaks = audit_cached(case.snapshot, case)
    if leaks:
        raise RunError(f"{case.snapshot}: the snapshot leaks: {leaks[0]}")
    spec, spec_dir = load_harness(options.harness)
    runtime = get_runtime(options.runtime)
    store = Store.open(options.db)
    results: list[RunResult] = []
    try:
        options.phase(case.id, None, "images")
        ensure_case_base_image(runtime, case.environment)
        with ExitStack() as stack:
            env = _env_image(case, runtime, stack)
            # The harness as it is today, in its own prefix on top of the env image.
            harness = (
                ensure_harness_image(runtime, spec, spec_dir, env.id) if needs_image(spec) else None
            )
            # The images the sandbox is made of must not hold the answer either.
            images = [env.id] + ([harness.id] if harness is not None else [])
            found = image_leaks_cached(case, runtime, images)
            if found:
                raise RunError(
                    f"{case.id}: the sandbox's image holds the answer: {found[0]}"
                    + (f" (and {len(found) - 1} more)" if len(found) > 1 else "")
                    + "; `replay case audit` lists them and proposes a clean base image"
                )
            upstream = options.model_upstream
            if options.stub is not None:
                upstream = stack.enter_context(_stub_model(case, snapshot, spec, options))
            # One world for the batch, reset between its runs (see replay.world.warm); within
            # keep_warm(), the batches of one case share it too.
            args = _world_args(loaded, options, upstream)
            options.phase(case.id, None, "world")
            pool = warm_pool()
            if pool is not None:
                world = pool.world(case.snapshot, *args)
            else:
                tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="replay-w-")))
                world = stack.enter_context(WarmWorld(case.snapshot, tmp, *args))
            ctx = RunContext(
                case=loaded,
                snapshot=snapshot,
                spec=spec,
                spec_dir=spec_dir,
                env=env,
                harness=harness,
                runtime=runtime,
                store=store,
                options=options,
                upstream=upstream,
                prices=load_prices(options.prices),
                world=world,
            )
            attempt = options.first_attempt - 1
            ahead: _Ahead | None = None

            def unused() -> None:
                """A sandbox started ahead for a run that never came (a run failed)."""
                if ahead is not None:
                    ahead.discard()

            stack.callback(unused)
            for index in range(options.runs):
                for _retry in range(options.wire_retries + 1):
                    attempt += 1
                    # Every run but the batch's last starts the next run's sandbox while it
                    # is graded (see _Ahead).
                    result, ahead = run_once(
                        replace(ctx, attempt=attempt, place=index + 1),
                        ahead,
                        more=index < options.runs - 1,
                    )
                    results.append(result)
                    if result.outcome != Outcome.TRANSPORT_FAIL:
                        break
    finally:
        store.close()
        runtime.close()
    return results


def _env_image(case: Case, runtime: Runtime, stack: ExitStack) -> EnvImage:
    cached = cached_env_image(case, runtime)
    if cached is not None:
        return cached  # no world to start: nothing is built
    tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="replay-env-world-")))
    # The image is built through a world of its own: its setup is not part of any run's log.
    with World(case.snapshot, tmp) as world:
        return build_env_image(case, runtime, world.state)


STUB_GATEWAY_DEADLINE = 15.0
"""Seconds the gateway waits on the stub model (first byte, and between chunks) in stub
runs: shorter than every harness's client timeout, longer than any answer of the stub's."""


@contextmanager
def _stub_model(
    case: Case, snapshot: Snapshot, spec: HarnessSpec, options: RunOptions
) -> Iterator[str]:
    from replay.harness.stub.app import StubConfig, make_stub_app
    from replay.harness.stub.faults import Fault
    from replay.run.trajectories import build_script

    script = spec.stub.apply(build_script(case, snapshot, options.stub or "gold"))
    config = StubConfig(
        script=script,
        faults=[Fault.parse(f) for f in options.stub_faults],
        seed=options.stub_seed,
        think_seconds=options.stub_think_seconds,
        hold_seconds=2 * STUB_GATEWAY_DEADLINE,
    )
    pool = warm_pool()
    with ExitStack() as stack:
        # Within keep_warm() one server (one address, so one warm world) serves every batch.
        server = (
            pool.shared("stub-model", _StubServer)
            if pool is not None
            else stack.enter_context(_StubServer())
        )
        server.app = make_stub_app(config)
        try:
            yield server.url
        finally:
            server.app = None


class _StubServer:
    """The stub model's server on loopback, serving the stub app of the current batch."""

    def __init__(self) -> None:
        self.app: Any = None
        self.url = ""
        self._server: Any = None
        self._thread: threading.Thread | None = None

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        app = self.app
        if app is None:
            raise RuntimeError("no stub model is being served")
        await app(scope, receive, send)

    def __enter__(self) -> _StubServer:
        import socket

        import uvicorn

        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        self._server = uvicorn.Server(uvicorn.Config(self, log_level="warning", lifespan="off"))
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [sock]}, daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + 60
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RunError("the stub model's server did not start")
            time.sleep(0.01)
        self.url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(10)


# ----------------------------------------------------------------------------- one run


@dataclass(frozen=True)
class RunContext:
    """What one run needs, gathered once per case and configuration by :func:`run_case`.

    The runs of a case share all of it but their :attr:`attempt`.
    """

    case: LoadedCase
    """The case, read once, and its file (the world's gateway reads the case's people)."""
    snapshot: Snapshot
    """The world at T the case names."""
    spec: HarnessSpec
    """The candidate harness."""
    spec_dir: Path
    """The directory the spec's ``install.files`` are relative to."""
    env: EnvImage
    """The case's environment image."""
    harness: HarnessImage | None
    """The harness's own image on top of :attr:`env`; None for one that only copies files."""
    runtime: Runtime
    store: Store
    """The results store every run is recorded in."""
    options: RunOptions
    """The run's configuration: model, stub trajectory and faults, where run directories go."""
    upstream: str | None
    """Where the gateway sends model calls (the stub, a compatible server); None: the
    provider's own API."""
    prices: PriceTable
    """The price table every run's cost is read from (read once per batch)."""
    attempt: int = 1
    """1-based index of the run among the runs of this case and configuration."""
    place: int = 1
    """1-based place of the run among the batch's ``options.runs`` (:attr:`PhaseDetail.run`)."""
    world: WarmWorld | None = None
    """The batch's world, reset before each of its runs; None: a world for this run alone."""

    @property
    def limits(self) -> Limits:
        """The sandbox's limits: the case's wall-time budget, and time to wind down."""
        return Limits(wall_time=self.case.case.budgets.wall_time_s + 120)


def _owner() -> str:
    """This process as a run's owner, ``pid@host#start`` (see ``RunRow.owner``)."""
    me = Owner.current()
    return f"{me.pid}@{me.host}#{me.start}"


def run_once(
    ctx: RunContext, ahead: _Ahead | None = None, *, more: bool = False
) -> tuple[RunResult, _Ahead | None]:
    """One run: the world at T, the harness in a sandbox, its diff and events, the grade.

    ``ahead``: this run's sandbox, started while the previous run was graded (its run id and
    directory are this run's). With ``more``, another run follows: its sandbox is started
    while this one is graded, and returned beside the result.

    Whatever the run raises (a bug, a store that failed, input no reader expected) ends this
    run only: it is recorded as ``infra_fail`` with its error (:func:`_crashed`) and returned
    like any other run, so the runs after it go on.
    """
    case, options = ctx.case.case, ctx.options
    if ahead is not None:
        run_id, run_dir = ahead.run_id, ahead.run_dir
    else:
        run_id = uuid.uuid4().hex
        run_dir = (options.out / case.id / run_id).resolve()
    clock = time.monotonic()
    following: list[_Ahead] = []
    try:
        if ahead is None:
            run_dir.mkdir(parents=True)
        result = _run_once(ctx, run_id, run_dir, clock, ahead, following, more)
    except Exception as exc:
        for upcoming in following:
            upcoming.discard()
        return _crashed(ctx, run_id, run_dir, clock, exc), None
    return result, following[0] if following else None


def _run_once(
    ctx: RunContext,
    run_id: str,
    run_dir: Path,
    clock: float,
    ahead: _Ahead | None,
    following: list[_Ahead],
    more: bool,
) -> RunResult:
    case, spec, env, options = ctx.case.case, ctx.spec, ctx.env, ctx.options
    model = options.model_label
    started = datetime.now(UTC)
    ctx.store.add_run(
        RunRow(
            id=run_id,
            case_id=case.id,
            case_digest=case_digest(ctx.case),
            harness=spec.name,
            candidate=options.candidate,
            model=model,
            attempt=ctx.attempt,
            started_at=started,
            run_dir=str(run_dir),
            image_digest=env.id,
            owner=_owner(),
        )
    )
    # The grading container is made and readied while the world resets and the harness runs
    # (nothing of the agent's goes in before its diff; the agent cannot reach it).
    grading = GradingBox(ctx.runtime, env.id, case, f"{run_id}-grade").prepare_in_background()
    removals: list[threading.Thread] = []
    try:
        return _run_and_grade(
            ctx, run_id, run_dir, clock, grading, ahead, following, more, removals
        )
    except BaseException:
        for upcoming in following:
            upcoming.discard()
        following.clear()
        raise
    finally:
        if ahead is not None:
            ahead.release()
        grading.close()
        for removal in removals:
            removal.join()


def _crashed(
    ctx: RunContext, run_id: str, run_dir: Path, clock: float, exc: Exception
) -> RunResult:
    """Record a run that crashed the runner as ``infra_fail`` with its error: ``crash.txt``
    (the traceback), ``grade.json`` and the results store's rows, each as far as it can be
    written (a failure to write one is added to ``crash.txt``, never raised)."""
    case, spec, options = ctx.case.case, ctx.spec, ctx.options
    trace = "".join(traceback.format_exception(exc))
    problems: list[str] = []
    events: list[Event] = []
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
        events = _events(run_dir)
    except Exception as more:  # the log itself may be what broke
        problems.append(f"reading the event log: {type(more).__name__}: {more}")
    grade = crash_grade(
        run_id=run_id,
        case_id=case.id,
        attempt=ctx.attempt,
        harness=spec.name,
        model=options.model_label,
        image=ctx.env.id,
        harness_image=ctx.harness.id if ctx.harness else None,
        error=f"{type(exc).__name__}: {exc}",
        events=events,
        seconds=time.monotonic() - clock,
        prices=ctx.prices,
    )
    try:
        (run_dir / "grade.json").write_text(grade.to_json())
    except OSError as more:
        problems.append(f"writing grade.json: {more}")
    try:
        _record_crash(ctx, run_id, run_dir, grade)
    except Exception as more:
        problems.append(f"recording it in the results store: {type(more).__name__}: {more}")
    try:
        text = trace + "".join(f"\nand then, {p}" for p in problems)
        (run_dir / CRASH_FILE).write_text(text, encoding="utf-8", errors="backslashreplace")
    except OSError:
        pass  # nowhere left to write: the result below still carries it
    return RunResult(
        run_id, case.id, ctx.attempt, grade.outcome, grade.reason, run_dir, grade, crashed=trace
    )


def _record_crash(ctx: RunContext, run_id: str, run_dir: Path, grade: Grade) -> None:
    """The crashed run's rows: its run (made if it never was), its grade (replacing one the
    run recorded before it crashed) and its end."""
    store, case = ctx.store, ctx.case.case
    with store.session() as s:
        known = s.get(RunRow, run_id) is not None
    if not known:
        store.add_run(
            RunRow(
                id=run_id,
                case_id=case.id,
                case_digest=case_digest(ctx.case),
                harness=ctx.spec.name,
                candidate=ctx.options.candidate,
                model=ctx.options.model_label,
                attempt=ctx.attempt,
                started_at=datetime.now(UTC),
                run_dir=str(run_dir),
                image_digest=ctx.env.id,
                owner=_owner(),
            )
        )
    hidden = case.hidden_tests
    store.record_grade(
        GradeRow.from_grade(
            grade,
            fail_to_pass_total=len(hidden.fail_to_pass),
            pass_to_pass_total=len(hidden.pass_to_pass),
        ),
        outcome=grade.outcome,
        replace=True,
    )
    store.finish_run(
        run_id,
        wall_time_s=grade.seconds.total,
        stopped_by=None,
        input_tokens=grade.tokens.input,
        output_tokens=grade.tokens.output,
        model_calls=grade.wire.logical_calls,
        cost_usd=grade.cost_usd,
    )


def _new_run_dir(options: RunOptions, case: Case, run_id: str) -> Path:
    run_dir = (options.out / case.id / run_id).resolve()
    run_dir.mkdir(parents=True)
    return run_dir


def _sandbox_config(ctx: RunContext, run_id: str, run_dir: Path, first: bool) -> SandboxConfig:
    """The sandbox of run ``run_id``; ``first``: the batch's first run (it collects garbage)."""
    case, spec, options, harness = ctx.case.case, ctx.spec, ctx.options, ctx.harness
    return SandboxConfig(
        image=harness.id if harness else ctx.env.id,
        run_id=run_id,
        workdir=case.environment.workdir,
        limits=ctx.limits,
        clock_at=case.at if options.clock else None,
        labels={"replay.base.case": case.id},
        # Leftovers of dead runners are collected once per batch, before its first run.
        collect_garbage=first,
        # The root filesystem is read-only: files of a harness without an image of
        # its own come in as a read-only mount of the run directory's copy.
        mounts=_harness_files(spec, ctx.spec_dir, run_dir, case.at if options.clock else None)
        if harness is None
        else (),
    )


def _open_sandbox(
    ctx: RunContext, gateway: dict[str, Any], run_id: str, run_dir: Path, first: bool
) -> Sandbox:
    """Run ``run_id``'s sandbox, started, its workspace and task prepared for the agent."""
    box = Sandbox(ctx.runtime, gateway, _sandbox_config(ctx, run_id, run_dir, first)).start()
    try:
        _prepare(box, ctx.case.case, ctx.snapshot, run_dir)
    except BaseException:
        box.close()
        raise
    return box


class _Ahead:
    """The next run's sandbox, started and prepared in a thread while this run is graded.

    Starting a sandbox (its bounded volumes seeded by a keeper, its container, the bridge) and
    preparing the workspace is the largest part of a run's own time after the hidden tests
    (the profile in issue 19); none of it depends on the run before: the sandbox is made from
    the image, like any run's, and the agent of the previous run never sees it (its own
    sandbox is gone before this starts). It only needs the world's gateway (address, CA,
    variables), the same for every run of a warm world: a world replaced in between (it did
    not go quiet) has another, and the sandbox is then discarded and a fresh one started, as
    it is when starting ahead failed (the run then meets that failure itself).
    """

    def __init__(self, ctx: RunContext, gateway: dict[str, Any]) -> None:
        self.run_id = uuid.uuid4().hex
        self.run_dir = _new_run_dir(ctx.options, ctx.case.case, self.run_id)
        self.gateway = gateway
        self.ca = Path(str(gateway["ca_bundle"])).read_bytes()
        self._box: Sandbox | None = None
        self._thread = threading.Thread(target=self._open, args=(ctx,), daemon=True)
        self._thread.start()

    def _open(self, ctx: RunContext) -> None:
        try:
            self._box = _open_sandbox(ctx, self.gateway, self.run_id, self.run_dir, first=False)
        except BaseException:
            self._box = None  # the run starts its own, and meets the failure itself

    def take(self, gateway: dict[str, Any]) -> Sandbox | None:
        """The sandbox, if it was made for this gateway (address, variables and CA)."""
        self._thread.join()
        box, self._box = self._box, None
        if box is not None:
            same_ca = Path(str(gateway["ca_bundle"])).read_bytes() == self.ca
            if gateway != self.gateway or not same_ca:
                box.close()
                box = None
        return box

    def release(self) -> None:
        """Remove the sandbox unless a run took it (its run ended before it could)."""
        box = self.take(self.gateway)
        if box is not None:
            box.close()

    def discard(self) -> None:
        """Remove the sandbox and the directory of the run that never came."""
        self.release()
        shutil.rmtree(self.run_dir, ignore_errors=True)


def _run_and_grade(
    ctx: RunContext,
    run_id: str,
    run_dir: Path,
    clock: float,
    grading: GradingBox,
    ahead: _Ahead | None,
    following: list[_Ahead],
    more: bool,
    removals: list[threading.Thread],
) -> RunResult:
    case, spec = ctx.case.case, ctx.spec
    env, harness, runtime, store = ctx.env, ctx.harness, ctx.runtime, ctx.store
    options, upstream, attempt = ctx.options, ctx.upstream, ctx.attempt
    model = options.model_label
    infra: list[str] = []
    harness_exit: int | None = None
    harness_ended: float | None = None
    stopped_by: str | None = None
    diff = ""
    harness_seconds = 0.0
    where = PhaseDetail(run=ctx.place, runs=options.runs)
    try:
        gateway_dir = run_dir / "gateway"
        gateway_dir.mkdir()
        with ExitStack() as own:
            warm = ctx.world
            if warm is None:
                world_dir = Path(own.enter_context(tempfile.TemporaryDirectory(prefix="replay-w-")))
                warm = own.enter_context(
                    WarmWorld(case.snapshot, world_dir, *_world_args(ctx.case, options, upstream))
                )
            options.phase(case.id, attempt, "world reset", where)
            world = own.enter_context(warm.run(gateway_dir, run_dir / "events.db"))
            options.phase(case.id, attempt, "sandbox", where)
            box = None if ahead is None else ahead.take(world.state)
            if box is None:
                first = attempt == options.first_attempt
                box = _open_sandbox(ctx, world.state, run_id, run_dir, first)
            try:
                argv = spec.argv(
                    task=f"{RUN_FILES}/task.md",
                    workdir=case.environment.workdir,
                    transcript=f"{RUN_FILES}/{spec.transcript}",
                    model=options.model,
                )
                box.agent_turn()
                options.phase(case.id, attempt, "agent", where)
                started_harness = time.monotonic()
                caps = options.caps
                # Its output goes straight to the run's files, each within its cap.
                with agent_calls(options.progress, case.id, attempt, where, warm.db):
                    result = box.exec(
                        argv,
                        workdir=case.environment.workdir,
                        env={**spec.environment(options.model), **options.harness_env},
                        timeout=case.budgets.wall_time_s,
                        user=AGENT_USER,
                        cap=caps.harness_output,
                        stdout_file=run_dir / "stdout.txt",
                        stderr_file=run_dir / "stderr.txt",
                    )
                harness_seconds = time.monotonic() - started_harness
                harness_ended = time.time()
                harness_exit = result.exit_code
                cuts = {"stdout.txt": result.stdout_cut, "stderr.txt": result.stderr_cut}
                stopped_by = result.limit or ("wall_time" if result.timed_out else None)
                native = f"{RUN_FILES}/{spec.transcript}"
                cuts[spec.transcript] = _copy_out(box, native, run_dir, caps)
                _uniform_transcript(spec, run_dir)
                diff = _final_diff(box, case, run_dir, cuts=cuts, cap=caps.exec_output)
                (run_dir / "diff.patch").write_text(diff)
                write_cuts(run_dir, caps, cuts)
            finally:
                # Cut off at once (before the world takes the run's log); its containers and
                # volumes are removed while the run is graded.
                removals.append(box.close_in_background())
    except ReplayError as exc:
        infra.append(f"sandbox: {exc}")
    gateway = None if ctx.world is None else ctx.world.gateway()
    if more and gateway is not None:
        # This run's sandbox is cut off; the next run's is started while this one is graded.
        following.append(_Ahead(ctx, gateway))
    options.phase(case.id, attempt, "grading", where)
    events = _events(run_dir)
    return _grade(
        RunToGrade(
            case=case,
            run_id=run_id,
            run_dir=run_dir,
            attempt=attempt,
            harness=spec.name,
            model=model,
            image=env.id,
            harness_image=harness.id if harness else None,
            events=events,
            diff=diff,
            infra_errors=infra,
            harness_exit=harness_exit,
            exit_codes=spec.exit_codes,
            own_egress=spec.own_egress,
            stopped_by=stopped_by,
            harness_seconds=harness_seconds,
            started=clock,
            grading=grading,
            removals=removals,
            harness_model=options.model,
            harness_ended=harness_ended,
        ),
        runtime,
        store,
        ctx.prices,
    )


def _world_args(case: LoadedCase, options: RunOptions, upstream: str | None) -> list[str]:
    """The options of ``replay world up`` every run of a batch shares."""
    args = ["--case", str(case.path)]
    if upstream:
        args += ["--model-upstream", upstream]
    if options.stub is not None:
        # The gateway gives up on the stub before any harness's client does (the reference
        # harness waits 120 s, litellm and the SDKs 600 s), so a held call is the provider's
        # timeout (transport), never a call the agent abandoned.
        deadline = str(STUB_GATEWAY_DEADLINE)
        args += ["--model-first-byte-timeout", deadline, "--model-idle-timeout", deadline]
    return args


def _prepare(box: Sandbox, case: Case, snapshot: Snapshot, run_dir: Path) -> None:
    """The workspace as a teammate's clone, the task on disk; all of it the agent's own.

    Run as the agent (the sandbox's default user): the git config lands in its $HOME, and
    nothing here reads what the agent could have written (it has not run yet).
    """
    assert box.container is not None
    agent = snapshot.github.viewer
    setup = " && ".join(
        [
            f"git remote add origin https://github.com/{case.repository.name}",
            "git config --global credential.helper "
            "'!f() { echo username=x-access-token; echo \"password=$GH_TOKEN\"; }; f'",
            f"git config --global user.name {agent}",
            f"git config --global user.email {agent}@users.noreply.github.com",
            f"mkdir -p {RUN_FILES}",
        ]
    )
    at = None if box.config.clock_at is None else box.config.clock_at.timestamp()
    if at is not None:
        # The kernel dates what these steps wrote with the real time, whatever the clock says.
        setup += (
            f' && find "$HOME" .git {RUN_FILES} -newermt @{at:.0f}'
            f" -exec touch -h -d @{at:.0f} {{}} +"
        )
    done = box.sh(setup, workdir=case.environment.workdir, timeout=60)
    if at is not None and done.ok:
        # /tmp is root's (mode 1777); the agent has not run yet, so this touches only ours.
        done = box.exec(["touch", "-d", f"@{at:.0f}", posixpath.dirname(RUN_FILES)], user=ROOT)
    if not done.ok:
        raise RunError(f"preparing the workspace failed: {done.err[-500:]}")
    task = render_task(case, snapshot)
    (run_dir / "task.md").write_text(task)
    with tempfile.TemporaryDirectory(prefix="replay-stage-") as tmp:
        files = Path(tmp) / posixpath.basename(RUN_FILES)
        files.mkdir()
        (files / "task.md").write_text(task)
        box.container.copy_in(
            files, posixpath.dirname(RUN_FILES), owner=(AGENT_UID, AGENT_GID), mtime=at
        )


def _harness_files(
    spec: HarnessSpec, spec_dir: Path, run_dir: Path, at: datetime | None
) -> list[Mount]:
    """The spec's ``install.files`` under ``run_dir/harness``, mounted read-only at PREFIX."""
    if not spec.install.files:
        return []
    prefix = run_dir / "harness"
    # It may be there: a sandbox started ahead for the run and discarded (see _Ahead).
    prefix.mkdir(mode=0o755, exist_ok=True)
    for dest, src in spec.install.files.items():
        target = prefix / posixpath.relpath(dest, PREFIX)
        target.parent.mkdir(parents=True, exist_ok=True, mode=0o755)
        shutil.copyfile(spec_dir / src, target)
        target.chmod(0o755 if os.access(spec_dir / src, os.X_OK) else 0o644)
    if at is not None:
        for path in [prefix, *prefix.rglob("*")]:
            os.utime(path, (at.timestamp(), at.timestamp()), follow_symlinks=False)
    return [Mount(prefix, PREFIX, read_only=True)]


def _copy_out(box: Sandbox, path: str, dest: Path, caps: Caps | None = None) -> int:
    """The harness's transcript at ``path`` copied into ``dest`` within ``caps.copy``; the
    bytes cut. Only a regular file is copied: anything else there (a directory, a link, a
    FIFO: the agent's doing) is not read and ``transcript-error.txt`` says what it was. A
    transcript the harness never wrote leaves an empty file."""
    assert box.container is not None
    caps = caps or Caps.from_env()
    name = posixpath.basename(path)
    try:
        report = box.container.copy_out(path, dest, cap=caps.copy, file_only=True)
    except ReplayError:
        (dest / name).write_text("")
        return 0
    if report.kind != "file":
        _transcript_error(
            dest, f"{path} is a {report.kind} in the sandbox, not a regular file: not read"
        )
    elif report.files == 0:
        _transcript_error(dest, f"{path} could not be copied: {report.skipped}")
    elif report.error is not None:
        _transcript_error(dest, f"{path} could not be read to its end ({report.error})")
    return sum(report.cut.values())


def _transcript_error(run_dir: Path, why: str) -> None:
    """Add a line to the run's ``transcript-error.txt`` (what of the transcript was not read;
    the run goes on)."""
    with (run_dir / "transcript-error.txt").open(
        "a", encoding="utf-8", errors="backslashreplace"
    ) as fh:
        fh.write(why.rstrip("\n") + "\n")


def _uniform_transcript(spec: HarnessSpec, run_dir: Path) -> None:
    """The run's ``transcript.jsonl`` from the harness's own transcript, when the spec names
    its format. The transcript came from the agent's sandbox: whatever reading it raises is
    noted in ``transcript-error.txt``, never fatal to the run."""
    if spec.transcript_format is None:
        return
    native = run_dir / spec.transcript
    if not native.exists() and (run_dir / "transcript-error.txt").exists():
        return  # not copied out, and the reason is already noted
    try:
        write_uniform(spec.transcript_format, native, run_dir)
    except ReplayError as exc:
        _transcript_error(run_dir, str(exc))
    except Exception as exc:  # any reader's failure on hostile input is the transcript's
        _transcript_error(run_dir, f"{spec.transcript}: {type(exc).__name__}: {exc}")


# The runner's git in the agent's repository: nothing the agent configured may run or change
# what git reads (fsmonitor, hooks such as post-index-change, external diff, textconv, filter
# drivers, a worktree elsewhere), and the repository's owner is not questioned.
SAFE_GIT = (
    "--no-pager",
    *("-c", "safe.directory=*"),
    *("-c", "core.fsmonitor=false"),
    *("-c", "core.hooksPath=/dev/null"),
    *("-c", "diff.external="),
    *("-c", "core.attributesFile=/dev/null"),
    *("-c", "gc.auto=0"),
)


def _final_diff(
    box: Sandbox,
    case: Case,
    run_dir: Path,
    *,
    cuts: dict[str, int] | None = None,
    cap: int | None = None,
) -> str:
    """Everything the agent changed since the base commit, committed or not.

    Taken as the agent (never with more privilege than the agent had), after every process
    of the agent is gone, with the repository's own configuration neutralised (SAFE_GIT and
    every filter driver it names). A repository the agent broke, a sandbox stopped by a
    limit, or a diff larger than ``cap`` (``Caps.exec_output`` by default: a cut diff is no
    diff; counted in ``cuts``) gives an empty diff and a note in ``diff-error.txt``: that is
    the agent's doing, never an infrastructure failure.
    """
    workdir = case.environment.workdir

    def fail(why: str) -> str:
        (run_dir / "diff-error.txt").write_text(
            why + "\n", encoding="utf-8", errors="backslashreplace"
        )
        return ""

    stopped = box.limit_hit()
    if stopped in ("memory", "pids", "wall_time"):
        return fail(f"the sandbox was stopped by its {stopped} limit; no diff was taken")
    tree = ("--git-dir", f"{workdir}/.git", "--work-tree", workdir)
    # kill(-1) as the agent reaches every process of the agent's uid and nothing else; the
    # shell calling it is spared. Twice, for children forked while the first one ran. Then,
    # in the same exec, the filter drivers the repository names. (The exec has no timeout of
    # its own, whose wrapper would be one of the agent's uid's processes, and killed: the
    # listing gets its own after the kill.)
    names = box.exec(
        [
            "sh",
            "-c",
            'kill -KILL -1; kill -KILL -1; exec timeout --kill-after=2 60 "$@"',
            "sh",
            *("git", *SAFE_GIT, *tree, "config", "-z", "--name-only", "--get-regexp"),
            r"^filter\.",
        ],
        workdir=workdir,
        user=AGENT_USER,
    )
    neutral: list[str] = []
    for name in sorted({n.rpartition(".")[0] for n in names.out.split("\0") if n}):
        for key in ("clean", "smudge", "process"):
            neutral += ["-c", f"{name}.{key}="]
        neutral += ["-c", f"{name}.required=false"]
    git = ["git", *SAFE_GIT, *neutral, *tree]
    base = case.repository.base_commit
    # Everything staged, then diffed against the base commit, in one exec; what `add` says
    # only matters if the diff fails.
    result = box.exec(
        [
            "sh",
            "-c",
            '"$@" add -A; exec "$@" diff --cached --binary --no-ext-diff --no-textconv "$0"',
            base,
            *git,
        ],
        workdir=workdir,
        timeout=240,
        user=AGENT_USER,
        cap=cap,
    )
    if result.limit in ("memory", "pids", "wall_time"):
        return fail(f"the sandbox was stopped by its {result.limit} limit while taking the diff")
    if result.exit_code != 0:
        return fail(f"git diff --cached {base} failed ({result.exit_code}): {result.err[-2000:]}")
    if result.stdout_cut:
        if cuts is not None:
            cuts["diff.patch"] = result.stdout_cut
        return fail(
            f"the diff is larger than the cap ({result.stdout_cut} bytes past it; "
            "REPLAY_CAP_EXEC_OUTPUT): graded as no diff"
        )
    return result.out


def _events(run_dir: Path) -> list[Event]:
    from sqlalchemy import create_engine
    from sqlalchemy.orm import Session

    from fakes.core.events import EventLog

    db = run_dir / "events.db"
    if not db.exists():
        return []
    engine = create_engine(f"sqlite:///{db}")
    try:
        with Session(engine) as session:
            events = EventLog.read(session)
    finally:
        engine.dispose()
    with (run_dir / "events.jsonl").open("w") as fh:
        for e in events:
            fh.write(json.dumps(e.document()) + "\n")
    return events


def _grade(run: RunToGrade, runtime: Runtime, store: Store, prices: PriceTable) -> RunResult:
    """Grade the run (:func:`replay.grade.grade_run`) and record the grade in the store."""
    grade = grade_run(run, runtime, prices)
    hidden = run.case.hidden_tests
    store.record_grade(
        GradeRow.from_grade(
            grade,
            fail_to_pass_total=len(hidden.fail_to_pass),
            pass_to_pass_total=len(hidden.pass_to_pass),
        ),
        outcome=grade.outcome,
    )
    store.finish_run(
        grade.run_id,
        wall_time_s=grade.seconds.total,
        stopped_by=grade.stopped_by,
        input_tokens=grade.tokens.input,
        output_tokens=grade.tokens.output,
        model_calls=grade.wire.logical_calls,
        cost_usd=grade.cost_usd,
    )
    return RunResult(
        grade.run_id, grade.case_id, grade.attempt, grade.outcome, grade.reason, run.run_dir, grade
    )
