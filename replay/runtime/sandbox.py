"""The agent's sandbox: a container whose only way out is the gateway.

Design (the network lock):

- The container runs with ``--network none``: it has a loopback interface and nothing else,
  so no address outside it (the host's ports, the Docker bridge, any other namespace, any DNS
  server, anything over IPv6) can be reached, whatever the agent does with sockets. Raw sockets
  fail too (``NET_RAW`` is dropped).
- The one way out is :mod:`replay.runtime.bridge`: a Unix socket in the run's directory on the
  host, forwarded by the runner to the gateway's TCP port; the directory is bind-mounted
  read-only at ``/run/replay``, and the container's main command is a small forwarder from
  ``127.0.0.1:3128`` to that socket. ``HTTPS_PROXY`` and friends point at it. The gateway
  answers what the world holds and denies (403, ``egress.denied``) everything else, CONNECT
  included. No DNS is ever needed: clients hand host names to the proxy.
- The gateway's CA is the only trusted root: it is mounted over the system bundle
  (``/etc/ssl/certs/ca-certificates.crt``) and named by the usual variables (``SSL_CERT_FILE``,
  ``REQUESTS_CA_BUNDLE``, ``PIP_CERT``, ``GIT_SSL_CAINFO``, ``NODE_EXTRA_CA_CERTS``...).
- With ``clock_at`` set, libfaketime shifts every process's clock so that it reads T plus the
  time elapsed since the sandbox started (an offset fixed at start, so all processes agree),
  and the files placed in the sandbox (the workspace, $HOME, the run's files) carry T as
  their modification time. What it does not cover is listed in the README ("The frozen
  clock"): statically linked programs (``gh``, Go), ``env -u LD_PRELOAD``, and every time the
  kernel keeps itself (new files' mtimes, ctimes, /proc/uptime, boot time). The gateway's
  certificates are valid from long before any T, so TLS works under the clock.

Confinement (``confined``, the default; image builds turn it off): commands run as the
unprivileged :data:`AGENT_USER` (uid 1000, no capability, ``no-new-privileges``) unless a
caller asks for :data:`ROOT`; the image's root filesystem is read-only; the only writable
places are the workspace, ``$HOME`` (:data:`AGENT_HOME`) and ``/tmp``, each a tmpfs volume
bounded in bytes and inodes (:class:`~replay.runtime.base.Limits`: ``disk``/``inodes`` for
the workspace, ``scratch``/``scratch_inodes`` for the other two), plus Docker's 64 MiB
``/dev/shm``. The workspace starts as the image's, owned by the agent. Pages written to them
count against the memory limit (size ``memory`` above their sum).

Every resource is labelled with the run (see :mod:`replay.runtime.base`); a sandbox whose
runner died is removed by ``replay gc`` or by the next sandbox's start.
"""

from __future__ import annotations

import math
import platform
import shutil
import threading
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from replay.runtime import rundir
from replay.runtime.base import (
    Container,
    ContainerSpec,
    ExecResult,
    LimitName,
    Limits,
    Mount,
    Runtime,
    SandboxError,
    Scratch,
)
from replay.runtime.bridge import FORWARDER_FILE, INNER_PROXY, MOUNT, READY, HostBridge

CA_FILE = "gateway-ca.pem"
CA_INSIDE = f"{MOUNT}/{CA_FILE}"
SYSTEM_BUNDLE = "/etc/ssl/certs/ca-certificates.crt"
CA_VARIABLES = (
    "SSL_CERT_FILE",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
    "PIP_CERT",
    "GIT_SSL_CAINFO",
    "NODE_EXTRA_CA_CERTS",
    "npm_config_cafile",
)
_ARCH = {"x86_64": "x86_64-linux-gnu", "aarch64": "aarch64-linux-gnu", "arm64": "aarch64-linux-gnu"}
AGENT_UID = AGENT_GID = 1000
AGENT_USER = f"{AGENT_UID}:{AGENT_GID}"
"""Who the harness (and every command of a confined sandbox, unless told) runs as; the base
image names it ``agent``."""
AGENT_HOME = "/home/agent"
ROOT = "0:0"
"""Ask :meth:`Sandbox.exec` for root explicitly (the runner's own steps, never the agent's)."""
DEFAULT_WORKDIR = "/workspace"


