"""Every known gap says where its claim about the vendor comes from, and the Linear fields the
fake serves without modelling them are a listed gap that this file shows, not silent nulls.

A gap's ``why`` is sourced when it names a URL or a vendored evidence file (a path of two or
more components of a file under ``contract_tests/evidence/``, as
``get-root/normalized-fixture.json`` or ``src/schema.graphql``), or when it starts with
"unverified" (the claim rests on memory, or the sources disagree). The gaps are those of every
evidence directory's ``gaps.json``, the errors family's own
(:data:`replay.contract.evidence.errors.GAPS`), the Linear fake's unmodelled fields
(:data:`fakes.linear.graphql.unmodelled.UNMODELLED`) and the gaps against the recordings and
schemas (``contract_tests/gaps.py``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache
from typing import Any

import httpx
import pytest
from ariadne import ObjectType
from ariadne.utils import convert_camel_case_to_snake
from graphql import (
    FieldNode,
    FragmentDefinitionNode,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLSchema,
    get_named_type,
    is_leaf_type,
    parse,
)

from contract_tests.gaps import GAPS as RECORDING_GAPS
from fakes.linear import models
from fakes.linear.graphql import build_schema
from fakes.linear.graphql.render import types as bound_types
from fakes.linear.graphql.unmodelled import MIRRORS, UNMODELLED, unmodelled_fields
from replay.contract.evidence import EVIDENCE, load_gaps
from replay.contract.evidence import errors as errors_family
from replay.contract.evidence.graphql_schemas import (
    SDK_DOCUMENTS,
    VENDOR_SDL,
    build_vendor_schema,
)
from replay.contract.targets import Served, fake_target

URL = re.compile(r"https?://\S+")
NOT_EVIDENCE = frozenset({"gaps.json", "SOURCE.json", "LICENSE"})


@cache
def vendored_names() -> frozenset[str]:
    """Every path suffix of two or more components of a vendored evidence file."""
    names: set[str] = set()
    for path in EVIDENCE.rglob("*"):
        if not path.is_file() or path.name in NOT_EVIDENCE:
            continue
        parts = path.relative_to(EVIDENCE).parts
        names.update("/".join(parts[i:]) for i in range(len(parts) - 1))
    return frozenset(names)


def sourced(why: str) -> bool:
    """The reason cites a source (a URL, a vendored file) or says it is unverified."""
    if why.lower().startswith("unverified"):
        return True
    return bool(URL.search(why)) or any(name in why for name in vendored_names())


def all_gaps() -> Iterator[tuple[str, str]]:
    """(where, why) of every known gap."""
    for path in sorted(EVIDENCE.glob("*/gaps.json")):
        for g in load_gaps(path.parent):
            yield f"{path.parent.name}/gaps.json {g.subject} | {g.problem}", g.why
    for service, gaps in errors_family.GAPS.items():
        for g in gaps:
            yield f"errors.GAPS[{service}] {g.subject} | {g.problem}", g.why
    for group in UNMODELLED:
        yield f"linear unmodelled {group.fields[0]}...", group.why
    for g in RECORDING_GAPS:  # contract_tests/gaps.py: against the recordings and schemas
        yield f"gaps.py[{g.service}] {g.scenario} | {g.where}", g.why


GAPS = list(all_gaps())


def test_the_rule_tells_a_cited_reason_from_a_remembered_one() -> None:
    assert not sourced("Deprecated since the recording; GitHub no longer lists it.")
    assert not sourced("as GitHub's schema.graphql has it")  # one component names no file
    assert sourced("unverified: Slack's answer is not known")
    assert sourced("see https://docs.slack.dev/reference/methods/chat.postMessage")
    assert sourced("the recording (get-root/normalized-fixture.json) has both")
    assert sourced("linear-sdk src/schema.graphql Issue.project")
    assert len(GAPS) > 60 and {w.split()[0] for w, _ in GAPS} >= {
        "octokit-fixtures/gaps.json",
        "slack-api-specs/gaps.json",
        "linear-sdk/gaps.json",
        "github-graphql-schema/gaps.json",
    }


@pytest.mark.parametrize(("where", "why"), GAPS, ids=[w for w, _ in GAPS])
def test_every_gap_cites_a_source_or_says_unverified(where: str, why: str) -> None:
    assert sourced(why), f"{where}: cite a URL or a vendored file, or start with 'unverified'"


# ----------------------------------------------------------------------------- Linear

ROWS: dict[str, type[Any]] = {
    "Issue": models.Issue,
    "IssueSearchResult": models.Issue,
    "Team": models.Team,
    "User": models.User,
    "WorkflowState": models.WorkflowState,
    "IssueLabel": models.Label,
    "Comment": models.Comment,
    "Organization": models.Organization,
    "IssueHistory": models.IssueHistory,
}
"""The object types the fake answers from its rows, and the row each is."""


@cache
def fake_schema() -> GraphQLSchema:
    return build_schema()


@cache
def vendor_schema() -> GraphQLSchema:
    return build_vendor_schema(VENDOR_SDL["linear"].read_text())


def silent_nulls() -> set[str]:
    """Fields of the row types left to the default resolver whose row has no such attribute:
    they answer null for every object."""
    found: set[str] = set()
    for type_name, row in ROWS.items():
        t = fake_schema().type_map[type_name]
        assert isinstance(t, GraphQLObjectType)
        for name, f in t.fields.items():
            if f.resolve is None:
                attr = name
            elif f.resolve.__qualname__.startswith("resolve_to."):
                attr = convert_camel_case_to_snake(name)
            else:
                continue
            if not hasattr(row, attr):
                found.add(f"{type_name}.{name}")
    return found


def test_the_row_types_are_every_type_render_binds() -> None:
    bound = {b.name for b in bound_types() if isinstance(b, ObjectType)}
    assert bound - {"IssueSearchPayload"} == set(ROWS)


def test_every_field_answering_null_unmodelled_is_listed_and_nothing_else() -> None:
    listed = set(unmodelled_fields())
    silent = silent_nulls()
    assert not silent - listed, f"null for every object, not in unmodelled.py: {silent - listed}"
    assert not listed - silent, f"listed in unmodelled.py, yet modelled: {listed - silent}"
    assert len({f for g in UNMODELLED for f in g.fields}) == sum(len(g.fields) for g in UNMODELLED)


def test_each_unmodelled_field_is_linears_and_nullable_there() -> None:
    for name in unmodelled_fields():
        type_name, _, field_name = name.partition(".")
        vendor_type = vendor_schema().type_map.get(MIRRORS.get(type_name, type_name))
        assert isinstance(vendor_type, GraphQLObjectType), name
        field = vendor_type.fields.get(field_name)
        assert field is not None, f"{name} is not a field of Linear's schema"
        assert not isinstance(field.type, GraphQLNonNull), f"{name} is non-null on Linear"


def test_each_unmodelled_field_is_one_the_sdk_selects() -> None:
    """Only the SDK's use justifies serving a null: a field its fragments do not select is
    left out of the fake's SDL."""
    selected: dict[str, set[str]] = {}
    for d in parse(SDK_DOCUMENTS.read_text()).definitions:
        if isinstance(d, FragmentDefinitionNode):
            names = {s.name.value for s in d.selection_set.selections if isinstance(s, FieldNode)}
            selected.setdefault(d.type_condition.name.value, set()).update(names)
    for name in unmodelled_fields():
        type_name, _, field_name = name.partition(".")
        owner = MIRRORS.get(type_name, type_name)
        assert field_name in selected.get(owner, set()), (
            f"{name}: no SDK fragment selects it; remove it from schema.graphql"
        )


