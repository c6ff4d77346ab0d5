"""``replay doctor``: what this machine needs before a run costs anything, checked and told.

Docker Engine (reachable, its version), the base images the cases are built on (and, given
cases, each case's own environment and base image), free disk where runs and images go, the
model key the runner would send, and, when a key is there, whether the provider (or the
``--model-upstream`` given) answers a TCP connection. Each finding is one line with what to
do when it is not ok. Nothing is sent to the provider but a connection attempt, and none is
made without a key.
"""

from __future__ import annotations

import os
import shutil
import socket
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from replay.base.case import load_case
from replay.base.errors import UsageError
from replay.gateway.config import CREDENTIALS
from replay.images.base import RELEASES, base_tag
from replay.images.env import env_reference
from replay.runtime.base import Runtime

LOW_DISK = 10 * 1024**3
"""Free bytes under which a disk is reported: an environment image and a run's files take
several GiB together."""
CONNECT_TIMEOUT = 5.0


@dataclass(frozen=True)
class Finding:
    ok: bool
    what: str
    detail: str
    fix: str | None = None

    def line(self) -> str:
        mark = "ok  " if self.ok else "FIX "
        todo = f": {self.fix}" if self.fix and not self.ok else ""
        return f"{mark} {self.what}: {self.detail}{todo}"


def check_docker(runtime: Runtime | None, error: str | None) -> Finding:
    if runtime is None:
        return Finding(
            False,
            "docker",
            f"Docker Engine cannot be reached ({error})",
            "start it (systemctl start docker) or set DOCKER_HOST",
        )
    return Finding(True, "docker", "Docker Engine answers")


def check_images(runtime: Runtime, cases: Sequence[Path]) -> list[Finding]:
    """The base image of every release; with cases, each case's base and environment image."""
    found = []
    wanted = {base_tag(r): f"replay image base --release {r.name}" for r in RELEASES}
    for path in cases:
        case = load_case(path)
        base = case.environment.base_image
        wanted.setdefault(base, f"replay image base for {base} (case create names it)")
        env = env_reference(case)
        present = runtime.image_id(env) is not None
        found.append(
            Finding(
                present,
                f"image {env}",
                "built" if present else "not built",
                f"replay image env {path} (or the first run builds it, taking minutes)",
            )
        )
    for image, command in sorted(wanted.items()):
        present = runtime.image_id(image) is not None
        found.append(
            Finding(present, f"image {image}", "built" if present else "not built", command)
        )
    return found


def check_disk(paths: Mapping[str, Path]) -> list[Finding]:
    found = []
    for label, path in paths.items():
        where = path
        while not where.exists() and where != where.parent:
            where = where.parent
        free = shutil.disk_usage(where).free
        found.append(
            Finding(
                free >= LOW_DISK,
                f"disk ({label})",
                f"{free / 1024**3:.1f} GiB free at {where}",
                f"free space there (at least {LOW_DISK // 1024**3} GiB); replay gc removes "
                "what dead runs left",
            )
        )
    return found


def provider_host(harness: str) -> str:
    """The model host the harness's spec calls (its ``provider``)."""
    from replay.harness.spec import load_harness

    spec, _ = load_harness(harness)
    return f"api.{spec.provider}.com"


def check_key(harness: str, env: Mapping[str, str]) -> tuple[Finding, str | None]:
    """Whether the runner has the key of the provider the harness calls (the variable it
    reads first that is set)."""
    host = provider_host(harness)
    names = CREDENTIALS[host][2]
    have = next((n for n in names if env.get(n)), None)
    finding = Finding(
        have is not None,
        f"model key for {harness} ({host})",
        f"${have} is set" if have else f"none of ${', $'.join(names)} is set",
        f"export {names[-1]}=... (the gateway adds it to {host}'s calls; the agent never "
        "sees it), or use --stub for a run without a model",
    )
    return finding, have


def require_key(harness: str, env: Mapping[str, str] | None = None) -> None:
    """Raise :class:`UsageError` when a run of the harness against its provider would have no
    key: every call would fail, each run end as ``transport_fail`` and be retried, minutes
    spent on nothing (issue 35). Called before anything is stored or run, for a real model
    without ``--model-upstream``."""
    finding, have = check_key(harness, os.environ if env is None else env)
    if have is None:
        raise UsageError(f"{finding.what}: {finding.detail}: {finding.fix}")


def check_reach(harness: str, upstream: str | None, timeout: float = CONNECT_TIMEOUT) -> Finding:
    """A TCP connection to the provider (or the upstream given): made only when asked."""
    url = urlsplit(upstream or f"https://{provider_host(harness)}")
    host = url.hostname or ""
    port = url.port or (443 if url.scheme == "https" else 80)
    try:
        with socket.create_connection((host, port), timeout=timeout):
            pass
    except OSError as exc:
        return Finding(
            False,
            f"model endpoint {host}:{port}",
            f"no connection ({exc.strerror or exc})",
            "check the network or proxy between this machine and the provider "
            "(--model-upstream names another endpoint)",
        )
    return Finding(True, f"model endpoint {host}:{port}", "accepts connections")


def diagnose(
    runtime: Runtime | None,
    runtime_error: str | None,
    *,
    cases: Sequence[Path] = (),
    harness: str = "reference",
    upstream: str | None = None,
    disks: Mapping[str, Path] | None = None,
    env: Mapping[str, str] | None = None,
) -> list[Finding]:
    env = os.environ if env is None else env
    found = [check_docker(runtime, runtime_error)]
    if runtime is not None:
        found += check_images(runtime, cases)
    found += check_disk(disks or {"runs": Path(".replay")})
    key, have = check_key(harness, env)
    found.append(key)
    if have is not None:
        found.append(check_reach(harness, upstream))
    return found
