"""Issue events: the history seeded from the snapshot, served in GitHub's shapes (per thread,
per repository, one by id, the timeline), with Link paging, at the root and under
``/api/v3``; every change the fake makes through REST or GraphQL appends the event GitHub
would record, dated on the frozen clock, and shows in the state dump.

Checked with githubkit's models (GitHub's OpenAPI description) and strictly. Two gaps in that
description, not in the fake: the per-thread list's union has no model for the state-change
events (``closed``, ``reopened``, ``merged``, ``convert_to_draft``, ``ready_for_review``),
which GitHub's "Issue event types" page lists as served there; and the generic
``IssueEvent`` lacks ``state_reason``, which only the timeline's ``StateChangeIssueEvent``
declares. Those items are validated against ``StateChangeIssueEvent``.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from githubkit.exception import RequestFailed
from githubkit_schemas.v2026_03_10.models import (
    AssignedIssueEvent,
    IssueEvent,
    LabeledIssueEvent,
    RenamedIssueEvent,
    StateChangeIssueEvent,
    UnassignedIssueEvent,
    UnlabeledIssueEvent,
)
from pydantic import BaseModel

from fakes.github.models import node_id
from replay.base.snapshot import load_snapshot
from replay.base.worldstate import GitHubIssueEvent
from replay.contract.schema import strict_problems
from tests.fakes.github.conftest import (
    REPO,
    TOKEN,
    Served,
    T,
    build,
    checked,
    client,
    clone,
    commit_file,
    git,
    github_world,
    serve,
)
from tests.fakes.github.conftest import events as fake_events
from tests.serving import LOOPBACK_TIMEOUT

OWNER, NAME = REPO.split("/")
AT = datetime.fromisoformat(T.replace("Z", "+00:00"))

PER_KIND: dict[str, type[BaseModel]] = {
    "labeled": LabeledIssueEvent,
    "unlabeled": UnlabeledIssueEvent,
    "assigned": AssignedIssueEvent,
    "unassigned": UnassignedIssueEvent,
    "renamed": RenamedIssueEvent,
}


def events_world() -> dict[str, Any]:
    """The fake's test world plus two issues with a history before T (and a change after)."""
    world = github_world()
    world["github"]["issues"] += [
        {
            "repo": REPO,
            "number": 5,
            "id": 105,
            "title": "CI flaky",
            "state": "open",
            "author": "bob",
            "created_at": "2026-03-02T09:00:00Z",
            "history": [
                {
                    "at": "2026-03-03T10:00:00Z",
                    "by": "alice",
                    "set": {"labels": ["bug"], "assignees": ["alice"]},
                },
                {"at": "2026-03-04T10:00:00Z", "by": "alice", "set": {"title": "CI is flaky"}},
                {
                    "at": "2026-03-05T10:00:00Z",
                    "set": {
                        "state": "closed",
                        "closed_at": "2026-03-05T10:00:00Z",
                        "state_reason": "not_planned",
                    },
                },
                {
                    "at": "2026-03-06T10:00:00Z",
                    "by": "alice",
                    "set": {"state": "open", "closed_at": None, "state_reason": "reopened"},
                },
                {"at": "2026-03-13T10:00:00Z", "by": "alice", "set": {"labels": []}},
            ],
        },
        {
            "repo": REPO,
            "number": 6,
            "id": 106,
            "title": "Typo",
            "state": "open",
            "author": "alice",
            "created_at": "2026-03-07T09:00:00Z",
            "history": [
                {"at": "2026-03-07T10:00:00Z", "set": {"labels": ["docs"]}},
                {"at": "2026-03-08T10:00:00Z", "set": {"title": "Typo in README"}},
                {"at": "2026-03-09T10:00:00Z", "set": {"assignees": ["bob"]}},
            ],
        },
    ]
    return world


@pytest.fixture(scope="module")
def events_snapshot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(events_world(), tmp_path_factory.mktemp("events-world"))


@pytest.fixture()
def served_events(events_snapshot: Path) -> Iterator[Served]:
    with serve(events_snapshot) as world:
        yield world


def http(served: Served) -> httpx.Client:
    return httpx.Client(
        timeout=LOOPBACK_TIMEOUT, base_url=served.url, headers={"Authorization": f"token {TOKEN}"}
    )


def when(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))


