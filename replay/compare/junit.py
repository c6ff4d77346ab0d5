"""The comparison as JUnit XML, the one test-result format every CI system reads.

One ``<testsuite>`` named ``replay compare <name>`` inside ``<testsuites>``, following the
common JUnit XML format (testmoapp/junitxml: ``testsuites``/``testsuite``/``testcase``,
``failure``/``skipped``, ``properties`` on suites and on cases):

- ``verdict``: a failure when the decision is ``dont_ship``, skipped (with the reasons and
  the cases needed) when ``inconclusive``, passed when ``ship``;
- ``gate <name>`` for each gate: a failure when ``fail``, skipped when ``unclear`` or
  ``not_set``;
- ``case <case id>`` for each paired case: a failure when only A solves it (B regressed
  there), with the arms' rates as properties.

A CI job that fails on failures thus fails on "don't ship", on a failed gate and on a
regressed case, and shows an inconclusive comparison as skipped rather than green.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from replay.compare.fmt import (
    CLASS_LABELS,
    DECISION_LABELS,
    Doc,
    check_schema,
    interval,
    num,
    signed,
)

# Characters XML 1.0 cannot carry at all (ElementTree would write them and make the file
# unreadable): replaced, so that a stray control character in a reason cannot break CI.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _x(value: object) -> str:
    return _NOT_XML.sub("\ufffd", str(value))


def _add(parent: ET.Element, tag: str, text: str | None = None, **attrs: str) -> ET.Element:
    element = ET.SubElement(parent, tag, {key: _x(value) for key, value in attrs.items()})
    if text is not None:
        element.text = _x(text)
    return element


def _properties(parent: ET.Element, values: dict[str, str]) -> None:
    props = _add(parent, "properties")
    for name, value in values.items():
        _add(props, "property", name=name, value=value)


def _case(suite: ET.Element, classname: str, name: str) -> ET.Element:
    return _add(suite, "testcase", name=name, classname=classname, time="0")


def render_junit(doc: Doc) -> str:
    """The comparison document as a JUnit XML document (UTF-8 text with its declaration)."""
    check_schema(doc)
    name = str(doc["name"])
    a, b = doc["arms"]["A"], doc["arms"]["B"]
    root = ET.Element("testsuites", name="replay compare")
    suite = _add(
        root, "testsuite", name=f"replay compare {name}", timestamp=str(doc["generated_at"])
    )
    diff, floor = doc["difference"], doc["aa_floor"]
    _properties(
        suite,
        {
            "schema": str(doc["schema"]),
            "rule.digest": str(doc["rule"]["digest"]),
            "A": f"{a['name']} ({a['key']})",
            "B": f"{b['name']} ({b['key']})",
            "difference": (
                f"{signed(diff['estimate'])} {interval(diff['interval'])}"
                if diff is not None
                else f"not available ({floor['method']})"
            ),
            "p_value": num(diff["p_value"], 4) if diff is not None else "n/a",
            "aa_floor": interval(floor["interval"]),
            "mde": num(floor["mde"]),
        },
    )
    classname = f"replay.compare.{name}"

    verdict = doc["verdict"]
    decision = str(verdict["decision"])
    reasons = "; ".join(str(reason) for reason in verdict["reasons"])
    case = _case(suite, classname, "verdict")
    _properties(case, {"decision": decision})
    if decision == "dont_ship":
        _add(
            case,
            "failure",
            f"{DECISION_LABELS[decision]}: {reasons}",
            message=reasons,
            type="dont_ship",
        )
    elif decision != "ship":
        needed = verdict.get("cases_needed")
        message = reasons + (f"; cases needed to decide: {needed}" if needed is not None else "")
        _add(case, "skipped", message=f"{decision}: {message}")

    for gate in doc["gates"]:
        case = _case(suite, f"{classname}.gates", f"gate {gate['name']}")
        status, detail = str(gate["status"]), str(gate["detail"])
        _properties(case, {"status": status})
        if status == "fail":
            _add(case, "failure", detail, message=detail, type="gate")
        elif status != "pass":
            _add(case, "skipped", message=f"{status}: {detail}")

    for row in doc["cases"]:
        case = _case(suite, f"{classname}.cases", f"case {row['case_id']}")
        cls = str(row["class"])
        _properties(
            case,
            {
                "class": cls,
                "tags": ",".join(str(tag) for tag in row["tags"]),
                "case_digest": str(row["case_digest"]),
                "A.rate": num(row["A"]["rate"]),
                "A.passes": f"{row['A']['passes']}/{row['A']['healthy']}",
                "B.rate": num(row["B"]["rate"]),
                "B.passes": f"{row['B']['passes']}/{row['B']['healthy']}",
            },
        )
        if cls == "only_a":
            message = (
                f"B regressed: A solves it ({row['A']['passes']}/{row['A']['healthy']}), "
                f"B does not ({row['B']['passes']}/{row['B']['healthy']})"
            )
            _add(case, "failure", message, message=message, type=CLASS_LABELS[cls])

    cases = suite.findall("testcase")
    counts = {
        "tests": len(cases),
        "failures": sum(1 for c in cases if c.find("failure") is not None),
        "errors": 0,
        "skipped": sum(1 for c in cases if c.find("skipped") is not None),
    }
    for element in (root, suite):
        for key, value in counts.items():
            if element is root and key == "skipped":
                continue  # not an attribute of <testsuites> in Jenkins' schema
            element.set(key, str(value))
        element.set("time", "0")
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"
