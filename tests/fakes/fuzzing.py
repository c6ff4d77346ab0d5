"""Fuzzing a fake with schemathesis: generated requests over loopback, every answer judged.

Each operation of a document (OpenAPI, or a GraphQL SDL whose root fields schemathesis
turns into operations) gets a seeded, bounded number of generated requests, sent with
``requests`` to the fake served by uvicorn on 127.0.0.1. A *server error* is a status of
500 or more, an exception or no response, a body the fake's own ``judge`` rejects (its
vendor's error shape, its internal-error marker), or anything the fake's safety net caught.
The figures are printed so that CI logs carry them.
"""

from __future__ import annotations

import base64
import importlib
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import requests
from graphql import (
    GraphQLEnumType,
    GraphQLInputObjectType,
    GraphQLInputType,
    GraphQLList,
    GraphQLNonNull,
    build_schema,
    get_named_type,
    is_leaf_type,
)
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st
from hypothesis.errors import Unsatisfiable
from schemathesis import BaseSchema, GenerationMode

from fakes.core.net import Net
from fakes.core.world import World
from replay.base.snapshot import load_snapshot
from tests.serving import serving

DEMO = Path(__file__).resolve().parents[2] / "snapshots" / "demo"
SEED = 20260313
"""The one seed every fuzz run uses: the same requests on every run."""

Judge = Callable[[int, Any], str | None]
"""Given a status and the parsed JSON body (or the text, if not JSON): a problem, or None."""


@dataclass
class Tally:
    """What one fuzz run tried and what went wrong."""

    service: str
    operations: int = 0
    examples: int = 0
    statuses: Counter[int] = field(default_factory=Counter)
    errors: list[str] = field(default_factory=list)
    answered: int = 0
    """Answers that carried what was asked for (2xx; GraphQL data; Slack ``ok: true``)."""
    success: Callable[[int, Any], bool] = lambda status, body: status < 300

    def line(self) -> str:
        codes = " ".join(f"{k}:{v}" for k, v in sorted(self.statuses.items()))
        return (
            f"fuzz {self.service}: {self.operations} operations, {self.examples} examples, "
            f"{len(self.errors)} server errors; {self.answered} answered; statuses {codes}"
        )


def graphql_answered(status: int, body: Any) -> bool:
    """A GraphQL answer with some data in it (a root field that resolved to something)."""
    data = body.get("data") if isinstance(body, dict) else None
    return isinstance(data, dict) and any(v is not None for v in data.values())


def body_of(response: requests.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return response.text


def drive(strategy: st.SearchStrategy[Any], examples: int, check: Callable[[Any], None]) -> None:
    """Run ``check`` on ``examples`` values of ``strategy``, seeded, without shrinking."""

    @seed(SEED)
    @settings(
        max_examples=examples,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
        print_blob=False,
    )
    @given(value=strategy)
    def one(value: Any) -> None:
        check(value)

    one()


@dataclass
class Sender:
    """Sends one generated request and judges the answer into a tally."""

    tally: Tally
    judge: Judge
    session: requests.Session
    headers: dict[str, str]

    def record(self, where: str, sent: Any, send: Callable[[], requests.Response]) -> None:
        self.tally.examples += 1
        try:
            response = send()
        except Exception as exc:
            self.tally.errors.append(f"{where}: no response: {type(exc).__name__}: {exc}")
            return
        self.tally.statuses[response.status_code] += 1
        body = body_of(response)
        self.tally.answered += self.tally.success(response.status_code, body)
        problem = self.judge(response.status_code, body)
        if problem is not None:
            self.tally.errors.append(
                f"{where} -> {response.status_code}: {problem}; sent {sent!r:.300}"
            )

    def case(self, base_url: str, mode: GenerationMode) -> Callable[[Any], None]:
        def check(case: Any) -> None:
            where = f"{case.method} {case.formatted_path} ({mode.value})"
            sent = case.body if case.body is not None else case.query
            self.record(
                where,
                sent,
                lambda: case.call(
                    base_url=base_url, session=self.session, headers=self.headers, timeout=20
                ),
            )

        return check

    def variables(self, endpoint: str, probe: Probe) -> Callable[[Any], None]:
        def check(variables: dict[str, Any]) -> None:
            payload = {"query": probe.query, "variables": variables}
            self.record(
                f"{probe.label} (variables)",
                variables,
                lambda: self.session.post(endpoint, json=payload, headers=self.headers, timeout=20),
            )

        return check


def fuzz(
    tally: Tally,
    schema: BaseSchema,
    base_url: str,
    judge: Judge,
    *,
    headers: dict[str, str],
    examples: int,
    negative: int = 0,
    known: dict[str, str] | None = None,
) -> None:
    """Send up to ``examples`` valid generated requests per operation and up to ``negative``
    invalid ones (schemathesis' negative mode); record in ``tally``.

    ``known`` path parameters (the demo's owner and repository) are fixed in positive mode, so
    that valid requests get past the lookup into the handlers; negative mode breaks them too.
    """
    with requests.Session() as session:
        sender = Sender(tally, judge, session, headers)
        for result in schema.get_all_operations():
            operation = result.ok()
            tally.operations += 1
            for mode, count in (
                (GenerationMode.POSITIVE, examples),
                (GenerationMode.NEGATIVE, negative),
            ):
                if count == 0:
                    continue
                fixed = None
                if mode.is_positive and known:
                    names = {p.name for p in operation.path_parameters}
                    fixed = {k: v for k, v in known.items() if k in names} or None
                strategy = operation.as_strategy(generation_mode=mode, path_parameters=fixed)
                try:
                    drive(strategy, count, sender.case(base_url, mode))
                except Unsatisfiable:
                    # Nothing to break (no parameters, no body): negative mode has no example.
                    assert not mode.is_positive, f"{operation.label}: no valid request generated"


def caught(net: Net, tally: Tally) -> None:
    """Count what the fake's safety net caught as server errors (it should catch nothing)."""
    tally.errors += [f"caught by the net: {line}" for line in net.failures]


def report(tally: Tally) -> str:
    """The figures line, then the first errors (for the assertion message)."""
    return "\n".join([tally.line(), *tally.errors[:25]])


@contextmanager
def served_fake(service: str) -> Iterator[tuple[str, Net, World]]:
    """One fake of the demo world, as its ``install`` returns it, served on 127.0.0.1."""
    world = World(load_snapshot(DEMO))
    app = importlib.import_module(f"fakes.{service}").install(world)
    assert isinstance(app, Net)
    try:
        with serving(app, ws="none") as url:
            yield url, app, world
    finally:
        close = getattr(world.fakes[service], "close", None)
        if close is not None:
            close()
        world.engine.dispose()


# ----------------------------------------------------------------------- GraphQL variables
# schemathesis (hypothesis-graphql) writes arguments inline and only well-typed; clients send
# variables, and an agent can send any JSON there. So every root field is also asked with
# each argument as a variable, and the variables drawn from values of the declared type, of
# the wrong type, oversized, and cursors that decode to absurd offsets.


def _cursors() -> st.SearchStrategy[str]:
    numbers = st.integers(min_value=-(2**80), max_value=2**80).map(str) | st.text(max_size=30)
    prefixes = st.sampled_from(["cursor:v2:", "cursor:", ""])
    raw = st.builds(lambda p, n: p + n, prefixes, numbers)
    return raw.map(lambda s: base64.b64encode(s.encode("utf-8", "surrogatepass")).decode())


def _json() -> st.SearchStrategy[Any]:
    scalars = (
        st.none()
        | st.booleans()
        | st.integers(min_value=-(2**70), max_value=2**70)
        | st.floats(allow_nan=False, allow_infinity=False)
        | st.text(max_size=20)
    )
    return st.recursive(
        scalars,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner),
        max_leaves=8,
    )