def event_problems(item: dict[str, Any], *, generic: bool = False) -> list[str]:
    """An event checked with githubkit's model for its kind, validated and strictly.

    ``generic``: the model of the repository's list and of one event (``IssueEvent``, which
    carries ``issue`` but not ``state_reason``; see the module docstring).
    """
    data = dict(item)
    if generic:
        if item["event"] in ("closed", "reopened"):
            assert data.pop("state_reason", "absent") in (None, "completed", "not_planned")
        model: type[BaseModel] = IssueEvent
    else:
        model = PER_KIND.get(item["event"], StateChangeIssueEvent)
    model.model_validate(data)
    return strict_problems(model, data)


def seeded(snapshot: Path, number: int) -> list[GitHubIssueEvent]:
    state = load_snapshot(snapshot).github
    return next(t.events for t in state.issues if t.number == number)


def dumped(served: Served, number: int) -> list[dict[str, Any]]:
    state = httpx.get(f"{served.url}/_replay/state").json()["github"]
    return next(i["events"] for i in state["issues"] if i["number"] == number)


def test_seeded_events_in_githubs_shapes(served_events: Served, events_snapshot: Path) -> None:
    with http(served_events) as h:
        listed = h.get(f"/repos/{REPO}/issues/5/events")
        assert listed.status_code == 200 and "link" not in listed.headers
        body = listed.json()
    expected = seeded(events_snapshot, 5)
    assert [e["id"] for e in body] == [e.id for e in expected]
    # Nothing from after T: the labels were cleared only on 2026-03-13.
    assert [(e["event"], e["actor"]["login"]) for e in body] == [
        ("labeled", "alice"),
        ("assigned", "alice"),
        ("renamed", "alice"),
        ("closed", "bob"),
        ("reopened", "alice"),
    ]
    labeled, assigned, renamed, closed, reopened = body
    assert labeled["label"] == {"name": "bug", "color": "d73a4a"}
    assert assigned["assignee"]["login"] == "alice" and assigned["assigner"]["login"] == "alice"
    assert renamed["rename"] == {"from": "CI flaky", "to": "CI is flaky"}
    assert closed["state_reason"] == "not_planned" and reopened["state_reason"] is None
    assert closed["created_at"] == "2026-03-05T10:00:00Z"
    for e in body:
        assert not event_problems(e), e
        assert e["url"] == f"https://api.github.com/repos/{REPO}/issues/events/{e['id']}"
        assert (e["commit_id"], e["commit_url"], e["performed_via_github_app"]) == (
            None,
            None,
            None,
        )
        assert "issue" not in e
        kind_fields = {"label", "assignee", "assigner", "rename", "state_reason"} & set(e)
        assert (
            kind_fields
            == {
                "labeled": {"label"},
                "assigned": {"assignee", "assigner"},
                "renamed": {"rename"},
                "closed": {"state_reason"},
                "reopened": {"state_reason"},
            }[e["event"]]
        )
    assert closed["node_id"] == node_id("ClosedEvent", closed["id"])
    assert labeled["node_id"] == node_id("LabeledEvent", labeled["id"])

    # githubkit's own typed call, where its union has a model for every kind the thread has.
    with client(served_events) as gh:
        six = checked(gh.rest.issues.list_events(OWNER, NAME, 6))
        assert [(type(e).__name__, e.event) for e in six] == [
            ("LabeledIssueEvent", "labeled"),
            ("RenamedIssueEvent", "renamed"),
            ("AssignedIssueEvent", "assigned"),
        ]
        assert six[1].rename.from_ == "Typo" and six[1].rename.to == "Typo in README"
        assert six[2].assignee.login == "bob" and six[2].actor.login == "alice"
        assert not checked(gh.rest.issues.list_events(OWNER, NAME, 2))  # no history at all

    # The dump gives back exactly what was seeded, in the snapshot's own terms.
    assert [GitHubIssueEvent.model_validate(e) for e in dumped(served_events, 5)] == expected


