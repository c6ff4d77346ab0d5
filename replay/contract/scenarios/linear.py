"""Linear scenarios as raw GraphQL over httpx (what Linear's SDK and agents' tools send):
read an issue, move it to another state, comment on it; the error answers."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import httpx

from replay.contract.recording import Raw
from replay.contract.scenarios.base import Ctx, scenario
from replay.contract.scenarios.github import _root_fields


def post(ctx: Ctx, step: str, query: str, variables: dict[str, Any], key: str | None = None) -> Any:
    headers = {"Authorization": key if key is not None else ctx.target.linear_key}
    with httpx.Client(timeout=30) as http:
        resp = http.post(
            ctx.target.linear_url, json={"query": query, "variables": variables}, headers=headers
        )
    try:
        body: Any = resp.json()
    except ValueError:
        body = {"raw": resp.text}
    ctx.rec.add(
        step,
        "POST",
        urlsplit(ctx.target.linear_url).path,
        Raw(resp.status_code, dict(resp.headers), body),
        operation="graphql " + _root_fields(query),
        query=query,
    )
    return body


TEAM = """
query($key: String!) {
  teams(filter: {key: {eq: $key}}) {
    nodes { id key name states { nodes { id name type } } }
  }
}
"""

CREATE = """
mutation($input: IssueCreateInput!) {
  issueCreate(input: $input) {
    success
    issue { id identifier number title priority state { name type } team { key } }
  }
}
"""

READ = """
query($id: String!) {
  issue(id: $id) {
    id identifier title description priority url branchName
    state { name type }
    team { key }
    labels { nodes { name } }
    comments { nodes { body } }
    createdAt updatedAt completedAt
  }
}
"""

MOVE = """
mutation($id: String!, $input: IssueUpdateInput!) {
  issueUpdate(id: $id, input: $input) {
    success
    issue { identifier state { name type } startedAt }
  }
}
"""

COMMENT = """
mutation($input: CommentCreateInput!) {
  commentCreate(input: $input) {
    success
    comment { id body createdAt user { id } issue { identifier } }
  }
}
"""


def team(ctx: Ctx) -> dict[str, Any]:
    ctx.norm.alias(ctx.target.team, "team")
    found = post(ctx, "team", TEAM, {"key": ctx.target.team})
    nodes: list[dict[str, Any]] = found["data"]["teams"]["nodes"]
    return nodes[0]


@scenario("linear")
def issue_read_move_comment(ctx: Ctx) -> None:
    """Create an issue, read it, move it to a started state, comment, read it back."""
    eng = team(ctx)
    started = next(s for s in eng["states"]["nodes"] if s["type"] == "started")
    created = post(
        ctx,
        "create issue",
        CREATE,
        {"input": {"teamId": eng["id"], "title": "Contract: a ticket", "priority": 3}},
    )
    issue_id = created["data"]["issueCreate"]["issue"]["id"]
    post(ctx, "read issue", READ, {"id": issue_id})
    post(
        ctx,
        "read by identifier",
        READ,
        {"id": created["data"]["issueCreate"]["issue"]["identifier"]},
    )
    post(ctx, "move issue", MOVE, {"id": issue_id, "input": {"stateId": started["id"]}})
    post(ctx, "comment", COMMENT, {"input": {"issueId": issue_id, "body": "Working on it."}})
    post(ctx, "read back", READ, {"id": issue_id})


@scenario("linear")
def errors(ctx: Ctx) -> None:
    """Unknown issue, invalid input, a missing required input field, a bad key."""
    eng = team(ctx)
    post(ctx, "unknown issue", READ, {"id": "ENG-987654"})
    post(
        ctx,
        "invalid input",
        MOVE,
        {"id": "ENG-987654", "input": {"stateId": "not-a-state-id"}},
    )
    post(ctx, "missing title", CREATE, {"input": {"teamId": eng["id"]}})
    post(ctx, "bad key", READ, {"id": "ENG-1"}, key="lin_api_not_a_real_key_000")


VIEWER = """
query { viewer { id } }
"""

HISTORY = """
query($id: String!, $first: Int, $after: String) {
  issue(id: $id) {
    identifier title state { name }
    history(first: $first, after: $after) {
      nodes {
        id createdAt
        actor { id }
        fromState { name type }
        toState { name type }
        fromStateId toStateId
        fromTitle toTitle
      }
      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
    }
  }
}
"""


@scenario("linear")
def issue_history(ctx: Ctx) -> None:
    """Move an issue to a started state, rename it, read its history (newest first): all of
    it, then one entry a page; each entry's actor is the viewer."""
    eng = team(ctx)
    post(ctx, "viewer", VIEWER, {})
    started = next(s for s in eng["states"]["nodes"] if s["type"] == "started")
    created = post(
        ctx,
        "create issue",
        CREATE,
        {"input": {"teamId": eng["id"], "title": "Contract: history", "priority": 2}},
    )
    issue_id = created["data"]["issueCreate"]["issue"]["id"]
    post(ctx, "move issue", MOVE, {"id": issue_id, "input": {"stateId": started["id"]}})
    post(
        ctx,
        "rename issue",
        MOVE,
        {"id": issue_id, "input": {"title": "Contract: history, renamed"}},
    )
    post(ctx, "read history", HISTORY, {"id": issue_id, "first": 10})
    page = post(ctx, "read history page 1", HISTORY, {"id": issue_id, "first": 1})
    cursor = page["data"]["issue"]["history"]["pageInfo"]["endCursor"]
    post(ctx, "read history page 2", HISTORY, {"id": issue_id, "first": 1, "after": cursor})


