"""The runtime interface: containers behind one API, providers registered by name.

A provider (Docker first, :mod:`replay.runtime.docker`) creates containers from a
:class:`ContainerSpec`, runs commands in them, copies files in and out as tar, stops and
removes them, commits them to images, and collects what dead runs left behind. Every
container, network and volume a provider makes carries :data:`RUN_LABEL` naming its run and
:data:`OWNER_LABEL` naming the process that owns the run, so that :func:`Runtime.gc` can tell
leftovers of a runner that died (even by SIGKILL) from the containers of a live one.
"""

from __future__ import annotations

import os
import socket
from abc import ABC, abstractmethod
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar, Literal, TypeVar

from replay.base.errors import ReplayError
from replay.runtime.bounded import CopyReport

RUN_LABEL = "replay.run"
"""The run a resource belongs to."""
OWNER_LABEL = "replay.owner"
"""``<pid>@<host>`` of the process that owns the run."""
OWNER_START_LABEL = "replay.owner.start"
"""The owner's start time (``/proc/<pid>/stat`` field 22), so a reused pid is not mistaken
for a live owner."""
ROOT_LABEL = "replay.root"
"""The run root (:func:`run_root`) of the process that made the resource. Garbage
collection takes only what dead runners of its own run root left, as it does for run
directories (which live under that root): two run roots sharing one engine (two
installations, or a batch given a root of its own) never collect each other's leftovers. A
resource without the label (made before it existed) counts as of every root."""


def run_root() -> Path:
    """Where run directories live: ``$REPLAY_RUN_ROOT`` or ``/tmp/replay-runs``.

    Kept short: a Unix socket's path must fit in 108 bytes.
    """
    return Path(os.environ.get("REPLAY_RUN_ROOT", "/tmp/replay-runs"))


LimitName = Literal["cpu", "memory", "pids", "wall_time", "disk", "inodes"]
"""A limit a run can hit. CPU is a quota (the container is throttled, never stopped), so
``cpu`` never appears as the limit a run hit; it is listed for completeness of the set.
``disk`` and ``inodes``: a bounded volume (:class:`Scratch`) filled up; its writers got
ENOSPC, and the container goes on running (so the final diff can still be taken)."""


class SandboxError(ReplayError):
    """The container runtime failed (an infrastructure failure, not the agent's)."""


class UnknownProviderError(ReplayError):
    """No runtime provider is registered under the name asked for."""


@dataclass(frozen=True)
class Limits:
    """Resource limits of one container; ``None`` means unlimited."""

    cpus: float | None = 2.0
    """CPU quota in cores (throttles, never stops)."""
    memory: int | None = 4 * 1024**3
    """Memory in bytes (swap included); going over it gets a process OOM-killed and the run
    stopped. Pages a container writes into its tmpfs volumes (``disk``, ``scratch``) count
    here too: keep ``memory`` above ``disk + 2 * scratch`` plus what the processes need, or a
    full disk shows up as an OOM kill (``memory``) before it shows up as ENOSPC."""
    pids: int | None = 1024
    """How many processes and threads may exist at once; a failed fork stops the run."""
    wall_time: float | None = None
    """Seconds from the container's start (or its last ``restart_deadline()``) until it is
    stopped. Enforced while a command runs (``exec`` stops the container at the deadline) and
    reported by ``limit_hit()``."""
    disk: int = 2 * 1024**3
    """Bytes of a confined sandbox's workspace (a tmpfs volume; see :class:`Scratch`).
    Content the workspace starts with counts towards it, but not towards ``memory``."""
    inodes: int = 200_000
    """Files, directories and symlinks the workspace may hold."""
    scratch: int = 512 * 1024**2
    """Bytes of each of a confined sandbox's other writable places, ``/tmp`` and ``$HOME``."""
    scratch_inodes: int = 50_000
    """Inodes of each of ``/tmp`` and ``$HOME``."""


@dataclass(frozen=True)
class Mount:
    """A host path bind-mounted into the container."""

    source: Path
    target: str
    read_only: bool = True


@dataclass(frozen=True)
class Scratch:
    """A writable, size-bounded volume (tmpfs) of one container, gone with the container.

    Writing past ``size`` bytes or ``inodes`` files fails with ENOSPC, and the container's
    ``limit_hit()`` says ``disk`` or ``inodes``. With ``seed``, the image's content at
    ``target`` is copied in before the container starts (owned by ``owner``, and with
    ``mtime`` given, every copied file's modification time set to it).
    """

    target: str
    size: int
    inodes: int
    owner: tuple[int, int] = (0, 0)
    """uid and gid of the volume's root (and, with ``seed``, of everything copied in)."""
    mode: int = 0o755
    """The volume root's permissions (``0o1777`` for a /tmp)."""
    seed: bool = False
    mtime: float | None = None
    """With ``seed``: the modification time (epoch seconds) every copied file gets."""


