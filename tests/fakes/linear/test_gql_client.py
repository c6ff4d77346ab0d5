"""gql, Python's GraphQL client, against the Linear fake over HTTP (its httpx and requests
transports): introspection, the fetch/move/comment flow, later reads, the frozen cut."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from gql import Client, GraphQLRequest, gql
from gql.transport.exceptions import TransportQueryError
from gql.transport.httpx import HTTPXTransport
from gql.transport.requests import RequestsHTTPTransport
from graphql import GraphQLError

from tests.fakes.linear import world as w
from tests.fakes.linear.conftest import API_KEY, HOST, OAUTH, Served

T = datetime(2026, 3, 12, 9, tzinfo=UTC)

ISSUE = gql(
    """
    query Issue($id: String!) {
      issue(id: $id) {
        id identifier number title description priority priorityLabel url branchName
        createdAt updatedAt startedAt completedAt canceledAt archivedAt
        state { id name type position team { key } }
        team { id key name }
        assignee { id displayName isMe }
        creator { displayName }
        parent { identifier }
        children { nodes { identifier } }
        labels { nodes { name } }
        comments(first: 50) {
          nodes { id body createdAt user { displayName } parent { id } }
          pageInfo { hasNextPage }
        }
      }
    }
    """
)

STATES = gql(
    """
    query States($team: String!) {
      workflowStates(filter: { team: { key: { eq: $team } } }) {
        nodes { id name type }
      }
    }
    """
)

MOVE = gql(
    """
    mutation Move($id: String!, $stateId: String!) {
      issueUpdate(id: $id, input: { stateId: $stateId }) {
        success
        lastSyncId
        issue { identifier state { name } startedAt updatedAt }
      }
    }
    """
)

COMMENT = gql(
    """
    mutation Comment($issueId: String!, $body: String!) {
      commentCreate(input: { issueId: $issueId, body: $body }) {
        success
        comment { id body createdAt user { isMe } issue { identifier } url }
      }
    }
    """
)

SEARCH = gql(
    """
    query Search($term: String!, $comments: Boolean) {
      searchIssues(term: $term, includeComments: $comments) {
        totalCount
        nodes { identifier state { name } }
      }
    }
    """
)


def _transport(served: Served, kind: str, auth: str) -> Any:
    headers = {**HOST, "Authorization": auth}
    if kind == "httpx":
        return HTTPXTransport(url=served.graphql_url, headers=headers)
    return RequestsHTTPTransport(url=served.graphql_url, headers=headers)


@pytest.fixture(params=["httpx", "requests"])
def client(request: pytest.FixtureRequest, served: Served) -> Iterator[Client]:
    yield Client(
        transport=_transport(served, request.param, API_KEY), fetch_schema_from_transport=True
    )


@pytest.fixture(scope="module")
def reader(shared: Served) -> Client:
    """For tests that only read: one world, one schema fetch."""
    return Client(transport=_transport(shared, "httpx", API_KEY), fetch_schema_from_transport=True)


def run(client: Client, request: GraphQLRequest, **variables: Any) -> dict[str, Any]:
    with client as session:
        result: dict[str, Any] = session.execute(GraphQLRequest(request, variable_values=variables))
        return result


def test_introspection_gives_linear_names_and_validates(client: Client) -> None:
    run(client, gql("{ viewer { id } }"))
    schema = client.schema
    assert schema is not None
    issue = schema.type_map["Issue"]
    fields = issue.fields  # type: ignore[attr-defined]
    for name in ("identifier", "priorityLabel", "branchName", "state", "labels", "children"):
        assert name in fields
    assert str(fields["state"].type) == "WorkflowState!"
    assert str(fields["number"].type) == "Float!"
    assert {"issueCreate", "issueUpdate", "commentCreate"} <= set(schema.mutation_type.fields)  # type: ignore[union-attr]
    filter_fields = schema.type_map["IssueFilter"].fields  # type: ignore[attr-defined]
    assert {"state", "team", "assignee", "labels", "title", "and", "or"} <= set(filter_fields)
    # A field Linear has but this fake does not serve is refused, not answered with null.
    with pytest.raises(GraphQLError, match="Cannot query field 'cycles'"):
        run(client, gql('{ team(id: "x") { cycles { nodes { id } } } }'))


@pytest.mark.parametrize("kind", ["httpx", "requests"])
def test_server_side_validation_is_an_error(served: Served, kind: str) -> None:
    blind = Client(transport=_transport(served, kind, API_KEY))
    with pytest.raises(TransportQueryError) as caught:
        run(blind, gql('{ issue(id: "ENG-1") { identifier storyPoints } }'))
    (error,) = caught.value.errors or []
    assert "storyPoints" in error["message"]
    assert error["extensions"]["type"] == "graphql error"


def test_fetch_move_comment_then_reads_and_search_see_it(client: Client, served: Served) -> None:
    issue = run(client, ISSUE, id="ENG-1")["issue"]
    assert issue["id"] == w.ENG_1 and issue["identifier"] == "ENG-1"
    assert issue["state"]["name"] == "Todo" and issue["startedAt"] is None
    assert issue["team"]["key"] == "ENG" and issue["assignee"]["isMe"] is True
    assert issue["labels"]["nodes"] == [{"name": "Bug"}]
    assert issue["children"]["nodes"] == [{"identifier": "ENG-2"}]
    assert issue["url"] == "https://linear.app/acme/issue/ENG-1/add-subtracts-instead-of-adding"
    assert issue["priorityLabel"] == "High" and issue["priority"] == 2

    states = run(client, STATES, team="ENG")["workflowStates"]["nodes"]
    review = next(s for s in states if s["name"] == "In Review")
    moved = run(client, MOVE, id="ENG-1", stateId=review["id"])["issueUpdate"]
    assert moved["success"] is True and moved["issue"]["state"]["name"] == "In Review"
    started = datetime.fromisoformat(moved["issue"]["startedAt"].replace("Z", "+00:00"))
    assert started > T

    made = run(client, COMMENT, issueId=w.ENG_1, body="Ready for review: fixed the operator.")
    comment = made["commentCreate"]["comment"]
    assert made["commentCreate"]["success"] and comment["user"]["isMe"]
    assert comment["issue"]["identifier"] == "ENG-1"

    again = run(client, ISSUE, id=w.ENG_1)["issue"]
    assert again["state"]["name"] == "In Review"
    assert again["updatedAt"] == moved["issue"]["updatedAt"]
    bodies = [c["body"] for c in again["comments"]["nodes"]]
    # Newest first: Alice's scripted hint (the agent spoke in her thread), then the agent.
    assert bodies == [w.HINT, "Ready for review: fixed the operator.", "Still broken on main."]

    in_review = run(
        client,
        gql(
            '{ issues(filter: { state: { name: { eq: "In Review" } } }) { nodes { identifier } } }'
        ),
    )
    assert in_review["issues"]["nodes"] == [{"identifier": "ENG-1"}]
    found = run(client, SEARCH, term="fixed the operator", comments=True)["searchIssues"]
    assert found["totalCount"] == 1
    assert found["nodes"] == [{"identifier": "ENG-1", "state": {"name": "In Review"}}]
    assert run(client, SEARCH, term="fixed the operator")["searchIssues"]["totalCount"] == 0

    kinds = [(e["kind"], e["data"]) for e in served.events()]
    assert kinds[0] == (
        "linear.issue.updated",
        {
            "identifier": "ENG-1",
            "changes": {"state": {"from": "Todo", "to": "In Review"}},
            "from_state": "Todo",
            "to_state": "In Review",
        },
    )
    assert kinds[1][0] == "linear.comment.created"
    assert kinds[1][1]["body"] == "Ready for review: fixed the operator."


def _dates(value: Any) -> Iterator[datetime]:
    if isinstance(value, dict):
        for key, item in value.items():
            if key.endswith("At") and isinstance(item, str):
                yield datetime.fromisoformat(item.replace("Z", "+00:00"))
            else:
                yield from _dates(item)
    elif isinstance(value, list):
        for item in value:
            yield from _dates(item)


def test_nothing_after_t_is_served(reader: Client) -> None:
    client = reader
    everything = run(
        client,
        gql(
            """{
              issues(first: 250, includeArchived: true) {
                nodes {
                  identifier title createdAt updatedAt startedAt completedAt canceledAt
                  state { name }
                  comments { nodes { body createdAt updatedAt } }
                }
              }
              users(includeDisabled: true) { nodes { displayName createdAt } }
              teams { nodes { key createdAt } }
            }"""
        ),
    )
    dates = list(_dates(everything))
    assert dates and max(dates) <= T
    issues = {i["identifier"]: i for i in everything["issues"]["nodes"]}
    assert set(issues) == {"ENG-1", "ENG-2", "ENG-3", "OPS-1"}  # ENG-4 was filed after T
    assert issues["ENG-1"]["state"]["name"] == "Todo"  # moved to Done only after T
    assert issues["ENG-1"]["completedAt"] is None
    assert [c["body"] for c in issues["ENG-1"]["comments"]["nodes"]] == ["Still broken on main."]
    assert "late" not in {u["displayName"] for u in everything["users"]["nodes"]}
    with pytest.raises(TransportQueryError) as caught:
        run(client, ISSUE, id="ENG-4")
    assert caught.value.errors and caught.value.errors[0]["message"] == "Entity not found: Issue"
    found = run(client, SEARCH, term="regression test")["searchIssues"]
    assert found["totalCount"] == 0


def test_scripted_reply_follows_the_agents_question_once(client: Client, served: Served) -> None:
    asked = run(client, COMMENT, issueId="ENG-1", body="Any hint where the bug is?")
    question = asked["commentCreate"]["comment"]
    issue = run(client, ISSUE, id="ENG-1")["issue"]
    nodes = issue["comments"]["nodes"]
    reply = next(c for c in nodes if c["user"]["displayName"] == "alice" and c["body"] == w.HINT)
    assert reply["createdAt"] > question["createdAt"]
    assert reply["parent"] == {"id": question["id"]}
    run(client, COMMENT, issueId="ENG-1", body="Thanks!")
    issue = run(client, ISSUE, id="ENG-1")["issue"]
    assert [c["body"] for c in issue["comments"]["nodes"]].count(w.HINT) == 1

    # Bob answers only when mentioned, and only on his thread (ENG-2).
    run(client, COMMENT, issueId="ENG-2", body="Is the deploy still flaky?")
    run(client, COMMENT, issueId="ENG-2", body="@bob do you know the workaround?")
    bodies = [c["body"] for c in run(client, ISSUE, id="ENG-2")["issue"]["comments"]["nodes"]]
    assert bodies == [
        w.MENTION_REPLY,
        "@bob do you know the workaround?",
        "Is the deploy still flaky?",
    ]

    events = served.events()
    human = [e for e in events if e["kind"] == "linear.human.replied"]
    assert [(e["actor"], e["data"]["thread"], e["data"]["trigger"]) for e in human] == [
        (w.ALICE, "ENG-1", "asks_in_thread"),
        (w.BOB, "ENG-2", "mentions_person"),
    ]
    asked_seq = next(e["seq"] for e in events if e["kind"] == "linear.comment.created")
    assert human[0]["seq"] > asked_seq
    assert human[0]["data"]["text"] == w.HINT


def test_oauth_token_with_bearer(served: Served) -> None:
    client = Client(transport=_transport(served, "httpx", f"Bearer {OAUTH}"))
    assert run(client, gql("{ viewer { id } }"))["viewer"]["id"] == w.AGENT


def test_relay_pagination_walks_every_issue(reader: Client) -> None:
    client = reader
    page = gql(
        """
        query Page($after: String) {
          issues(first: 1, after: $after) {
            edges { cursor node { identifier } }
            pageInfo { hasNextPage hasPreviousPage endCursor startCursor }
          }
        }
        """
    )
    seen: list[str] = []
    after = None
    while True:
        conn = run(client, page, after=after)["issues"]
        seen += [e["node"]["identifier"] for e in conn["edges"]]
        assert conn["pageInfo"]["hasPreviousPage"] == (after is not None)
        if not conn["pageInfo"]["hasNextPage"]:
            break
        after = conn["pageInfo"]["endCursor"]
        assert conn["edges"][-1]["cursor"] == after
    # Newest first.
    assert seen == ["ENG-1", "ENG-2", "OPS-1", "ENG-3"]
    last = run(
        client,
        gql(
            "{ issues(last: 2) { nodes { identifier } pageInfo { hasPreviousPage hasNextPage } } }"
        ),
    )["issues"]
    assert [n["identifier"] for n in last["nodes"]] == ["OPS-1", "ENG-3"]
    assert last["pageInfo"] == {"hasPreviousPage": True, "hasNextPage": False}


@pytest.mark.parametrize(
    ("filter_", "expected"),
    [
        ("{ assignee: { isMe: { eq: true } } }", ["ENG-1"]),
        ('{ labels: { name: { eq: "Bug" } } }', ["ENG-1"]),
        ('{ team: { key: { eq: "OPS" } } }', ["OPS-1"]),
        ("{ priority: { lte: 2, gte: 1 } }", ["ENG-1", "ENG-3"]),
        ('{ title: { containsIgnoreCase: "FLAKY" } }', ["ENG-2"]),
        ('{ description: { contains: "lib.py" } }', ["ENG-1"]),
        ('{ state: { type: { in: ["completed", "canceled"] } } }', ["ENG-3"]),
        ("{ number: { eq: 2 } }", ["ENG-2"]),
        ("{ parent: { null: false } }", ["ENG-2"]),
        (
            f'{{ or: [{{ id: {{ eq: "{w.ENG_3}" }} }}, '
            f'{{ team: {{ id: {{ eq: "{w.OPS}" }} }} }}] }}',
            ["OPS-1", "ENG-3"],
        ),
        ('{ createdAt: { gte: "2026-03-09T00:00:00.000Z" } }', ["ENG-1", "ENG-2"]),
        ('{ assignee: { null: true }, team: { key: { eq: "ENG" } } }', ["ENG-2"]),
    ],
)
def test_issue_filters(reader: Client, filter_: str, expected: list[str]) -> None:
    got = run(reader, gql("{ issues(filter: " + filter_ + ") { nodes { identifier } } }"))
    assert [n["identifier"] for n in got["issues"]["nodes"]] == expected
