"""Slack contract: slack_sdk's WebClient against the target, compared with the recordings."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from contract_tests.checks import run_checked
from contract_tests.gaps import SLACK
from replay.contract.scenarios import all_scenarios
from replay.contract.targets import Target


@pytest.mark.parametrize("scenario", all_scenarios("slack"), ids=lambda s: s.name)
def test_scenario(target_for: Callable[[str], Target], scenario: Any) -> None:
    run_checked(target_for("slack"), scenario, SLACK)
