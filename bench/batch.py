"""Batch throughput at 1, 2 and 4 workers, as a ratio to one worker (issue 20).

The same batch (the demo's ``demo-caret-zero``, the gold stub, :data:`RUNS` runs) is run with
``jobs`` 1, 2 and 4 through :func:`replay.batch.engine.execute` (what ``replay batch run``
calls), each into a results database of its own (a run's key does not name its batch, so a
shared one would find the second batch finished). The stub model thinks :data:`THINK` seconds
before each answer, so a run mostly waits on its model: I/O-bound runs, where more workers
should pay. The goal is ``>= 0.8·N x`` one worker's runs per minute, up to the machine's limit.

The limit is measured, not guessed. During each batch the machine's busy cores
(``/proc/stat``, other users' work included) and available memory (``/proc/meminfo``) are
sampled, and the CPU and resident memory the batch itself used: this process, its children
(the worlds) and its containers (their cgroups, found by the runtime's owner label). The
machine is also sampled for a few seconds before the batches. One worker's batch gives what
one run at a time costs: its own cores, its own memory, its length against the engine's start
spacing. Each resource then allows so many runs at once; the smallest is the limit, named in
the last row beside the machine's busy cores during the 4-worker batch (and said to be
saturated when they reach 90%: more workers then only gain by taking CPU from other work). A
goal beyond the limit is checked at the limit. The Docker daemon's own CPU is not counted (it
serves every user of the machine), so the CPU limit is an upper bound.
"""

from __future__ import annotations

import os
import resource
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from bench.common import ROOT_DIR, Goal, Measured, Pair, suite

if TYPE_CHECKING:
    from replay.batch.engine import Finished
    from replay.batch.plan import PlannedRun
    from replay.run.runner import RunOptions

CASE = ROOT_DIR / "cases" / "demo-caret-zero" / "case.yaml"
RUNS = 12
"""Runs per batch: three rounds at 4 workers, six at 2, twelve at 1 (some six minutes in all
on a quiet machine). With one round per worker each worker would pay a cold world start per
run while one worker reuses its warm world (replay.world.warm): throughput is measured in
steady state, where every worker reuses its own."""
THINK = 3.0
"""Seconds the stub model thinks before each answer (well under the gateway's 15 s): the
gold run of the case makes 4 model calls, 12 s of waiting beside some 15 s of work."""
WORKERS = (1, 2, 4)
STARTS = 1.0
"""Run starts per second at most: ``replay batch run``'s default."""
IDLE_SECONDS = 5.0
"""How long the machine is sampled before the batches."""
SAMPLE_SECONDS = 1.0


# ----------------------------------------------------------------------------- sampling


def cpu_jiffies() -> tuple[int, int]:
    """(busy, total) jiffies of all CPUs since boot, from the first line of /proc/stat."""
    fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    total = sum(fields[:8])  # guest time is already counted in user
    return total - idle, total


def mem_available() -> int:
    """Bytes of memory available for new work (MemAvailable)."""
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("/proc/meminfo has no MemAvailable")


def process_cpu() -> float:
    """CPU seconds of this process and of its children that ended (the worlds' processes,
    the docker commands)."""
    me, children = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return me.ru_utime + me.ru_stime + children.ru_utime + children.ru_stime


