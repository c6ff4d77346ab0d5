"""The casebuild package exports what users call, and every name it exports exists."""

from __future__ import annotations

import replay.casebuild


def test_exports() -> None:
    module = replay.casebuild
    for name in module.__all__:
        assert hasattr(module, name), name
    wanted = {"create_case", "import_instances", "measure", "spec_from_fix", "FixSource"}
    assert wanted <= set(module.__all__)