QUOTE = re.compile(r"(\w+)\.(\w+): '(.+?)'(?=[),;.]|$)")


def test_each_unmodelled_reason_quotes_linears_description_of_the_field() -> None:
    for group in UNMODELLED:
        quotes = QUOTE.findall(group.why)
        assert quotes, f"{group.fields[0]}...: quote the SDL's description of a field"
        for type_name, field_name, quote in quotes:
            vendor_type = vendor_schema().type_map[type_name]
            assert isinstance(vendor_type, GraphQLObjectType)
            said = " ".join((vendor_type.fields[field_name].description or "").split())
            assert quote in said, f"{type_name}.{field_name} does not say {quote!r}"


def selection(type_name: str) -> str:
    """The unmodelled fields of a type, as a selection set."""
    t = fake_schema().type_map[type_name]
    assert isinstance(t, GraphQLObjectType)
    out = []
    for name in sorted(unmodelled_fields()):
        owner, _, field_name = name.partition(".")
        if owner == type_name:
            leaf = is_leaf_type(get_named_type(t.fields[field_name].type))
            out.append(field_name if leaf else f"{field_name} {{ __typename }}")
    return " ".join(out)


def linear(served: Served, query: str) -> dict[str, Any]:
    target = fake_target(served)
    r = httpx.post(
        target.linear_url,
        json={"query": query},
        headers={"Authorization": target.linear_key},
        timeout=60,
    )
    body = r.json()
    assert "errors" not in body, body.get("errors")
    data: dict[str, Any] = body["data"]
    return data


