"""Reading the hidden tests' verdict: JUnit XML and the command's exit status, together.

A test passes only when the report says so *and* the exit status agrees: a diff that prints
its own "PASSED" lines, or writes a report of its own, must not pass (SWE-bench's spoof check).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

TestStatus = Literal["passed", "failed", "error", "skipped", "missing"]


class JUnitError(ValueError):
    """The report is not JUnit XML we can read."""


def parse_junit(xml: str | bytes) -> dict[str, TestStatus]:
    """Map ``file::Class::name`` style ids to a status.

    pytest writes ``classname="tests.test_x.TestY"`` and ``name="test_z[param]"``; the id we
    build is ``tests/test_x.py::TestY::test_z[param]`` (as ``pytest`` prints node ids), with
    the ``file`` attribute preferred when present.
    """
    try:
        root = ET.fromstring(xml)
    except ET.ParseError as exc:
        raise JUnitError(f"not XML: {exc}") from exc
    if root.tag not in ("testsuites", "testsuite"):
        raise JUnitError(f"root element is <{root.tag}>, not <testsuites> or <testsuite>")
    results: dict[str, TestStatus] = {}
    for case in root.iter("testcase"):
        test_id = _node_id(case)
        status: TestStatus = "passed"
        for child in case:
            if child.tag in ("failure",):
                status = "failed"
            elif child.tag == "error":
                status = "error"
            elif child.tag == "skipped":
                status = "skipped"
        previous = results.get(test_id)
        # A test reported twice (setup error + call failure) keeps the worst status.
        if previous is None or _rank(status) > _rank(previous):
            results[test_id] = status
    return results


def _rank(status: TestStatus) -> int:
    return ["passed", "skipped", "missing", "failed", "error"].index(status)


def _node_id(case: ET.Element) -> str:
    name = case.get("name", "")
    classname = case.get("classname", "")
    file = case.get("file")
    parts = classname.split(".") if classname else []
    if file:
        module_parts = file.removesuffix(".py").replace("/", ".").split(".")
        classes = parts[len(module_parts) :] if parts[: len(module_parts)] == module_parts else []
        return "::".join([file, *classes, name])
    # Without a file attribute: the longest dotted prefix that is a module path is the file;
    # class names are capitalised by convention, modules are not.
    split = next((i for i, p in enumerate(parts) if p[:1].isupper()), len(parts))
    module, classes = parts[:split], parts[split:]
    path = "/".join(module) + ".py" if module else ""
    return "::".join([p for p in [path, *classes, name] if p])


@dataclass(frozen=True)
class TestVerdict:
    """The hidden tests' result for one run (possibly over several repeats)."""

    fail_to_pass: dict[str, TestStatus]
    pass_to_pass: dict[str, TestStatus]
    exit_codes: list[int]
    flaky: list[str]
    """Listed tests whose status differed between repeats."""
    spoofed: bool
    """The report said everything listed passed but the command's exit status said not."""

    @property
    def f2p_passed(self) -> int:
        return sum(s == "passed" for s in self.fail_to_pass.values())

    @property
    def p2p_passed(self) -> int:
        return sum(s == "passed" for s in self.pass_to_pass.values())

    @property
    def resolved(self) -> bool:
        """SWE-bench's resolved: every FAIL_TO_PASS and every PASS_TO_PASS passed, honestly."""
        every = [*self.fail_to_pass.values(), *self.pass_to_pass.values()]
        return not self.spoofed and not self.flaky and all(s == "passed" for s in every)


def judge(
    reports: Sequence[str | bytes | None],
    exit_codes: Sequence[int],
    fail_to_pass: Sequence[str],
    pass_to_pass: Sequence[str],
) -> TestVerdict:
    """Combine one report and exit status per repeat into a verdict.

    A listed test missing from a report counts as failed (``missing``); a skipped
    FAIL_TO_PASS test is a failure. A repeat whose report is absent or unreadable counts every
    listed test as missing. When the exit status is non-zero yet the report claims every
    listed test passed, the repeat is treated as spoofed and nothing in it counts as passed.
    """
    if len(reports) != len(exit_codes) or not reports:
        raise ValueError("one report and one exit status per repeat")
    listed = [*fail_to_pass, *pass_to_pass]
    per_repeat: list[dict[str, TestStatus]] = []
    spoofed = False
    for report, code in zip(reports, exit_codes, strict=True):
        try:
            parsed = parse_junit(report) if report else {}
        except JUnitError:
            parsed = {}
        statuses: dict[str, TestStatus] = {t: parsed.get(t, "missing") for t in listed}
        all_pass = all(s == "passed" for s in statuses.values())
        others_failed = any(
            s in ("failed", "error") for t, s in parsed.items() if t not in statuses
        )
        if code != 0 and all_pass and not others_failed:
            spoofed = True
            statuses = {t: "failed" for t in listed}
        per_repeat.append(statuses)
    flaky = sorted(t for t in listed if len({r[t] for r in per_repeat}) > 1)
    final = {t: _worst([r[t] for r in per_repeat]) for t in listed}
    return TestVerdict(
        fail_to_pass={t: final[t] for t in fail_to_pass},
        pass_to_pass={t: final[t] for t in pass_to_pass},
        exit_codes=list(exit_codes),
        flaky=flaky,
        spoofed=spoofed,
    )


def _worst(statuses: list[TestStatus]) -> TestStatus:
    return max(statuses, key=_rank)
