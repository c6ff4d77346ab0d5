"""The public surface: what users call is exported, and nothing exported is missing."""

from __future__ import annotations

import subprocess
import sys

import replay
import replay.results
import replay.snapshot


def test_all_lists_every_public_name() -> None:
    for module in (replay, replay.results, replay.snapshot):
        public = {
            n
            for n in vars(module)
            if (not n.startswith("_") and n[0].isupper())
            or n in {"load_case", "load_snapshot", "build_snapshot", "resolve_url"}
        }
        public -= {"annotations", "OUTCOMES"} if module is not replay.results else {"annotations"}
        for name in module.__all__:
            assert hasattr(module, name), f"{module.__name__}.__all__ names missing {name}"
        assert public <= set(module.__all__), public - set(module.__all__)


def test_python_dash_m_runs_the_cli() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "replay", "--version"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0
    assert done.stdout.strip() == f"replay {replay.__version__}"
