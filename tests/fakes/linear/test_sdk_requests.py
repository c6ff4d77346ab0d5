"""The requests Linear's TypeScript SDK sends (its generated documents, fragments and all),
POSTed as the SDK posts them, and the answers its error parser expects."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from tests.fakes.linear import sdk_documents as sdk
from tests.fakes.linear import world as w
from tests.fakes.linear.conftest import API_KEY, HOST, OAUTH, Served

T = datetime(2026, 3, 12, 9, tzinfo=UTC)


def call(served: Served, query: str, auth: str | None = API_KEY, **variables: Any) -> Any:
    resp = served.post({"query": query, "variables": variables}, auth=auth)
    body = resp.json()
    assert resp.status_code == 200, body
    assert "errors" not in body, body
    return body["data"]


def when(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def test_viewer(served: Served) -> None:
    viewer = call(served, sdk.VIEWER)["viewer"]
    assert viewer["__typename"] == "User"
    assert viewer["id"] == w.AGENT and viewer["isMe"] is True
    assert viewer["displayName"] == "agent" and viewer["email"] == "agent@acme.test"
    assert viewer["url"] == "https://linear.app/acme/profiles/agent"
    assert viewer["initials"] == "A" and viewer["inviteHash"] == ""


def test_issue_by_identifier_move_to_in_review_and_comment(served: Served) -> None:
    # linearClient.issue("ENG-1")
    issue = call(served, sdk.ISSUE_QUERY, id="ENG-1")["issue"]
    assert issue["__typename"] == "Issue"
    assert issue["id"] == w.ENG_1 and issue["identifier"] == "ENG-1"
    assert issue["number"] == 1 and issue["priority"] == 2 and issue["priorityLabel"] == "High"
    assert issue["state"] == {"id": w.TODO} and issue["team"] == {"id": w.ENG}
    assert issue["labelIds"] == [w.BUG] and issue["assignee"] == {"id": w.AGENT}
    assert issue["creator"] == {"id": w.ALICE} and issue["parent"] is None
    assert issue["branchName"] == "agent/eng-1-add-subtracts-instead-of-adding"
    assert issue["sharedAccess"]["sharedWithUsers"] == []
    assert issue["reactions"] == [] and issue["cycle"] is None
    assert issue["createdAt"] == "2026-03-10T00:00:00.000Z"

    # linearClient.workflowStates({ filter: { team: { key: { eq: "ENG" } }, name: ... } })
    states = call(
        served,
        sdk.WORKFLOW_STATES,
        filter={"team": {"key": {"eq": "ENG"}}, "name": {"eq": "In Review"}},
    )["workflowStates"]
    assert [s["id"] for s in states["nodes"]] == [w.IN_REVIEW]
    assert states["nodes"][0]["type"] == "started" and states["nodes"][0]["team"] == {"id": w.ENG}
    assert states["pageInfo"]["hasNextPage"] is False

    # linearClient.updateIssue(issue.id, { stateId })
    updated = call(served, sdk.UPDATE_ISSUE, id=issue["id"], input={"stateId": w.IN_REVIEW})
    payload = updated["issueUpdate"]
    assert payload == {
        "__typename": "IssuePayload",
        "lastSyncId": payload["lastSyncId"],
        "issue": {"id": w.ENG_1},
        "success": True,
    }
    assert isinstance(payload["lastSyncId"], float)

    # linearClient.createComment({ issueId, body })
    made = call(
        served, sdk.CREATE_COMMENT, input={"issueId": issue["id"], "body": "Moved to review."}
    )["commentCreate"]
    assert made["success"] is True and made["__typename"] == "CommentPayload"
    assert made["lastSyncId"] > payload["lastSyncId"]

    after = call(served, sdk.ISSUE_QUERY, id=w.ENG_1)["issue"]
    assert after["state"] == {"id": w.IN_REVIEW}
    assert T < when(after["startedAt"]) == when(after["updatedAt"])
    assert after["completedAt"] is None

    # linearClient.issues({ filter: { state: { name: { eq: "In Review" } } } })
    listed = call(served, sdk.ISSUES, filter={"state": {"name": {"eq": "In Review"}}})["issues"]
    assert [n["identifier"] for n in listed["nodes"]] == ["ENG-1"]
    # linearClient.searchIssues("subtracts")
    found = call(served, sdk.SEARCH_ISSUES, term="subtracts")["searchIssues"]
    assert found["totalCount"] == 1 and found["nodes"][0]["state"] == {"id": w.IN_REVIEW}
    assert found["nodes"][0]["__typename"] == "IssueSearchResult"
    assert found["archivePayload"]["__typename"] == "ArchiveResponse"

    events = served.events()
    assert [e["kind"] for e in events] == [
        "linear.issue.updated",
        "linear.comment.created",
        "linear.human.replied",  # Alice's scripted hint: the agent spoke in ENG-1's thread
    ]
    assert events[0]["data"]["to_state"] == "In Review"
    assert events[1]["data"]["body"] == "Moved to review."
    assert events[0]["actor"] == w.AGENT and events[0]["object"] == {"type": "issue", "id": "ENG-1"}


def test_create_issue_continues_the_teams_numbers(served: Served) -> None:
    made = call(
        served,
        sdk.CREATE_ISSUE,
        input={
            "teamId": w.ENG,
            "title": "Add a regression test for add()",
            "description": "Cover 1 + 1.",
            "priority": 3,
            "labelIds": [w.BUG, w.FRONTEND],
            "parentId": "ENG-1",
        },
    )["issueCreate"]
    assert made["success"] is True
    issue = call(served, sdk.ISSUE_QUERY, id=made["issue"]["id"])["issue"]
    # ENG-4 existed only after T, so at T the next number is 4.
    assert issue["identifier"] == "ENG-4" and issue["title"] == "Add a regression test for add()"
    assert issue["state"] == {"id": w.BACKLOG} and issue["parent"] == {"id": w.ENG_1}
    assert sorted(issue["labelIds"]) == sorted([w.BUG, w.FRONTEND])
    assert issue["creator"] == {"id": w.AGENT} and when(issue["createdAt"]) > T
    (event,) = served.events()
    assert event["kind"] == "linear.issue.created"
    assert event["data"] == {
        "identifier": "ENG-4",
        "title": "Add a regression test for add()",
        "team": "ENG",
        "state": "Backlog",
    }


def test_update_records_every_change(served: Served) -> None:
    call(
        served,
        sdk.UPDATE_ISSUE,
        id="ENG-2",
        input={
            "title": "Flaky deploy",
            "priority": 1,
            "assigneeId": w.AGENT,
            "labelIds": [w.BUG],
            "stateId": w.DONE,
            "estimate": 3,
        },
    )
    issue = call(served, sdk.ISSUE_QUERY, id="ENG-2")["issue"]
    assert issue["completedAt"] is not None and issue["startedAt"] is not None
    (event,) = served.events()
    assert event["data"] == {
        "identifier": "ENG-2",
        "changes": {
            "title": {"from": "Flaky deploy on Fridays", "to": "Flaky deploy"},
            "priority": {"from": 4, "to": 1},
            "estimate": {"from": None, "to": 3},
            "assignee": {"from": None, "to": w.AGENT},
            "labels": {"from": ["Frontend"], "to": ["Bug"]},
            "state": {"from": "Backlog", "to": "Done"},
        },
        "from_state": "Backlog",
        "to_state": "Done",
    }
    # Nothing changes: nothing is recorded.
    call(served, sdk.UPDATE_ISSUE, id="ENG-2", input={"priority": 1})
    assert len(served.events()) == 1


def test_a_refused_update_changes_nothing(served: Served) -> None:
    resp = served.post(
        {
            "query": sdk.UPDATE_ISSUE,
            "variables": {"id": "ENG-1", "input": {"title": "new", "stateId": w.OPS_TODO}},
        }
    )
    body = resp.json()
    assert resp.status_code == 200 and body["data"] is None
    assert body["errors"][0]["extensions"]["type"] == "invalid input"
    assert call(served, sdk.ISSUE_QUERY, id="ENG-1")["issue"]["title"].startswith("add()")
    assert served.events() == []


def _error(resp: Any) -> dict[str, Any]:
    (error,) = resp.json()["errors"]
    result: dict[str, Any] = error
    return result


@pytest.mark.parametrize(
    "auth",
    [
        None,
        f"Bearer {API_KEY}",  # a personal key must be sent bare
        OAUTH,  # an OAuth token must come after Bearer
        "lin_api_",
        "not-a-linear-key",
        "Bearer lin_oauth_unknown extra",
    ],
)
def test_authentication_errors(served: Served, auth: str | None) -> None:
    resp = served.post({"query": sdk.VIEWER}, auth=auth)
    assert resp.status_code == 401
    assert resp.json() == {
        "errors": [
            {
                "message": "Authentication required, not authenticated",
                "extensions": {
                    "type": "authentication error",
                    "code": "AUTHENTICATION_ERROR",
                    "statusCode": 401,
                    "userPresentableMessage": "You need to authenticate to access this operation.",
                },
            }
        ]
    }
    assert served.events() == []


def test_oauth_bearer_and_bare_key_both_are_the_viewer(served: Served) -> None:
    assert call(served, sdk.VIEWER, auth=f"Bearer {OAUTH}")["viewer"]["id"] == w.AGENT
    assert call(served, sdk.VIEWER, auth=API_KEY)["viewer"]["id"] == w.AGENT


def test_entity_not_found(served: Served) -> None:
    resp = served.post({"query": sdk.ISSUE_QUERY, "variables": {"id": "ENG-999"}})
    assert resp.status_code == 200
    assert resp.json()["data"] is None
    error = _error(resp)
    assert error["message"] == "Entity not found: Issue" and error["path"] == ["issue"]
    assert error["extensions"] == {
        "type": "invalid input",
        "code": "INPUT_ERROR",
        "statusCode": 400,
        "userError": True,
        "userPresentableMessage": "Could not find referenced Issue.",
    }


def test_invalid_documents_are_400(served: Served) -> None:
    unknown = served.post({"query": "{ viewer { id karma } }"})
    assert unknown.status_code == 400
    assert _error(unknown)["message"].startswith('Cannot query field "karma" on type "User".')
    assert _error(unknown)["extensions"]["type"] == "graphql error"
    broken = served.post({"query": "{ viewer { id "})
    assert broken.status_code == 400 and "Syntax Error" in _error(broken)["message"]
    bad_var = served.post({"query": sdk.ISSUE_QUERY, "variables": {}})
    assert bad_var.status_code == 400 and "$id" in _error(bad_var)["message"]
    empty = served.post({"variables": {}})
    assert empty.status_code == 400


def test_a_body_that_is_not_json_is_refused_like_a_missing_query(served: Served) -> None:
    resp = httpx.post(
        served.graphql_url,
        headers={**HOST, "Authorization": API_KEY, "Content-Type": "text/plain"},
        content=b"{ viewer { id } }",
    )
    assert resp.status_code == 400
    assert _error(resp)["message"] == "Must provide query string."


def test_deprecated_issue_search(served: Served) -> None:
    query = '{ issueSearch(query: "deploy") { nodes { identifier } } }'
    found = call(served, query)["issueSearch"]["nodes"]
    assert [n["identifier"] for n in found] == ["ENG-2", "OPS-1"]  # newest first


def test_package_exports() -> None:
    import fakes.linear

    assert fakes.linear.HOSTS == ("api.linear.app",)
    assert set(fakes.linear.__all__) == {"HOSTS", "LinearBackend", "install"}
    assert all(hasattr(fakes.linear, name) for name in fakes.linear.__all__)


def test_teams_then_create_and_read_comments_as_the_sdk_does(served: Served) -> None:
    # linearClient.teams({ filter: { key: { eq: "ENG" } } })
    teams = call(served, sdk.TEAMS, filter={"key": {"eq": "ENG"}})["teams"]
    (team,) = teams["nodes"]
    assert team["__typename"] == "Team" and team["id"] == w.ENG and team["key"] == "ENG"
    assert team["defaultIssueState"] == {"id": w.BACKLOG} and team["issueCount"] == 3
    assert team["visibility"] == "public" and team["activeCycle"] is None

    call(served, sdk.CREATE_COMMENT, input={"issueId": w.ENG_1, "body": "Where is it broken?"})
    # (await linearClient.issue("ENG-1")).comments()
    comments = call(served, sdk.ISSUE_COMMENTS, id="ENG-1")["issue"]["comments"]
    nodes = comments["nodes"]
    assert [(c["body"], c["user"]["id"]) for c in nodes] == [
        (w.HINT, w.ALICE),
        ("Where is it broken?", w.AGENT),
        ("Still broken on main.", w.ALICE),
    ]
    hint, question, _ = nodes
    assert hint["parentId"] == question["id"] and hint["parent"] == {"id": question["id"]}
    assert question["issueId"] == w.ENG_1 and question["issue"] == {"id": w.ENG_1}
    assert question["documentContent"] is None and question["reactions"] == []
    assert question["url"].startswith("https://linear.app/acme/issue/ENG-1/")
    assert when(question["createdAt"]) < when(hint["createdAt"])
    oldest_first = call(served, sdk.ISSUE_COMMENTS, id="ENG-1", last=1)["issue"]["comments"]
    assert [c["body"] for c in oldest_first["nodes"]] == ["Still broken on main."]
    assert oldest_first["pageInfo"]["hasPreviousPage"] is True


def test_add_and_remove_one_label_as_the_sdk_does(served: Served) -> None:
    """``issueAddLabel`` / ``issueRemoveLabel`` (the SDK's ``issueAddLabel(id, labelId)``):
    the same change as ``issueUpdate`` with ``addedLabelIds`` / ``removedLabelIds``."""
    add = "mutation($id: String!, $labelId: String!) { issueAddLabel(id: $id, labelId: $labelId) { success issue { labelIds } } }"  # noqa: E501
    remove = add.replace("issueAddLabel", "issueRemoveLabel")
    added = call(served, add, id="ENG-1", labelId=w.FRONTEND)["issueAddLabel"]
    assert added["success"] is True
    assert sorted(added["issue"]["labelIds"]) == sorted([w.BUG, w.FRONTEND])
    removed = call(served, remove, id="ENG-1", labelId=w.BUG)["issueRemoveLabel"]
    assert removed["issue"]["labelIds"] == [w.FRONTEND]
    history = call(
        served,
        'query { issue(id: "ENG-1") { history { nodes { addedLabelIds removedLabelIds } } } }',
    )["issue"]["history"]["nodes"]
    assert history[:2] == [
        {"addedLabelIds": [], "removedLabelIds": [w.BUG]},
        {"addedLabelIds": [w.FRONTEND], "removedLabelIds": []},
    ]


def test_workspace_labels_label_children_and_delegated_issues(served: Served) -> None:
    """``organization.labels`` lists the workspace's labels; labels are flat and no issue is
    delegated, so ``IssueLabel.children`` and ``User.delegatedIssues`` are empty."""
    data = call(
        served,
        "query($id: String!) { organization { labels { nodes { id } } }"
        " issueLabel(id: $id) { children { nodes { id } } }"
        " viewer { delegatedIssues { nodes { id } pageInfo { hasNextPage } } } }",
        id=w.BUG,
    )
    assert {w.BUG, w.FRONTEND, w.OPS_LABEL} <= {
        n["id"] for n in data["organization"]["labels"]["nodes"]
    }
    assert data["issueLabel"]["children"]["nodes"] == []
    assert data["viewer"]["delegatedIssues"] == {"nodes": [], "pageInfo": {"hasNextPage": False}}
