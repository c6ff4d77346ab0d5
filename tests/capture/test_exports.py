"""The capture package exports what users call, and every name it exports exists."""

from __future__ import annotations

import replay.capture


def test_exports() -> None:
    for name in replay.capture.__all__:
        assert hasattr(replay.capture, name), name
    public = {n for n in vars(replay.capture) if n[0].isupper() or n == "capture_snapshot"}
    public -= {"annotations"}
    assert public <= set(replay.capture.__all__), public - set(replay.capture.__all__)
