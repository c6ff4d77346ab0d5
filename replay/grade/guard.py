"""A pytest plugin the grader loads into the hidden tests' run (``-p replay_grade_guard``).

Restoring the test infrastructure takes away the conftest, configuration and start-up hooks a
diff could use to rewrite pytest's reports. What is left is the product code itself, which the
tests import and which could patch pytest from inside. This plugin is a second witness, loaded
before any of the repository is imported: it notes which test phases raised, and every report
that said failed, and writes both to ``$REPLAY_GUARD_OUT`` at the end. The grader holds that
against the JUnit report (:func:`replay.grade.judge`): a phase that raised but was reported
passed, or a test JUnit says passed that this plugin saw fail, is a spoofed run.

It runs inside the tests' process, so code in that process can also reach it: it raises the
cost of a spoof from one hook to a targeted attack on the grader, it does not make one
impossible. It is copied into the grading container as a single file and imported by the
case's own interpreter (any Python 3 with pytest ≥ 6), so it uses nothing else of replay.
"""

from __future__ import annotations

import json
import os
from collections.abc import Generator
from typing import Any

import pytest

_raised: dict[tuple[str, str], bool] = {}
_tampered: list[str] = []
_failed: list[str] = []


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None]:
    # Before any other implementation: did the phase itself raise?
    _raised[(item.nodeid, call.when)] = call.excinfo is not None
    yield


@pytest.hookimpl(trylast=True)
def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    # After every other implementation has seen (and could have changed) the report.
    if report.passed and _raised.get((report.nodeid, report.when)):
        _tampered.append(report.nodeid)
    if report.failed and not hasattr(report, "wasxfail"):
        _failed.append(report.nodeid)


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: Any) -> None:
    out = os.environ.get("REPLAY_GUARD_OUT")
    if out:
        with open(out, "w", encoding="utf-8") as fh:
            json.dump({"tampered": sorted(set(_tampered)), "failed": sorted(set(_failed))}, fh)
