"""The fake's GraphQL API through githubkit's GraphQL client (its own response models, its
Enterprise ``/api/graphql`` path, its cursor paginator): data, GitHub's error shapes, global
IDs, search, introspection, mutations and the event log, and nothing from after T."""

from __future__ import annotations

import base64
import inspect
import json
import re
import urllib.request
from datetime import datetime
from typing import Any

import httpx
import pytest
from ariadne import convert_camel_case_to_snake
from githubkit import GitHub, TokenAuthStrategy
from githubkit.exception import GraphQLFailed, RequestFailed
from graphql import GraphQLObjectType

from fakes.github.graphql import connections, render, resolvers, schema
from tests.fakes.github.conftest import REPO, TOKEN, Served, T, client
from tests.fakes.github.test_git_http import clone, commit_file, git

OWNER, NAME = REPO.split("/")
REPO_ARGS = {"owner": OWNER, "name": NAME}


def enterprise(served: Served) -> GitHub[Any]:
    """githubkit configured for GitHub Enterprise: GraphQL goes to ``/api/graphql``."""
    return GitHub(
        TokenAuthStrategy(TOKEN),
        base_url=f"{served.url}/api/v3",
        http_cache=False,
        auto_retry=False,
    )


def events(served: Served) -> list[dict[str, Any]]:
    with urllib.request.urlopen(f"{served.url}/_replay/events") as resp:
        return [json.loads(line) for line in resp.read().decode().splitlines()]


def _after_t(stamp: str) -> bool:
    def parse(value: str) -> datetime:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))

    return parse(stamp) > parse(T)


def raw(served: Served, query: str, variables: dict[str, Any] | None = None) -> Any:
    """The exact body, for the shape checks githubkit's lenient models would not catch."""
    response = httpx.post(
        f"{served.url}/graphql",
        json={"query": query, "variables": variables or {}},
        headers={"Authorization": f"bearer {TOKEN}"},
    )
    assert response.status_code == 200
    return response.json()


def test_viewer_repository_and_issue_as_at_t(served: Served) -> None:
    with enterprise(served) as gh:
        data = gh.graphql(
            """query($owner: String!, $name: String!) {
                 viewer { login }
                 repository(owner: $owner, name: $name) {
                   nameWithOwner viewerPermission hasIssuesEnabled
                   defaultBranchRef { name target { ... on Commit { messageHeadline } } }
                   issue(number: 1) {
                     state closed comments(first: 100) { totalCount nodes { body } }
                   }
                   issues(first: 10) { totalCount nodes { number title } }
                 }
               }""",
            REPO_ARGS,
        )
    assert data["viewer"] == {"login": "agent"}
    repo = data["repository"]
    assert repo["nameWithOwner"] == REPO
    assert repo["defaultBranchRef"] == {"name": "main", "target": {"messageHeadline": "Add tests"}}
    # Closed and commented on after T: open, with its one comment from before T.
    assert repo["issue"] == {
        "state": "OPEN",
        "closed": False,
        "comments": {"totalCount": 1, "nodes": [{"body": "still broken"}]},
    }
    assert repo["issues"]["totalCount"] == 2  # #4 was filed after T
    assert [i["number"] for i in repo["issues"]["nodes"]] == [1, 2]


def test_not_found_is_githubs_error_with_the_alias_in_its_path(served: Served) -> None:
    query = """query {
  repository(owner: "acme", name: "tiny") {
    known: issue(number: 1) { number }
    later: issueOrPullRequest(number: 4) { __typename }
  }
}"""
    with client(served) as gh, pytest.raises(GraphQLFailed) as failed:
        gh.graphql(query)
    [error] = failed.value.response.errors or []
    assert error.type == "NOT_FOUND"
    assert error.path == ["repository", "later"]
    assert error.message == "Could not resolve to an issue or pull request with the number of 4."
    assert failed.value.response.data == {"repository": {"known": {"number": 1}, "later": None}}
    body = raw(served, query)
    assert list(body) == ["data", "errors"]
    assert body["errors"] == [
        {
            "type": "NOT_FOUND",
            "path": ["repository", "later"],
            "locations": [{"line": 4, "column": 5}],
            "message": "Could not resolve to an issue or pull request with the number of 4.",
        }
    ]
    missing = raw(served, '{ repository(owner: "acme", name: "nope") { id } }')
    assert missing["data"] == {"repository": None}
    assert missing["errors"][0]["message"] == (
        "Could not resolve to a Repository with the name 'acme/nope'."
    )


