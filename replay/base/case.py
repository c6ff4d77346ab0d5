"""The case format (``schema: 2``; ``schema: 1`` files still load): one shipped ticket, replayed.

A case names a snapshot (the world at time T), the ticket the agent is given, how to build
the environment, the hidden tests recovered from the real fix, the side-effect rules the run
is judged by, its budgets, and the gold fix. Paths inside a case are relative to the case
file; :func:`load_case` resolves them.

Versions: schema 2 adds end-state rules (:class:`EndStateRule`, ``at_end:``) beside the rules
on events; everything else is as in schema 1, so a schema-1 file loads unchanged, and a file
with an end-state rule must say ``schema: 2`` (a reader that knows only schema 1 then refuses
it by its version, not by an odd field).
"""

from __future__ import annotations

import fnmatch
import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AwareDatetime,
    Discriminator,
    Field,
    StringConstraints,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic import Tag as Form
from pydantic_core import InitErrorDetails, PydanticCustomError

from replay.base.endstate import OBJECTS, object_field_problem, object_problem
from replay.base.errors import CaseError, InputError
from replay.base.eventkinds import field_problem, kind_problem, kinds_matching, service_problem
from replay.base.events import Event
from replay.base.formats import Strict, load_model

CASE_SCHEMA = 2
"""The case format this code writes; it reads 1 and 2."""

Service = Literal[
    "github", "linear", "slack", "git", "egress", "registry", "docs", "model", "gateway"
]
Sha = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{40}$")]
Identifier = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9._-]*$", max_length=100)]


class Ticket(Strict):
    """Where the ticket the agent is asked to solve lives."""

    service: Literal["github", "linear", "slack"]
    """The service that holds the ticket."""
    ref: str = Field(min_length=1)
    """Its reference there: ``owner/repo#7`` on GitHub, ``ENG-12`` on Linear, or
    ``#channel/<ts>`` for a Slack thread."""

    @model_validator(mode="after")
    def _ref_shape(self) -> Ticket:
        shapes = {
            "github": r"^[\w.-]+/[\w.-]+#\d+$",
            "linear": r"^[A-Z][A-Z0-9]*-\d+$",
            "slack": r"^#[\w.-]+/\d+\.\d+$",
        }
        if not re.match(shapes[self.service], self.ref):
            raise ValueError(f"ref {self.ref!r} is not a {self.service} reference")
        return self


class Repository(Strict):
    """The repository the agent works on, as it stood at T."""

    name: str = Field(pattern=r"^[\w.-]+/[\w.-]+$")
    """``owner/name`` on the fake GitHub."""
    base_commit: Sha
    """The commit the agent starts from: the last one before the fix."""


Toolchain = Literal["build", "node"]
"""A toolchain a base image can carry besides Python (``replay/images/base.py`` TOOLCHAINS)."""

BASE_REPOSITORY = "replay-base"
"""The repository ``replay image base`` tags its images in: ``replay-base:<release>[-<tool>]``."""


PACKAGES_PART = "deb."
"""How the part of a base image's tag that stands for its added Debian packages begins."""
DEBIAN_NAME = r"^[a-z0-9][a-z0-9+.-]+$"
"""A Debian package's name (Debian Policy, the ``Source`` and ``Package`` fields)."""
DebianPackage = Annotated[str, Field(pattern=DEBIAN_NAME)]


def packages_part(packages: Iterable[str]) -> str | None:
    """The part of a ``replay-base`` tag that names the Debian packages added to the image:
    ``deb.`` and a hash of their sorted names (names hold dashes, which part the tag); None
    for no packages."""
    names = sorted(set(packages))
    if not names:
        return None
    return PACKAGES_PART + hashlib.sha256("\n".join(names).encode()).hexdigest()[:8]


def _tag_parts(reference: str) -> list[str] | None:
    repository, _, tag = reference.partition(":")
    if repository != BASE_REPOSITORY or not tag:
        return None
    return tag.split("-")[1:]


def base_tag_toolchains(reference: str) -> set[str] | None:
    """The toolchains a ``replay-base:<release>[-<toolchain>...][-deb.<hash>]`` tag names;
    ``None`` for an image of another name (whose toolchains only its labels tell)."""
    parts = _tag_parts(reference)
    return None if parts is None else {p for p in parts if not p.startswith(PACKAGES_PART)}


