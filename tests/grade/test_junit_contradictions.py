"""A report that names a test more than once, or gives one test case several outcomes."""

from __future__ import annotations

from replay.grade import judge
from replay.grade.junit import parse_junit, reported_statuses

TWICE = b"""<?xml version="1.0"?>
<testsuites><testsuite name="pytest" tests="3" failures="1">
  <testcase classname="tests.test_a" name="test_x" file="tests/test_a.py">
    <failure message="assert 0">assert 0</failure>
  </testcase>
  <testcase classname="tests.test_a" name="test_x" file="tests/test_a.py"/>
  <testcase classname="tests.test_a" name="test_y" file="tests/test_a.py"/>
  <testcase classname="tests.test_a" name="test_y" file="tests/test_a.py"/>
</testsuite></testsuites>
"""


def test_a_test_listed_twice_with_contradictory_statuses_is_named_and_not_a_pass() -> None:
    assert reported_statuses(TWICE) == {
        "tests/test_a.py::test_x": ["failed", "passed"],
        "tests/test_a.py::test_y": ["passed", "passed"],
    }
    # Whatever the order, the worst status stands.
    assert parse_junit(TWICE)["tests/test_a.py::test_x"] == "failed"
    verdict = judge([TWICE], [0], ["tests/test_a.py::test_x"], ["tests/test_a.py::test_y"])
    assert verdict.contradictory == ["tests/test_a.py::test_x"]
    assert verdict.fail_to_pass == {"tests/test_a.py::test_x": "failed"}
    assert not verdict.resolved


def test_the_same_status_twice_is_no_contradiction() -> None:
    verdict = judge([TWICE], [0], [], ["tests/test_a.py::test_y"])
    assert verdict.contradictory == [] and verdict.resolved


def test_a_case_with_a_failure_and_a_skip_is_failed_whatever_the_order() -> None:
    xml = b"""<testsuite><testcase classname="t" name="a" file="t.py">
      <failure/><skipped/></testcase></testsuite>"""
    assert parse_junit(xml) == {"t.py::a": "failed"}
