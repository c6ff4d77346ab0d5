"""The sandbox's shifted clock never reads before T, whatever fraction of a second separates
T and now when the shift is computed (libfaketime takes whole seconds)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from replay.runtime.sandbox import faketime_env


def test_the_shifted_clock_never_reads_before_t() -> None:
    at = datetime(2026, 3, 10, 12, 0, 0, tzinfo=UTC)
    now = datetime(2026, 12, 1, 18, 0, 0, tzinfo=UTC)
    for tenths in range(10):
        moment = now + timedelta(seconds=tenths / 10)
        offset = int(faketime_env(at, moment)["FAKETIME"])
        reads = moment + timedelta(seconds=offset)
        assert at <= reads < at + timedelta(seconds=1), (tenths, reads)
