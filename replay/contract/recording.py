"""Recordings: one file per scenario, the normalised exchanges of a run against a target.

A live run writes ``contract_tests/recordings/<service>/<scenario>.json``; an offline run
compares the fake's exchanges with it (:func:`compare`): status codes, the headers clients
depend on, the shape of each body and its values after normalisation. The format is versioned
(``format``); ``recorded_against`` says where a file came from: ``live``, the vendor's API
reached with an account's tokens, is contract evidence; ``self``, this project's fake served as
if it were the live service, is only a regression snapshot of the fake and is never reported
as evidence (``replay contract run`` counts the two apart).
"""

from __future__ import annotations

import fnmatch
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from replay.base.errors import ReplayError
from replay.contract.normalise import Normaliser, shape

FORMAT = 1
TRACKED_HEADERS = (
    "content-type",
    "link",
    "retry-after",
    "x-ratelimit-limit",
    "x-ratelimit-remaining",
    "x-ratelimit-reset",
    "x-ratelimit-used",
    "x-ratelimit-resource",
)
"""Headers clients depend on: content type, ``Link`` pagination, rate limits, retry delay.

Of the rate limit headers only their presence is kept (their values depend on the account)."""
PRESENCE_ONLY = frozenset(h for h in TRACKED_HEADERS if h.startswith(("x-ratelimit", "retry")))


class RecordingError(ReplayError):
    """A recording file that cannot be read: not JSON, or not this format."""


class Exchange(BaseModel):
    """One request of a scenario and what came back, normalised."""

    model_config = ConfigDict(extra="forbid")

    step: str
    """The scenario's name for this step (``create issue``); unique within the scenario."""
    method: str
    """HTTP method as sent."""
    path: str
    """Request path, normalised (ids and the sandbox's names replaced)."""
    operation: str | None = None
    """What the step calls: a client method (``issues.create``), a Slack method, or the
    root fields of a GraphQL document (``mutation issueUpdate``)."""
    query: str | None = None
    """The GraphQL document sent, when the step is GraphQL (checked against the schema)."""
    status: int
    """HTTP status code."""
    headers: dict[str, str] = Field(default_factory=dict)
    """The tracked headers present in the response (:data:`TRACKED_HEADERS`), normalised."""
    shape: Any = None
    """The type tree of the body, before normalisation."""
    body: Any = None
    """The body, normalised."""
    model: str | None = None
    """githubkit's response model for a GitHub REST step (``Issue``, ``list[Label]``)."""


class Recording(BaseModel):
    """A scenario as recorded: written by ``replay contract record``, never by hand."""

    model_config = ConfigDict(extra="forbid")

    format: int = FORMAT
    """Version of this file format."""
    service: Literal["github", "slack", "linear"]
    scenario: str
    recorded_against: Literal["live", "self"]
    """``live``: recorded by ``replay contract record`` against the vendor's API with an
    account's tokens (evidence). ``self``: recorded from this project's own fake served as a
    stand-in for the live service (``--stand-in``; CI exercises the live code path that way):
    a regression snapshot of the fake, not evidence about the real service."""
    target_url: str
    """Base URL of what was recorded (loopback for a stand-in)."""
    exchanges: list[Exchange]

    def to_json(self) -> str:
        return json.dumps(self.model_dump(mode="json"), indent=2, sort_keys=False) + "\n"


def recording_path(root: Path, service: str, scenario: str) -> Path:
    return root / service / f"{scenario}.json"


def save(recording: Recording, root: Path) -> Path:
    path = recording_path(root, recording.service, recording.scenario)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(recording.to_json())
    return path


def load(root: Path, service: str, scenario: str) -> Recording | None:
    path = recording_path(root, service, scenario)
    if not path.exists():
        return None
    try:
        return Recording.model_validate_json(path.read_text())
    except ValidationError as exc:
        raise RecordingError(f"{path}: not a recording of format {FORMAT}: {exc}") from exc


@dataclass
class Raw:
    """A response as a client gave it back, before normalisation."""

    status: int
    headers: dict[str, str]
    body: Any