def value_of(kind: GraphQLInputType, known: list[str], depth: int = 0) -> st.SearchStrategy[Any]:
    """A value for a GraphQL input type: well-typed (strings often ``known`` names and ids),
    and at each level, one time in four, any JSON at all."""
    good = _typed(kind, known, depth)
    return st.integers(0, 3).flatmap(lambda i: _json() if i == 0 else good)


def _typed(kind: GraphQLInputType, known: list[str], depth: int) -> st.SearchStrategy[Any]:
    if isinstance(kind, GraphQLNonNull):
        return _typed(kind.of_type, known, depth)
    if isinstance(kind, GraphQLList):
        return st.lists(value_of(kind.of_type, known, depth + 1), max_size=3)
    if isinstance(kind, GraphQLEnumType):
        return st.sampled_from(sorted(kind.values))
    if isinstance(kind, GraphQLInputObjectType):
        if depth > 3:
            return st.just({})
        required = {
            n: value_of(f.type, known, depth + 1)
            for n, f in kind.fields.items()
            if isinstance(f.type, GraphQLNonNull)
        }
        optional = {
            n: value_of(f.type, known, depth + 1)
            for n, f in kind.fields.items()
            if n not in required
        }
        return st.fixed_dictionaries(required, optional=optional)
    name = getattr(kind, "name", "")
    if name == "Int":
        return st.integers(-5, 200) | st.integers(min_value=-(2**70), max_value=2**70)
    if name == "Float":
        return st.floats(allow_nan=False, allow_infinity=False)
    if name == "Boolean":
        return st.booleans()
    names = st.sampled_from(known) if known else st.text(max_size=40)
    return names | st.text(max_size=40) | _cursors()


@dataclass(frozen=True)
class Probe:
    """One root field asked with every argument as a variable."""

    label: str
    query: str
    variables: dict[str, GraphQLInputType]


def probes(sdl: str) -> list[Probe]:
    """For each root field of ``sdl`` that takes arguments: a document passing them by variable."""
    schema = build_schema(sdl)
    out = []
    for keyword, root in (("query", schema.query_type), ("mutation", schema.mutation_type)):
        if root is None:
            continue
        for name, fld in sorted(root.fields.items()):
            if not fld.args:
                continue
            decls = ", ".join(f"${a}: {arg.type}" for a, arg in fld.args.items())
            args = ", ".join(f"{a}: ${a}" for a in fld.args)
            target = get_named_type(fld.type)
            selection = " { __typename }" if not is_leaf_type(target) else ""
            query = f"{keyword} Probe({decls}) {{ {name}({args}){selection} }}"
            variables = {a: arg.type for a, arg in fld.args.items()}
            out.append(Probe(f"{keyword} {name}", query, variables))
    return out


def fuzz_variables(
    tally: Tally,
    sdl: str,
    endpoint: str,
    judge: Judge,
    *,
    headers: dict[str, str],
    examples: int,
    known: list[str] = [],  # noqa: B006 - never mutated
) -> None:
    """Each probe with ``examples`` drawn variable sets, POSTed as JSON to ``endpoint``;
    ``known`` strings (names, ids of the world) are drawn for strings and ids."""
    with requests.Session() as session:
        sender = Sender(tally, judge, session, headers)
        for probe in probes(sdl):
            tally.operations += 1
            values = {k: value_of(t, known) for k, t in probe.variables.items()}
            needed = {k for k, t in probe.variables.items() if isinstance(t, GraphQLNonNull)}
            strategy = st.fixed_dictionaries(
                {k: v for k, v in values.items() if k in needed},
                optional={k: v for k, v in values.items() if k not in needed},
            )
            drive(strategy, examples, sender.variables(endpoint, probe))