def test_repository_events_and_one_event(served_events: Served) -> None:
    with client(served_events) as gh:
        everything = gh.rest.issues.list_events_for_repo(OWNER, NAME)
        body = everything.json()
        parsed = everything.parsed_data
        one = gh.rest.issues.get_event(OWNER, NAME, body[0]["id"])
        with pytest.raises(RequestFailed) as missing:
            gh.rest.issues.get_event(OWNER, NAME, 999999)
    # Newest first, across threads, each with its issue.
    assert [(e["issue"]["number"], e["event"]) for e in body] == [
        (6, "assigned"),
        (6, "renamed"),
        (6, "labeled"),
        (5, "reopened"),
        (5, "closed"),
        (5, "renamed"),
        (5, "assigned"),
        (5, "labeled"),
    ]
    assert [e.id for e in parsed] == [e["id"] for e in body]
    for e in body:
        assert not event_problems(e, generic=True), e
        assert e["issue"]["title"] in ("Typo in README", "CI is flaky")
    assert one.json() == body[0]
    assert not event_problems(one.json(), generic=True)
    assert missing.value.response.status_code == 404
    assert missing.value.response.json() == {
        "message": "Not Found",
        "documentation_url": "https://docs.github.com/rest",
        "status": "404",
    }


def test_paging_and_enterprise_paths(served_events: Served) -> None:
    with http(served_events) as h:
        pages = []
        url: str | None = f"/api/v3/repos/{REPO}/issues/5/events?per_page=2"
        links = []
        while url:
            response = h.get(url)
            assert response.status_code == 200
            pages.append([e["event"] for e in response.json()])
            links.append(response.headers.get("link", ""))
            nxt = response.links.get("next")
            url = nxt["url"] if nxt else None
        assert pages == [["labeled", "assigned"], ["renamed", "closed"], ["reopened"]]
        assert links[0].startswith(f"<{served_events.url}/api/v3/repos/{REPO}/issues/5/events?")
        assert 'rel="last"' in links[0] and 'rel="next"' not in links[-1]
        assert 'rel="prev"' in links[-1] and 'rel="first"' in links[-1]
        repo_wide = h.get(f"/api/v3/repos/{REPO}/issues/events", params={"per_page": 3})
        assert len(repo_wide.json()) == 3 and 'rel="next"' in repo_wide.headers["link"]
        unknown = h.get(f"/api/v3/repos/{REPO}/issues/99/events")
        assert unknown.status_code == 404
        assert unknown.json() == {
            "message": "Not Found",
            "documentation_url": "https://docs.github.com/rest",
            "status": "404",
        }
        assert h.get("/repos/acme/nope/issues/1/events").status_code == 404
        assert (
            h.get(f"/repos/{REPO}/issues/1/events", headers={"Authorization": ""}).status_code
            == 401
        )
    with client(served_events) as gh:
        kinds = [
            e.event
            for e in gh.rest.paginate(
                gh.rest.issues.list_events, owner=OWNER, repo=NAME, issue_number=6, per_page=1
            )
        ]
        assert kinds == ["labeled", "renamed", "assigned"]
        with pytest.raises(RequestFailed) as missing:
            gh.rest.issues.list_events(OWNER, NAME, 99)
        assert missing.value.response.status_code == 404