def faketime_env(at: datetime, now: datetime | None = None) -> dict[str, str]:
    """libfaketime's variables for a clock reading ``at`` now and running on from there."""
    now = now or datetime.now(UTC)
    # Whole seconds, rounded up: the clock never reads before T (rounding to the nearest let
    # a command run at once read up to half a second before it).
    offset = math.ceil((at - now).total_seconds())
    triple = _ARCH.get(platform.machine(), "x86_64-linux-gnu")
    return {
        "LD_PRELOAD": f"/usr/lib/{triple}/faketime/libfaketime.so.1",
        "FAKETIME": f"{offset:+d}",
        # The monotonic clock is shifted by the same constant, so durations stay true. Leaving
        # it unfaked breaks sleeping: Python's time.sleep waits on an absolute monotonic
        # deadline, which libfaketime then reads as faked and answers EINVAL.
        "FAKETIME_DONT_RESET": "1",
    }


def inside_env(gateway: Mapping[str, Any]) -> dict[str, str]:
    """The gateway's client environment, as seen from inside the container."""
    proxy, ca = str(gateway["proxy"]), str(gateway["ca_bundle"])
    env: dict[str, str] = {}
    for key, value in dict(gateway["env"]).items():
        value = str(value)
        if value == proxy:
            value = INNER_PROXY
        elif value == ca:
            value = CA_INSIDE
        env[key] = value
    for key in CA_VARIABLES:
        env[key] = CA_INSIDE
    for key in ("HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy", "ALL_PROXY"):
        env[key] = INNER_PROXY
    env["NO_PROXY"] = env["no_proxy"] = ""
    return env


@dataclass(frozen=True)
class SandboxConfig:
    """One agent sandbox."""

    image: str
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    limits: Limits = field(default_factory=Limits)
    workdir: str | None = None
    clock_at: datetime | None = None
    """Freeze the calendar at this T (plus elapsed time); off by default."""
    env: Mapping[str, str] = field(default_factory=dict)
    mounts: Sequence[Mount] = ()
    labels: Mapping[str, str] = field(default_factory=dict)
    collect_garbage: bool = True
    """Remove leftovers of dead runs before starting."""
    ready_timeout: float = 60
    mount_system_bundle: bool = True
    """Mount the gateway's CA over the system bundle (off when building an image that runs
    ``update-ca-certificates`` itself)."""
    confined: bool = True
    """Run commands as :data:`AGENT_USER`, the root filesystem read-only, the workspace,
    ``$HOME`` and ``/tmp`` bounded (see the module's docstring). Off for image builds, whose
    setup runs as root and whose writes must land in the committed image."""

    @property
    def workspace(self) -> str:
        return self.workdir or DEFAULT_WORKDIR

    @property
    def user(self) -> str | None:
        """Whom commands run as unless a caller says otherwise (``None``: the image's)."""
        return AGENT_USER if self.confined else None


