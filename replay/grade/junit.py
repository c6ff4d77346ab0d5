"""Reading the hidden tests' verdict: JUnit XML and the command's exit status, together.

A test passes only when the report says so *and* the exit status agrees: a diff that prints
its own "PASSED" lines, or writes a report of its own, must not pass (SWE-bench's spoof check).
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from replay.grade.honeypots import Honeypot

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
    # class names are capitalised by convention, modules are not. The first part is never a
    # class: a classname starts with the test's module (fontTools' tests live in ``Tests/``).
    split = next((i for i, p in enumerate(parts) if i and p[:1].isupper()), len(parts))
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
    spoof_reasons: list[str] = field(default_factory=list)
    """Why the reports cannot be trusted, one line per finding (empty unless spoofed)."""

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


Address = tuple[str, str]
"""A test as pytest's JUnit writer names it: ``(classname, name)``."""


def reported_addresses(xml: str | bytes) -> dict[Address, list[TestStatus]]:
    """Every status the report gives each ``(classname, name)``, in the report's order."""
    try:
        root = ET.fromstring(xml)
    except ET.ParseError as exc:
        raise JUnitError(f"not XML: {exc}") from exc
    found: dict[Address, list[TestStatus]] = {}
    for case in root.iter("testcase"):
        status: TestStatus = "passed"
        for child in case:
            got = _CHILD_STATUS.get(child.tag)
            if got is not None and _rank(got) > _rank(status):
                status = got
        found.setdefault((case.get("classname", ""), case.get("name", "")), []).append(status)
    return found


RecordStatus = Literal["passed", "failed", "skipped"]


@dataclass(frozen=True)
class GuardRecord:
    """What the grader's pytest plugin (``replay/grade/guard.py``) wrote out of the tests'
    process in one repeat, as it happened: read from the pipe it was handed."""

    sessions: int
    """pytest sessions that loaded the plugin (its ``hello`` records)."""
    collected: dict[str, Address]
    """Every test collected to run: node id -> its JUnit address."""
    outcomes: dict[str, RecordStatus]
    """Every test that reported: its worst phase (an expected failure counts as skipped)."""
    addresses: dict[str, Address]
    """The JUnit address of every test that reported."""
    tampered: list[str]
    """Node ids with a phase that raised but was reported passed."""
    machinery: list[str]
    """pytest's own functions and classes (and those of the JUnit writer's libraries, and the
    plugin's) found replaced, re-coded or added after the snapshot taken before any of the
    repository was imported."""
    plugins: list[str]
    """pytest plugins registered during collection that no conftest, ``pytest_plugins`` list
    or pytest itself accounts for: registered by code under test."""
    exitstatus: int | None
    """The exit status pytest's session ended with (its last ``end`` record); None: none."""
    malformed: int
    """Lines on the pipe that are not the plugin's records (written there by someone else)."""
    cut: bool = False
    """The pipe held more than the runner reads back (a suite of some 100,000 tests, or a
    flood): the records stop at the cap, so tests after it are not held against the report."""

    @classmethod
    def parse(cls, data: bytes | None, cut: bool = False) -> GuardRecord | None:
        """The records on the pipe; None when the plugin never said hello. With ``cut`` (the
        runner kept only the pipe's head), the line the cut ends in and the runner's marker
        after it are not counted as stray lines."""
        if not data:
            return None
        if cut:
            data = data[: data.rfind(b"\n[replay: ")]
            data = data[: data.rfind(b"\n") + 1]
        sessions, malformed = 0, 0
        collected: dict[str, Address] = {}
        outcomes: dict[str, RecordStatus] = {}
        addresses: dict[str, Address] = {}
        tampered: list[str] = []
        machinery: list[str] = []
        plugins: list[str] = []
        exitstatus: int | None = None
        for line in data.split(b"\n"):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                kind = record["k"]
                if kind == "hello":
                    sessions += 1
                elif kind == "collected":
                    for nodeid, (classname, name) in record["items"]:
                        collected[str(nodeid)] = (str(classname), str(name))
                elif kind == "report":
                    nodeid = str(record["id"])
                    classname, name = record["address"]
                    addresses[nodeid] = (str(classname), str(name))
                    outcome = record["outcome"]
                    status: RecordStatus
                    if record["xfail"]:
                        # XFAIL (it raised, as marked) is skipped, as pytest reports it; XPASS
                        # (not strict: the body ran without raising) passed, as pytest's JUnit
                        # writer says; a strict XPASS pytest itself reports failed.
                        status = {"passed": "passed", "failed": "failed"}.get(outcome, "skipped")  # type: ignore[assignment]
                    else:
                        status = {"passed": "passed", "failed": "failed"}.get(outcome, "skipped")  # type: ignore[assignment]
                    if outcome == "passed" and record["raised"] and not record["xfail"]:
                        tampered.append(nodeid)
                        status = "failed"
                    before = outcomes.get(nodeid, "passed")
                    outcomes[nodeid] = max(before, status, key=_RECORD_RANK.index)
                elif kind == "machinery":
                    machinery += [str(c) for c in record["changed"]]
                elif kind == "plugin":
                    plugins.append(str(record["origin"]))
                elif kind == "end":
                    exitstatus = int(record["exitstatus"])
                else:
                    malformed += 1
            except (ValueError, TypeError, KeyError, AttributeError):
                malformed += 1
        if sessions == 0:
            return None
        return cls(
            sessions=sessions,
            collected=collected,
            outcomes=outcomes,
            addresses=addresses,
            tampered=sorted(set(tampered)),
            machinery=machinery,
            plugins=plugins,
            exitstatus=exitstatus,
            malformed=malformed,
            cut=cut,
        )