def test_a_field_the_fake_lacks_fails_validation_loudly(served: Served) -> None:
    query = """query IssueByNumber {
  repository(owner: "acme", name: "tiny") {
    issue: issueOrPullRequest(number: 1) {
      ... on Issue { title reactions { totalCount } }
    }
  }
}"""
    with client(served) as gh, pytest.raises(GraphQLFailed) as failed:
        gh.graphql(query)
    assert failed.value.response.data is None
    assert raw(served, query) == {
        "errors": [
            {
                "path": ["query IssueByNumber", "repository", "issue", "... on Issue", "reactions"],
                "extensions": {
                    "code": "undefinedField",
                    "typeName": "Issue",
                    "fieldName": "reactions",
                },
                "locations": [{"line": 4, "column": 28}],
                "message": "Field 'reactions' doesn't exist on type 'Issue'",
            }
        ]
    }


def test_arguments_are_validated_like_github(served: Served) -> None:
    unknown = raw(
        served,
        '{ repository(owner: "acme", name: "tiny") { issues(first: 1, bogus: 2) { totalCount } } }',
    )
    assert unknown["errors"][0]["path"] == ["query", "repository", "issues", "bogus"]
    assert unknown["errors"][0]["extensions"] == {
        "code": "argumentNotAccepted",
        "name": "issues",
        "typeName": "Field",
        "argumentName": "bogus",
    }
    assert unknown["errors"][0]["message"] == "Field 'issues' doesn't accept argument 'bogus'"
    missing = raw(served, '{ repository(owner: "acme") { id } }')
    assert (
        missing["errors"][0]["message"] == "Field 'repository' is missing required arguments: name"
    )
    assert missing["errors"][0]["extensions"]["code"] == "missingRequiredArguments"
    variable = raw(
        served,
        "mutation($input: AddCommentInput!) { addComment(input: $input) { clientMutationId } }",
        {"input": {"subjectId": "x", "body": "y", "label": "z"}},
    )
    assert variable == {
        "errors": [
            {
                "extensions": {
                    "value": {"subjectId": "x", "body": "y", "label": "z"},
                    "problems": [
                        {
                            "path": ["label"],
                            "explanation": "Field is not defined on AddCommentInput",
                        }
                    ],
                },
                "locations": [{"line": 1, "column": 10}],
                "message": "Variable $input of type AddCommentInput! was provided invalid value "
                "for label (Field is not defined on AddCommentInput)",
            }
        ]
    }
    assert events(served) == []


def test_graphql_wants_a_token(served: Served) -> None:
    with client(served, token=None) as anon, pytest.raises(RequestFailed) as failed:
        anon.graphql("{ viewer { login } }")
    assert failed.value.response.status_code == 401
    assert failed.value.response.json()["documentation_url"] == "https://docs.github.com/graphql"


def test_global_ids_are_githubs_legacy_ids_and_node_finds_them(served: Served) -> None:
    query = """{
      repository(owner: "acme", name: "tiny") {
        id
        issue(number: 1) {
          id comments(first: 1) { nodes { id } } labels(first: 1) { nodes { id } }
        }
      }
    }"""
    with client(served) as gh:
        first = gh.graphql(query)["repository"]
        second = gh.graphql(query)["repository"]
        assert first == second
        issue_id = first["issue"]["id"]
        assert base64.b64decode(issue_id) == b"05:Issue101"
        assert base64.b64decode(first["id"]) == b"010:Repository10"
        alice = gh.graphql('{ user(login: "alice") { id } }')["user"]["id"]
        assert base64.b64decode(alice) == b"04:User1"
        ids = [
            alice,
            first["id"],
            issue_id,
            first["issue"]["comments"]["nodes"][0]["id"],
            first["issue"]["labels"]["nodes"][0]["id"],
        ]
        found = gh.graphql(
            "query($ids: [ID!]!) { nodes(ids: $ids) { __typename id } }", {"ids": ids}
        )["nodes"]
        assert [n["__typename"] for n in found] == [
            "User",
            "Repository",
            "Issue",
            "IssueComment",
            "Label",
        ]
        assert [n["id"] for n in found] == ids
        later = base64.b64encode(b"05:Issue104").decode()  # filed after T
        with pytest.raises(GraphQLFailed) as failed:
            gh.graphql("query($id: ID!) { node(id: $id) { id } }", {"id": later})
    [error] = failed.value.response.errors or []
    assert (error.type, error.path) == ("NOT_FOUND", ["node"])
    assert error.message == f"Could not resolve to a node with the global id of '{later}'."


