"""The grade of one run (``grade.json``, ``schema: 1``): the verdict and everything behind it.

Written by the grader (:func:`replay.grade.grader.grade_run`) into the run's directory and,
whole, into the results store; read back by the run summary, the results store and the CLI
through :func:`load_grade` or :func:`parse_grade`, never by string keys. A file of another
format version is refused with a clear error rather than half read.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from replay.base.errors import InputError
from replay.base.formats import Strict, parse_json, read_text, validate_data
from replay.base.outcomes import Outcome
from replay.grade.honeypots import Honeypot
from replay.grade.junit import TestStatus
from replay.grade.sideeffects import RuleResult
from replay.grade.wire import WireSummary

GRADE_VERSION = 1
"""The ``grade.json`` format this code writes and reads."""


class Restored(Strict):
    """A path of the repository graded with the case's version instead of the agent's."""

    path: str
    """Relative to the repository's root."""
    action: Literal["restored", "removed"]
    """``restored`` from the base commit (+ hidden tests), or ``removed`` (not in the case)."""
    reason: str
    """Which kind of test infrastructure the path is."""


class HiddenTestsGrade(Strict):
    """The hidden tests' verdict, as graded outside the agent's workspace."""

    resolved: bool
    """SWE-bench's resolved: every FAIL_TO_PASS and PASS_TO_PASS test passed, honestly."""
    applied: str
    """How the agent's diff went in: apply, 3way, fuzz, empty, or none (it did not apply)."""
    fail_to_pass: dict[str, TestStatus]
    """Each FAIL_TO_PASS test's status (its worst over the repeats)."""
    pass_to_pass: dict[str, TestStatus]
    """Each PASS_TO_PASS test's status (its worst over the repeats)."""
    exit_codes: list[int]
    """The test command's exit status, one per repeat."""
    flaky: list[str]
    """Listed tests whose status differed between repeats."""
    spoofed: bool
    """The reports cannot be trusted (a report contradicted by the exit status or by the
    grader's own pytest plugin)."""
    tampered: list[str]
    """Tests the grader's pytest plugin saw reported otherwise than they ran."""
    unguarded: bool
    """The grader's plugin was expected but left no record while a report exists."""
    contradictory: list[str]
    """Listed tests a single report gave contradictory statuses."""
    restored: list[Restored]
    """Test infrastructure the diff changed, graded with the case's version instead."""
    stopped: str | None
    """Why the hidden tests could not run to the end under the agent's code (they failed)."""
    spoof_reasons: list[str] = Field(default_factory=list)
    """Why the reports could not be trusted, one finding per line (empty unless spoofed):
    the grader's plugin's records, the exit status and the honeypots against the report."""
    honeypots: list[Honeypot] = Field(default_factory=list)
    """Tests planted in this grading that must fail on any code (fresh every grading)."""
    honeypot_note: str | None = None
    """Why fewer honeypots (or none) were planted, when that is so."""

    @property
    def f2p_passed(self) -> int:
        """FAIL_TO_PASS tests that passed."""
        return sum(s == "passed" for s in self.fail_to_pass.values())

    @property
    def p2p_passed(self) -> int:
        """PASS_TO_PASS tests that passed."""
        return sum(s == "passed" for s in self.pass_to_pass.values())


class WorldError(Strict):
    """A request a fake of ours failed on (answered 500): the world's defect, not the run's."""

    url: str
    """The request's URL."""
    method: str
    """Its method."""
    host: str
    """Its host."""
    error: str
    """The exception."""


class SideEffectsGrade(Strict):
    """The case's side-effect rules held against the run's event log."""

    ok: bool
    """Every rule's count was within its bounds."""
    violated: list[str]
    """The rules that did not hold: forbidden effects that happened, then expected ones that
    did not."""
    rules: list[RuleResult]
    """Every rule, with the events it matched."""
    mutations: int
    """Events that changed the world (everything but denials, model calls, human replies)."""


