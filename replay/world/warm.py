"""A world kept warm across the runs of a batch, reset through its control socket between them.

Starting a world (mitmproxy, the fakes, the registry and docs, in a process of their own) and
stopping it cost seconds, more than everything else a run adds to its harness (the profile in
issue 19). A batch (the K runs of one case and configuration) therefore starts its world once,
and before every run but the first takes it back to the snapshot at T over the control socket,
after waiting until the gateway holds no connection of the previous run (a call still closing
could otherwise land in the next run's log). The reset starts as soon as a run's files are
copied out, in the background, so it overlaps with the run's grading; the next run waits
for it. A world that does not go quiet is stopped and a
fresh one started: never a reused world that may hold a previous run's traffic.

Each run still gets its own files, as a world of its own would leave them: the world's
database (``events.db``: the fakes' tables and the event log, model calls included) copied
with SQLite's backup API once the run's traffic is over, the part of the gateway's log written
during the run (``gateway/gateway.log``), and the gateway's CA (``gateway/conf``).
"""

from __future__ import annotations

import shutil
import sqlite3
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager
from pathlib import Path
from types import TracebackType
from typing import Any, BinaryIO, TypeVar, cast

from replay.base.errors import ReplayError
from replay.world.process import World

T = TypeVar("T")

QUIET_TIMEOUT = 10.0
"""Seconds a warm world may take to close the previous run's connections before it is
replaced by a fresh one."""


class WarmWorld:
    """One snapshot's world, started once and handed to one run at a time.

    ``args`` are further options of ``replay world up`` (``--case``, ``--model-upstream``...),
    the same for every run; the event log's database is the world's own (``workdir/world.db``)
    and is copied to each run's ``events.db``.
    """

    def __init__(
        self,
        snapshot: Path,
        workdir: Path,
        *args: str,
        timeout: float = 60,
        quiet_timeout: float = QUIET_TIMEOUT,
    ) -> None:
        self.snapshot = snapshot
        self.quiet_timeout = quiet_timeout
        self.workdir = workdir
        self.db = workdir / "world.db"
        self.args = args
        self.timeout = timeout
        self._world: World | None = None
        self._used = False
        self._resetting: World | None = None
        """The world a background reset works on (started when a run's files are out)."""
        self._thread: threading.Thread | None = None
        self._failed: ReplayError | None = None
        self.starts = 0
        """How many times a world process was started (for tests and the benchmark)."""
        self.resets = 0

    def gateway(self) -> dict[str, Any] | None:
        """The running world's state (gateway address, CA, variables), which its resets keep;
        None when no world runs (the next run starts one, with another)."""
        world = self._world
        return world.state if world is not None and world.running() else None

    def _start(self) -> World:
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.db.unlink(missing_ok=True)
        world = World(
            self.snapshot,
            self.workdir,
            *self.args,
            "--events-db",
            f"sqlite:///{self.db}",
            timeout=self.timeout,
        )
        world.start()
        self.starts += 1
        self._world, self._used = world, False
        return world

    def _ready(self) -> World:
        """A world at the snapshot's T with nothing of any earlier run in it."""
        world = self._world
        if world is None or not world.running():
            self.stop()
            return self._start()
        if self._used:
            if self._resetting is None:
                self._reset(world)
            self._resetting, failed = None, self._join()
            if failed is not None:
                self.stop()
                return self._start()
            self.resets += 1
            self._used = False
        return world

    def _reset(self, world: World) -> None:
        """Quiet, then back to T; run in the background while the last run is graded."""
        self._failed = None
        try:
            if not world.quiet(self.quiet_timeout):
                raise ReplayError("the gateway still holds the previous run's connections")
            world.reset()
        except ReplayError as exc:
            self._failed = exc

    def _join(self) -> ReplayError | None:
        thread, self._thread = self._thread, None
        if thread is not None:
            thread.join()
        return self._failed

    @contextmanager
    def run(self, gateway_dir: Path, events_db: Path) -> Iterator[World]:
        """The world for one run; when the block ends, the run's files are written:
        ``events_db`` and ``gateway_dir/gateway.log`` and ``gateway_dir/conf``."""
        fresh = self._world is None or not self._world.running()
        world = self._ready()
        log = self.workdir / "gateway.log"
        # A fresh world's run gets the whole log; a reused one's, the banner and its part.
        offset = 0 if fresh or not log.exists() else log.stat().st_size
        self._used = True
        try:
            yield world
        finally:
            code = world.exit_code()
            self._export(world, gateway_dir, events_db, log, offset)
        if code is not None:
            # The gateway and the fakes went away under the run: the agent's calls after
            # that failed, and its writes are missing from the world's end, through no fault
            # of the model's. The run is the infrastructure's (a world killed between the
            # push and gh pr create left a gold run graded model_fail for a missing PR).
            raise WorldDied(f"the world's process ended during the run (status {code})")

    def _export(
        self, world: World, gateway_dir: Path, events_db: Path, log: Path, offset: int
    ) -> None:
        gateway_dir.mkdir(parents=True, exist_ok=True)
        # Every connection of the run closed (its last model call recorded) before the copy.
        if not (world.running() and world.quiet(self.quiet_timeout)):
            # Stopping flushes what the gateway still held; the next run gets a fresh world.
            self.stop()
        if self.db.exists():
            _backup(self.db, events_db)
        if log.exists():
            with log.open("rb") as src, (gateway_dir / "gateway.log").open("wb") as dst:
                if offset:
                    dst.write(_banner(src))
                src.seek(offset)
                shutil.copyfileobj(src, dst)
        conf = self.workdir / "conf"
        if conf.is_dir():
            shutil.copytree(conf, gateway_dir / "conf", dirs_exist_ok=True)
        if self._world is world:
            # The reset needs nothing of the run: it overlaps with the run's grading.
            self._resetting = world
            self._thread = threading.Thread(target=self._reset, args=(world,), daemon=True)
            self._thread.start()

    def stop(self) -> None:
        self._join()
        self._resetting = None
        world, self._world = self._world, None
        if world is not None:
            world.stop()

    def __enter__(self) -> WarmWorld:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


