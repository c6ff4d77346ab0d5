"""The layers import only downward and no package or module imports itself in a circle."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests import architecture

# The cycles issue 14 found that are still being taken apart; each leaves this list with the
# change that breaks it, and the list must end empty.
PENDING: set[str] = set()


def test_no_layer_is_climbed_and_no_import_cycle() -> None:
    assert set(architecture.problems()) == PENDING


def test_the_check_sees_a_climb_and_a_cycle(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A base module that imports a fake, and two fakes that import each other.
    for package in ("replay/base", "fakes/x"):
        (tmp_path / package).mkdir(parents=True)
    (tmp_path / "replay/__init__.py").write_text("")
    (tmp_path / "replay/base/__init__.py").write_text("")
    (tmp_path / "replay/base/low.py").write_text("def f() -> None:\n    import fakes.x.a\n")
    (tmp_path / "fakes/__init__.py").write_text("")
    (tmp_path / "fakes/x/__init__.py").write_text("")
    (tmp_path / "fakes/x/a.py").write_text("from fakes.x import b\n")
    (tmp_path / "fakes/x/b.py").write_text("from . import a\n")
    monkeypatch.setattr(architecture, "ROOT", tmp_path)
    found = architecture.problems()
    assert any(line.startswith("layer: replay/base/low.py:2") for line in found), found
    assert "cycle between modules: fakes.x.a <-> fakes.x.b" in found


def test_the_command_prints_nothing_when_clean() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tests.architecture"],
        capture_output=True,
        text=True,
        check=False,
        cwd=architecture.ROOT,
    )
    printed = set(done.stdout.splitlines())
    assert (done.returncode == 0, printed, done.stderr) == (not PENDING, PENDING, "")