def base_tag_packages(reference: str) -> str | None:
    """The ``deb.<hash>`` part of a ``replay-base`` tag (None without one, or for another
    name)."""
    found = [p for p in _tag_parts(reference) or [] if p.startswith(PACKAGES_PART)]
    return found[0] if found else None


class Environment(Strict):
    """How the case's environment image is built (dependencies resolve as of T)."""

    base_image: str = Field(min_length=1)
    """The image the setup commands run on, built by ``replay image base``."""
    toolchains: list[Toolchain] = Field(default_factory=list)
    """Toolchains the setup and the tests need besides Python (``node``: Debian's nodejs and
    npm); the base image must carry them (``replay-base:bookworm-node``)."""
    packages: list[DebianPackage] = Field(default_factory=list)
    """Debian packages of the base image's release added to it besides the toolchains': what
    a build or the tests need from the system (a library's headers, ``pkg-config``), found
    by ``case create`` from the build's own words in Debian's index of package contents. A
    ``replay-base`` image names them by a hash (``replay-base:bookworm-build-deb.1a2b3c4d``)."""
    setup: list[str] = Field(default_factory=list)
    """Shell commands run in the repository at the base commit, through the gateway."""
    workdir: str = "/workspace/repo"
    """Where the repository is checked out inside the container."""

    @model_validator(mode="after")
    def _base_has_toolchains(self) -> Environment:
        named = base_tag_toolchains(self.base_image)
        if named is None:
            return self
        wanted_part = packages_part(self.packages)
        if base_tag_packages(self.base_image) != wanted_part:
            release, *tools = self.base_image.partition(":")[2].split("-")
            tag = "-".join(
                [release, *(t for t in tools if not t.startswith(PACKAGES_PART))]
                + ([wanted_part] if wanted_part else [])
            )
            said = ", ".join(sorted(set(self.packages))) or "none"
            raise ValueError(
                f"base_image {self.base_image} does not name the Debian packages the case "
                f"adds ({said}): name {BASE_REPOSITORY}:{tag}"
            )
        missing = sorted(set(self.toolchains) - named)
        if missing:
            release = self.base_image.partition(":")[2].split("-")[0]
            wanted = sorted(named | set(self.toolchains))
            options = " ".join(f"--toolchain {t}" for t in wanted)
            options += "".join(f" --package {p}" for p in sorted(set(self.packages)))
            tag = "-".join([release, *wanted, *([wanted_part] if wanted_part else [])])
            raise ValueError(
                f"base_image {self.base_image} lacks the toolchain(s) {', '.join(missing)} the"
                f" case declares: name {BASE_REPOSITORY}:{tag} (built by `replay image base"
                f" --release {release} {options}`)"
            )
        return self


class HiddenTests(Strict):
    """The tests recovered from the real fix; applied only at grading, outside the workspace."""

    patch: Path
    """A patch (relative to the case file) that adds or changes the test files."""
    fail_to_pass: list[str] = Field(min_length=1)
    """Test ids that fail before the fix and must pass after it."""
    pass_to_pass: list[str] = Field(default_factory=list)
    """Test ids that pass before and after the fix and must keep passing."""
    command: str = Field(min_length=1)
    """The test command; ``{junit}`` is replaced by the JUnit XML report path."""
    junit_xml: str = "/tmp/replay-junit.xml"
    """Where the command writes its JUnit XML report."""
    repeat: int = Field(default=1, ge=1, le=20)
    """How many times the hidden tests run; tests whose result flips are reported flaky."""
    added: list[str] = Field(default_factory=list)
    """Test files the team added to the fix's own tests so the case rejects wrong fixes it
    let through (``replay case create --extra-tests``): they are in :attr:`patch` with the
    fix's, and named here so a reader can tell the two apart."""

    @field_validator("command")
    @classmethod
    def _has_junit(cls, value: str) -> str:
        if "{junit}" not in value:
            raise ValueError("command must contain {junit}, where the JUnit XML report goes")
        return value


