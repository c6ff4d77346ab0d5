"""The fakes' GraphQL held to the vendors' published schemas (GitHub's public schema, the
Linear SDK's schema and documents): every report passes, and each check catches a fake that
departs from the evidence (a bogus field, a wrong nullability, a wrong response, a stale gap).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from graphql import GraphQLSchema, build_schema

from contract_tests.test_broken_fake import mutating
from replay.contract.evidence import Check, KnownGap, Report, load_source
from replay.contract.evidence.graphql_schemas import (
    DOCUMENTS,
    LINEAR_DIR,
    RESPONSE,
    SCHEMA,
    SDK_DOCUMENTS,
    _reports_for,
    fake_schema,
    reports,
    response_checks,
    response_problems,
    scenario_exchanges,
    schema_checks,
    sdk_document_checks,
    vendor_schema,
)
from replay.contract.schema import SDL


@pytest.fixture(scope="module")
def all_reports() -> list[Report]:
    return reports()


def failures(checks: list[Check]) -> dict[str, tuple[str, ...]]:
    return {c.subject: c.problems for c in checks if c.problems}


def test_every_report_passes(all_reports: list[Report]) -> None:
    for report in all_reports:
        print("\n".join(report.lines()))
    families = {(r.service, r.family) for r in all_reports}
    assert families == {
        ("github", SCHEMA),
        ("github", RESPONSE),
        ("linear", SCHEMA),
        ("linear", RESPONSE),
        ("linear", DOCUMENTS),
    }
    assert all(r.total for r in all_reports)
    bad = [line for r in all_reports if not r.ok for line in r.lines()]
    assert not bad, "\n".join(bad)


def test_every_served_field_is_listed(all_reports: list[Report]) -> None:
    """The schema report has a check for every field the fake's SDL serves."""
    for service in ("github", "linear"):
        report = next(r for r in all_reports if r.service == service and r.family == SCHEMA)
        subjects = {c.subject for c in report.checks}
        fake = build_schema(SDL[service].read_text())
        for name in ("Query", "Mutation"):
            root = fake.get_type(name)
            assert root is not None
            for field in getattr(root, "fields", {}):
                assert f"{name}.{field}" in subjects


def test_scenarios_cover_issues_comments_states_and_teams(all_reports: list[Report]) -> None:
    """Linear's issues, comments, workflow states and teams each come back in a response
    that the vendor's schema checked."""
    report = next(r for r in all_reports if r.service == "linear" and r.family == RESPONSE)
    steps = " ".join(c.subject for c in report.checks if c.ok)
    for step in ("create issue", "read issue", "comment", "team", "workflow states", "comments"):
        assert step in steps, step


def planted(service: str, old: str, new: str) -> GraphQLSchema:
    text = SDL[service].read_text()
    assert old in text, old
    return build_schema(text.replace(old, new, 1))


@pytest.mark.parametrize(
    ("service", "old", "new", "subject", "problem"),
    [
        (
            "linear",
            "type Issue implements Node {\n  id: ID!\n  identifier: String!",
            "type Issue implements Node {\n  id: ID!\n  identifier: String",
            "Issue.identifier",
            "Issue.identifier is String, the vendor's String!",
        ),
        (
            "linear",
            "type Team implements Node {\n  id: ID!",
            "type Team implements Node {\n  id: ID!\n  bogus: Int",
            "Team.bogus",
            "field bogus of Team is not in the vendor's schema",
        ),
        (
            "linear",
            "labelIds: [String!]!\n  previousIdentifiers",
            "labelIds: [String]!\n  previousIdentifiers",
            "Issue.labelIds",
            "Issue.labelIds is [String]!, the vendor's [String!]!",
        ),
        (
            "linear",
            "type Query {\n  viewer: User!\n  organization: Organization!\n  issue(id: String!)",
            "type Query {\n  viewer: User!\n  organization: Organization!\n  issue(id: ID!)",
            "Query.issue",
            "argument id of Query.issue is ID!, the vendor's String!",
        ),
        (
            "linear",
            "enum PaginationSortOrder {\n  Ascending",
            "enum PaginationSortOrder {\n  Sideways\n  Ascending",
            "PaginationSortOrder.Sideways",
            "enum value Sideways of PaginationSortOrder is not in the vendor's schema",
        ),
        (
            "linear",
            "type Team implements Node {\n  id: ID!\n  key: String!",
            "type Team implements Node {\n  id: ID!\n  key: String! @deprecated",
            "Team.key",
            "Team.key is deprecated here, not for the vendor",
        ),
        (
            "github",
            "type Query {",
            "type Query {\n  bogus: Int",
            "Query.bogus",
            "field bogus of Query is not in the vendor's schema",
        ),
    ],
)
def test_a_planted_schema_error_is_caught(
    service: str, old: str, new: str, subject: str, problem: str
) -> None:
    vendor = vendor_schema(service)  # type: ignore[arg-type]
    before = failures(schema_checks(fake_schema(service), vendor))  # type: ignore[arg-type]
    after = failures(schema_checks(planted(service, old, new), vendor))
    assert {k: v for k, v in after.items() if before.get(k) != v} == {subject: (problem,)}