_RECORD_RANK: list[RecordStatus] = ["passed", "skipped", "failed"]
_JUNIT_RANK = {"passed": 0, "skipped": 1, "missing": 2, "failed": 2, "error": 2}


def _lies(
    record: GuardRecord,
    report: bytes | str | None,
    code: int,
    honeypots: Sequence[Honeypot],
) -> tuple[list[str], set[str]]:
    """Why one repeat's report cannot be trusted, and the node ids it misreported."""
    why: list[str] = []
    lied: set[str] = set(record.tampered)
    if record.tampered:
        why.append(f"phases that raised were reported passed: {_few(record.tampered)}")
    if record.machinery:
        why.append(f"pytest's own machinery was changed: {_few(record.machinery)}")
    if record.plugins:
        why.append(f"code under test registered pytest plugins: {_few(record.plugins)}")
    if record.malformed:
        why.append(f"{record.malformed} line(s) not written by the grader's plugin on its pipe")
    try:
        junit = reported_addresses(report) if report else {}
    except JUnitError:
        junit = {}
    if report and junit:
        seen = {record.addresses[n] for n in record.outcomes}
        kinder = [
            n
            for n, status in record.outcomes.items()
            if (got := junit.get(record.addresses[n])) is not None
            and _JUNIT_RANK[_worst(got)] < _RECORD_RANK.index(status)
        ]
        left_out = [n for n in record.outcomes if record.addresses[n] not in junit]
        # Past a cut, the records of later tests were never read: their tests are not invented.
        invented = [] if record.cut else [f"{c}::{n}" for c, n in junit if (c, n) not in seen]
        if kinder:
            why.append(f"the JUnit report is kinder than what ran: {_few(kinder)}")
        if left_out:
            why.append(f"the JUnit report leaves out tests that ran: {_few(left_out)}")
        if invented:
            why.append(f"the JUnit report names tests that never ran: {_few(invented)}")
        lied |= set(kinder) | set(left_out)
    if record.sessions == 1 and not record.cut:
        if record.exitstatus is None and report:
            why.append("pytest's session never ended, yet a report was written")
        elif record.exitstatus not in (None, 0) and code == 0:
            why.append(f"pytest's session ended with {record.exitstatus}, the process with 0")
    why += _honeypot_lies(honeypots, record, junit)
    if (
        honeypots
        and code == 0
        and any(_instances(pot, record.collected.values()) for pot in honeypots)
    ):
        why.append("the process exited 0 although honeypot tests ran (they always fail)")
    return why, lied


def _instances(
    pot: Honeypot, addresses: Iterable[Address], name: str | None = None
) -> list[Address]:
    want = name or pot.name
    return [
        (c, n)
        for c, n in addresses
        if c == pot.classname and (n == want or n.startswith(want + "["))
    ]