def own_containers() -> list[str]:
    """The IDs of the running containers this process started (the runtime's owner label)."""
    from replay.runtime.base import Owner

    ((key, value), *_) = Owner.current().labels().items()
    done = subprocess.run(
        ["docker", "ps", "-q", "--no-trunc", "--filter", f"label={key}={value}"],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.split()


def container_cpu(container: str) -> float | None:
    """A container's CPU seconds so far, from its cgroup (v1 or v2); None once it is gone."""
    v1 = Path(f"/sys/fs/cgroup/cpuacct/docker/{container}/cpuacct.usage")
    for v2 in (
        Path(f"/sys/fs/cgroup/system.slice/docker-{container}.scope/cpu.stat"),
        Path(f"/sys/fs/cgroup/docker/{container}/cpu.stat"),
    ):
        try:
            line = next(ln for ln in v2.read_text().splitlines() if ln.startswith("usage_usec"))
            return int(line.split()[1]) / 1e6
        except (OSError, StopIteration):
            pass
    try:
        return int(v1.read_text()) / 1e9
    except OSError:
        return None


def container_memory(container: str) -> int:
    """A container's resident memory (anonymous pages, not its page cache), bytes; 0 once
    it is gone."""
    for path, key in (
        (f"/sys/fs/cgroup/memory/docker/{container}/memory.stat", "rss"),
        (f"/sys/fs/cgroup/system.slice/docker-{container}.scope/memory.stat", "anon"),
        (f"/sys/fs/cgroup/docker/{container}/memory.stat", "anon"),
    ):
        try:
            stat = dict(ln.split() for ln in Path(path).read_text().splitlines())
        except (OSError, ValueError):
            continue
        return int(stat.get(key, 0))
    return 0


def tree_memory() -> int:
    """Resident memory of this process and all its descendants (the worlds), bytes."""
    parents: dict[int, int] = {}
    rss: dict[int, int] = {}
    page = os.sysconf("SC_PAGE_SIZE")
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text().rpartition(")")[2].split()
            rss[int(entry.name)] = int((entry / "statm").read_text().split()[1]) * page
        except (OSError, IndexError, ValueError):
            continue  # gone meanwhile
        parents[int(entry.name)] = int(stat[1])
    mine = {os.getpid()}
    grew = True
    while grew:
        more = {pid for pid, parent in parents.items() if parent in mine} - mine
        mine |= more
        grew = bool(more)
    return sum(rss.get(pid, 0) for pid in mine)


@dataclass
class Usage:
    """What the machine, and this process's own work, used while a block ran."""

    cores: float = 0.0
    """Average busy CPU cores (every process of the machine, other users' too)."""
    min_available: int = 0
    """The least memory available at any sample, bytes."""
    own_seconds: float = 0.0
    """CPU seconds of this process, its children and its containers."""
    containers: int = 0
    """Containers of this process seen running."""
    unread: int = 0
    """Of those, the ones whose CPU could not be read (no cgroup found)."""
    own_memory: int = 0
    """The most resident memory this process, its descendants and its containers held at
    once (sampled), bytes."""


@contextmanager
def sampled(cores: int) -> Iterator[Usage]:
    """The machine's busy cores and lowest available memory while the block runs, and the
    CPU this process used, its containers' included (sampled each second: a container's last
    second may be missed)."""
    usage = Usage(min_available=mem_available())
    seen: dict[str, float | None] = {}
    stop = threading.Event()

    def take() -> None:
        usage.min_available = min(usage.min_available, mem_available())
        memory = tree_memory()
        for container in own_containers():
            now = container_cpu(container)
            seen[container] = now if now is not None else seen.get(container)
            memory += container_memory(container)
        usage.own_memory = max(usage.own_memory, memory)

    def sample() -> None:
        while not stop.wait(SAMPLE_SECONDS):
            take()

    thread = threading.Thread(target=sample, daemon=True)
    busy0, total0 = cpu_jiffies()
    own0 = process_cpu()
    take()
    thread.start()
    try:
        yield usage
    finally:
        stop.set()
        thread.join()
        take()
        busy1, total1 = cpu_jiffies()
        usage.cores = cores * (busy1 - busy0) / max(total1 - total0, 1)
        usage.containers = len(seen)
        usage.unread = sum(v is None for v in seen.values())
        usage.own_seconds = process_cpu() - own0 + sum(v or 0.0 for v in seen.values())


# ----------------------------------------------------------------------------- batches


@dataclass(frozen=True)
class BatchRun:
    """One batch of the bench."""

    jobs: int
    runs: int
    seconds: float
    usage: Usage
    outcomes: dict[str, int]

    @property
    def per_minute(self) -> float:
        return 60 * self.runs / self.seconds


def run_batches(
    case: Path,
    workers: tuple[int, ...],
    *,
    runs: int,
    think: float,
    starts: float,
    cores: int,
    run: Callable[[PlannedRun, RunOptions], Finished] | None = None,
) -> list[BatchRun]:
    """The same plan once per worker count, each on a fresh batch name and results database.

    ``run`` replaces the real run (see :func:`replay.batch.engine.execute`), for tests."""
    from replay.batch.engine import execute, failures, progress
    from replay.batch.plan import load_plan
    from replay.results import Store
    from replay.run.runner import RunOptions

    done: list[BatchRun] = []
    with tempfile.TemporaryDirectory(prefix="replay-bench-batch-") as tmp_dir:
        tmp = Path(tmp_dir)
        for jobs in workers:
            name = f"bench-{jobs}-workers-{os.getpid()}"
            plan_file = tmp / f"{name}.yaml"
            plan_file.write_text(
                f"schema: 1\nname: {name}\ncases: [{case}]\n"
                f"candidates: [{{name: gold, stub: gold}}]\nruns: {runs}\n"
            )
            plan = load_plan(plan_file)
            db = f"sqlite:///{tmp / name}.db"
            base = RunOptions(out=tmp / name, db=db, stub_think_seconds=think)
            store = Store(db)
            try:
                with sampled(cores) as usage:
                    start = time.perf_counter()
                    result = execute(
                        store,
                        plan,
                        base,
                        jobs=jobs,
                        starts_per_second=starts,
                        run=run,
                    )
                    seconds = time.perf_counter() - start
                after = progress(store, plan)
                why = "; ".join(str(f.error)[:500] for f in failures(store, plan, limit=3))
            finally:
                store.close()
            if after.finished != runs or result.ran != runs:
                raise RuntimeError(
                    f"{name}: ran {result.ran}, finished {after.finished} of {runs}"
                    + (f": {why}" if why else "")
                )
            done.append(BatchRun(jobs, runs, seconds, usage, dict(after.outcomes)))
    return done


# ----------------------------------------------------------------------------- the limit


@dataclass(frozen=True)
class Limit:
    """How many runs at once the machine allows, by the resource that runs out first."""

    runs: float
    resource: str
    detail: str


def machine_limit(idle: Usage, one: BatchRun, *, cores: int, memory: int, starts: float) -> Limit:
    """How many runs at once each resource allows, by what one worker's runs (one run at a
    time) used of it; the smallest wins.

    CPU: the machine's cores over the cores one run at a time kept busy (this process, its
    children and containers: other users of the machine are not counted against the batch).
    Memory: what was available before the batches over the most one run at a time held
    (this process included, its descendants and containers' resident memory; at least
    64 MiB). Docker starts: the engine's start spacing against a run's length.
    ``idle`` is the machine before the batches, ``memory`` its total bytes."""
    per_run_cpu = max(one.usage.own_seconds / one.seconds, 0.01)
    per_run_mem = max(one.usage.own_memory, 64 << 20)
    run_seconds = one.seconds / one.runs
    unread = f"; {one.usage.unread} containers unread" if one.usage.unread else ""
    limits = [
        Limit(
            cores / per_run_cpu,
            "CPU",
            f"{cores} cores, a run at a time kept {per_run_cpu:.2f} busy over "
            f"{one.usage.containers} containers{unread}",
        ),
        Limit(
            idle.min_available / per_run_mem,
            "memory",
            f"{idle.min_available / 2**30:.1f} of {memory / 2**30:.1f} GiB free, "
            f"a run took {per_run_mem / 2**20:.0f} MiB",
        ),
        Limit(
            starts * run_seconds,
            "Docker starts",
            f"{starts:g} run starts/s, a run lasts {run_seconds:.1f}s",
        ),
    ]
    return min(limits, key=lambda lim: lim.runs)


def scaling_goal(jobs: int, limit: float) -> Goal:
    """``>= 0.8·N x`` one worker's throughput, N capped at the machine's limit."""
    target = 0.8 * min(jobs, max(limit, 1.0))
    capped = f" (limit {limit:.1f})" if limit < jobs else ""
    return Goal(f">= {target:.2f}x{capped}", lambda s, b: s >= target * b)


SATURATED = 0.9
"""The share of the machine's cores busy from which its CPU is taken as saturated."""


def saturated(batch: BatchRun, idle: Usage, cores: int) -> str:
    """What to add to the limit when the machine's CPU was full during ``batch``: more
    workers then only gain by taking CPU time from the machine's other work."""
    if batch.usage.cores < SATURATED * cores:
        return ""
    return (
        f"; and the machine's CPU was saturated: {batch.usage.cores:.2f} of {cores} cores busy "
        f"during {batch.jobs} workers, {idle.cores:.2f} before the batches (other work)"
    )


def rows(batches: list[BatchRun], idle: Usage, limit: Limit, *, cores: int) -> list[Measured]:
    """One row per worker count (runs/min against one worker's) and the limit's row."""
    one = batches[0]
    out: list[Measured] = []
    for b in batches:
        outcomes = ", ".join(f"{k} {v}" for k, v in sorted(b.outcomes.items()))
        own = b.usage.own_seconds / b.seconds
        out.append(
            Measured(
                f"batch runs/min, {b.jobs} worker(s) vs 1 ({b.runs} runs)",
                b.per_minute,
                one.per_minute,
                goal=scaling_goal(b.jobs, limit.runs),
                unit="/min",
                spread=f"{b.seconds:.0f}s; cores busy: batch {own:.2f}, "
                f"machine {b.usage.cores:.2f}/{cores}; {outcomes}",
            )
        )
    last = batches[-1]
    out.append(
        Measured(
            f"CPU busy during {last.jobs} workers vs cores (idle: {idle.cores:.2f})",
            last.usage.cores,
            float(cores),
            goal=f"limit: {limit.resource} at {limit.runs:.1f} runs at once ({limit.detail})"
            + saturated(last, idle, cores),
            unit="cores",
        )
    )
    return out


@suite
def batch() -> list[Pair | Measured]:
    cores = os.cpu_count() or 1
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    # A first run outside the timed batches builds the case's images (the first batch would
    # otherwise pay for them) and the audit caches.
    run_batches(CASE, (1,), runs=1, think=0.0, starts=STARTS, cores=cores)
    with sampled(cores) as idle:
        time.sleep(IDLE_SECONDS)
    batches = run_batches(CASE, WORKERS, runs=RUNS, think=THINK, starts=STARTS, cores=cores)
    limit = machine_limit(idle, batches[0], cores=cores, memory=memory, starts=STARTS)
    return [*rows(batches, idle, limit, cores=cores)]
