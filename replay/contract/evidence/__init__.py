"""Evidence the fakes did not write themselves: data the vendors and their SDKs publish
(octokit's recordings of real api.github.com traffic, GitHub's public GraphQL schema, the
Linear SDK's schema and query documents, Slack's Web API OpenAPI spec), vendored under
``contract_tests/evidence/<name>/`` with a ``SOURCE.json`` (repository, commit, files,
license) and the license beside it, and the checks that hold the fakes to it.

Each family of checks is a module here with a ``reports() -> list[Report]``;
``replay contract run`` prints every report per service (passed / total, then each known gap
with its reason, then each failure) and fails on a failure. A failing check is either fixed
in the fake or listed in the family's ``gaps.json`` with its reason (:class:`KnownGap`); a
gap that matches nothing is itself reported, so the list cannot go stale.
"""

from __future__ import annotations

import fnmatch
import gzip
import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from replay.contract.targets import ContractSetupError

EVIDENCE = Path(__file__).resolve().parents[3] / "contract_tests" / "evidence"
"""Where the vendored evidence lives in the repository."""

Service = Literal["github", "linear", "slack"]


class Source(BaseModel):
    """Where vendored evidence came from: ``SOURCE.json`` beside the files."""

    model_config = ConfigDict(extra="forbid")

    repository: str = Field(pattern=r"^[\w.-]+/[\w.-]+$")
    """The vendor's public repository, ``owner/name``."""
    commit: str = Field(pattern=r"^[0-9a-f]{40}$")
    """The commit the files were taken from."""
    files: list[str] = Field(min_length=1)
    """The files taken, as paths in that repository (stored here under the same paths)."""
    license: str
    """The license's SPDX identifier; its text is copied beside as ``LICENSE``."""
    retrieved: str = Field(pattern=r"^\d{4}-\d{2}-\d{2}$")
    """The day the files were copied."""
    commits: dict[str, str] = {}
    """Files taken at another commit than :attr:`commit` (path -> commit), when the one at
    :attr:`commit` could not be had."""
    sha256: dict[str, str] = {}
    """The SHA-256 of files as copied (path -> hex digest; ``LICENSE`` too), when recorded:
    :func:`load_source` refuses a directory whose files differ."""

    @model_validator(mode="after")
    def _named_files(self) -> Source:
        commit = re.compile(r"^[0-9a-f]{40}$")
        digest = re.compile(r"^[0-9a-f]{64}$")
        named = {*self.files, "LICENSE"}
        for path, c in self.commits.items():
            if path not in named or not commit.match(c):
                raise ValueError(f"commits: {path}: not a named file at a 40-hex commit")
        for path, d in self.sha256.items():
            if path not in named or not digest.match(d):
                raise ValueError(f"sha256: {path}: not a named file with a 64-hex digest")
        return self

    def commit_of(self, path: str) -> str:
        """The commit ``path`` was taken at."""
        return self.commits.get(path, self.commit)