def test_a_dropped_required_argument_is_caught() -> None:
    fake = planted("linear", "issue(id: String!): Issue!", "issue: Issue!")
    problems = failures(schema_checks(fake, vendor_schema("linear")))
    assert problems == {
        "Query.issue": (
            "argument id of Query.issue is required by the vendor (String!) but the fake "
            "does not take it",
        )
    }


LINEAR_READ = """
query($id: String!) {
  issue(id: $id) {
    __typename id identifier priority url
    state { name type }
    labels { nodes { name } }
    createdAt
  }
}
"""


def linear_body(**issue: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "__typename": "Issue",
        "id": "a1",
        "identifier": "ENG-1",
        "priority": 3,
        "url": "https://linear.app/acme/issue/ENG-1",
        "state": {"name": "Todo", "type": "unstarted"},
        "labels": {"nodes": [{"name": "bug"}]},
        "createdAt": "2026-03-12T09:00:00.000Z",
    }
    return {"data": {"issue": {**base, **issue}}}


def test_a_good_linear_response_conforms() -> None:
    assert response_problems(vendor_schema("linear"), LINEAR_READ, linear_body()) == []


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"priority": "3"}, "data.issue.priority: a string '3' for the vendor's Float"),
        ({"identifier": None}, "data.issue.identifier: null for the non-null String!"),
        ({"labels": {"nodes": {"name": "bug"}}}, "data.issue.labels.nodes: an object"),
        ({"__typename": "Team"}, "data.issue.__typename: 'Team' is not a possible type"),
        ({"createdAt": "yesterday"}, "data.issue.createdAt: 'yesterday' is not an ISO 8601"),
        ({"extra": 1}, "data.issue.extra: not asked for on Issue"),
        ({"state": {"name": "Todo"}}, "data.issue.state.type: missing"),
    ],
)
def test_a_wrong_linear_response_is_caught(change: dict[str, Any], problem: str) -> None:
    problems = response_problems(vendor_schema("linear"), LINEAR_READ, linear_body(**change))
    assert len(problems) == 1 and problems[0].startswith(problem), problems


GITHUB_READ = """
query($owner: String!, $name: String!) {
  repository(owner: $owner, name: $name) {
    issue(number: 1) { number state author { __typename login } }
  }
}
"""


@pytest.mark.parametrize(
    ("issue", "problems"),
    [
        ({"number": 1, "state": "OPEN", "author": {"__typename": "User", "login": "a"}}, []),
        (
            {"number": 1, "state": "OPENED", "author": None},
            [
                "data.repository.issue.state: 'OPENED' is not a value of the vendor's enum "
                "IssueState"
            ],
        ),
        (
            {"number": 2.5, "state": "OPEN", "author": None},
            ["data.repository.issue.number: a number 2.5 for the vendor's Int"],
        ),
        (
            {"number": 1, "state": "OPEN", "author": {"__typename": "Repository", "login": "a"}},
            [
                "data.repository.issue.author.__typename: 'Repository' is not a possible type "
                "of Actor"
            ],
        ),
    ],
)
def test_github_responses_typed_by_the_vendors_schema(
    issue: dict[str, Any], problems: list[str]
) -> None:
    body = {"data": {"repository": {"issue": issue}}}
    assert response_problems(vendor_schema("github"), GITHUB_READ, body) == problems


