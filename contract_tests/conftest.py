"""The target of the contract tests: the fake (the demo snapshot served on loopback ports)
by default; the live services named by the environment with ``REPLAY_CONTRACT_LIVE=1``."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from replay.contract.targets import (
    Served,
    Target,
    fake_target,
    live_requested,
    live_target,
    serve_world,
)


@pytest.fixture(scope="session")
def served() -> Iterator[Served]:
    with serve_world() as world:
        yield world


@pytest.fixture(scope="session")
def target_for(served: Served) -> Callable[[str], Target]:
    def pick(service: str) -> Target:
        return live_target(service) if live_requested() else fake_target(served)

    return pick