class Condition(Strict):
    """One test on a field of an event (or, in an end-state rule, of an object); exactly one
    of equals, contains, regex."""

    field: str = Field(min_length=1)
    """In a rule on events, a dotted path into the event as the log exports it, e.g.
    ``data.ref``, ``actor`` or ``object.id``; it must be a field of a kind the rule matches
    (``replay/base/eventkinds.py``). In an end-state rule, a field of the objects it counts,
    e.g. ``state`` or ``body`` (``replay/base/endstate.py``)."""
    equals: Any = None
    """The field's value is exactly this (``true``, ``"open"``, a number...)."""
    contains: str | None = None
    """The field's value, as text, contains this."""
    regex: str | None = None
    """The field's value, as text, matches this regular expression (``re.search``)."""

    @model_validator(mode="after")
    def _one_test(self) -> Condition:
        given = [n for n in ("contains", "regex") if getattr(self, n) is not None]
        if "equals" in self.model_fields_set:
            given.append("equals")
        if len(given) != 1:
            raise ValueError("give exactly one of equals, contains, regex")
        if self.regex is not None:
            try:
                re.compile(self.regex)
            except re.error as exc:
                raise ValueError(f"invalid regex {self.regex!r}: {exc}") from exc
        return self

    def matches(self, event: dict[str, Any]) -> bool:
        found, value = _lookup(event, self.field)
        if not found:
            return False
        if "equals" in self.model_fields_set:
            return bool(value == self.equals)
        text = value if isinstance(value, str) else str(value)
        if self.contains is not None:
            return self.contains in text
        assert self.regex is not None
        return re.search(self.regex, text) is not None


def _lookup(event: dict[str, Any], path: str) -> tuple[bool, Any]:
    value: Any = event
    for part in path.split("."):
        if not isinstance(value, dict) or part not in value:
            return False, None
        value = value[part]
    return True, value


class SideEffectRule(Strict):
    """Counts the events of a run's log that match, and bounds the count.

    An expected effect has ``at_least: 1``; a forbidden one ``at_most: 0``.
    """

    id: Identifier
    """A name for the rule, unique in the case; reports use it."""
    description: str = ""
    service: Service | None = None
    """Only events from this service."""
    kind: str = Field(min_length=1)
    """Event kind, e.g. ``github.pull_request.opened``; shell-style wildcards allowed. It must
    match a kind the world records (``replay/base/eventkinds.py``), of ``service`` when given."""
    where: list[Condition] = Field(default_factory=list)
    """All must hold for an event to match."""
    at_least: int | None = Field(default=None, ge=0)
    at_most: int | None = Field(default=None, ge=0)

    @model_validator(mode="after")
    def _bounds(self) -> SideEffectRule:
        if self.at_least is None and self.at_most is None:
            raise ValueError("give at_least, at_most or both")
        if self.at_least is not None and self.at_most is not None and self.at_least > self.at_most:
            raise ValueError("at_least is greater than at_most")
        return self

    @model_validator(mode="after")
    def _can_fire(self) -> SideEffectRule:
        # A kind, service or field the event log never records makes a rule that never
        # matches: an ``at_most: 0`` rule would pass every run. Checked against the log's
        # vocabulary (replay/base/eventkinds.py), each problem at its own field.
        problems: list[tuple[tuple[str | int, ...], str, str]] = []
        kind = kind_problem(self.kind)
        service = service_problem(self.kind, self.service) if self.service else None
        if kind:
            problems.append((("kind",), kind, self.kind))
        elif service:
            problems.append((("service",), service, str(self.service)))
        else:
            kinds = kinds_matching(self.kind, self.service)
            for i, condition in enumerate(self.where):
                problem = field_problem(condition.field, kinds)
                if problem:
                    problems.append((("where", i, "field"), problem, condition.field))
        _raise_at(type(self).__name__, problems)
        return self

    @property
    def forbidden(self) -> bool:
        return self.at_most == 0

    def matches(self, event: Event) -> bool:
        if self.service is not None and event.service != self.service:
            return False
        if not fnmatch.fnmatchcase(event.kind, self.kind):
            return False
        document = event.document() if self.where else {}
        return all(c.matches(document) for c in self.where)

    def holds(self, count: int) -> bool:
        low = self.at_least if self.at_least is not None else 0
        return count >= low and (self.at_most is None or count <= self.at_most)


def _raise_at(title: str, problems: list[tuple[tuple[str | int, ...], str, str]]) -> None:
    """Raise the problems as one validation error, each at its field (``kind``, ``where[0]``)."""
    if problems:
        raise ValidationError.from_exception_data(
            title,
            [
                InitErrorDetails(
                    type=PydanticCustomError("event_vocabulary", problem), loc=loc, input=value
                )
                for loc, problem, value in problems
            ],
        )


