"""``render_junit``: the comparison as JUnit XML that CI systems read, checked against the
common JUnit XML format's content model (testmoapp/junitxml: which elements may hold
which, and their attributes) after parsing it with an XML parser."""

from __future__ import annotations

import copy
import xml.etree.ElementTree as ET
from typing import Any

import pytest

from replay.compare.fmt import ReportSchemaError
from replay.compare.junit import render_junit
from tests.compare.htmltree import FIXTURES, load

# The common format's elements: the children each may hold, and the attributes it may carry
# (required ones first, in the tuple's first set).
CHILDREN = {
    "testsuites": {"testsuite"},
    "testsuite": {"properties", "testcase", "system-out", "system-err"},
    "testcase": {"properties", "failure", "error", "skipped", "system-out", "system-err"},
    "properties": {"property"},
    "property": set(),
    "failure": set(),
    "error": set(),
    "skipped": set(),
}
ATTRIBUTES: dict[str, tuple[set[str], set[str]]] = {
    "testsuites": (set(), {"name", "tests", "failures", "errors", "skipped", "time", "timestamp"}),
    "testsuite": (
        {"name", "tests"},
        {"failures", "errors", "skipped", "time", "timestamp", "file", "hostname", "id"},
    ),
    "testcase": ({"name"}, {"classname", "time", "file", "line", "assertions"}),
    "properties": (set(), set()),
    "property": ({"name", "value"}, set()),
    "failure": (set(), {"message", "type"}),
    "error": (set(), {"message", "type"}),
    "skipped": (set(), {"message"}),
}


def check_format(element: ET.Element) -> None:
    required, optional = ATTRIBUTES[element.tag]
    assert required <= set(element.attrib), (element.tag, element.attrib)
    assert set(element.attrib) <= required | optional, (element.tag, element.attrib)
    for child in element:
        assert child.tag in CHILDREN[element.tag], f"<{child.tag}> inside <{element.tag}>"
        check_format(child)
    if element.tag == "testcase":
        results = [c.tag for c in element if c.tag in ("failure", "error", "skipped")]
        assert len(results) <= 1, results
    if element.tag in ("testsuites", "testsuite"):
        cases = list(element.iter("testcase"))
        assert int(element.get("tests", "0")) == len(cases)
        assert int(element.get("failures", "0")) == sum(
            c.find("failure") is not None for c in cases
        )
        assert int(element.get("errors", "0")) == sum(c.find("error") is not None for c in cases)
        if "skipped" in element.attrib:
            assert int(element.attrib["skipped"]) == sum(
                c.find("skipped") is not None for c in cases
            )


def parsed(doc: dict[str, Any]) -> ET.Element:
    text = render_junit(doc)
    assert text.startswith("<?xml version='1.0' encoding='utf-8'?>\n")
    root = ET.fromstring(text.encode())
    check_format(root)
    return root


def cases(root: ET.Element) -> dict[str, ET.Element]:
    return {case.attrib["name"]: case for case in root.iter("testcase")}


def props(element: ET.Element) -> dict[str, str]:
    found = element.find("properties")
    assert found is not None
    return {p.attrib["name"]: p.attrib["value"] for p in found}


@pytest.mark.parametrize("name", FIXTURES)
def test_one_suite_with_the_verdict_the_gates_and_every_case(name: str) -> None:
    doc = load(name)
    root = parsed(doc)
    assert root.tag == "testsuites"
    suites = root.findall("testsuite")
    assert len(suites) == 1
    assert suites[0].attrib["name"] == f"replay compare {doc['name']}"
    assert props(suites[0])["schema"] == "replay.compare/1"
    names = [case.attrib["name"] for case in suites[0].findall("testcase")]
    assert names == [
        "verdict",
        *(f"gate {gate['name']}" for gate in doc["gates"]),
        *(f"case {row['case_id']}" for row in doc["cases"]),
    ]
    for row in doc["cases"]:
        got = props(cases(root)[f"case {row['case_id']}"])
        assert got["class"] == row["class"]
        assert got["A.rate"] == f"{row['A']['rate']:.2f}"
        assert got["B.rate"] == f"{row['B']['rate']:.2f}"
        assert got["B.passes"] == f"{row['B']['passes']}/{row['B']['healthy']}"


def test_ship_passes_and_an_unset_gate_is_skipped() -> None:
    root = parsed(load("compare-sample"))
    found = cases(root)
    assert list(found["verdict"]) == [found["verdict"].find("properties")]
    assert props(found["verdict"]) == {"decision": "ship"}
    skipped = found["gate cost"].find("skipped")
    assert skipped is not None and "no cost ceiling" in skipped.attrib["message"]
    assert root.attrib["failures"] == "0"


def test_inconclusive_is_skipped_with_the_cases_needed() -> None:
    root = parsed(load("compare-aa-inconclusive"))
    found = cases(root)
    skipped = found["verdict"].find("skipped")
    assert skipped is not None
    assert skipped.attrib["message"].startswith("inconclusive: ")
    assert "cases needed to decide: 24" in skipped.attrib["message"]
    assert found["gate quality"].find("skipped") is not None
    assert root.attrib["failures"] == "0"


def test_dont_ship_fails_the_verdict_the_failed_gates_and_each_regressed_case() -> None:
    doc = load("compare-dont-ship")
    root = parsed(doc)
    found = cases(root)
    failed = sorted(name for name, case in found.items() if case.find("failure") is not None)
    only_a = [f"case {row['case_id']}" for row in doc["cases"] if row["class"] == "only_a"]
    assert only_a
    assert failed == sorted(["verdict", "gate quality", "gate side_effects", *only_a])
    verdict = found["verdict"].find("failure")
    assert verdict is not None and verdict.attrib["type"] == "dont_ship"
    assert doc["verdict"]["reasons"][1] in verdict.attrib["message"]
    regressed = found[only_a[0]].find("failure")
    assert regressed is not None and regressed.attrib["message"].startswith("B regressed")
    # The flaky and the neither cases pass: only a case B lost counts against it.
    assert found["case demo-prerelease-order"].find("failure") is None
    suite = root.find("testsuite")
    assert suite is not None and suite.attrib["failures"] == str(len(failed))


def test_hostile_text_stays_text() -> None:
    doc = copy.deepcopy(load("compare-dont-ship"))
    hostile = '<script>alert(1)</script> & "quotes" \x00\x1b[31m'
    doc["verdict"]["reasons"] = [hostile]
    doc["cases"][0]["case_id"] = hostile
    root = parsed(doc)
    verdict = cases(root)["verdict"].find("failure")
    assert verdict is not None
    assert verdict.attrib["message"] == '<script>alert(1)</script> & "quotes" \ufffd\ufffd[31m'
    assert any(name.startswith("case <script>") for name in cases(root))


def test_another_schema_is_refused() -> None:
    with pytest.raises(ReportSchemaError):
        render_junit({"schema": "something/else"})


def test_a_comparison_with_no_paired_case_has_the_verdict_and_gates_only() -> None:
    doc = copy.deepcopy(load("compare-aa-inconclusive"))
    doc["cases"] = []
    root = parsed(doc)
    assert list(cases(root)) == ["verdict", "gate quality", "gate side_effects", "gate cost"]