STATES = """
query($key: String!) {
  workflowStates(filter: {team: {key: {eq: $key}}}) {
    nodes { id name type position color description team { key } }
    pageInfo { hasNextPage endCursor }
  }
}
"""

STATE = """
query($id: String!) {
  workflowState(id: $id) {
    id name type position
    team { key name }
    issues(first: 5) { nodes { identifier title } }
  }
}
"""

TEAM_BY_ID = """
query($id: String!) {
  team(id: $id) {
    id key name displayName private timezone issueEstimationType
    states { nodes { name type } }
    members { nodes { id } }
  }
}
"""

ISSUES = """
query($key: String!) {
  issues(first: 2, filter: {team: {key: {eq: $key}}}, orderBy: createdAt) {
    nodes {
      id identifier title priority state { name type } assignee { id }
      labels { nodes { name } }
    }
    pageInfo { hasNextPage endCursor }
  }
}
"""

COMMENTS = """
query($id: ID) {
  comments(filter: {issue: {id: {eq: $id}}}) {
    nodes {
      id body createdAt updatedAt editedAt url
      user { id } issue { identifier } parent { id }
    }
    pageInfo { hasNextPage }
  }
}
"""

COMMENT_BY_ID = """
query($id: String!) {
  comment(id: $id) { id body url createdAt issue { identifier state { name } } }
}
"""

REPLY = """
mutation($input: CommentCreateInput!) {
  commentCreate(input: $input) {
    success
    comment { id body parent { id } parentId issueId }
  }
}
"""


@scenario("linear")
def workflow_states_and_comments(ctx: Ctx) -> None:
    """A team's workflow states, one state with its issues, the team by id; an issue's
    comments: post one and a reply, list them, read one by id; the team's issues, a page."""
    eng = team(ctx)
    states = post(ctx, "workflow states", STATES, {"key": ctx.target.team})
    todo = next(s for s in states["data"]["workflowStates"]["nodes"] if s["type"] == "unstarted")
    post(ctx, "workflow state", STATE, {"id": todo["id"]})
    post(ctx, "team by id", TEAM_BY_ID, {"id": eng["id"]})
    created = post(
        ctx,
        "create issue",
        CREATE,
        {"input": {"teamId": eng["id"], "title": "Contract: comments", "stateId": todo["id"]}},
    )
    issue_id = created["data"]["issueCreate"]["issue"]["id"]
    first = post(ctx, "comment", COMMENT, {"input": {"issueId": issue_id, "body": "First."}})
    comment_id = first["data"]["commentCreate"]["comment"]["id"]
    post(
        ctx,
        "reply",
        REPLY,
        {"input": {"issueId": issue_id, "parentId": comment_id, "body": "A reply."}},
    )
    post(ctx, "comments", COMMENTS, {"id": issue_id})
    post(ctx, "team's issues", ISSUES, {"key": ctx.target.team})
    post(ctx, "comment by id", COMMENT_BY_ID, {"id": comment_id})