def test_search_and_pagination(served: Served) -> None:
    with client(served) as gh:
        found = gh.graphql(
            """query($q: String!) {
                 search(query: $q, type: ISSUE, first: 10) {
                   issueCount nodes { ... on Issue { number } }
                 }
               }""",
            {"q": "repo:acme/tiny is:issue is:open label:docs"},
        )["search"]
        assert found == {"issueCount": 1, "nodes": [{"number": 2}]}
        late = gh.graphql(
            '{ search(query: "repo:acme/tiny never be served", type: ISSUE, first: 5) '
            "{ issueCount } }"
        )
        assert late == {"search": {"issueCount": 0}}
        numbers = [
            page["repository"]["issues"]["nodes"][0]["number"]
            for page in gh.graphql.paginate(
                """query($cursor: String) {
                     repository(owner: "acme", name: "tiny") {
                       issues(first: 1, after: $cursor,
                              orderBy: {field: CREATED_AT, direction: DESC}) {
                         nodes { number } pageInfo { hasNextPage endCursor }
                       }
                     }
                   }"""
            )
        ]
        assert numbers == [2, 1]
        with pytest.raises(GraphQLFailed) as failed:
            gh.graphql(
                '{ repository(owner: "acme", name: "tiny") { issues(first: 101) { totalCount } } }'
            )
    [error] = failed.value.response.errors or []
    assert error.type == "EXCESSIVE_PAGINATION"
    assert error.message == (
        "Requesting 101 records on the `issues` connection exceeds the `first` limit of 100"
        " records."
    )


def test_introspection_for_gh_feature_detection(served: Served) -> None:
    with client(served) as gh:
        data = gh.graphql(
            """{ PullRequest: __type(name: "PullRequest") {
                   fields(includeDeprecated: true) { name } }
                 Issue: __type(name: "Issue") { fields(includeDeprecated: true) { name } } }"""
        )
    pull_fields = {f["name"] for f in data["PullRequest"]["fields"]}
    assert {"isDraft", "isInMergeQueue", "statusCheckRollup", "reviewDecision"} <= pull_fields
    assert "stateReason" in {f["name"] for f in data["Issue"]["fields"]}
    assert "reactions" not in pull_fields  # not implemented, so not claimed