class Attempts(Strict):
    """What the agent tried to ship."""

    pushes: int
    """``git.push`` events."""
    prs_opened: int
    """``github.pull_request.opened`` events."""


class Tokens(Strict):
    """Tokens the model calls reported, over every attempt."""

    input: int
    """Input tokens (OpenAI counts cached ones in them)."""
    output: int
    """Output tokens."""


class Seconds(Strict):
    """Where the run's time went."""

    harness: float
    """The harness's own run, in the sandbox."""
    total: float
    """The whole run, grading included."""


class Grade(Strict):
    """The verdict on one run and the evidence it was drawn from."""

    schema_: Literal[1] = Field(default=1, alias="schema")
    """The format's version."""
    run_id: str
    """The run's id (also its directory's name)."""
    case_id: str
    """The case replayed."""
    attempt: int
    """1-based index of the run among the runs of the same case and configuration."""
    harness: str
    """The harness spec's name."""
    model: str
    """The model, or ``stub:<trajectory>`` for a stub run."""
    image: str
    """The environment image the run used."""
    harness_image: str | None
    """The harness's own image on top of it; None when the harness came in as files."""
    outcome: Outcome
    """pass, model_fail, transport_fail, protocol_fail or infra_fail."""
    reason: str
    """The outcome in one line."""
    tests: HiddenTestsGrade | None
    """The hidden tests' verdict; None when they were not run (an infrastructure failure)."""
    world_errors: list[WorldError]
    """Requests a fake failed on: shown beside the verdict, never voiding the run."""
    side_effects: SideEffectsGrade
    """The side-effect rules' verdict."""
    interventions: int
    """Scripted people who answered the agent."""
    attempts: Attempts
    """Pushes and pull requests the agent made."""
    tokens: Tokens
    """Tokens the model calls reported."""
    cost_usd: float | None
    """What the tokens cost by the price table; None for a model the table does not know."""
    model_wait_s: float
    """Time spent waiting on the model route, in seconds."""
    wire: WireSummary
    """The model calls rolled up: healthy or not, and why."""
    harness_exit: int | None
    """The harness's exit status; None when it did not exit on its own."""
    harness_claims: list[str]
    """What the harness said of its run that the evidence did not bear out."""
    stopped_by: str | None
    """A budget or limit the run hit (wall time, tokens, memory...)."""
    infra_errors: list[str]
    """What broke in the sandbox, the gateway, the grader or the runner's account."""
    seconds: Seconds
    """Where the run's time went."""
    diff_bytes: int
    """Size of the agent's final diff."""
    harness_egress: list[str] = Field(default_factory=list)
    """Requests the harness made on its own that the gateway refused (``METHOD host/path``,
    in order), as its spec declares them: in the event log as denied egress, not held
    against the agent by the side-effect rules."""

    @property
    def tests_resolved(self) -> bool:
        """The hidden tests ran and were resolved."""
        return self.tests is not None and self.tests.resolved

    def dump(self) -> dict[str, Any]:
        """The JSON-ready mapping, as ``grade.json`` and the results store hold it."""
        return self.model_dump(mode="json", by_alias=True)

    def to_json(self) -> str:
        """The text of ``grade.json``."""
        return json.dumps(self.dump(), indent=2) + "\n"


def parse_grade(data: Any, source: Path | str) -> Grade:
    """Validate a grade read from ``source`` (a file, or where in the store it came from).

    A grade of a format version this code does not read is an :class:`InputError` naming
    the version, before any other field is looked at.
    """
    if isinstance(data, dict):
        version = data.get("schema")
        if version != GRADE_VERSION:
            found = "no format version" if version is None else f"format version {version!r}"
            raise InputError(
                source,
                f"a grade with {found}; this replay reads version {GRADE_VERSION} only",
                "schema",
            )
    return validate_data(Path(source), data, Grade)


def load_grade(path: Path) -> Grade:
    """Read a run's ``grade.json``."""
    return parse_grade(parse_json(path, read_text(path)), path)
