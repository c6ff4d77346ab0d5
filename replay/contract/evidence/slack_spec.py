"""Slack's fake held to Slack's published Web API OpenAPI spec (``slackapi/slack-api-specs``,
``web-api/slack_web_openapi_v2_without_examples.json``; Swagger 2.0, last changed in
September 2021, so methods and fields Slack added since are absent from it).

For each method the spec gives the 200 response schema and a ``default`` error schema whose
``error`` property lists the method's documented error codes as an enum. Two families:

* **response conformance**: every exchange of the Slack contract scenarios, run against the
  fake, validated against its method's schema (``ok: true`` -> the 200 schema, ``ok: false``
  -> the error schema): required keys, types, enums, patterns, array bounds, and extra keys
  only where the spec allows them. The ``error`` value itself is left to the next family.
* **error codes**: one check per (method, error code) the fake can return (declared per
  method in :data:`fakes.slack.routes.METHODS`, plus every code seen in the scenarios): the
  spec must list the code for that method, and the fake must declare every code it returned.

The spec is not full JSON Schema: Slack's generator writes ``items: [A, B]`` on a non-array
to mean "one of A, B" (``tz``, ``bot_id``, ``response_metadata``, ``objs_user``), so
:meth:`Spec.validate` reads a list of ``items`` as alternatives wherever it appears.
``format`` (uri, email) is an annotation and is not checked; ``pattern`` (ids, timestamps) is.

Known gaps live in ``contract_tests/evidence/slack-api-specs/gaps.json``; one whose subject
names a step (``<scenario> / <step> <method>``) belongs to response conformance, one that
names a code (``<method> <code>``) to error codes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from fakes.slack.routes import METHODS
from replay.contract.evidence import (
    EVIDENCE,
    Check,
    KnownGap,
    Report,
    Service,
    Source,
    apply_gaps,
    load_gaps,
    load_source,
)
from replay.contract.runner import run_scenario
from replay.contract.scenarios import SCENARIOS, Skip, all_scenarios
from replay.contract.targets import ContractSetupError, Wrap, fake_target, serve_world

DIRECTORY = EVIDENCE / "slack-api-specs"
"""The vendored spec, its license, ``SOURCE.json`` and ``gaps.json``."""
SPEC = "web-api/slack_web_openapi_v2_without_examples.json"
"""The spec's path in the vendor repository (and under :data:`DIRECTORY`)."""
SERVICE: Service = "slack"

Schema = Mapping[str, Any]
"""One (Swagger 2.0) schema object of the spec."""

_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "object": (dict,),
    "array": (list,),
    "null": (type(None),),
}


@dataclass(frozen=True)
class Operation:
    """One Web API method as the spec describes it."""

    method: str
    success: Schema
    """The 200 response schema."""
    error: Schema
    """The ``default`` (``ok: false``) response schema."""
    errors: frozenset[str] | None
    """The error codes the spec lists for the method (None: it lists none, as for
    ``api.test``, whose error is whatever the caller asked for)."""


