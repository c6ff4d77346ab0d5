"""Capturing a snapshot from real services (GitHub, Linear, Slack) as they stood at T."""

from __future__ import annotations

from replay.capture.report import CAPTURE_REPORT, CaptureReport, Flag
from replay.capture.snapshot import (
    CaptureConfig,
    GitHubSource,
    LinearSource,
    SlackSource,
    capture_snapshot,
)

__all__ = [
    "CAPTURE_REPORT",
    "CaptureConfig",
    "CaptureReport",
    "Flag",
    "GitHubSource",
    "LinearSource",
    "SlackSource",
    "capture_snapshot",
]