class EndStateRule(Strict):
    """Counts the objects of the world at the end of a run that match, and bounds the count
    (``schema: 2``).

    Where a rule on events counts acts, this counts what the acts left: "a pull request open
    at the end whose body references ENG-15" (``at_least: 1``) is not met by one opened and
    closed again; "the default branch at the end is where it was at T" holds whatever route
    moved it, and however it was moved back. The end state is the world at T (the case's
    snapshot) with every event of the run applied (``replay/grade/endstate.py``).
    """

    id: Identifier
    """A name for the rule, unique in the case; reports use it."""
    description: str = ""
    """What the rule asks, in words; reports show it."""
    at_end: str = Field(min_length=1)
    """The type of object counted: ``github.pull_request``, ``github.issue``,
    ``github.branch``, ``linear.issue`` or ``slack.message`` (``replay/base/endstate.py``
    lists each with its fields)."""
    where: list[Condition] = Field(default_factory=list)
    """All must hold for an object to count; each names a field of the type."""
    at_least: int | None = Field(default=None, ge=0)
    """The fewest matching objects allowed at the end."""
    at_most: int | None = Field(default=None, ge=0)
    """The most matching objects allowed at the end."""

    @model_validator(mode="after")
    def _bounds(self) -> EndStateRule:
        if self.at_least is None and self.at_most is None:
            raise ValueError("give at_least, at_most or both")
        if self.at_least is not None and self.at_most is not None and self.at_least > self.at_most:
            raise ValueError("at_least is greater than at_most")
        return self

    @model_validator(mode="after")
    def _names_what_the_end_holds(self) -> EndStateRule:
        problems: list[tuple[tuple[str | int, ...], str, str]] = []
        unknown = object_problem(self.at_end)
        if unknown:
            problems.append((("at_end",), unknown, self.at_end))
        else:
            for i, condition in enumerate(self.where):
                problem = object_field_problem(self.at_end, condition.field)
                if problem:
                    problems.append((("where", i, "field"), problem, condition.field))
        _raise_at(type(self).__name__, problems)
        return self

    @property
    def forbidden(self) -> bool:
        return self.at_most == 0

    def matches(self, obj: dict[str, Any]) -> bool:
        """Whether an object of the end state (of type :attr:`at_end`) meets every condition."""
        return all(c.matches(obj) for c in self.where)

    def holds(self, count: int) -> bool:
        low = self.at_least if self.at_least is not None else 0
        return count >= low and (self.at_most is None or count <= self.at_most)

    def name_of(self, obj: dict[str, Any]) -> str:
        """How a result names one object it matched: ``acme/semverkit#19``, ``ENG-15``..."""
        return OBJECTS[self.at_end].name_of(obj)


def _rule_form(data: Any) -> str:
    # The form is told by its key (``at_end`` or ``kind``), so that a bad rule is reported
    # against the one form it is meant to be, not against both.
    if isinstance(data, dict):
        return "rule[end]" if "at_end" in data else "rule[events]"
    return "rule[end]" if isinstance(data, EndStateRule) else "rule[events]"


Rule = Annotated[
    Annotated[SideEffectRule, Form("rule[events]")] | Annotated[EndStateRule, Form("rule[end]")],
    Discriminator(_rule_form),
]
"""A side-effect rule: on the run's events (``kind:``), or on the world's end state
(``at_end:``, schema 2)."""


class Budgets(Strict):
    """Limits for one run; hitting one stops the run and is recorded."""

    wall_time_s: int = Field(default=1800, gt=0)
    tokens: int | None = Field(default=None, gt=0)
    cost_usd: float | None = Field(default=None, gt=0)


class GoldEffect(Strict):
    """A side effect the real fix made (a PR, a ticket move, a thread reply)."""

    service: Service
    kind: str
    """A kind of event the log records (no wildcards), of that service."""
    data: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _is_recorded(self) -> GoldEffect:
        if any(c in self.kind for c in "*?["):
            _raise_at(
                type(self).__name__, [(("kind",), "name one event kind, not a pattern", self.kind)]
            )
        kind = kind_problem(self.kind)
        service = service_problem(self.kind, self.service)
        if kind:
            _raise_at(type(self).__name__, [(("kind",), kind, self.kind)])
        if service:
            _raise_at(type(self).__name__, [(("service",), service, self.service)])
        return self


class Gold(Strict):
    """The real fix: the patch that shipped (tests excluded) and what it did to the world."""

    patch: Path
    side_effects: list[GoldEffect] = Field(default_factory=list)


