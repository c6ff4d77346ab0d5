"""Reads that no longer walk an issue's comments answer exactly what the walk answered.

An issue's ``comments`` is now one aggregate loaded with the issue, and its comment list is
paged in SQL; the previous implementation counted ``len(issue.comments)`` and sliced the whole
list in Python (:meth:`fakes.core.paging.Paging.slice`). Here an issue gets a few hundred
comments and every answer is compared with what that walk gives, body and ``Link`` header.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any
from urllib.parse import urlencode

import httpx

from fakes.core.paging import Paging
from fakes.github import render
from fakes.github.routes_issues import parse_since
from tests.fakes.github.conftest import REPO, TOKEN, Served
from tests.serving import LOOPBACK_TIMEOUT

AUTH = {"Authorization": f"token {TOKEN}"}
COMMENTS = 230


def _walk(served: Served, number: int, query: dict[str, str]) -> tuple[list[Any], str | None]:
    """The previous implementation of ``GET .../issues/{n}/comments``: every comment loaded,
    filtered and sliced in Python."""
    path = f"/repos/{REPO}/issues/{number}/comments"
    paging = Paging(
        per_page=min(int(query.get("per_page", 30)), 100),
        page=int(query.get("page", 1)),
        base=f"{served.url}{path}",
        params=dict(query),
    )
    since = query.get("since")
    with served.world.session() as s:
        issue = served.backend.issues.get(s, REPO, number)
        when = parse_since(since)
        rows = [c for c in issue.comments if when is None or c.updated_at >= when]
        chunk, headers = paging.slice([render.comment(c).wire() for c in rows])
    return chunk, headers.get("Link")


def test_issue_and_comment_pages_match_the_walk_over_every_comment(served: Served) -> None:
    with httpx.Client(timeout=LOOPBACK_TIMEOUT, base_url=served.url, headers=AUTH) as http:
        _check_pages(served, http)


def _check_pages(served: Served, http: httpx.Client) -> None:
    number = 1
    made = [
        http.post(f"/repos/{REPO}/issues/{number}/comments", json={"body": f"c{i}"}).json()
        for i in range(COMMENTS)
    ]
    assert all("id" in c for c in made)
    # Edit a few late, so that ``since`` picks comments that are not a prefix or a suffix.
    for c in made[10:15]:
        assert http.patch(f"/repos/{REPO}/issues/comments/{c['id']}", json={"body": "e"}).is_success
    gone = made[3]["id"]
    assert http.delete(f"/repos/{REPO}/issues/comments/{gone}").status_code == 204

    with served.world.session() as s:
        issue = served.backend.issues.get(s, REPO, number)
        walked = len(issue.comments)
        expected_issue = render.issue(issue).wire()
        middle = sorted(c.updated_at for c in issue.comments)[walked // 2]
    assert walked >= COMMENTS  # the seeded ones too, less the deleted one
    served_issue = http.get(f"/repos/{REPO}/issues/{number}").json()
    assert served_issue["comments"] == walked
    assert served_issue == expected_issue

    since = middle.isoformat().replace("+00:00", "Z")
    queries: list[dict[str, str]] = [{}, {"page": "2"}, {"since": since}]
    for per_page in ("1", "7", "30", "100", "250"):
        last = -(-walked // min(int(per_page), 100))
        for page in ("1", "2", str(last - 1), str(last), str(last + 1)):
            queries.append({"per_page": per_page, "page": page})
        queries.append({"per_page": per_page, "page": "2", "since": since})
    for query in queries:
        answer = http.get(f"/repos/{REPO}/issues/{number}/comments?{urlencode(query)}")
        assert answer.status_code == 200, (query, answer.text)
        body, link = _walk(served, number, query)
        assert answer.json() == body, query
        assert answer.headers.get("link") == link, query


def test_a_comment_made_or_deleted_in_a_request_moves_the_count_it_answers(
    served: Served,
) -> None:
    with httpx.Client(timeout=LOOPBACK_TIMEOUT, base_url=served.url, headers=AUTH) as http:
        _check_count(served, http)


def _check_count(served: Served, http: httpx.Client) -> None:
    before = http.get(f"/repos/{REPO}/issues/1").json()["comments"]
    made = http.post(f"/repos/{REPO}/issues/1/comments", json={"body": "one more"}).json()
    with served.world.session() as s:
        issue = served.backend.issues.get(s, REPO, 1)
        assert issue.comment_count == before + 1
        served.backend.issues.delete_comment(s, "alice", REPO, made["id"])
        assert issue.comment_count == before  # expired by the delete, read again
        served.backend.issues.add_comment(s, "alice", REPO, 1, "again")
        assert issue.comment_count == before + 1
    assert http.get(f"/repos/{REPO}/issues/1").json()["comments"] == before + 1


# ----------------------------------------------------------------------- GraphQL comments

COMMENTS_QUERY = """
query($first: Int, $last: Int, $after: String, $before: String, $order: IssueCommentOrder) {
  repository(owner: "acme", name: "tiny") {
    issue(number: 1) {
      viewerSubscription
      comments(first: $first, last: $last, after: $after, before: $before, orderBy: $order) {
        totalCount
        pageInfo { startCursor endCursor hasNextPage hasPreviousPage }
        edges { cursor node { databaseId body } }
      }
    }
  }
}
"""


def _graphql(http: httpx.Client, query: str, variables: dict[str, Any]) -> Any:
    answer = http.post("/graphql", json={"query": query, "variables": variables})
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert "errors" not in body, body
    return body["data"]


def _walked_connection(served: Served, variables: dict[str, Any]) -> dict[str, Any]:
    """The previous implementation of ``Issue.comments``: every comment loaded, sorted in
    Python and paged by :class:`fakes.core.relay.Connection` over the list."""
    from fakes.github.graphql.connections import Connection

    order = variables.get("order") or {}
    with served.world.session() as s:
        rows = list(served.backend.issues.get(s, REPO, 1).comments)
        if order.get("field") == "UPDATED_AT":
            rows.sort(key=lambda c: (c.updated_at, c.id))
        if order.get("direction") == "DESC":
            rows.reverse()
        page = Connection(
            "IssueCommentConnection",
            [SimpleNamespace(row=c) for c in rows],  # a node carries its row, as the fake's do
            connection="comments",
            first=variables.get("first"),
            after=variables.get("after"),
            last=variables.get("last"),
            before=variables.get("before"),
        )
        info = page.page_info
        return {
            "totalCount": page.total_count,
            "pageInfo": {
                "startCursor": info.start_cursor,
                "endCursor": info.end_cursor,
                "hasNextPage": info.has_next_page,
                "hasPreviousPage": info.has_previous_page,
            },
            "edges": [
                {"cursor": e.cursor, "node": {"databaseId": e.node.row.id, "body": e.node.row.body}}
                for e in page.edges
            ],
        }


def test_graphql_comment_pages_match_the_walk_over_every_comment(served: Served) -> None:
    from fakes.github.graphql.connections import cursor

    with httpx.Client(timeout=LOOPBACK_TIMEOUT, base_url=served.url, headers=AUTH) as http:
        made = [
            http.post(f"/repos/{REPO}/issues/1/comments", json={"body": f"g{i}"}).json()
            for i in range(40)
        ]
        for c in made[5:9]:  # edited late: updatedAt order is not id order
            http.patch(f"/repos/{REPO}/issues/comments/{c['id']}", json={"body": "edited"})
        orders: list[dict[str, str] | None] = [
            None,
            {"field": "UPDATED_AT", "direction": "ASC"},
            {"field": "UPDATED_AT", "direction": "DESC"},
        ]
        pages: list[dict[str, Any]] = [
            {},
            {"first": 0},
            {"first": 7},
            {"last": 7},
            {"first": 100},
            {"first": 5, "after": cursor(9)},
            {"last": 5, "before": cursor(30)},
            {"first": 3, "after": cursor(500)},
            {"after": cursor(3), "before": cursor(12)},
            {"first": 2, "last": 1, "after": cursor(0)},
        ]
        for order in orders:
            for page in pages:
                variables = {**page, "order": order}
                issue = _graphql(http, COMMENTS_QUERY, variables)["repository"]["issue"]
                assert issue["comments"] == _walked_connection(served, variables), variables
                assert issue["viewerSubscription"] == "SUBSCRIBED"  # the viewer commented


# ----------------------------------------------------------------------- timeline and events


def _walked_timeline(served: Served, number: int, query: dict[str, str]) -> tuple[Any, Any]:
    """The previous implementation of ``GET .../issues/{n}/timeline``: every event, comment
    and submitted review loaded, sorted in Python and sliced."""
    from fakes.github.routes_events import _timeline_entry

    path = f"/repos/{REPO}/issues/{number}/timeline"
    paging = Paging(
        per_page=min(int(query.get("per_page", 30)), 100),
        page=int(query.get("page", 1)),
        base=f"{served.url}{path}",
        params=dict(query),
    )
    with served.world.session() as s:
        issue = served.backend.issues.get(s, REPO, number)
        entries: list[Any] = []
        entries += [(e.created_at, 0, e) for e in issue.events]
        entries += [(c.created_at, 1, c) for c in issue.comments]
        for rv in issue.pull.reviews if issue.pull is not None else []:
            if rv.submitted_at is not None:
                entries.append((rv.submitted_at, 2, rv))
        entries.sort(key=lambda x: (x[0], x[1]))
        chunk, headers = paging.slice([_timeline_entry(row).wire() for _, _, row in entries])
    return chunk, headers.get("Link")


def _walked_events(served: Served, number: int, query: dict[str, str]) -> tuple[Any, Any]:
    """The previous ``GET .../issues/{n}/events``: every event loaded and sliced."""
    path = f"/repos/{REPO}/issues/{number}/events"
    paging = Paging(
        per_page=min(int(query.get("per_page", 30)), 100),
        page=int(query.get("page", 1)),
        base=f"{served.url}{path}",
        params=dict(query),
    )
    with served.world.session() as s:
        rows = list(served.backend.issues.get(s, REPO, number).events)
        chunk, headers = paging.slice([render.issue_event(e).wire() for e in rows])
    return chunk, headers.get("Link")


def test_timeline_and_event_pages_match_the_walk(served: Served) -> None:
    with httpx.Client(timeout=LOOPBACK_TIMEOUT, base_url=served.url, headers=AUTH) as http:
        for i in range(12):
            http.post(f"/repos/{REPO}/issues/1/comments", json={"body": f"t{i}"})
            state = "closed" if i % 2 == 0 else "open"
            assert http.patch(f"/repos/{REPO}/issues/1", json={"state": state}).is_success
            http.post(f"/repos/{REPO}/issues/1/labels", json={"labels": ["bug"]})
            http.delete(f"/repos/{REPO}/issues/1/labels/bug")
        with served.world.session() as s:
            numbers = [1] + [
                i.number for i in served.backend.issues.find(s, REPO, state="all", pulls=True)
            ]
        for number in numbers:
            for query in (
                {},
                {"per_page": "7"},
                {"per_page": "7", "page": "3"},
                {"per_page": "100"},
                {"per_page": "5", "page": "99"},
            ):
                for kind, walk in (("timeline", _walked_timeline), ("events", _walked_events)):
                    answer = http.get(f"/repos/{REPO}/issues/{number}/{kind}?{urlencode(query)}")
                    assert answer.status_code == 200, answer.text
                    body, link = walk(served, number, query)
                    assert answer.json() == body, (kind, number, query)
                    assert answer.headers.get("link") == link, (kind, number, query)


# ----------------------------------------------------------------------- cost at 2,000


def test_reads_of_a_thread_cost_the_same_at_2000_comments_as_at_a_page(served: Served) -> None:
    """Statements run and rows loaded by each read of a thread (REST issue, comments page,
    timeline and events pages; GraphQL comments page and ``totalCount``) are the same for an
    issue with 2,000 comments and one with 12: nothing loads or walks the whole list."""
    from fakes.github.models import GitHubBase
    from tests.fakes.cost import counted

    with httpx.Client(timeout=LOOPBACK_TIMEOUT, base_url=served.url, headers=AUTH) as http:
        small = http.post(f"/repos/{REPO}/issues", json={"title": "few"}).json()["number"]
        large = http.post(f"/repos/{REPO}/issues", json={"title": "many"}).json()["number"]
        with served.world.session() as s:
            for number, count in ((small, 12), (large, 2000)):
                for i in range(count):
                    served.backend.issues.add_comment(s, "alice", REPO, number, f"c{i}")
        reads = [
            ("GET", "/repos/{repo}/issues/{n}", None),
            ("GET", "/repos/{repo}/issues/{n}/comments?per_page=10&page=1", None),
            ("GET", "/repos/{repo}/issues/{n}/timeline?per_page=10", None),
            ("GET", "/repos/{repo}/issues/{n}/events?per_page=10", None),
            ("POST", "/graphql", "comments(first: 10) { totalCount nodes { body } }"),
            ("POST", "/graphql", "comments { totalCount }"),
            ("POST", "/graphql", "viewerSubscription"),
        ]
        for method, path, selection in reads:
            costs = []
            for number in (small, large):
                url = path.format(repo=REPO, n=number)
                body = None
                if selection is not None:
                    query = (
                        f'{{ repository(owner: "acme", name: "tiny") '
                        f"{{ issue(number: {number}) {{ {selection} }} }} }}"
                    )
                    body = {"query": query}
                with counted(served.world.engine, GitHubBase) as cost:
                    answer = http.request(method, url, json=body)
                assert answer.status_code == 200, answer.text
                costs.append(cost)
            assert costs[0] == costs[1], (method, path, selection, costs)
            assert costs[1].rows <= 40, (path, selection, costs)  # a page, never the thread