class Spec:
    """The vendored spec: its operations by method name and its definitions."""

    def __init__(self, document: Mapping[str, Any]) -> None:
        if document.get("swagger") != "2.0" or not isinstance(document.get("paths"), dict):
            raise ContractSetupError(f"{SPEC}: not a Swagger 2.0 document")
        self.definitions: Mapping[str, Schema] = document.get("definitions", {})
        self.operations: dict[str, Operation] = {}
        for path, verbs in document["paths"].items():
            for op in verbs.values():
                responses = op.get("responses", {})
                success = responses.get("200", {}).get("schema")
                error = responses.get("default", {}).get("schema")
                if success is None or error is None:
                    continue
                codes = error.get("properties", {}).get("error", {}).get("enum")
                name = path.removeprefix("/")
                self.operations[name] = Operation(
                    name, success, error, frozenset(codes) if codes is not None else None
                )

    def operation(self, method: str) -> Operation | None:
        return self.operations.get(method)

    def validate(self, schema: Schema, value: Any, where: str = "$") -> list[str]:
        """Every way ``value`` breaks ``schema``, as ``<json path>: <problem>``."""
        return list(self._check(schema, value, where))

    def _resolve(self, schema: Schema) -> Schema:
        seen = 0
        while "$ref" in schema:
            ref = str(schema["$ref"])
            name = ref.removeprefix("#/definitions/")
            if name == ref or name not in self.definitions or seen > 20:
                raise ContractSetupError(f"{SPEC}: unresolvable $ref {ref}")
            schema = self.definitions[name]
            seen += 1
        return schema

    def _check(self, schema: Schema, value: Any, where: str) -> Iterator[str]:
        schema = self._resolve(schema)
        types = schema.get("type")
        if types is not None:
            names = [types] if isinstance(types, str) else list(types)
            if not any(_is(value, t) for t in names):
                yield f"{where}: {_kind(value)}, the spec says {' or '.join(names)}"
                return
        items = schema.get("items")
        if isinstance(items, list) and not isinstance(value, list):
            yield from self._one_of(items, value, where)
        if "enum" in schema and value not in schema["enum"]:
            yield f"{where}: {value!r} is not one of {schema['enum']}"
        if (
            isinstance(value, str)
            and "pattern" in schema
            and not re.search(str(schema["pattern"]), value)
        ):
            yield f"{where}: {value!r} does not match {schema['pattern']}"
        if isinstance(value, dict):
            yield from self._object(schema, value, where)
        if isinstance(value, list):
            if len(value) < int(schema.get("minItems", 0)):
                yield f"{where}: {len(value)} items, the spec wants at least {schema['minItems']}"
            if schema.get("uniqueItems") and len({json.dumps(v, sort_keys=True) for v in value}) < (
                len(value)
            ):
                yield f"{where}: items repeat, the spec wants them unique"
            if isinstance(items, dict):
                for i, v in enumerate(value):
                    yield from self._check(items, v, f"{where}[{i}]")
            elif isinstance(items, list):
                for i, v in enumerate(value):
                    yield from self._one_of(items, v, f"{where}[{i}]")

    def _object(self, schema: Schema, value: dict[str, Any], where: str) -> Iterator[str]:
        props: Mapping[str, Schema] = schema.get("properties", {})
        for key in schema.get("required", []):
            if key not in value:
                yield f"{where}.{key}: required by the spec but missing"
        extra = schema.get("additionalProperties", True)
        for key, v in value.items():
            if key in props:
                yield from self._check(props[key], v, f"{where}.{key}")
            elif extra is False:
                yield f"{where}.{key}: not in the spec"
            elif isinstance(extra, dict):
                yield from self._check(extra, v, f"{where}.{key}")

    def _one_of(self, alternatives: list[Schema], value: Any, where: str) -> Iterator[str]:
        """Slack's ``items: [A, B]``: the value must match one alternative; if none, the
        problems of the closest one."""
        tried = [self.validate(a, value, where) for a in alternatives]
        if all(tried):
            yield from min(tried, key=len)


def _is(value: Any, name: str) -> bool:
    if name in ("integer", "number") and isinstance(value, bool):
        return False
    if name == "integer" and isinstance(value, float):
        return value.is_integer()
    return isinstance(value, _TYPES.get(name, ()))


def _kind(value: Any) -> str:
    for name in ("null", "boolean", "integer", "number", "string", "array", "object"):
        if _is(value, name):
            return name
    return type(value).__name__


@cache
def load_spec() -> Spec:
    """The vendored spec (read once)."""
    path = DIRECTORY / SPEC
    try:
        return Spec(json.loads(path.read_bytes()))
    except (OSError, ValueError) as exc:
        raise ContractSetupError(f"{path}: cannot read the Slack spec: {exc}") from exc


# --------------------------------------------------------------------------- checks


@dataclass(frozen=True)
class Seen:
    """One response of a scenario step: what the checks look at."""

    scenario: str
    step: str
    method: str
    status: int
    body: Any

    @property
    def subject(self) -> str:
        return f"{self.scenario} / {self.step} {self.method}"


