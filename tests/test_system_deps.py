"""``.ci/system-deps``: what ``make demo`` and ``make test`` need from Debian's packages is
named, with the exact command, before any other work (run as root it installs them instead;
``.ci/run`` relies on that)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / ".ci" / "system-deps"


def run(tmp_path: Path, *args: str, have: tuple[str, ...]) -> subprocess.CompletedProcess[str]:
    """The script with a PATH holding only ``have`` (plus what a shell needs)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    for tool in (*have, "bash", "id"):
        found = shutil.which(tool)
        assert found is not None, tool
        link = bin_dir / tool
        if not link.exists():
            link.symlink_to(found)
    # The interpreter this venv was made from (the one `make` makes venvs with).
    python = bin_dir / "python3"
    if not python.exists():
        python.symlink_to(Path(sys.base_prefix) / "bin" / "python3")
    return subprocess.run(
        ["bash", str(SCRIPT), *args],
        env={**os.environ, "PATH": str(bin_dir)},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_missing_packages_are_named_with_the_command(tmp_path: Path) -> None:
    demo = run(tmp_path, "demo", "--check", have=("git", "make", "docker"))
    assert demo.returncode == 1
    assert "make demo needs debootstrap;" in demo.stderr
    assert "apt-get install -y debootstrap'" in demo.stderr
    tests = run(tmp_path, "test", "--check", have=("git", "make", "docker"))
    assert tests.returncode == 1
    # (postgresql too on a machine without Debian's server: its check is a path, not PATH)
    assert "apt-get install -y debootstrap gh npm iproute2 chromium" in tests.stderr


def test_nothing_missing_passes_and_a_wrong_target_is_refused(tmp_path: Path) -> None:
    assert shutil.which("debootstrap") and shutil.which("docker"), (
        "the test machine is set up by .ci/run, which installs debootstrap"
    )
    ok = run(tmp_path, "demo", "--check", have=("git", "make", "docker", "debootstrap"))
    assert ok.returncode == 0, ok.stderr
    wrong = run(tmp_path, "deploy", have=("git", "make", "docker", "debootstrap"))
    assert wrong.returncode == 2 and "unknown target 'deploy'" in wrong.stderr
    no_docker = run(tmp_path / "other", "demo", have=("git", "make", "debootstrap"))
    assert no_docker.returncode == 1 and "Docker Engine is not installed" in no_docker.stderr


def test_make_checks_system_packages_before_any_work() -> None:
    """``make demo`` and ``make test`` run the check first (a pattern rule would not: make
    skips implicit rules for .PHONY targets, and once did so silently here)."""
    root = SCRIPT.parents[1]
    for target in ("demo", "test"):
        # Under `make test` this runs in a sub-make's environment, where make would print
        # "Entering directory" first: the check reads the plan alone.
        env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")}
        planned = subprocess.run(
            ["make", "-n", "--no-print-directory", target],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert planned.returncode == 0, planned.stderr
        assert planned.stdout.splitlines()[0] == f"bash .ci/system-deps {target}", planned.stdout
