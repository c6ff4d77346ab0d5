"""The demo case's environment image, built once per module that needs it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from replay.base.case import load_case
from replay.images.env import build_env_image
from replay.runtime import get_runtime
from replay.runtime.base import Runtime
from replay.world import running_world

ROOT = Path(__file__).resolve().parents[2]
CARET = ROOT / "cases" / "demo-caret-zero" / "case.yaml"


@pytest.fixture(scope="module")
def caret_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Runtime, str]]:
    """The demo case's environment image (built once; later runs reuse it)."""
    case = load_case(CARET)
    runtime = get_runtime("docker")
    try:
        with running_world(case.snapshot, tmp_path_factory.mktemp("world")) as gateway:
            env = build_env_image(case, runtime, gateway)
        yield runtime, env.id
    finally:
        runtime.close()