class ScriptedReply(Strict):
    """A reply a real person gave, posted by the world when the agent asks for it.

    Each such reply is logged as a human intervention.
    """

    person: str = Field(min_length=1)
    """The person's user id in the service (for Slack, ``U...``)."""
    service: Literal["slack", "github", "linear"]
    thread: str = Field(min_length=1)
    """Where the agent must ask: ``#channel/<ts>`` on Slack, the ticket ref elsewhere."""
    trigger: Literal["asks_in_thread", "mentions_person"] = "asks_in_thread"
    text: str = Field(min_length=1)


class AcceptedHit(Strict):
    """A hit of the image audit that is no leak, and why (e.g. an interpreter feature the fix
    mirrors). A hit is accepted when it matches every selector given: at least one of them."""

    path_glob: str | None = Field(default=None, min_length=1)
    """Shell-style pattern on the file's path in the image, e.g.
    ``/usr/lib/python3.11/tomllib/*``; a member of an archive is ``archive.whl!member``."""
    pattern: str | None = Field(default=None, min_length=1)
    """Text the matched gold line or hidden-test name contains."""
    reason: str = Field(min_length=1)
    """Why this copy of the answer is no leak; required."""

    @model_validator(mode="after")
    def _selects(self) -> AcceptedHit:
        if self.path_glob is None and self.pattern is None:
            raise ValueError("give path_glob, pattern or both")
        if not self.reason.strip():
            raise ValueError("reason must say why the hit is no leak")
        return self

    def covers(self, path: str, marker: str) -> bool:
        if self.path_glob is not None and not fnmatch.fnmatchcase(path, self.path_glob):
            return False
        return self.pattern is None or self.pattern in marker


class Audit(Strict):
    """How the case's leak audit judges what it finds in the environment and harness images."""

    accepted: list[AcceptedHit] = Field(default_factory=list)
    """Hits that are declared no leak, each with its reason."""

    def accepting(self, path: str, marker: str) -> AcceptedHit | None:
        """The first entry that accepts ``marker`` found at ``path``, if any."""
        return next((a for a in self.accepted if a.covers(path, marker)), None)


Tag = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9-]*$")]


class Provenance(Strict):
    """Where a case taken from a public repository comes from, and under which license its
    code (the history in the snapshot, the patches) is redistributed."""

    repository: str = Field(pattern=r"^https://\S+$")
    """The public repository's URL."""
    fix_commit: Sha
    """The real fix (its merge or last commit) in that repository."""
    fixed_at: AwareDatetime
    """When the fix was committed (how old the case is, beside any model's training cutoff)."""
    license: str = Field(min_length=1)
    """The repository's license (an SPDX identifier, e.g. MIT)."""
    license_file: Path
    """A copy of the repository's license text, relative to the case file."""
    ticket: str = Field(min_length=1)
    """Where the ticket's text comes from (the issue, or the fix's own message)."""


