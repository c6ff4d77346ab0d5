"""Sandboxed execution: container runtimes behind one interface, the gateway lock, limits.

``get_runtime("docker")`` gives the Docker provider; :class:`Sandbox` runs an agent's
container whose only way out is the gateway (see :mod:`replay.runtime.sandbox`).
"""

from __future__ import annotations

from replay.runtime.base import (
    PROVIDERS,
    Container,
    ContainerSpec,
    ExecResult,
    GcReport,
    LimitName,
    Limits,
    Mount,
    Runtime,
    SandboxError,
    Scratch,
    UnknownProviderError,
    provider,
)
from replay.runtime.providers import get_runtime
from replay.runtime.sandbox import AGENT_USER, ROOT, Sandbox, SandboxConfig

__all__ = [
    "AGENT_USER",
    "PROVIDERS",
    "ROOT",
    "Container",
    "ContainerSpec",
    "ExecResult",
    "GcReport",
    "LimitName",
    "Limits",
    "Mount",
    "Runtime",
    "Sandbox",
    "SandboxConfig",
    "SandboxError",
    "Scratch",
    "UnknownProviderError",
    "get_runtime",
    "provider",
]