@dataclass(frozen=True)
class ContainerSpec:
    """Everything a provider needs to create one container."""

    image: str
    command: Sequence[str]
    env: Mapping[str, str] = field(default_factory=dict)
    mounts: Sequence[Mount] = ()
    workdir: str | None = None
    limits: Limits = field(default_factory=Limits)
    labels: Mapping[str, str] = field(default_factory=dict)
    """Extra labels; the provider adds the run and owner labels itself."""
    network: Literal["none"] = "none"
    """Only ``none`` (loopback alone) exists: the way out is the gateway bridge."""
    name: str | None = None
    read_only: bool = False
    """Mount the image's root filesystem read-only: only ``scratch`` volumes and read-write
    ``mounts`` can be written."""
    scratch: Sequence[Scratch] = ()


@dataclass(frozen=True)
class ExecResult:
    """What one command run in a container did."""

    exit_code: int | None
    """``None`` when the command never finished (its container was stopped)."""
    stdout: bytes
    """Its standard output as kept (at most the cap, see :attr:`stdout_cut`); empty when it
    was streamed to a file (``exec(stdout_file=...)``)."""
    stderr: bytes
    """Its standard error, the same way."""
    duration: float
    """Seconds from start to end."""
    timed_out: bool = False
    """The exec's own timeout expired and the command was killed."""
    limit: LimitName | None = None
    """The container limit the run hit, if any; the container was stopped."""
    stdout_cut: int = 0
    """Bytes of standard output cut out of its middle at the cap (a marker stands there);
    0 when all of it was kept."""
    stderr_cut: int = 0
    """The same for standard error."""

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out and self.limit is None

    @property
    def cut(self) -> int:
        """Bytes of output cut at the caps, both streams together."""
        return self.stdout_cut + self.stderr_cut

    @property
    def out(self) -> str:
        return self.stdout.decode(errors="replace")

    @property
    def err(self) -> str:
        return self.stderr.decode(errors="replace")


@dataclass(frozen=True)
class Owner:
    """The process that owns a run: alive means the same pid started at the same time."""

    pid: int
    host: str
    start: str

    @classmethod
    def current(cls) -> Owner:
        return cls(os.getpid(), socket.gethostname(), process_start(os.getpid()) or "")

    @classmethod
    def from_labels(cls, labels: Mapping[str, str]) -> Owner | None:
        pid, _, host = labels.get(OWNER_LABEL, "").partition("@")
        if not pid.isdigit() or not host:
            return None
        return cls(int(pid), host, labels.get(OWNER_START_LABEL, ""))

    def labels(self) -> dict[str, str]:
        return {OWNER_LABEL: f"{self.pid}@{self.host}", OWNER_START_LABEL: self.start}

    def alive(self) -> bool:
        """Whether the owner still runs. An owner on another host is assumed alive."""
        if self.host != socket.gethostname():
            return True
        return process_start(self.pid) == self.start and self.start != ""


