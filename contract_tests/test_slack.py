"""Slack contract: slack_sdk's WebClient against the target, compared with the recordings."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from contract_tests.checks import run_checked
from replay.contract.recording import Gap
from replay.contract.scenarios import all_scenarios
from replay.contract.targets import Target

GAPS: list[Gap] = [
    Gap(
        service="slack",
        scenario="errors",
        where="bad token.*",
        why="deliberate: the fake takes any well-formed xoxb-/xoxp- token as the agent's bot "
        "(agents hold placeholder tokens), where Slack answers `invalid_auth`; recorded "
        "against a stand-in the step agrees, against the real API it will not.",
    ),
]
"""Differences accepted on purpose (fnmatch patterns over difference paths)."""


@pytest.mark.parametrize("scenario", all_scenarios("slack"), ids=lambda s: s.name)
def test_scenario(target_for: Callable[[str], Target], scenario: Any) -> None:
    run_checked(target_for("slack"), scenario, GAPS)
