"""Contract scenarios: what agents do to each service, written once, run against any target.

A scenario is a function of a :class:`Ctx`; it drives the real client (githubkit, slack_sdk,
raw Linear GraphQL over httpx) at the target's base URL and records every exchange. The
pytest modules in ``contract_tests/`` and ``replay contract run|record`` both run these.
"""

from __future__ import annotations

from replay.contract.scenarios.base import SCENARIOS, Ctx, Scenario, Skip, scenario

__all__ = ["SCENARIOS", "Ctx", "Scenario", "Skip", "all_scenarios", "scenario"]


def all_scenarios(service: str | None = None) -> list[Scenario]:
    """Every registered scenario (of one service), loading the scenario modules first."""
    import replay.contract.scenarios.github
    import replay.contract.scenarios.linear
    import replay.contract.scenarios.slack  # noqa: F401

    services = [service] if service else list(SCENARIOS)
    return [s for name in services for s in SCENARIOS[name].values()]