@dataclass
class Recorder:
    """Collects a scenario's exchanges, normalising each as it arrives."""

    normaliser: Normaliser
    exchanges: list[Exchange] = field(default_factory=list)
    raws: list[tuple[Exchange, Raw, Any]] = field(default_factory=list)
    """Each exchange with its raw response and (GitHub REST) the githubkit model type."""

    def add(
        self,
        step: str,
        method: str,
        path: str,
        raw: Raw,
        *,
        operation: str | None = None,
        query: str | None = None,
        model: Any = None,
    ) -> Exchange:
        if any(e.step == step for e in self.exchanges):
            raise ValueError(f"step {step!r} recorded twice")
        n = self.normaliser
        body = n.normalise(raw.body)  # first: it numbers the ids the path and headers use
        headers: dict[str, str] = {}
        lower = {k.lower(): v for k, v in raw.headers.items()}
        for name in TRACKED_HEADERS:
            if name not in lower:
                continue
            if name in PRESENCE_ONLY:
                headers[name] = "<present>"
            elif name == "link":
                headers[name] = n.link(lower[name])
            else:
                headers[name] = lower[name].replace(" ", "").lower()
        exchange = Exchange(
            step=step,
            method=method.upper(),
            path=n.url("http://x" + path).removeprefix("<x>"),
            operation=operation,
            query=query,
            status=raw.status,
            headers=headers,
            shape=shape(raw.body),
            body=body,
            model=_model_name(model),
        )
        self.exchanges.append(exchange)
        self.raws.append((exchange, raw, model))
        return exchange


def _model_name(model: Any) -> str | None:
    if model is None:
        return None
    name = getattr(model, "__name__", None)
    if isinstance(name, str) and not getattr(model, "__args__", None):
        return name
    text = repr(model)
    for prefix in ("typing.", "githubkit.versions."):
        text = text.replace(prefix, "")
    return text


# --------------------------------------------------------------------------- comparing


@dataclass(frozen=True)
class Gap:
    """A known difference between the fake and the recording (or a published schema), listed
    in ``contract_tests/gaps.py``."""

    scenario: str
    """The scenario (an fnmatch pattern: ``*`` for every scenario of the service)."""
    where: str
    """A pattern over difference paths (fnmatch): ``create issue.body.reactions*``."""
    why: str
    service: str = "*"


@dataclass(frozen=True)
class Difference:
    scenario: str
    where: str
    """``<step>.<status|headers.X|shape...|body...>``."""
    expected: Any
    actual: Any

    def __str__(self) -> str:
        return f"{self.scenario}: {self.where}: recorded {self.expected!r}, fake {self.actual!r}"


def _diff(where: str, expected: Any, actual: Any, out: list[tuple[str, Any, Any]]) -> None:
    if isinstance(expected, dict) and isinstance(actual, dict):
        for key in expected.keys() | actual.keys():
            _diff(
                f"{where}.{key}",
                expected.get(key, "<absent>"),
                actual.get(key, "<absent>"),
                out,
            )
        return
    if isinstance(expected, list) and isinstance(actual, list) and len(expected) == len(actual):
        for i, (e, a) in enumerate(zip(expected, actual, strict=True)):
            _diff(f"{where}[{i}]", e, a, out)
        return
    if expected != actual:
        out.append((where, expected, actual))


def compare(recorded: Recording, actual: Recording, gaps: list[Gap]) -> list[Difference]:
    """What differs between a recording and a fresh run, minus the known gaps."""
    found: list[tuple[str, Any, Any]] = []
    steps = {e.step: e for e in actual.exchanges}
    for exp in recorded.exchanges:
        got = steps.pop(exp.step, None)
        if got is None:
            found.append((exp.step, "<recorded>", "<not run>"))
            continue
        for part in ("method", "operation", "status", "headers", "shape", "body"):
            _diff(f"{exp.step}.{part}", getattr(exp, part), getattr(got, part), found)
    for extra in steps:
        found.append((extra, "<not recorded>", "<run>"))
    diffs = [Difference(recorded.scenario, where, e, a) for where, e, a in found]
    return sorted(open_differences(recorded.service, diffs, gaps), key=lambda d: d.where)


def gap_for(service: str, diff: Difference, gaps: list[Gap]) -> Gap | None:
    """The known gap that explains ``diff``, if one does."""
    for g in gaps:
        if (
            fnmatch.fnmatchcase(service, g.service)
            and fnmatch.fnmatchcase(diff.scenario, g.scenario)
            and fnmatch.fnmatchcase(diff.where, g.where)
        ):
            return g
    return None


def open_differences(service: str, diffs: list[Difference], gaps: list[Gap]) -> list[Difference]:
    return [d for d in diffs if gap_for(service, d, gaps) is None]
