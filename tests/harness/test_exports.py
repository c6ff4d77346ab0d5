"""The harness package exports what users call, and nothing it names is missing."""

from __future__ import annotations

import replay.harness
import replay.harness.stub


def test_all_lists_every_public_name() -> None:
    for module in (replay.harness, replay.harness.stub):
        for name in module.__all__:
            assert hasattr(module, name), f"{module.__name__}.__all__ names missing {name}"
    stub_public = {n for n in vars(replay.harness.stub) if not n.startswith("_") and n[0].isupper()}
    stub_public -= {"annotations"}
    assert stub_public <= set(replay.harness.stub.__all__), stub_public - set(
        replay.harness.stub.__all__
    )
    assert {"make_stub_app", "load_script", "StubConfig", "Script"} <= set(replay.harness.__all__)