class Sandbox:
    """A container locked to the gateway, and the host side of its bridge."""

    def __init__(self, runtime: Runtime, gateway: Mapping[str, Any], config: SandboxConfig):
        self.runtime = runtime
        self.gateway = gateway
        self.config = config
        self.run_id = config.run_id
        self.container: Container | None = None
        self.bridge: HostBridge | None = None
        self.dir: Path | None = None
        self.image_id: str | None = None
        self.env: dict[str, str] = {}
        """Given to every command (not to the container's config, so a commit keeps none of
        it: the proxy, placeholders and clock belong to a run, not to an image)."""

    def start(self) -> Sandbox:
        cfg = self.config
        if cfg.collect_garbage:
            self.runtime.gc()
        self.image_id = self.runtime.image_id(cfg.image)
        if self.image_id is None:
            raise SandboxError(f"no image {cfg.image!r} here (build it with `replay image`)")
        try:
            self.dir = rundir.create(self.run_id)
            shutil.copyfile(self.gateway["ca_bundle"], self.dir / CA_FILE)
            (self.dir / CA_FILE).chmod(0o644)
            self.bridge = HostBridge(self.dir, str(self.gateway["proxy"])).start()
            self.env = inside_env(self.gateway)
            if cfg.clock_at is not None:
                self.env.update(faketime_env(cfg.clock_at))
            self.env.update(cfg.env)
            mounts = [Mount(self.dir, MOUNT)]
            if cfg.mount_system_bundle:
                mounts.append(Mount(self.dir / CA_FILE, SYSTEM_BUNDLE))
            spec = ContainerSpec(
                image=self.image_id,
                command=["python3", f"{MOUNT}/{FORWARDER_FILE}"],
                mounts=[*mounts, *cfg.mounts],
                workdir=cfg.workdir,
                limits=cfg.limits,
                labels={"replay.role": "agent", **cfg.labels},
                read_only=cfg.confined,
                scratch=self._scratch() if cfg.confined else (),
            )
            self.container = self.runtime.create(spec, self.run_id)
            self._wait_ready(self.container)
        except BaseException:
            self.close()
            raise
        return self

    def _scratch(self) -> list[Scratch]:
        """The workspace, $HOME and /tmp as bounded volumes; with a clock, files dated T."""
        cfg, limits = self.config, self.config.limits
        at = None if cfg.clock_at is None else cfg.clock_at.timestamp()
        agent = (AGENT_UID, AGENT_GID)
        return [
            Scratch(cfg.workspace, limits.disk, limits.inodes, agent, seed=True, mtime=at),
            Scratch(AGENT_HOME, limits.scratch, limits.scratch_inodes, agent, seed=True, mtime=at),
            Scratch("/tmp", limits.scratch, limits.scratch_inodes, (0, 0), mode=0o1777),
        ]

    def _wait_ready(self, container: Container) -> None:
        """Until the forwarder says it listens (woken by its output, not polled)."""
        if not container.wait_for_output(READY, self.config.ready_timeout):
            raise SandboxError(
                f"the sandbox's gateway forwarder did not start: {container.logs()[-2000:]!r}"
            )

    def exec(
        self,
        command: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        workdir: str | None = None,
        timeout: float | None = None,
        user: str | None = None,
        cap: int | None = None,
        stdout_file: Path | None = None,
        stderr_file: Path | None = None,
    ) -> ExecResult:
        """Run ``command`` as ``user`` (the sandbox's :attr:`SandboxConfig.user` by default;
        :data:`ROOT` for the runner's own steps) with the sandbox's environment. ``cap``,
        ``stdout_file`` and ``stderr_file`` bound its output as :meth:`Container.exec`'s do."""
        if self.container is None:
            raise SandboxError("the sandbox is not started")
        user = user or self.config.user
        home = {"HOME": AGENT_HOME} if user == AGENT_USER else {}
        if user == ROOT:
            # Not the agent's $HOME: root must not read config the agent wrote there.
            home = {"HOME": "/root"}
        merged = {**home, **self.env, **(env or {})}
        return self.container.exec(
            command,
            env=merged,
            workdir=workdir,
            timeout=timeout,
            user=user,
            cap=cap,
            stdout_file=stdout_file,
            stderr_file=stderr_file,
        )

    def sh(self, script: str, **kw: Any) -> ExecResult:
        """Run a shell script (``sh -c``)."""
        return self.exec(["sh", "-c", script], **kw)

    def limit_hit(self) -> LimitName | None:
        return None if self.container is None else self.container.limit_hit()

    def agent_turn(self) -> None:
        """The agent's turn starts now: its wall-time limit and its clock (T, running on) are
        counted from here, not from the sandbox's start. A sandbox started ahead, while the
        run before was graded, would otherwise give its agent less time than the first run's
        (the grading's minutes off the limit's margin) and a clock already past T."""
        if self.container is None:
            raise SandboxError("the sandbox is not started")
        self.container.restart_deadline()
        if self.config.clock_at is not None:
            self.env.update(faketime_env(self.config.clock_at))

    def close(self) -> None:
        """Remove the container, stop the bridge, delete the run's directory."""
        if self.container is not None:
            self.container.remove()
            self.container = None
        if self.bridge is not None:
            self.bridge.close()
            self.bridge = None
        if self.dir is not None:
            rundir.remove(self.run_id)
            self.dir = None

    def close_in_background(self) -> threading.Thread:
        """Cut the sandbox off now, remove it in a thread (returned, to be joined).

        Every process in it is killed and its bridge closed at once, so nothing of it can reach
        the world after this returns (the world may then take the run's log and reset); only
        the removal of its containers, volumes and directory, which nothing waits on, is left
        to the thread."""
        if self.container is not None:
            self.container.stop(timeout=0)
        if self.bridge is not None:
            self.bridge.close()
            self.bridge = None
        remover = threading.Thread(target=self.close, daemon=True)
        remover.start()
        return remover

    def __enter__(self) -> Sandbox:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()
