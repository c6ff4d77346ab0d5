"""The public surface: what users call is exported, and nothing exported is missing."""

from __future__ import annotations

import inspect
import subprocess
import sys

import replay
import replay.results
import replay.snapshot


def test_all_lists_every_public_name() -> None:
    for module in (replay, replay.results, replay.snapshot):
        # Every class and function the package defines and imports here is exported...
        defined = {
            name
            for name, value in vars(module).items()
            if not name.startswith("_")
            and not inspect.ismodule(value)
            and str(getattr(value, "__module__", "")).startswith("replay")
        }
        assert defined <= set(module.__all__), defined - set(module.__all__)
        # ...and everything exported exists.
        for name in module.__all__:
            assert hasattr(module, name), f"{module.__name__}.__all__ names missing {name}"


def test_python_dash_m_runs_the_cli() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "replay", "--version"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0
    assert done.stdout.strip() == f"replay {replay.__version__}"
