"""What every scenario module builds on: the context a scenario gets, and its registry.

Below the scenario modules (:mod:`.github`, :mod:`.linear`, :mod:`.slack`) and the package
that loads them, so that they import it without importing the package.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from replay.contract.normalise import Normaliser
from replay.contract.recording import Recorder
from replay.contract.targets import Service, Target


class Skip(Exception):
    """A scenario that cannot run on this target (it needs the fake's control plane)."""


@dataclass
class Ctx:
    """What a scenario gets: the target, a recorder, a unique run id and a scratch dir."""

    target: Target
    rec: Recorder
    workdir: Path
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex[:8])

    @property
    def norm(self) -> Normaliser:
        return self.rec.normaliser

    def require_control(self, why: str) -> str:
        if self.target.control is None:
            raise Skip(f"needs the fake's control plane: {why}")
        return self.target.control


@dataclass(frozen=True)
class Scenario:
    service: Service
    name: str
    run: Callable[[Ctx], None]
    doc: str


SCENARIOS: dict[str, dict[str, Scenario]] = {"github": {}, "slack": {}, "linear": {}}


def scenario(service: Service) -> Callable[[Callable[[Ctx], None]], Callable[[Ctx], None]]:
    """Register ``fn`` as a scenario of ``service``, named after the function."""

    def register(fn: Callable[[Ctx], None]) -> Callable[[Ctx], None]:
        name = fn.__name__
        SCENARIOS[service][name] = Scenario(service, name, fn, (fn.__doc__ or "").strip())
        return fn

    return register
