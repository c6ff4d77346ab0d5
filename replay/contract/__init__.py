"""Contract tests of the fakes: scenarios run on the fake or the real services, normalised
recordings compared, GitHub REST bodies checked against githubkit's models, GraphQL documents
against the schemas, and a generated coverage table. ``replay contract`` drives it."""

from __future__ import annotations

from replay.contract.normalise import Normaliser
from replay.contract.recording import Difference, Exchange, Gap, Recording, compare
from replay.contract.scenarios import Scenario, Skip, all_scenarios
from replay.contract.suite import Outcome, check
from replay.contract.targets import (
    ContractSetupError,
    Target,
    fake_target,
    live_target,
    serve_world,
)

__all__ = [
    "ContractSetupError",
    "Difference",
    "Exchange",
    "Gap",
    "Normaliser",
    "Outcome",
    "Recording",
    "Scenario",
    "Skip",
    "Target",
    "all_scenarios",
    "check",
    "compare",
    "fake_target",
    "live_target",
    "serve_world",
]
