"""The fuzz tests' figures (operations, examples, server errors) at the end of the run, so
that CI's log carries them even when every test passes."""

from __future__ import annotations

import pytest


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    lines = [
        str(value)
        for reports in terminalreporter.stats.values()
        for report in reports
        if getattr(report, "when", None) == "call"
        for name, value in getattr(report, "user_properties", [])
        if name == "fuzz"
    ]
    if lines:
        terminalreporter.section("fuzzing the fakes")
        for line in lines:
            terminalreporter.write_line(line)