def test_rest_changes_append_events(served_events: Served, events_snapshot: Path) -> None:
    top = max(e.id for n in (5, 6) for e in seeded(events_snapshot, n))
    with client(served_events) as gh:
        checked(
            gh.rest.issues.update(
                OWNER, NAME, 2, title="Document add() and sub()", state="closed",
                state_reason="not_planned",
            )
        )  # fmt: skip
        checked(gh.rest.issues.add_labels(OWNER, NAME, 2, labels=["bug"]))
        checked(gh.rest.issues.remove_label(OWNER, NAME, 2, "docs"))
        checked(gh.rest.issues.update(OWNER, NAME, 2, assignees=["bob"], state="open"))
        checked(gh.rest.issues.update(OWNER, NAME, 2, title="Document add() and sub()"))
        created = checked(
            gh.rest.issues.create(OWNER, NAME, title="New", labels=["docs"], assignees=["alice"])
        )
    with http(served_events) as h:
        body = h.get(f"/repos/{REPO}/issues/2/events").json()
        fresh = h.get(f"/repos/{REPO}/issues/{created.number}/events").json()
    # One PATCH that reopens and reassigns records the reopening first, as it applies it.
    assert [e["event"] for e in body] == [
        "renamed", "closed", "labeled", "unlabeled", "reopened", "assigned", "unassigned",
    ]  # fmt: skip
    renamed, closed, labeled, unlabeled, reopened, assigned, unassigned = body
    assert renamed["rename"] == {"from": "Document add()", "to": "Document add() and sub()"}
    assert closed["state_reason"] == "not_planned" and reopened["state_reason"] is None
    assert labeled["label"] == {"name": "bug", "color": "d73a4a"}
    assert unlabeled["label"] == {"name": "docs", "color": "0075ca"}
    assert assigned["assignee"]["login"] == "bob" and unassigned["assignee"]["login"] == "alice"
    assert assigned["assigner"]["login"] == "agent"
    ids = [e["id"] for e in body]
    assert ids == sorted(ids) and ids[0] == top + 1
    for e in body:
        assert not event_problems(e), e
        assert e["actor"]["login"] == "agent" and when(e["created_at"]) > AT
    assert [(e["event"], e.get("label", {}).get("name")) for e in fresh] == [
        ("labeled", "docs"),
        ("assigned", None),
    ]
    dump = dumped(served_events, 2)
    assert [e["event"] for e in dump] == [e["event"] for e in body]
    checked_dump = [GitHubIssueEvent.model_validate(e) for e in dump]
    assert checked_dump[0].rename_from == "Document add()"
    assert checked_dump[5].assignee == "bob" and checked_dump[3].label == "docs"
    assert all(e.actor == "agent" and e.created_at > AT for e in checked_dump)
    # A reset forgets the run's events and keeps the seeded ones.
    assert httpx.post(f"{served_events.url}/_replay/reset").json() == {"ok": True}
    assert dumped(served_events, 2) == []
    assert len(dumped(served_events, 5)) == 5


def test_graphql_changes_append_events(served_events: Served) -> None:
    with client(served_events) as gh:
        ids = gh.graphql(
            """{ repository(owner: "acme", name: "tiny") {
                   issue(number: 6) { id } bug: label(name: "bug") { id }
                   docs: label(name: "docs") { id } } }"""
        )["repository"]
        issue_id = ids["issue"]["id"]
        gh.graphql(
            """mutation($id: ID!, $bug: [ID!]!, $docs: [ID!]!) {
                 addLabelsToLabelable(input: {labelableId: $id, labelIds: $bug}) {
                   clientMutationId }
                 removeLabelsFromLabelable(input: {labelableId: $id, labelIds: $docs}) {
                   clientMutationId }
                 updateIssue(input: {id: $id, title: "Typo in the README"}) { issue { title } }
                 closeIssue(input: {issueId: $id, stateReason: NOT_PLANNED}) { issue { state } }
                 reopenIssue(input: {issueId: $id}) { issue { state } }
               }""",
            {"id": issue_id, "bug": [ids["bug"]["id"]], "docs": [ids["docs"]["id"]]},
        )
        listed = gh.rest.issues.list_events_for_repo(OWNER, NAME).json()
    run = [e for e in listed if when(e["created_at"]) > AT]
    assert [(e["issue"]["number"], e["event"]) for e in reversed(run)] == [
        (6, "labeled"),
        (6, "unlabeled"),
        (6, "renamed"),
        (6, "closed"),
        (6, "reopened"),
    ]
    assert run[1]["state_reason"] == "not_planned"
    for e in run:
        assert not event_problems(e, generic=True), e


