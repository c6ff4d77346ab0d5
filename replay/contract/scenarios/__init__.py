"""Contract scenarios: what agents do to each service, written once, run against any target.

A scenario is a function of a :class:`Ctx`; it drives the real client (githubkit, slack_sdk,
raw Linear GraphQL over httpx) at the target's base URL and records every exchange. The
pytest modules in ``contract_tests/`` and ``replay contract run|record`` both run these.
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


def all_scenarios(service: str | None = None) -> list[Scenario]:
    """Every registered scenario (of one service), loading the scenario modules first."""
    import replay.contract.scenarios.github
    import replay.contract.scenarios.linear
    import replay.contract.scenarios.slack  # noqa: F401

    services = [service] if service else list(SCENARIOS)
    return [s for name in services for s in SCENARIOS[name].values()]
