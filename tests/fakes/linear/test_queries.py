"""The rest of the surface through gql: teams, states, users, labels, organization, comments,
threaded replies, relative dates; the control plane's reset and state; the demo snapshot."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from gql import Client, GraphQLRequest, gql
from gql.transport.exceptions import TransportQueryError
from gql.transport.httpx import HTTPXTransport

from fakes.core import build_world
from replay.base.snapshot import load_snapshot
from tests.fakes.linear import world as w
from tests.fakes.linear.conftest import API_KEY, HOST, Served


@pytest.fixture()
def client(served: Served) -> Client:
    headers = {**HOST, "Authorization": API_KEY}
    return Client(transport=HTTPXTransport(url=served.graphql_url, headers=headers))


def run(client: Client, query: str, **variables: Any) -> dict[str, Any]:
    with client as session:
        result: dict[str, Any] = session.execute(
            GraphQLRequest(gql(query), variable_values=variables)
        )
        return result


def test_teams_states_users_labels_organization(client: Client) -> None:
    data = run(
        client,
        """{
          organization { name urlKey userCount teams { nodes { key } } }
          teams { nodes { key name issueCount defaultIssueState { name }
                          states { nodes { name type position } }
                          labels { nodes { name } } } }
          users { nodes { displayName isMe active url } }
          issueLabels { nodes { name team { key } } }
        }""",
    )
    org = data["organization"]
    assert org == {
        "name": "Acme",
        "urlKey": "acme",
        "userCount": 3,
        "teams": {"nodes": [{"key": "ENG"}, {"key": "OPS"}]},
    }
    eng, ops = data["teams"]["nodes"]
    assert eng["issueCount"] == 3 and ops["issueCount"] == 1
    assert eng["defaultIssueState"] == {"name": "Backlog"}
    assert [s["name"] for s in eng["states"]["nodes"]] == [
        "Backlog",
        "Todo",
        "In Progress",
        "In Review",
        "Done",
        "Canceled",
    ]
    assert [lb["name"] for lb in eng["labels"]["nodes"]] == ["Bug", "Frontend"]
    assert sorted(u["displayName"] for u in data["users"]["nodes"]) == ["agent", "alice", "bob"]
    assert data["issueLabels"]["nodes"] == [
        {"name": "Bug", "team": None},
        {"name": "Frontend", "team": {"key": "ENG"}},
        {"name": "Oncall", "team": {"key": "OPS"}},
    ]
    team = run(
        client,
        "query($id: String!) { team(id: $id) { key issues { nodes { identifier } } } }",
        id=w.OPS,
    )
    assert team["team"] == {"key": "OPS", "issues": {"nodes": [{"identifier": "OPS-1"}]}}
    user = run(
        client,
        "query($id: String!) { user(id: $id) { name assignedIssues { nodes { identifier } } } }",
        id=w.BOB,
    )
    assert user["user"] == {
        "name": "Bob Builder",
        "assignedIssues": {"nodes": [{"identifier": "ENG-3"}]},
    }
    with pytest.raises(TransportQueryError, match="Entity not found: Team"):
        run(client, '{ team(id: "nope") { id } }')


def test_threaded_reply_and_comment_queries(client: Client, served: Served) -> None:
    root = run(
        client,
        'mutation { commentCreate(input: { issueId: "OPS-1", body: "Rotating now." }) '
        "{ comment { id } } }",
    )["commentCreate"]["comment"]["id"]
    reply = run(
        client,
        'mutation($p: String!) { commentCreate(input: { issueId: "OPS-1", body: "Done.", '
        "parentId: $p }) { comment { id parent { id } issue { identifier } } } }",
        p=root,
    )["commentCreate"]["comment"]
    assert reply["parent"] == {"id": root} and reply["issue"] == {"identifier": "OPS-1"}
    got = run(
        client,
        "query($id: String!) { comment(id: $id) { body children { nodes { body } } } }",
        id=root,
    )
    assert got["comment"] == {"body": "Rotating now.", "children": {"nodes": [{"body": "Done."}]}}
    mine = run(client, "{ comments(filter: { user: { isMe: { eq: true } } }) { nodes { body } } }")
    assert [c["body"] for c in mine["comments"]["nodes"]] == ["Done.", "Rotating now."]
    created = [e for e in served.events() if e["kind"] == "linear.comment.created"]
    assert [e["data"]["parent"] for e in created] == [None, root]
    with pytest.raises(TransportQueryError, match="Entity not found: Comment"):
        run(
            client,
            'mutation { commentCreate(input: { issueId: "OPS-1", body: "x", parentId: "nope" })'
            " { success } }",
        )
    with pytest.raises(TransportQueryError, match="Argument Validation Error"):
        run(
            client,
            'mutation { commentCreate(input: { issueId: "OPS-1", body: "  " }) { success } }',
        )


def test_relative_dates_count_from_the_frozen_clock(client: Client) -> None:
    # T is 2026-03-12T09:00Z: a week back is 03-05, so OPS-1 (03-01) and ENG-3 are older.
    got = run(client, '{ issues(filter: { createdAt: { gt: "-P1W" } }) { nodes { identifier } } }')
    assert [n["identifier"] for n in got["issues"]["nodes"]] == ["ENG-1", "ENG-2"]


def test_reset_restores_the_snapshot_and_state_dumps(served: Served, client: Client) -> None:
    run(client, 'mutation { issueUpdate(id: "ENG-1", input: { title: "renamed" }) { success } }')
    state = httpx.get(served.url + "/_replay/state", headers=HOST).json()["linear"]
    titles = {i["identifier"]: i["title"] for i in state["issues"]}
    assert titles["ENG-1"] == "renamed" and "ENG-4" not in titles
    assert httpx.post(served.url + "/_replay/reset", headers=HOST).json() == {"ok": True}
    assert served.events() == []
    again = run(client, '{ issue(id: "ENG-1") { title } }')
    assert again["issue"]["title"] == "add() subtracts instead of adding"


def test_demo_snapshot_serves() -> None:
    app = build_world(load_snapshot("snapshots/demo"), ["linear"])
    with TestClient(app) as http:
        resp = http.post(
            "/graphql",
            headers={**HOST, "Authorization": API_KEY},
            json={
                "query": "{ viewer { id } issues(first: 250) "
                "{ nodes { identifier state { name } } } }",
            },
        )
    body = resp.json()
    assert resp.status_code == 200 and "errors" not in body
    assert body["data"]["issues"]["nodes"]