class Case(Strict):
    """One ticket the team shipped, restored as of T."""

    schema_: Literal[1, 2] = Field(alias="schema")
    """The format's version: 1, or 2 for a case with end-state rules."""
    id: Identifier
    title: str = Field(min_length=1)
    ticket: Ticket
    snapshot: Path
    """The snapshot directory, relative to the case file."""
    at: AwareDatetime
    """T: the moment the world is restored to. Must equal the snapshot's T."""
    repository: Repository
    environment: Environment
    hidden_tests: HiddenTests
    side_effects: list[Rule] = Field(default_factory=list)
    """The rules the run's side effects are judged by: on its events (acts), or on the world
    it leaves (end state, schema 2)."""
    budgets: Budgets = Field(default_factory=Budgets)
    tags: list[Tag] = Field(default_factory=list)
    gold: Gold
    humans: list[ScriptedReply] = Field(default_factory=list)
    """Replies people really gave, played back when the agent asks."""
    audit: Audit = Field(default_factory=Audit)
    """What the image audit accepts (``replay case audit``)."""
    provenance: Provenance | None = None
    """For a real historical fix: the repository, the fix and the license."""
    fixed_at: AwareDatetime | None = None
    """When the real fix landed (its commit's date, after T): how old the case is, and whether
    a model whose training cutoff came later may have seen the public fix. Optional in
    schema 1 so older case files stay valid: without it, ``provenance.fixed_at`` is taken;
    a case with neither has no age (reports group it as ``no fix date``). ``replay case
    create`` always writes it."""

    model_config = Strict.model_config | {"populate_by_name": True}

    @model_validator(mode="before")
    @classmethod
    def _fix_date_from_provenance(cls, data: Any) -> Any:
        # The case-level field is the one every report reads; a public case that predates it
        # names its fix date once, in its provenance.
        if isinstance(data, dict) and data.get("fixed_at") is None:
            provenance = data.get("provenance")
            if isinstance(provenance, dict) and provenance.get("fixed_at") is not None:
                return {**data, "fixed_at": provenance["fixed_at"]}
        return data

    @model_validator(mode="after")
    def _fix_date_holds(self) -> Case:
        if self.fixed_at is None:
            return self
        if self.provenance is not None and self.provenance.fixed_at != self.fixed_at:
            _raise_at(
                "Case",
                [
                    (
                        ("fixed_at",),
                        f"differs from provenance.fixed_at ({self.provenance.fixed_at})",
                        str(self.fixed_at),
                    )
                ],
            )
        if self.fixed_at < self.at:
            _raise_at(
                "Case",
                [
                    (
                        ("fixed_at",),
                        f"the fix is before T ({self.at.isoformat()})",
                        str(self.fixed_at),
                    )
                ],
            )
        return self

    @field_validator("side_effects")
    @classmethod
    def _unique_rule_ids(
        cls, rules: list[SideEffectRule | EndStateRule]
    ) -> list[SideEffectRule | EndStateRule]:
        seen: set[str] = set()
        for rule in rules:
            if rule.id in seen:
                raise ValueError(f"rule id {rule.id!r} is used twice")
            seen.add(rule.id)
        return rules

    @model_validator(mode="after")
    def _end_state_needs_schema_2(self) -> Case:
        for i, rule in enumerate(self.side_effects):
            if isinstance(rule, EndStateRule) and self.schema_ == 1:
                _raise_at(
                    "Case",
                    [
                        (
                            ("side_effects", i, "at_end"),
                            "an end-state rule needs schema: 2 (the case says schema: 1)",
                            rule.at_end,
                        )
                    ],
                )
        return self

    @field_validator("hidden_tests")
    @classmethod
    def _no_overlap(cls, tests: HiddenTests) -> HiddenTests:
        both = set(tests.fail_to_pass) & set(tests.pass_to_pass)
        if both:
            raise ValueError(f"tests listed as both fail_to_pass and pass_to_pass: {sorted(both)}")
        return tests


def read_patch(path: Path) -> str:
    """A case's patch, byte for byte: no newline translation (``Path.read_text`` would turn a
    carriage return that is file content into a line break and corrupt the patch)."""
    return Path(path).read_bytes().decode("utf-8", "surrogateescape")


def load_case(path: Path) -> Case:
    """Read and validate a case file; relative paths in it become absolute.

    Raises :class:`CaseError` naming the file, the field and the problem.
    """
    path = Path(path)
    try:
        case = load_model(path, Case)
    except InputError as exc:
        raise CaseError(exc.path, exc.problem, exc.field) from exc
    base = path.resolve().parent
    return case.model_copy(
        update={
            "snapshot": (base / case.snapshot).resolve(),
            "hidden_tests": case.hidden_tests.model_copy(
                update={"patch": (base / case.hidden_tests.patch).resolve()}
            ),
            "gold": case.gold.model_copy(update={"patch": (base / case.gold.patch).resolve()}),
            "provenance": None
            if case.provenance is None
            else case.provenance.model_copy(
                update={"license_file": (base / case.provenance.license_file).resolve()}
            ),
        }
    )


@dataclass(frozen=True)
class LoadedCase:
    """A case as read from its file, once: the validated case and the file it came from.

    What a run, an image build or an audit passes around instead of the file's path, so that
    none of them reads and validates the case again.
    """

    case: Case
    """The case, its paths made absolute."""
    path: Path
    """The case file (``case.yaml``), absolute."""

    @property
    def id(self) -> str:
        return self.case.id

    @property
    def directory(self) -> Path:
        """The case's directory: its paths are relative to it."""
        return self.path.parent


def read_case(path: Path) -> LoadedCase:
    """:func:`load_case`, keeping the file's (absolute) path beside the case."""
    return LoadedCase(load_case(path), Path(path).resolve())


def case_digest(loaded: LoadedCase) -> str:
    """The case file and what it names (snapshot manifest, patches): a changed one recalibrates."""
    case = loaded.case
    digest = hashlib.sha256()
    for part in (
        loaded.path,
        case.snapshot / "manifest.json",
        case.gold.patch,
        case.hidden_tests.patch,
    ):
        digest.update(Path(part).read_bytes())
    return digest.hexdigest()
