"""Hidden-test verdicts from real pytest JUnit reports and exit statuses."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from replay.grade import judge, parse_junit
from replay.grade.junit import JUnitError


def run_pytest(root: Path, files: dict[str, str]) -> tuple[bytes, int]:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
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
        capture_output=True,
        check=False,
        timeout=120,
    )
    return report.read_bytes(), done.returncode


SUITE = {
    "tests/__init__.py": "",
    "tests/test_a.py": (
        "import pytest\n\n"
        "def test_ok():\n    assert True\n\n"
        "def test_bad():\n    assert 1 == 2\n\n"
        "@pytest.mark.skip(reason='later')\ndef test_skipped():\n    pass\n\n"
        "class TestGroup:\n    def test_in_class(self):\n        pass\n\n"
        "@pytest.mark.parametrize('x', [1, 2])\ndef test_param(x):\n    assert x == 1\n"
    ),
}


def test_ids_match_pytest_node_ids(tmp_path: Path) -> None:
    xml, code = run_pytest(tmp_path, SUITE)
    assert code == 1
    assert parse_junit(xml) == {
        "tests/test_a.py::test_ok": "passed",
        "tests/test_a.py::test_bad": "failed",
        "tests/test_a.py::test_skipped": "skipped",
        "tests/test_a.py::TestGroup::test_in_class": "passed",
        "tests/test_a.py::test_param[1]": "passed",
        "tests/test_a.py::test_param[2]": "failed",
    }


def test_f2p_p2p_missing_and_skipped(tmp_path: Path) -> None:
    xml, code = run_pytest(tmp_path, SUITE)
    verdict = judge(
        [xml],
        [code],
        fail_to_pass=[
            "tests/test_a.py::test_ok",
            "tests/test_a.py::test_skipped",
            "tests/test_a.py::test_absent",
        ],
        pass_to_pass=["tests/test_a.py::TestGroup::test_in_class"],
    )
    assert verdict.fail_to_pass == {
        "tests/test_a.py::test_ok": "passed",
        "tests/test_a.py::test_skipped": "skipped",
        "tests/test_a.py::test_absent": "missing",
    }
    assert verdict.f2p_passed == 1 and verdict.p2p_passed == 1
    assert not verdict.resolved and not verdict.spoofed


def test_all_listed_pass_despite_an_unlisted_failure(tmp_path: Path) -> None:
    xml, code = run_pytest(tmp_path, SUITE)
    verdict = judge([xml], [code], ["tests/test_a.py::test_ok"], ["tests/test_a.py::test_param[1]"])
    assert verdict.resolved, "a failing test outside the lists explains the exit status"


def test_a_report_that_lies_about_the_exit_status_does_not_pass(tmp_path: Path) -> None:
    files = {
        "tests/__init__.py": "",
        "tests/test_a.py": "def test_ok():\n    assert True\n",
        # A patch that forces a failing exit status behind a clean report, e.g. by printing
        # its own PASSED lines and exiting 1: the XML alone would say everything passed.
        "conftest.py": (
            "def pytest_sessionfinish(session, exitstatus):\n"
            "    print('tests/test_a.py::test_ok PASSED')\n"
            "    session.exitstatus = 1\n"
        ),
    }
    xml, code = run_pytest(tmp_path, files)
    assert code == 1 and parse_junit(xml) == {"tests/test_a.py::test_ok": "passed"}
    verdict = judge([xml], [code], ["tests/test_a.py::test_ok"], [])
    assert verdict.spoofed and not verdict.resolved
    assert verdict.fail_to_pass == {"tests/test_a.py::test_ok": "failed"}


def test_flaky_tests_are_reported_and_not_resolved(tmp_path: Path) -> None:
    ok, _ = run_pytest(
        tmp_path, {"tests/__init__.py": "", "tests/test_a.py": "def test_x():\n    pass\n"}
    )
    bad, _ = run_pytest(tmp_path, {"tests/test_a.py": "def test_x():\n    assert 0\n"})
    verdict = judge([ok, bad, ok], [0, 1, 0], ["tests/test_a.py::test_x"], [])
    assert verdict.flaky == ["tests/test_a.py::test_x"]
    assert verdict.fail_to_pass["tests/test_a.py::test_x"] == "failed"
    assert not verdict.resolved


def test_missing_or_garbage_report_counts_everything_missing() -> None:
    verdict = judge([None, b"<html>no</html>"], [0, 0], ["t.py::a"], ["t.py::b"])
    assert verdict.fail_to_pass == {"t.py::a": "missing"}
    assert not verdict.resolved
    with pytest.raises(JUnitError, match="root element"):
        parse_junit("<html/>")
    with pytest.raises(ValueError, match="one report and one exit status"):
        judge([None], [0, 1], [], [])
