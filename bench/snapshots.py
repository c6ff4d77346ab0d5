"""Snapshot loading: verifying every hash and validating every file, against reading bytes."""

from __future__ import annotations

from bench.common import ROOT_DIR, Pair, suite


@suite
def snapshot() -> list[Pair]:
    from replay.snapshot import load_snapshot
    from replay.snapshot.load import list_files

    snap = ROOT_DIR / "snapshots" / "demo"
    files = [snap / name for name in list_files(snap)]
    return [
        Pair(
            "load_snapshot vs reading the same files",
            lambda: load_snapshot(snap),
            lambda: [f.read_bytes() for f in files],
        )
    ]