def process_start(pid: int) -> str | None:
    """A process's start time in clock ticks since boot, or ``None`` if it does not exist or
    has ended (a zombie nobody reaped yet: a SIGKILLed runner whose parent has not waited)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses: split after its last ')'.
    fields = stat.rpartition(")")[2].split()
    if len(fields) <= 19 or fields[0] in ("Z", "X"):
        return None
    return fields[19]


def run_labels(run_id: str, owner: Owner | None = None) -> dict[str, str]:
    """The labels every resource of run ``run_id`` carries."""
    return {RUN_LABEL: run_id, **(owner or Owner.current()).labels(), ROOT_LABEL: str(run_root())}


IMAGE_KIND_LABEL = "replay.image"
"""Set on every image the project builds: ``base``, ``env`` or ``harness``."""
ENV_IMAGE_LABEL = "replay.env"
"""On a harness image: the ID of the environment image it was built on."""


@dataclass(frozen=True)
class GcReport:
    """What :meth:`Runtime.gc` removed, by kind, and the runs it kept because they live."""

    containers: list[str] = field(default_factory=list)
    networks: list[str] = field(default_factory=list)
    volumes: list[str] = field(default_factory=list)
    run_dirs: list[str] = field(default_factory=list)
    images: list[str] = field(default_factory=list)
    kept_runs: list[str] = field(default_factory=list)
    kept_images: list[str] = field(default_factory=list)
    """Stale images still in use by a container (a live run), left in place."""


class Container(ABC):
    """One container made by a provider."""

    id: str
    run_id: str

    @abstractmethod
    def exec(
        self,
        command: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        workdir: str | None = None,
        timeout: float | None = None,
        user: str | None = None,
        stdin: bytes | None = None,
        cap: int | None = None,
        stdout_file: Path | None = None,
        stderr_file: Path | None = None,
    ) -> ExecResult:
        """Run a command as ``user`` (``uid:gid`` or a name; the image's user when ``None``);
        capture its output. Stops the container if it hits a limit (but ``disk``/``inodes``,
        which its writers see as ENOSPC). ``stdin``, when given, is the command's standard
        input, then end of file (no input at all when ``None``): a file handed in with the
        command costs no copy of its own.

        Of each output stream at most ``cap`` bytes are kept (the runtime's
        :attr:`~replay.runtime.bounded.Caps.exec_output` when ``None``), the cut counted in
        the result and marked (``[replay: ... cut here ...]``): standard output held in memory
        keeps its head (a data channel: a tar, records, a diff), standard error its head and
        its tail. ``stdout_file``/``stderr_file`` stream that output to a host file instead of
        memory, head and tail (the result's bytes are then empty)."""

    @abstractmethod
    def copy_in(
        self,
        source: Path,
        dest: str,
        *,
        owner: tuple[int, int] | None = None,
        mtime: float | None = None,
    ) -> None:
        """Copy a host file or directory into the directory ``dest`` (as a tar stream).

        ``owner`` (uid, gid) and ``mtime`` (epoch seconds) replace the host's on everything
        copied; the host's are kept when ``None``."""

    @abstractmethod
    def copy_out(
        self, source: str, dest: Path, *, cap: int | None = None, file_only: bool = False
    ) -> CopyReport:
        """Copy a path of the container into the host directory ``dest``, within bounds
        (:func:`replay.runtime.bounded.extract`): only regular files and directories are made,
        at most ``cap`` bytes written (the runtime's ``Caps.copy`` when ``None``), each file cut
        past it with a marker; links, devices and FIFOs are skipped, never followed. With
        ``file_only``, nothing is written unless ``source`` is a regular file. A path that does
        not exist, or a container that cannot be read, raises :class:`SandboxError`; what
        the stream holds never does (see the report)."""

    @abstractmethod
    def logs(self) -> bytes:
        """The main command's output so far."""

    @abstractmethod
    def wait_for_output(self, marker: bytes, timeout: float) -> bool:
        """Block until the main command's output holds ``marker`` (True), it ends without it
        or ``timeout`` seconds pass (False)."""

    @abstractmethod
    def status(self) -> str:
        """``created``, ``running``, ``exited``... or ``removed``."""

    @abstractmethod
    def stop(self, timeout: float = 5) -> None:
        """Stop the container (SIGTERM, then SIGKILL after ``timeout``)."""

    @abstractmethod
    def remove(self) -> None:
        """Remove the container (stopping it first); idempotent."""

    @abstractmethod
    def limit_hit(self) -> LimitName | None:
        """The limit the container has hit so far, if any."""

    @abstractmethod
    def restart_deadline(self) -> None:
        """Count the wall-time limit from now (a sandbox started ahead of its agent's turn)."""

    @abstractmethod
    def commit(self, repository: str, tag: str, changes: Sequence[str] = ()) -> str:
        """Save the container's filesystem as an image; returns its ID (``sha256:...``)."""


class Runtime(ABC):
    """A container runtime provider."""

    name: ClassVar[str]

    @abstractmethod
    def create(self, spec: ContainerSpec, run_id: str) -> Container:
        """Create and start a container for run ``run_id``."""

    @abstractmethod
    def image_id(self, reference: str) -> str | None:
        """The ID of a local image, or ``None`` if there is none by that reference."""

    @abstractmethod
    def image_labels(self, reference: str) -> dict[str, str]:
        """The labels of a local image (empty if it does not exist)."""

    @abstractmethod
    def images(self, labels: Mapping[str, str]) -> list[str]:
        """The local images carrying every one of ``labels``: a tag of each (its ID if none)."""

    @abstractmethod
    def gc(
        self,
        *,
        everything: bool = False,
        runs: Collection[str] | None = None,
        images: bool = False,
        owners: Collection[str] | None = None,
    ) -> GcReport:
        """Remove the resources of runs whose owner is gone (all of them with ``everything``).

        ``runs`` restricts the collection to these run IDs, ``owners`` to the runs of these
        processes (``pid@host``, as in :data:`OWNER_LABEL`; a resuming batch names the dead
        processes that held its runs). With ``images``, also the
        project's own images nothing can use any more: environment images a rebuild
        replaced, and harness images built on an environment image that is no longer current.
        """

    def data_root(self) -> Path | None:
        """Where the engine keeps images and containers, when that is a directory of this
        machine (``replay doctor`` checks its free space); None when unknown or elsewhere."""
        return None

    def close(self) -> None:  # noqa: B027 (optional hook)
        """Release the provider's client connection."""


R = TypeVar("R", bound=type[Runtime])
PROVIDERS: dict[str, type[Runtime]] = {}


def provider(name: str) -> Callable[[R], R]:
    """Register a runtime class under ``name``."""

    def register(cls: R) -> R:
        cls.name = name
        PROVIDERS[name] = cls
        return cls

    return register
