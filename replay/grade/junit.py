"""Reading the hidden tests' verdict: JUnit XML and the command's exit status, together.

A test passes only when the report says so *and* the exit status agrees: a diff that prints
its own "PASSED" lines, or writes a report of its own, must not pass (SWE-bench's spoof check).
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

TestStatus = Literal["passed", "failed", "error", "skipped", "missing"]


_CHILD_STATUS: dict[str, TestStatus] = {"failure": "failed", "error": "error", "skipped": "skipped"}


class JUnitError(ValueError):
    """The report is not JUnit XML we can read."""


def parse_junit(xml: str | bytes) -> dict[str, TestStatus]:
    """Map ``file::Class::name`` style ids to a status.

    pytest writes ``classname="tests.test_x.TestY"`` and ``name="test_z[param]"``; the id we
    build is ``tests/test_x.py::TestY::test_z[param]`` (as ``pytest`` prints node ids), with
    the ``file`` attribute preferred when present. A test reported more than once keeps its
    worst status (see :func:`reported_statuses`).
    """
    return {t: _worst(statuses) for t, statuses in reported_statuses(xml).items()}


def reported_statuses(xml: str | bytes) -> dict[str, list[TestStatus]]:
    """Every status the report gives each test id, in the report's order."""
    try:
        root = ET.fromstring(xml)
    except ET.ParseError as exc:
        raise JUnitError(f"not XML: {exc}") from exc
    if root.tag not in ("testsuites", "testsuite"):
        raise JUnitError(f"root element is <{root.tag}>, not <testsuites> or <testsuite>")
    results: dict[str, list[TestStatus]] = {}
    for case in root.iter("testcase"):
        status: TestStatus = "passed"
        # A case with several outcome elements (a failure and a teardown error) is its worst.
        for child in case:
            found = _CHILD_STATUS.get(child.tag)
            if found is not None and _rank(found) > _rank(status):
                status = found
        results.setdefault(_node_id(case), []).append(status)
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
    """The reports cannot be trusted: one said everything listed passed while the command's
    exit status said not, or the grader's plugin saw reports rewritten or was taken out."""
    tampered: list[str] = field(default_factory=list)
    """Tests the grader's own pytest plugin saw reported otherwise than they ran: a phase that
    raised reported as passed, or a test some report said failed written to JUnit as passed."""
    unguarded: bool = False
    """The grader's plugin was expected but left no record while the report exists."""
    contradictory: list[str] = field(default_factory=list)
    """Listed tests a single report gave contradictory statuses (say, passed and failed);
    such a test counts with its worst status and the run is not resolved."""

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
        honest = not self.spoofed and not self.flaky and not self.contradictory
        return honest and all(s == "passed" for s in every)


@dataclass(frozen=True)
class GuardReport:
    """What the grader's pytest plugin (``replay/grade/guard.py``) saw in one repeat."""

    tampered: list[str]
    """Node ids with a phase that raised but was reported passed."""
    failed: list[str]
    """Node ids some phase's report said failed (expected failures aside)."""

    @classmethod
    def parse(cls, data: bytes | None) -> GuardReport | None:
        """The plugin's JSON; None when absent or not what the plugin writes."""
        if not data:
            return None
        try:
            raw = json.loads(data)
            tampered, failed = raw["tampered"], raw["failed"]
        except (ValueError, TypeError, KeyError):
            return None
        if not all(
            isinstance(x, list) and all(isinstance(i, str) for i in x) for x in (tampered, failed)
        ):
            return None
        return cls(tampered=tampered, failed=failed)


def judge(
    reports: Sequence[str | bytes | None],
    exit_codes: Sequence[int],
    fail_to_pass: Sequence[str],
    pass_to_pass: Sequence[str],
    guards: Sequence[GuardReport | None] | None = None,
) -> TestVerdict:
    """Combine one report and exit status per repeat into a verdict.

    A listed test missing from a report counts as failed (``missing``); a skipped
    FAIL_TO_PASS test is a failure. A repeat whose report is absent or unreadable counts every
    listed test as missing. When the exit status is non-zero yet the report claims every
    listed test passed, the repeat is treated as spoofed and nothing in it counts as passed.

    ``guards`` (one per repeat, when the grader's pytest plugin ran) is a second witness: a
    test it saw raise and reported passed, or fail and written to JUnit as passed, fails and
    makes the run spoofed; a missing record beside an existing report means the plugin was
    taken out, and the whole repeat counts as spoofed.
    """
    if len(reports) != len(exit_codes) or not reports:
        raise ValueError("one report and one exit status per repeat")
    if guards is not None and len(guards) != len(reports):
        raise ValueError("one guard record (or None) per repeat")
    listed = [*fail_to_pass, *pass_to_pass]
    per_repeat: list[dict[str, TestStatus]] = []
    spoofed = False
    contradictory: set[str] = set()
    tampered: set[str] = set()
    unguarded = False
    for i, (report, code) in enumerate(zip(reports, exit_codes, strict=True)):
        try:
            every = reported_statuses(report) if report else {}
        except JUnitError:
            every = {}
        parsed = {t: _worst(s) for t, s in every.items()}
        contradictory.update(t for t in listed if len(set(every.get(t, []))) > 1)
        statuses: dict[str, TestStatus] = {t: parsed.get(t, "missing") for t in listed}
        all_pass = all(s == "passed" for s in statuses.values())
        others_failed = any(
            s in ("failed", "error") for t, s in parsed.items() if t not in statuses
        )
        if code != 0 and all_pass and not others_failed:
            spoofed = True
            statuses = {t: "failed" for t in listed}
        if guards is not None:
            guard = guards[i]
            if guard is None and report:
                spoofed = unguarded = True
                statuses = {t: "failed" for t in listed}
            elif guard is not None:
                lied = set(guard.tampered) | {t for t in guard.failed if parsed.get(t) == "passed"}
                tampered |= lied
                spoofed = spoofed or bool(lied)
                statuses = {t: "failed" if t in lied else s for t, s in statuses.items()}
        per_repeat.append(statuses)
    flaky = sorted(t for t in listed if len({r[t] for r in per_repeat}) > 1)
    final = {t: _worst([r[t] for r in per_repeat]) for t in listed}
    return TestVerdict(
        fail_to_pass={t: final[t] for t in fail_to_pass},
        pass_to_pass={t: final[t] for t in pass_to_pass},
        exit_codes=list(exit_codes),
        flaky=flaky,
        spoofed=spoofed,
        tampered=sorted(tampered),
        unguarded=unguarded,
        contradictory=sorted(contradictory),
    )


def _worst(statuses: list[TestStatus]) -> TestStatus:
    return max(statuses, key=_rank)