def test_each_unmodelled_field_answers_null_on_the_demo_world(served: Served) -> None:
    first = linear(served, "query { issues(first: 1) { nodes { title } } }")
    term = first["issues"]["nodes"][0]["title"].split()[0]
    data = linear(
        served,
        "query {"
        f" issues(first: 50, includeArchived: true) {{ nodes {{ id {selection('Issue')}"
        f"  history {{ nodes {{ id {selection('IssueHistory')} }} }} }} }}"
        f' searchIssues(term: "{term}") {{ nodes {{ id {selection("IssueSearchResult")} }} }}'
        f" teams {{ nodes {{ id {selection('Team')} }} }}"
        f" users(includeDisabled: true) {{ nodes {{ id {selection('User')} }} }}"
        f" workflowStates {{ nodes {{ id {selection('WorkflowState')} }} }}"
        f" issueLabels {{ nodes {{ id {selection('IssueLabel')} }} }}"
        f" comments {{ nodes {{ id {selection('Comment')} }} }}"
        f" organization {{ id {selection('Organization')} }}"
        " }",
    )
    objects: dict[str, list[dict[str, Any]]] = {
        "Issue": data["issues"]["nodes"],
        "IssueHistory": [h for i in data["issues"]["nodes"] for h in i["history"]["nodes"]],
        "IssueSearchResult": data["searchIssues"]["nodes"],
        "Team": data["teams"]["nodes"],
        "User": data["users"]["nodes"],
        "WorkflowState": data["workflowStates"]["nodes"],
        "IssueLabel": data["issueLabels"]["nodes"],
        "Comment": data["comments"]["nodes"],
        "Organization": [data["organization"]],
    }
    assert set(objects) == set(ROWS)
    for name in unmodelled_fields():
        type_name, _, field_name = name.partition(".")
        assert objects[type_name], f"the demo world has no {type_name} to show {name} on"
        answered = {repr(o[field_name]) for o in objects[type_name]}
        assert answered == {"None"}, f"{name} answered {answered}: model it or unlist it"


def test_a_field_left_out_of_the_schema_fails_as_an_unknown_field_does(served: Served) -> None:
    """IssueLabel.retiredAt is Linear's, but no SDK fragment selects it and the fake does not
    model it: it is absent, so a query for it is refused instead of answering null."""
    label = vendor_schema().type_map["IssueLabel"]
    assert isinstance(label, GraphQLObjectType) and "retiredAt" in label.fields
    target = fake_target(served)
    r = httpx.post(
        target.linear_url,
        json={"query": "query { issueLabels { nodes { id retiredAt } } }"},
        headers={"Authorization": target.linear_key},
        timeout=60,
    )
    body = r.json()
    assert body.get("errors") and body.get("data") is None
    assert "retiredAt" in body["errors"][0]["message"]
