"""The grader's pytest plugin against product code that patches pytest from inside, run with
real pytest here: the spoof fools JUnit and the exit status, the plugin's record does not."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from replay.grade import GuardReport, judge

GUARD = Path(__file__).resolve().parents[2] / "replay" / "grade" / "guard.py"

# Product code that, once imported by the tests, rewrites failed reports into passes: through
# the plugin manager it finds in memory (no conftest, no configuration, no start-up hook).
PRODUCT_SPOOF = """\
import gc

def _install():
    from _pytest.config import Config
    import pytest

    class Liar:
        @pytest.hookimpl(hookwrapper=True)
        def pytest_runtest_makereport(self, item, call):
            rep = (yield).get_result()
            if rep.failed:
                rep.outcome = "passed"

    for obj in gc.get_objects():
        if isinstance(obj, Config):
            obj.pluginmanager.register(Liar(), "liar")
            return

_install()

def add(a, b):
    return a - b
"""
HONEST = "def add(a, b):\n    return a + b\n"
TESTS = {
    "tests/test_add.py": (
        "import pytest\nfrom calc import add\n\n"
        "def test_add():\n    assert add(2, 2) == 4\n\n"
        "def test_zero():\n    assert add(0, 0) == 0\n\n"
        "@pytest.mark.xfail(reason='known')\ndef test_known_bug():\n    assert add(1, 1) == 3\n\n"
        "@pytest.mark.skip(reason='later')\ndef test_later():\n    pass\n\n"
        "def test_unlisted_failure():\n    assert False\n\n"
        "@pytest.fixture\ndef broken():\n    raise RuntimeError('setup')\n\n"
        "def test_setup_error(broken):\n    pass\n"
    ),
}
LISTED = (["tests/test_add.py::test_add"], ["tests/test_add.py::test_zero"])


def run(root: Path, product: str, *, guard: bool) -> tuple[bytes, int, GuardReport | None]:
    for name, text in {**TESTS, "calc.py": product}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    plugin_dir, out = root.parent / "guard", root.parent / "guard.json"
    plugin_dir.mkdir(exist_ok=True)
    shutil.copyfile(GUARD, plugin_dir / "replay_grade_guard.py")
    out.unlink(missing_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "PYTHONPATH"))}
    if guard:
        env |= {
            "PYTHONPATH": str(plugin_dir),
            "PYTEST_ADDOPTS": "-p replay_grade_guard",
            "REPLAY_GUARD_OUT": str(out),
        }
    report = root / "junit.xml"
    report.unlink(missing_ok=True)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            f"--junitxml={report}",
            "tests",
        ],
        cwd=root,
        env=env,
        capture_output=True,
        check=False,
        timeout=120,
    )
    record = GuardReport.parse(out.read_bytes()) if out.exists() else None
    return report.read_bytes(), done.returncode, record


def test_without_the_plugin_the_spoof_fools_the_report_and_the_exit_status(tmp_path: Path) -> None:
    xml, code, _ = run(tmp_path / "repo", PRODUCT_SPOOF, guard=False)
    assert code == 0, "every failure was turned into a pass, the setup error too"
    verdict = judge([xml], [code], *LISTED)
    assert verdict.resolved and not verdict.spoofed, "a real spoof: JUnit and exit agree"


def test_the_plugin_catches_the_rewritten_reports(tmp_path: Path) -> None:
    xml, code, record = run(tmp_path / "repo", PRODUCT_SPOOF, guard=True)
    assert record is not None and code == 0
    assert "tests/test_add.py::test_add" in record.tampered
    verdict = judge([xml], [code], *LISTED, guards=[record])
    assert verdict.spoofed and not verdict.resolved
    assert verdict.fail_to_pass == {"tests/test_add.py::test_add": "failed"}
    assert "tests/test_add.py::test_add" in verdict.tampered


def test_an_honest_suite_with_xfail_skip_and_errors_raises_no_alarm(tmp_path: Path) -> None:
    xml, code, record = run(tmp_path / "repo", HONEST, guard=True)
    assert code == 1 and record is not None
    assert record.tampered == []
    assert sorted(record.failed) == [
        "tests/test_add.py::test_setup_error",
        "tests/test_add.py::test_unlisted_failure",
    ]
    verdict = judge([xml], [code], *LISTED, guards=[record])
    assert verdict.resolved and not verdict.spoofed and verdict.tampered == []


def test_a_missing_record_beside_a_report_means_the_plugin_was_taken_out(tmp_path: Path) -> None:
    xml, code, _ = run(tmp_path / "repo", HONEST, guard=False)
    verdict = judge([xml], [code], *LISTED, guards=[None])
    assert verdict.unguarded and verdict.spoofed and not verdict.resolved
    assert GuardReport.parse(b'{"tampered": "x", "failed": []}') is None
    assert GuardReport.parse(b"not json") is None