def test_issue_mutations_show_in_reads_and_the_event_log(served: Served) -> None:
    with client(served) as gh:
        ids = gh.graphql(
            """{ repository(owner: "acme", name: "tiny") {
                   id label(name: "bug") { id } docs: label(name: "docs") { id }
                 }
                 user(login: "alice") { id } }"""
        )
        repo = ids["repository"]
        created = gh.graphql(
            """mutation($input: CreateIssueInput!) {
                 createIssue(input: $input) {
                   issue { id number state createdAt labels(first: 5) { nodes { name } }
                           assignees(first: 5) { nodes { login } } }
                 }
               }""",
            {
                "input": {
                    "repositoryId": repo["id"],
                    "title": "Found by the agent",
                    "body": "details",
                    "labelIds": [repo["label"]["id"]],
                    "assigneeIds": [ids["user"]["id"]],
                }
            },
        )["createIssue"]["issue"]
        assert created["number"] == 3  # 3 and 4 were taken only after T
        assert _after_t(created["createdAt"])
        assert created["labels"]["nodes"] == [{"name": "bug"}]
        assert created["assignees"]["nodes"] == [{"login": "alice"}]
        issue_id = created["id"]
        gh.graphql(
            """mutation($id: ID!, $docs: [ID!]!, $bug: [ID!]!) {
                 updateIssue(input: {id: $id, title: "Renamed"}) { issue { title } }
                 addLabelsToLabelable(input: {labelableId: $id, labelIds: $docs}) {
                   clientMutationId
                 }
                 removeLabelsFromLabelable(input: {labelableId: $id, labelIds: $bug}) {
                   clientMutationId
                 }
                 addComment(input: {subjectId: $id, body: "on it"}) {
                   commentEdge { node { body url } } subject { id }
                 }
                 closeIssue(input: {issueId: $id, stateReason: NOT_PLANNED}) { issue { state } }
               }""",
            {"id": issue_id, "docs": [repo["docs"]["id"]], "bug": [repo["label"]["id"]]},
        )
        after = gh.graphql(
            """query($id: ID!) { node(id: $id) { ... on Issue {
                 title state stateReason labels(first: 5) { nodes { name } }
                 comments(first: 5) { nodes { body viewerDidAuthor } } } } }""",
            {"id": issue_id},
        )["node"]
    assert after == {
        "title": "Renamed",
        "state": "CLOSED",
        "stateReason": "NOT_PLANNED",
        "labels": {"nodes": [{"name": "docs"}]},
        "comments": {"nodes": [{"body": "on it", "viewerDidAuthor": True}]},
    }
    kinds = [e["kind"] for e in events(served)]
    assert kinds == [
        "github.issue.opened",
        "github.issue.updated",
        "github.label.added",
        "github.label.removed",
        "github.issue_comment.created",
        "github.comment.posted",
        "github.issue.updated",
    ]
    assert {(e["actor"], _after_t(e["at"])) for e in events(served)} == {("agent", True)}


def test_pull_request_created_reviewed_and_merged(served: Served, tmp_path: Any) -> None:
    work = clone(served, tmp_path)
    git(served, work, "checkout", "-q", "-b", "feature")
    head = commit_file(served, work, "NOTES.md", "notes\n", "Add notes\n\nWhy: because.")
    git(served, work, "push", "-q", "origin", "feature")
    with client(served) as gh:
        repo_id = gh.graphql('{ repository(owner: "acme", name: "tiny") { id } }')["repository"][
            "id"
        ]
        pr = gh.graphql(
            """mutation($repo: ID!) {
                 createPullRequest(input: {repositoryId: $repo, baseRefName: "main",
                                           headRefName: "feature", title: "Notes", body: "b",
                                           draft: true}) {
                   pullRequest { id number url isDraft headRefOid state }
                 }
               }""",
            {"repo": repo_id},
        )["createPullRequest"]["pullRequest"]
        assert pr["number"] == 3 and pr["isDraft"] and pr["state"] == "OPEN"
        assert pr["headRefOid"] == head
        assert pr["url"] == "https://github.com/acme/tiny/pull/3"
        with pytest.raises(GraphQLFailed) as own:
            gh.graphql(
                """mutation($id: ID!) { addPullRequestReview(
                     input: {pullRequestId: $id, event: APPROVE}) { clientMutationId } }""",
                {"id": pr["id"]},
            )
        [error] = own.value.response.errors or []
        assert error.type == "UNPROCESSABLE"
        assert error.message == "Review Can not approve your own pull request"
        gh.graphql(
            """mutation($id: ID!) {
                 markPullRequestReadyForReview(input: {pullRequestId: $id}) {
                   pullRequest { isDraft }
                 }
                 addPullRequestReview(
                   input: {pullRequestId: $id, event: COMMENT, body: "self-review"}
                 ) {
                   pullRequestReview { state body }
                 }
               }""",
            {"id": pr["id"]},
        )
        view = gh.graphql(
            """{ repository(owner: "acme", name: "tiny") { pullRequest(number: 3) {
                 isDraft mergeable mergeStateStatus additions deletions changedFiles
                 commits(first: 10) {
                   totalCount nodes { commit { oid messageHeadline messageBody } }
                 }
                 files(first: 10) { nodes { path additions changeType } }
                 reviews(first: 10) { nodes { state body author { login } } }
                 statusCheckRollup: commits(last: 1) {
                   nodes { commit { statusCheckRollup { state } } }
                 }
               } } }"""
        )["repository"]["pullRequest"]
        assert view["isDraft"] is False
        assert (view["mergeable"], view["mergeStateStatus"]) == ("MERGEABLE", "CLEAN")
        assert (view["additions"], view["deletions"], view["changedFiles"]) == (1, 0, 1)
        assert view["commits"] == {
            "totalCount": 1,
            "nodes": [
                {
                    "commit": {
                        "oid": head,
                        "messageHeadline": "Add notes",
                        "messageBody": "Why: because.",
                    }
                }
            ],
        }
        assert view["files"]["nodes"] == [
            {"path": "NOTES.md", "additions": 1, "changeType": "ADDED"}
        ]
        assert view["reviews"]["nodes"] == [
            {"state": "COMMENTED", "body": "self-review", "author": {"login": "agent"}}
        ]
        assert view["statusCheckRollup"]["nodes"] == [{"commit": {"statusCheckRollup": None}}]
        merged = gh.graphql(
            """mutation($id: ID!) {
                 mergePullRequest(input: {pullRequestId: $id, mergeMethod: SQUASH}) {
                   pullRequest { state merged mergedBy { login } mergeCommit { messageHeadline } }
                 }
               }""",
            {"id": pr["id"]},
        )["mergePullRequest"]["pullRequest"]
    assert merged["state"] == "MERGED" and merged["merged"] is True
    assert merged["mergedBy"] == {"login": "agent"}
    assert merged["mergeCommit"]["messageHeadline"].startswith("Notes")
    kinds = [e["kind"] for e in events(served)]
    assert kinds == [
        "git.push",
        "github.branch.moved",
        "github.pull_request.opened",
        "github.pull_request.updated",
        "github.pull_request_review.submitted",
        "github.comment.posted",
        "github.pull_request.merged",
        "github.pull_request.updated",
        "github.branch.moved",
    ]