class WorldDied(ReplayError):
    """The world's process ended while a run was using it."""


def _backup(source: Path, dest: Path) -> None:
    """A consistent copy of a live SQLite database (the gateway may still have it open)."""
    dest.unlink(missing_ok=True)
    src = sqlite3.connect(f"file:{source}?mode=ro", uri=True, timeout=30)
    try:
        out = sqlite3.connect(dest)
        try:
            src.backup(out)
        finally:
            out.close()
    finally:
        src.close()


def _banner(log: BinaryIO) -> bytes:
    """What ``replay world up`` printed once it listened (``#`` and ``export`` lines)."""
    lines = []
    for line in log:
        if not line.startswith((b"# ", b"export ")):
            break
        lines.append(line)
    return b"".join(lines)


class WarmPool:
    """Worlds (and what they talk to) kept warm across the batches of one process.

    ``replay run`` with several trajectories runs one batch per case and trajectory; with a
    pool (:func:`keep_warm`) the batches of one case share its world, reset between runs as
    within a batch. One world is kept at a time (batches come case by case): asking for
    another stops it. :meth:`shared` keeps other resources of the same lifetime (the stub
    model's server, whose address the world is started with).
    """

    def __init__(self) -> None:
        self._stack = ExitStack()
        self._shared: dict[str, object] = {}
        self._key: tuple[str, ...] | None = None
        self._world: WarmWorld | None = None
        self._dir: tempfile.TemporaryDirectory[str] | None = None

    def world(self, snapshot: Path, *args: str) -> WarmWorld:
        """The warm world of ``snapshot`` started with ``args``; a new one if they differ."""
        key = (str(snapshot), *args)
        if self._world is None or key != self._key:
            self._close_world()
            self._dir = tempfile.TemporaryDirectory(prefix="replay-w-")
            self._world, self._key = WarmWorld(snapshot, Path(self._dir.name), *args), key
        return self._world

    @property
    def current(self) -> WarmWorld | None:
        """The world kept now, if any."""
        return self._world

    def shared(self, name: str, make: Callable[[], AbstractContextManager[T]]) -> T:
        """The pool's resource ``name``, entered once (from ``make()``) and kept until the
        pool closes."""
        if name not in self._shared:
            self._shared[name] = self._stack.enter_context(make())
        return cast(T, self._shared[name])

    def _close_world(self) -> None:
        world, self._world, self._key = self._world, None, None
        if world is not None:
            world.stop()
        if self._dir is not None:
            self._dir.cleanup()
            self._dir = None

    def close(self) -> None:
        try:
            self._close_world()
        finally:
            self._shared.clear()
            self._stack.close()


_POOL: WarmPool | None = None
_THREAD = threading.local()
"""A pool set for one thread (:func:`use_pool`): a batch's workers each hold their own."""


@contextmanager
def keep_warm() -> Iterator[WarmPool]:
    """Share warm worlds between the batches run inside the block (in this process)."""
    global _POOL
    outer, pool = _POOL, WarmPool()
    _POOL = pool
    try:
        yield pool
    finally:
        _POOL = outer
        pool.close()


@contextmanager
def use_pool(pool: WarmPool) -> Iterator[WarmPool]:
    """Run the block in this thread with ``pool`` (not closed here: the caller keeps it for
    its next run, and closes it). A batch's workers each take a pool of their own, so a
    worker's next run of the same case reuses the world its previous run left, reset."""
    outer = getattr(_THREAD, "pool", None)
    _THREAD.pool = pool
    try:
        yield pool
    finally:
        _THREAD.pool = outer


def warm_pool() -> WarmPool | None:
    """This thread's pool (:func:`use_pool`), else that of the enclosing :func:`keep_warm`
    block, if any."""
    pool: WarmPool | None = getattr(_THREAD, "pool", None)
    return pool if pool is not None else _POOL