def json_kind(value: Any) -> str:
    """The JSON type of a decoded value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    raise TypeError(f"not a JSON value: {value!r}")


def vendored_bytes(directory: Path, path: str) -> bytes:
    """A vendored file's upstream bytes: the file, or ``<path>.gz`` (gzip, for large ones:
    the java-slack-sdk samples are 13 MB as they are, 0.4 MB compressed) decompressed."""
    plain = directory / path
    if plain.is_file():
        return plain.read_bytes()
    return gzip.decompress((directory / f"{path}.gz").read_bytes())


def _vendored(directory: Path, path: str) -> bool:
    return (directory / path).is_file() or (directory / f"{path}.gz").is_file()


def load_source(directory: Path) -> Source:
    """The ``SOURCE.json`` of an evidence directory, checked: the license text and every file
    it names are present. A missing or malformed file is a :class:`ContractSetupError`."""
    path = directory / "SOURCE.json"
    try:
        source = Source.model_validate_json(path.read_bytes())
    except (OSError, ValidationError) as exc:
        raise ContractSetupError(f"{path}: not a valid evidence source: {exc}") from exc
    missing = [f for f in ("LICENSE", *source.files) if not _vendored(directory, f)]
    if missing:
        raise ContractSetupError(f"{directory}: SOURCE.json names missing files: {missing}")
    changed = [
        f
        for f, digest in sorted(source.sha256.items())
        if hashlib.sha256(vendored_bytes(directory, f)).hexdigest() != digest
    ]
    if changed:
        raise ContractSetupError(f"{directory}: files differ from SOURCE.json's sha256: {changed}")
    return source


class KnownGap(BaseModel):
    """A difference from the evidence accepted on purpose, with why."""

    model_config = ConfigDict(extra="forbid")

    subject: str
    """An fnmatch pattern over :attr:`Check.subject`."""
    problem: str = "*"
    """An fnmatch pattern over the problem text."""
    why: str = Field(min_length=10)


def load_gaps(directory: Path) -> list[KnownGap]:
    """The ``gaps.json`` of an evidence directory (a JSON list of :class:`KnownGap`); none
    when the file is absent."""
    path = directory / "gaps.json"
    if not path.exists():
        return []
    try:
        raw = json.loads(path.read_bytes())
        return [KnownGap.model_validate(g) for g in raw]
    except (ValueError, ValidationError) as exc:
        raise ContractSetupError(f"{path}: not a list of known gaps: {exc}") from exc


@dataclass(frozen=True)
class Check:
    """One thing held to the evidence: a recorded interaction replayed, a field of the fake's
    schema, a response, an SDK document."""

    subject: str
    """What was checked, stable across runs (``labels #3 GET /repos/{owner}/{repo}/labels``,
    ``Issue.title``, ``query issue``)."""
    problems: tuple[str, ...] = ()
    """Each way it differs from the evidence; empty when it conforms."""
    gap: str | None = None
    """Why the problems are accepted: the reason of the known gap they all match."""

    @property
    def ok(self) -> bool:
        return not self.problems


@dataclass
class Report:
    """One family of checks for one service against one source."""

    service: Service
    family: str
    """``real interactions``, ``schema conformance``, ``response conformance``,
    ``SDK documents``, ``error codes``."""
    source: Source
    checks: list[Check] = field(default_factory=list)
    unused_gaps: list[KnownGap] = field(default_factory=list)
    """Known gaps that matched no problem: stale, reported as failures."""

    @property
    def passed(self) -> int:
        return sum(1 for c in self.checks if c.ok)

    @property
    def total(self) -> int:
        return len(self.checks)

    @property
    def gaps(self) -> list[Check]:
        return [c for c in self.checks if not c.ok and c.gap]

    @property
    def failures(self) -> list[Check]:
        return [c for c in self.checks if not c.ok and not c.gap]

    @property
    def ok(self) -> bool:
        return not self.failures and not self.unused_gaps

    def headline(self) -> str:
        return (
            f"{self.service} {self.family}: {self.passed}/{self.total} "
            f"({len(self.gaps)} known gaps, {len(self.failures)} failures) "
            f"against {self.source.repository}@{self.source.commit[:12]}"
        )

    def lines(self, every: bool = False) -> list[str]:
        """The headline, each known gap and each failure; with ``every``, each check that
        held too (``ok  Issue.title``): the whole list of what was held to the evidence."""
        out = [self.headline()]
        if every:
            out += [f"  ok   {c.subject}" for c in self.checks if c.ok]
        out += [f"  gap  {c.subject}: {'; '.join(c.problems)} -- {c.gap}" for c in self.gaps]
        out += [f"  FAIL {c.subject}: {p}" for c in self.failures for p in c.problems]
        out += [
            f"  FAIL stale gap {g.subject} / {g.problem}: matches nothing" for g in self.unused_gaps
        ]
        return out


def apply_gaps(
    service: Service, family: str, source: Source, checks: list[Check], gaps: list[KnownGap]
) -> Report:
    """The report of ``checks`` with known gaps applied: a check whose every problem matches
    one gap (subject and problem) carries that gap's reason; gaps that matched nothing are
    kept as :attr:`Report.unused_gaps`."""
    used: set[int] = set()
    out: list[Check] = []
    for check in checks:
        reasons: list[str] = []
        for problem in check.problems:
            hit = next(
                (
                    i
                    for i, g in enumerate(gaps)
                    if fnmatch.fnmatchcase(check.subject, g.subject)
                    and fnmatch.fnmatchcase(problem, g.problem)
                ),
                None,
            )
            if hit is None:
                reasons = []
                break
            used.add(hit)
            reasons.append(gaps[hit].why)
        gap = "; ".join(dict.fromkeys(reasons)) if reasons and check.problems else None
        out.append(Check(check.subject, check.problems, gap))
    unused = [g for i, g in enumerate(gaps) if i not in used]
    return Report(service, family, source, out, unused)
