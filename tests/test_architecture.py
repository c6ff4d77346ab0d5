"""The layers import only downward and no package or module imports itself in a circle."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests import architecture


def test_no_layer_is_climbed_and_no_import_cycle() -> None:
    assert architecture.problems() == []


def test_the_command_prints_nothing_when_clean() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tests.architecture"],
        capture_output=True,
        text=True,
        check=False,
        cwd=architecture.ROOT,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def _tree(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_the_check_sees_every_climb_and_cycle(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _tree(
        tmp_path,
        {
            "replay/__init__.py": "",
            "replay/base/__init__.py": "",
            # A lazy import inside a function climbs all the same.
            "replay/base/low.py": "def f() -> None:\n    import fakes.x.a\n",
            "fakes/__init__.py": "",
            "fakes/x/__init__.py": "",
            # Two fakes importing each other (one relatively); one under TYPE_CHECKING.
            "fakes/x/a.py": "from fakes.x import b\n",
            "fakes/x/b.py": "from typing import TYPE_CHECKING\n"
            "if TYPE_CHECKING:\n    from . import a\n",
            "fakes/x/c.py": "from replay.one import m\n",
            # Two orchestrator packages whose modules import each other's, without any
            # module cycle; and an orchestrator module reaching into the command line.
            "replay/one/__init__.py": "",
            "replay/one/m.py": "from replay.two import n\n",
            "replay/one/k.py": "",
            "replay/two/__init__.py": "",
            "replay/two/n.py": "",
            "replay/two/p.py": "from replay.one import k\nimport replay.cli\n",
            "replay/cli/__init__.py": "",
        },
    )
    monkeypatch.setattr(architecture, "ROOT", tmp_path)
    found = architecture.problems()
    assert any(line.startswith("layer: replay/base/low.py:2 ") for line in found), found
    assert any(line.startswith("layer: fakes/x/c.py:1 ") for line in found), found
    assert any(
        line.startswith("layer: replay/two/p.py:2 ") and "(cli)" in line for line in found
    ), found
    assert "cycle between modules: fakes.x.a <-> fakes.x.b" in found
    assert "cycle between packages: replay.one <-> replay.two" in found
    assert len(found) == 5, found