def test_merge_and_draft_events_and_the_timeline(served_events: Served, tmp_path: Path) -> None:
    work = clone(served_events, tmp_path)
    git(served_events, work, "checkout", "-q", "-b", "fix-add")
    commit_file(served_events, work, "lib.py", "def add(a, b):\n    return a + b\n", "Fix add")
    git(served_events, work, "push", "-q", "origin", "fix-add")
    with client(served_events) as gh:
        pr = checked(
            gh.rest.pulls.create(OWNER, NAME, title="Fix add", head="fix-add", base="main")
        )
        pr_id = gh.graphql(
            """query($n: Int!) {
                 repository(owner: "acme", name: "tiny") { pullRequest(number: $n) { id } }
               }""",
            {"n": pr.number},
        )["repository"]["pullRequest"]["id"]
        gh.graphql(
            """mutation($id: ID!) {
                 convertPullRequestToDraft(input: {pullRequestId: $id}) { clientMutationId }
               }""",
            {"id": pr_id},
        )
        checked(gh.rest.issues.create_comment(OWNER, NAME, pr.number, body="ready soon"))
        gh.graphql(
            """mutation($id: ID!) {
                 markPullRequestReadyForReview(input: {pullRequestId: $id}) { clientMutationId }
               }""",
            {"id": pr_id},
        )
        checked(gh.rest.pulls.create_review(OWNER, NAME, pr.number, event="COMMENT", body="ok"))
        merged = checked(gh.rest.pulls.merge(OWNER, NAME, pr.number, merge_method="squash"))
        timeline = checked(gh.rest.issues.list_events_for_timeline(OWNER, NAME, pr.number))
        raw_timeline = gh.rest.issues.list_events_for_timeline(OWNER, NAME, pr.number).json()
    with http(served_events) as h:
        body = h.get(f"/repos/{REPO}/issues/{pr.number}/events").json()
    assert [e["event"] for e in body] == [
        "convert_to_draft",
        "ready_for_review",
        "merged",
        "closed",
    ]
    draft, ready, merge, closed = body
    assert draft["node_id"] == node_id("ConvertToDraftEvent", draft["id"])
    assert ready["node_id"] == node_id("ReadyForReviewEvent", ready["id"])
    assert merge["commit_id"] == merged.sha
    assert merge["commit_url"] == f"https://api.github.com/repos/{REPO}/commits/{merged.sha}"
    assert (closed["commit_id"], closed["state_reason"]) == (None, None)
    for e in body:
        assert not event_problems(e), e
    # The timeline: events and the conversation, oldest first.
    assert [e["event"] for e in raw_timeline] == [
        "convert_to_draft", "commented", "ready_for_review", "reviewed", "merged", "closed",
    ]  # fmt: skip
    assert [type(e).__name__ for e in timeline][:2] == [
        "StateChangeIssueEvent",
        "TimelineCommentEvent",
    ]
    assert raw_timeline[1]["body"] == "ready soon" and raw_timeline[1]["actor"]["login"] == "agent"
    assert raw_timeline[3]["state"] == "commented"
    # The dump keeps the snapshot's word for a draft conversion.
    assert [e["event"] for e in dumped(served_events, pr.number)] == [
        "convert_to_draft", "ready_for_review", "merged", "closed",
    ]  # fmt: skip
    for e in dumped(served_events, pr.number):
        GitHubIssueEvent.model_validate(e)


def test_merging_into_the_default_branch_closes_the_issues_it_fixes(
    served_events: Served, tmp_path: Path
) -> None:
    """Closing keywords in the description and in commit messages close the issues, with a
    ``closed`` event naming the merge commit; a mention without a keyword, or in the title,
    does not."""
    work = clone(served_events, tmp_path)
    git(served_events, work, "checkout", "-q", "-b", "typo")
    commit_file(served_events, work, "README", "fixed\n", "Fix the typo\n\nResolves #6")
    git(served_events, work, "push", "-q", "origin", "typo")
    with client(served_events) as gh:
        filed = checked(gh.rest.issues.create(OWNER, NAME, title="README typo, again"))
        pr = checked(
            gh.rest.pulls.create(
                OWNER, NAME, title="Fix #5 too", head="typo", base="main",
                body=f"Fixes #{filed.number}. See also #5.",
            )
        )  # fmt: skip
        merged = checked(gh.rest.pulls.merge(OWNER, NAME, pr.number, merge_method="merge"))
        states = {n: checked(gh.rest.issues.get(OWNER, NAME, n)) for n in (filed.number, 6, 5)}
        # githubkit's model of this list has no closed event (see the module's docstring).
        closed = gh.rest.issues.list_events(OWNER, NAME, 6).json()[-1]
    assert [(n, i.state, i.state_reason) for n, i in states.items()] == [
        (filed.number, "closed", "completed"),
        (6, "closed", "completed"),
        (5, "open", "reopened"),  # as it was: reopened before T, untouched by the merge
    ]
    assert (closed["event"], closed["commit_id"], closed["actor"]["login"]) == (
        "closed",
        merged.sha,
        "agent",
    )
    updates = [e["data"] for e in fake_events(served_events, "github.issue.updated")]
    assert [(u["number"], u["closed_by_pull_request"]) for u in updates] == [
        (filed.number, pr.number),
        (6, pr.number),
    ]