def conformance(spec: Spec, seen: Seen) -> Check:
    """One exchange against its method's schema: the 200 schema when ``ok`` is true, the
    error schema when it is false (its ``error`` enum left to :func:`error_codes`)."""
    op = spec.operation(seen.method)
    if op is None:
        return Check(seen.subject, (f"{seen.method}: not a method of the spec",))
    body = seen.body
    if not isinstance(body, dict) or not isinstance(body.get("ok"), bool):
        return Check(seen.subject, (f"$: not a Slack envelope (no boolean ok): {body!r}",))
    if body["ok"]:
        problems = spec.validate(op.success, body)
        if seen.status != 200:
            problems.insert(0, f"status {seen.status} with ok: true")
    else:
        error = dict(op.error)
        props = dict(error.get("properties", {}))
        if "error" in props:
            props["error"] = {"type": "string"}
        error["properties"] = props
        problems = spec.validate(error, body)
    return Check(seen.subject, tuple(problems))


def error_codes(
    spec: Spec, seen: list[Seen], declared: Mapping[str, frozenset[str]]
) -> list[Check]:
    """One check per (method, error code) the fake declares or was seen returning: the spec
    lists the code for the method, and the fake declares every code it returned."""
    returned: dict[tuple[str, str], list[str]] = {}
    for s in seen:
        if isinstance(s.body, dict) and s.body.get("ok") is False:
            code = str(s.body.get("error"))
            returned.setdefault((s.method, code), []).append(f"{s.scenario} / {s.step}")
    pairs = sorted({(m, c) for m, codes in declared.items() for c in codes} | set(returned))
    checks: list[Check] = []
    for method, code in pairs:
        problems: list[str] = []
        op = spec.operation(method)
        if op is None:
            problems.append(f"{method} is not a method of the spec")
        elif op.errors is not None and code not in op.errors:
            problems.append(f"not an error the spec lists for {method}")
        if (method, code) in returned and code not in declared.get(method, frozenset()):
            steps = ", ".join(returned[(method, code)])
            problems.append(f"returned by the fake ({steps}) but not declared for {method}")
        checks.append(Check(f"{method} {code}", tuple(problems)))
    return checks


def declared_errors() -> dict[str, frozenset[str]]:
    """The error codes the fake declares per method (its own and the ones every call can
    get: token, scope, rate limit, body parsing)."""
    return {name: m.all_errors() for name, m in METHODS.items()}


@dataclass
class Observed:
    """What the Slack scenarios showed: every response, and each scenario that stopped."""

    seen: list[Seen]
    stopped: list[Check]
    """A scenario that stopped early (its client could not use a response): a failure of
    response conformance, as its remaining steps went unchecked."""


def observe(wrap: Wrap | None = None) -> Observed:
    """Every response of the Slack contract scenarios, run against a fresh fake (optionally
    wrapped, as a test breaks it)."""
    all_scenarios()
    out = Observed([], [])
    with serve_world(wrap=wrap) as served:
        target = fake_target(served)
        for name, scenario in sorted(SCENARIOS[SERVICE].items()):
            try:
                run = run_scenario(target, scenario)
            except Skip:
                continue
            if run.error:
                out.stopped.append(Check(f"{name} / (stopped)", (run.error,)))
            for exchange, raw, _model in run.recorder.raws:
                out.seen.append(
                    Seen(name, exchange.step, exchange.operation or "", raw.status, raw.body)
                )
    return out


def build(
    observed: Observed,
    declared: Mapping[str, frozenset[str]],
    source: Source,
    spec: Spec,
    gaps_dir: Path = DIRECTORY,
) -> list[Report]:
    """Both reports from observed responses and declared errors (tests feed doctored ones),
    with the known gaps of ``gaps_dir`` applied."""
    gaps = load_gaps(gaps_dir)
    checks = [conformance(spec, s) for s in observed.seen] + observed.stopped
    codes = error_codes(spec, observed.seen, declared)
    return [
        apply_gaps(SERVICE, "response conformance", source, checks, _for(gaps, True)),
        apply_gaps(SERVICE, "error codes", source, codes, _for(gaps, False)),
    ]


def _for(gaps: list[KnownGap], conformance_family: bool) -> list[KnownGap]:
    """The gaps of one family: a response conformance subject names a step
    (``<scenario> / <step> <method>``), an error code subject does not (``<method> <code>``)."""
    return [g for g in gaps if (" / " in g.subject) == conformance_family]


def reports(wrap: Wrap | None = None) -> list[Report]:
    """The Slack fake against Slack's spec: response conformance and error codes."""
    source = load_source(DIRECTORY)
    return build(observe(wrap), declared_errors(), source, load_spec())