def test_skip_and_include_decide_which_keys_are_due() -> None:
    schema = vendor_schema("linear")
    query = "query($t: Boolean!) { viewer { id name @include(if: $t) email @skip(if: true) } }"
    assert response_problems(schema, query, {"data": {"viewer": {"id": "u"}}}) == []
    both = {"data": {"viewer": {"id": "u", "name": "n"}}}
    assert response_problems(schema, query, both) == []
    assert response_problems(schema, query, both, {"t": False}) == [
        "data.viewer.name: not asked for on User"
    ]
    assert response_problems(schema, query, {"data": {"viewer": {"id": "u"}}}, {"t": True}) == [
        "data.viewer.name: missing"
    ]
    with_email = {"data": {"viewer": {"id": "u", "email": "e"}}}
    assert response_problems(schema, query, with_email) == [
        "data.viewer.email: not asked for on User"
    ]


def test_errors_and_documents_are_held_to_the_vendor() -> None:
    schema = vendor_schema("github")
    ok = {
        "data": {"repository": None},
        "errors": [{"type": "NOT_FOUND", "message": "no", "path": ["repository"]}],
    }
    assert response_problems(schema, GITHUB_READ, ok) == []
    bad = {"data": None, "errors": [{"msg": "no", "locations": [{"line": 0}]}]}
    assert response_problems(schema, GITHUB_READ, bad) == [
        "errors[0].message: missing or not a string",
        "errors[0].locations: not a list of {line, column}",
    ]
    (problem,) = response_problems(schema, "{ viewer { bogus } }", {"data": None})
    assert problem.startswith("document: Cannot query field 'bogus' on type 'User'.")


def test_a_broken_fake_fails_response_conformance() -> None:
    """The Linear fake answering priorities as strings: every answer with one is caught."""

    def stringify(status: int, body: Any) -> tuple[int, Any]:
        text = json.dumps(body).replace('"priority": 3.0', '"priority": "3"')
        return status, json.loads(text)

    exchanges = scenario_exchanges(
        "linear", only=["issue_read_move_comment"], wrap=mutating("linear", stringify)
    )
    bad = failures(response_checks(vendor_schema("linear"), exchanges))
    assert set(bad) == {
        "issue_read_move_comment #2 create issue",
        "issue_read_move_comment #3 read issue",
        "issue_read_move_comment #4 read by identifier",
        "issue_read_move_comment #7 read back",
    }
    assert bad["issue_read_move_comment #3 read issue"] == (
        "data.issue.priority: a string '3' for the vendor's Float",
    )


def test_an_sdk_document_the_fake_cannot_answer_is_caught() -> None:
    fake = planted("linear", "  branchName: String!\n", "")
    result = sdk_document_checks(SDK_DOCUMENTS.read_text(), fake, vendor_schema("linear"))
    bad = failures(result.checks)
    assert bad["query issue"] == ("field branchName of Issue not implemented by the fake",)
    assert result.untouched > 0


def test_a_stale_gap_fails() -> None:
    source = load_source(LINEAR_DIR)
    families = {SCHEMA: [Check("Issue.title")], DOCUMENTS: [Check("query issue", ("x",))]}
    gaps = [
        KnownGap(subject="query issue", problem="x", why="a reason long enough"),
        KnownGap(subject="query nothing", why="names no check at all"),
        KnownGap(subject="Issue.title", problem="*", why="the check has no problem"),
    ]
    out = _reports_for("linear", source, gaps, families)
    assert [len(r.unused_gaps) for r in out] == [2, 0]
    assert not out[0].ok and out[1].ok
    assert any("stale gap query nothing" in line for line in out[0].lines())
