"""What the tests of a pip-installed harness share: the real Docker engine (``tests/runtime``'s
fixture), the case's environment image, and the harness image on it.

A test module names its harness by defining a ``spec`` fixture (``load_harness(NAME)``) and
its case by a module-level ``CASE`` (demo-caret-zero when it has none); ``env_image`` and
``harness`` are then built once per module (both cached by Docker across sessions).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from replay.base.case import load_case
from replay.harness.install import HarnessImage, ensure_harness_image
from replay.harness.spec import HarnessSpec
from replay.images.base import ensure_case_base_image
from replay.images.env import EnvImage, build_env_image, cached_env_image
from replay.runtime import Runtime
from replay.world import running_world
from tests.runtime.conftest import runtime

__all__ = ["runtime"]

ROOT = Path(__file__).resolve().parents[2]
DEMO_CASE = ROOT / "cases" / "demo-caret-zero" / "case.yaml"


@pytest.fixture(scope="module")
def case_file(request: pytest.FixtureRequest) -> Path:
    """The module's ``CASE``, or demo-caret-zero."""
    path: Path = getattr(request.module, "CASE", DEMO_CASE)
    return path


@pytest.fixture(scope="module")
def env_image(
    runtime: Runtime, case_file: Path, tmp_path_factory: pytest.TempPathFactory
) -> EnvImage:
    """The case's environment image (its own base image first: bullseye for tomli's)."""
    case = load_case(case_file)
    ensure_case_base_image(runtime, case.environment)
    cached = cached_env_image(case, runtime)
    if cached is not None:
        return cached
    with running_world(case.snapshot, tmp_path_factory.mktemp("env-world")) as gw:
        return build_env_image(case, runtime, gw)


@pytest.fixture(scope="module")
def harness(runtime: Runtime, env_image: EnvImage, spec: tuple[HarnessSpec, Path]) -> HarnessImage:
    """The module's harness installed on the case's environment image."""
    return ensure_harness_image(runtime, spec[0], spec[1], env_image.id)
