"""The runtime fixtures (engine, cached base image, demo gateway) shared with tests/runtime."""

from __future__ import annotations

from tests.runtime.conftest import base_image, demo_gateway, run_root, runtime

__all__ = ["base_image", "demo_gateway", "run_root", "runtime"]