# ---------------------------------------------------------------------------- no silent nulls

NEVER_BUILT = {
    # The world holds none of these; the types exist so that gh's queries validate
    # (``milestone{...}``, ``projectCards{...}``, ``...on Team``, ``checkSuite{workflowRun{...}}``)
    # and every field that returns one answers null or an empty list.
    "AutoMergeRequest",
    "BranchProtectionRule",
    "Milestone",
    "Project",
    "ProjectCard",
    "ProjectColumn",
    "ReactingUserEdge",
    "ReviewRequest",
    "Team",
    "Workflow",
    "WorkflowRun",
}


def _view_classes() -> dict[str, list[type]]:
    found: dict[str, list[type]] = {}
    for module in (render, connections, resolvers):
        for _, cls in inspect.getmembers(module, inspect.isclass):
            typename = getattr(cls, "typename", None)
            if isinstance(typename, str) and typename:
                found.setdefault(typename, []).append(cls)
    for name in ("User", "Bot", "Organization"):
        found.setdefault(name, []).append(render.ActorView)
    found["Organization"].append(render.OwnerView)
    found["CheckRunStateCount"] = [render.StateCount]
    found["StatusContextStateCount"] = [render.StateCount]
    found["Query"] = [resolvers.QueryRoot]
    found["Mutation"] = [resolvers.MutationRoot]
    return found


def _answers(cls: type, attribute: str) -> bool:
    if hasattr(cls, attribute):
        return True
    source = "".join(inspect.getsource(k) for k in cls.__mro__ if k.__module__.startswith("fakes"))
    return re.search(rf"self\.{attribute}\b\s*=|^\s+{attribute}:", source, re.M) is not None


def test_every_field_in_the_schema_has_an_implementation() -> None:
    classes = _view_classes()
    missing = []
    for gtype in schema().type_map.values():
        if not isinstance(gtype, GraphQLObjectType) or gtype.name.startswith("__"):
            continue
        if gtype.name in NEVER_BUILT:
            continue
        name = gtype.name
        if name.endswith("Connection"):
            candidates = [
                connections.Connection,
                render.SearchConnection,
                render.ContextConnection,
            ]
        elif name.endswith("Edge"):
            candidates = [connections.Edge]
        elif name.endswith("Payload"):
            continue  # built per mutation; each is exercised above
        else:
            candidates = classes.get(name, [])
        if not candidates:
            missing.append(f"{name}: no view")
            continue
        for field in gtype.fields:
            attribute = convert_camel_case_to_snake(field)
            if not any(_answers(cls, attribute) for cls in candidates):
                missing.append(f"{name}.{field}")
    assert missing == [], missing