def _honeypot_lies(
    honeypots: Sequence[Honeypot], record: GuardRecord, junit: dict[Address, list[TestStatus]]
) -> list[str]:
    """What the honeypots say of one repeat: each must have run (if its source ran) and failed,
    as it ran and in the report."""
    ran_ok: list[str] = []
    reported_ok: list[str] = []
    unrun: list[str] = []
    for pot in honeypots:
        for address in _instances(pot, record.addresses.values()):
            nodeid = next(n for n, a in record.addresses.items() if a == address)
            outcome = record.outcomes[nodeid]
            if outcome == "skipped" and _source_skipped(pot, address, record):
                continue
            if outcome != "failed":
                ran_ok.append(f"{nodeid} ({outcome})")
        for address in _instances(pot, junit):
            status = _worst(junit[address])
            if status == "skipped" and _source_skipped(pot, address, record):
                continue
            if status not in ("failed", "error"):
                reported_ok.append(f"{address[0]}::{address[1]} ({status})")
        source_ran = _instances(pot, record.collected.values(), pot.source_name)
        if source_ran and not _instances(pot, record.collected.values()):
            unrun.append(f"{pot.node} (cloned from {pot.source})")
    why = []
    if ran_ok:
        why.append(f"honeypot tests did not fail as they ran: {_few(ran_ok)}")
    if reported_ok:
        why.append(f"honeypot tests did not fail in the JUnit report: {_few(reported_ok)}")
    if unrun:
        why.append(f"honeypot tests were not run while the tests they copy were: {_few(unrun)}")
    return why


def _source_skipped(pot: Honeypot, address: Address, record: GuardRecord) -> bool:
    """Whether the source's instance of the same parameters (``test_x[b]`` for
    ``test_pot[b]``) was skipped as it ran: a skip mark on a parameter is cloned with the test.
    Nothing is gained by making such a source skip: a listed instance that skips fails the run
    on its own, and the instances that ran still each have a honeypot that must fail."""
    suffix = address[1][len(pot.name) :]
    source = (pot.classname, pot.source_name + suffix)
    node = next((n for n, a in record.addresses.items() if a == source), None)
    return node is not None and record.outcomes.get(node) == "skipped"


def _few(items: Sequence[str], n: int = 3) -> str:
    shown = ", ".join(items[:n])
    return shown + (f" and {len(items) - n} more" if len(items) > n else "")


def judge(
    reports: Sequence[str | bytes | None],
    exit_codes: Sequence[int],
    fail_to_pass: Sequence[str],
    pass_to_pass: Sequence[str],
    guards: Sequence[GuardRecord | None] | None = None,
    honeypots: Sequence[Honeypot] = (),
) -> TestVerdict:
    """Combine one report and exit status per repeat into a verdict.

    A listed test missing from a report counts as failed (``missing``); a skipped
    FAIL_TO_PASS test is a failure. A repeat whose report is absent or unreadable counts every
    listed test as missing. When the exit status is non-zero yet the report claims every
    listed test passed, the repeat is treated as spoofed and nothing in it counts as passed.

    ``guards`` (one per repeat, when the grader's pytest plugin ran) are the records it wrote
    out of the tests' process as they happened: a report kinder than those records, leaving
    out a test that ran, naming one that never ran, an exit status other than the session's,
    pytest's machinery changed, a plugin registered by code under test, or a honeypot (see
    :mod:`replay.grade.honeypots`) that did not fail, makes the repeat spoofed: nothing in it
    counts as passed, and :attr:`TestVerdict.spoof_reasons` says why. A missing record beside
    an existing report means the plugin was taken out: spoofed too.
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
    reasons: list[str] = []
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
            reasons.append("the report says every listed test passed, the exit status does not")
            statuses = {t: "failed" for t in listed}
        if guards is not None:
            guard = guards[i]
            if guard is None and report:
                spoofed = unguarded = True
                reasons.append("the grader's plugin left no record, yet a report exists")
                statuses = {t: "failed" for t in listed}
            elif guard is not None:
                why, lied = _lies(guard, report, code, honeypots)
                tampered |= lied
                if why:
                    spoofed = True
                    reasons += [r for r in why if r not in reasons]
                    statuses = {t: "failed" for t in listed}
        per_repeat.append(statuses)
    flaky = sorted(t for t in listed if len({r[t] for r in per_repeat}) > 1)
    final = {t: _worst([r[t] for r in per_repeat]) for t in listed}
    return TestVerdict(
        fail_to_pass={t: final[t] for t in fail_to_pass},
        pass_to_pass={t: final[t] for t in pass_to_pass},
        exit_codes=list(exit_codes),
        flaky=flaky if not spoofed else [],
        spoofed=spoofed,
        tampered=sorted(tampered),
        unguarded=unguarded,
        contradictory=sorted(contradictory),
        spoof_reasons=reasons,
    )


def _worst(statuses: list[TestStatus]) -> TestStatus:
    return max(statuses, key=_rank)
