"""Filtered lists of issues and comments (``issues(filter:)``, a team's, a state's, a user's or
a label's issues, ``comments(filter:)``, the counts) are matched, ordered, counted and paged in
SQL (:mod:`fakes.linear.sql_filters`). Here every filter field and operator is compared with
the previous implementation (every row loaded and matched by :class:`fakes.linear.filters.
Matcher`, sorted in Python) on a seeded world with the awkward cases (missing relations,
non-ASCII case folding, offsets in dates, ties), and the cost of filtered pages is counted at
2,000 more issues and comments against none."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import insert, select

from fakes.linear import LinearBackend
from fakes.linear.filters import Filter
from fakes.linear.graphql.connections import paginate
from fakes.linear.models import Comment, Issue, LinearBase, aware, issue_labels
from tests.fakes.cost import counted
from tests.fakes.linear.conftest import Served
from tests.fakes.linear.world import (
    AGENT,
    ALICE,
    BACKLOG,
    BOB,
    BUG,
    DONE,
    ENG,
    ENG_1,
    FRONTEND,
    IN_PROGRESS,
    OPS,
    OPS_LABEL,
    OPS_TODO,
    TODO,
)

START = datetime(2026, 2, 20, tzinfo=UTC)
TITLES = ("Fix add", "fix ADD again", "Kelvin \u212a scale", "\u0130stanbul", "50% done", "a_b")


def _id(*parts: object) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, "/".join(map(str, parts))))


def _seed(served: Served, count: int, tag: str = "s") -> list[str]:
    """``count`` issues varied in every filtered field, with labels, parents and comments."""
    ids: list[str] = []
    users = (None, ALICE, BOB, AGENT)
    with served.app.world.session() as s:
        for i in range(count):
            iid = _id(tag, i)
            ids.append(iid)
            ops = i % 5 == 4
            created = START + timedelta(hours=i // 2)  # pairs tie: by id
            s.add(
                Issue(
                    id=iid,
                    team_id=OPS if ops else ENG,
                    number=1000 + i,
                    title=f"{TITLES[i % len(TITLES)]} {i}",
                    description=None if i % 3 == 0 else f"d{i % 4} {TITLES[(i + 1) % 6]}",
                    state_id=OPS_TODO if ops else (BACKLOG, TODO, IN_PROGRESS, DONE)[i % 4],
                    priority=i % 5,
                    estimate=(None, 1.0, 2.5)[i % 3],
                    assignee_id=users[i % 4],
                    creator_id=users[(i + 1) % 4],
                    parent_id=ids[i // 3] if i % 3 == 1 else (ENG_1 if i % 7 == 2 else None),
                    created_at=created,
                    updated_at=created + timedelta(minutes=(i * 37) % 500),
                    completed_at=created + timedelta(days=1) if i % 4 == 3 else None,
                    archived_at=created + timedelta(days=2) if i % 9 == 8 else None,
                )
            )
        s.flush()
        for i, iid in enumerate(ids):
            for label in ((), (BUG,), (FRONTEND,), (BUG, FRONTEND), (OPS_LABEL,))[i % 5]:
                s.execute(insert(issue_labels).values(issue_id=iid, label_id=label))
            parent = None
            for j in range(i % 3):
                cid = _id(tag, i, "c", j)
                at = START + timedelta(hours=i // 2, minutes=j)
                s.add(
                    Comment(
                        id=cid,
                        issue_id=iid,
                        user_id=users[(i + j) % 4],
                        body=f"{TITLES[(i + j) % 6]} c{j}",
                        parent_id=parent,
                        created_at=at,
                        updated_at=at + timedelta(minutes=(i * 11) % 60),
                    )
                )
                parent = cid
    return ids


def _backend(served: Served) -> LinearBackend:
    backend = served.app.world.fakes["linear"]
    assert isinstance(backend, LinearBackend)
    return backend


def _walked_issues(served: Served, f: Filter | None, archived: bool, order: str) -> list[str]:
    """The previous ``LinearBackend.issues``: every issue loaded and matched in Python."""
    backend = _backend(served)
    with served.app.world.session() as s:
        m = backend.matcher(AGENT)
        out = [
            i
            for i in s.scalars(select(Issue)).all()
            if (archived or i.archived_at is None) and (f is None or m.issue(i, f))
        ]
        key = "updated_at" if order == "updatedAt" else "created_at"
        out.sort(key=lambda i: (aware(getattr(i, key)), i.id), reverse=True)
        return [i.id for i in out]


def _walked_comments(served: Served, f: Filter | None, order: str) -> list[str]:
    """The previous ``LinearBackend.comments``: every comment loaded and matched."""
    backend = _backend(served)
    with served.app.world.session() as s:
        m = backend.matcher(AGENT)
        out = [c for c in s.scalars(select(Comment)) if f is None or m.comment(c, f)]
        key = "updated_at" if order == "updatedAt" else "created_at"
        out.sort(key=lambda c: (aware(getattr(c, key)), c.id), reverse=True)
        return [c.id for c in out]


ISSUE_FILTERS: list[Filter | None] = [
    None,
    {},
    {"id": {"in": [ENG_1, _id("s", 3)]}},
    {"number": {"gt": 1010, "lte": 1020}},
    {"title": {"eq": "Fix add 0"}},
    {"title": {"neq": "Fix add 0", "startsWith": "Fix"}},
    {"title": {"in": ["a_b 5", "Fix add 6"]}},
    {"title": {"nin": ["a_b 5"]}},
    {"title": {"eqIgnoreCase": "FIX ADD 0"}},
    {"title": {"neqIgnoreCase": "fix add 0"}},
    {"title": {"contains": "add"}},
    {"title": {"notContains": "add"}},
    {"title": {"containsIgnoreCase": "ADD"}},
    {"title": {"containsIgnoreCase": "k"}},  # the Kelvin sign folds to k in Python
    {"title": {"containsIgnoreCase": "i\u0307"}},  # İ folds to i + combining dot
    {"title": {"notContainsIgnoreCase": "fix"}},
    {"title": {"containsIgnoreCase": "%"}},
    {"title": {"contains": "_"}},
    {"title": {"startsWithIgnoreCase": "fix"}},
    {"title": {"notStartsWith": "Fix"}},
    {"title": {"endsWith": "1"}},
    {"title": {"endsWith": ""}},
    {"title": {"notEndsWith": "3"}},
    {"title": {"containsIgnoreCase": None}},
    {"description": {"null": True}},
    {"description": {"null": False, "startsWith": "d1"}},
    {"description": {"neq": "x"}},
    {"description": {"notContains": "Fix"}},
    {"priority": {"gte": 2}},
    {"priority": {"in": [0, 4]}},
    {"priority": {"nin": [0]}},
    {"estimate": {"null": True}},
    {"estimate": {"lt": 2}},
    {"estimate": {"neq": 1}},
    {"state": {"type": {"eq": "started"}}},
    {"state": {"name": {"in": ["Todo", "Done"]}}},
    {"state": {"team": {"key": {"eq": "OPS"}}}},
    {"state": {"position": {"gt": 1}, "null": True}},
    {"team": {"key": {"eq": "ENG"}}},
    {"team": {"id": {"eq": OPS}}},
    {"team": {"null": True}},
    {"team": {"null": False}},
    {"team": {"name": {"containsIgnoreCase": "oper"}, "createdAt": {"gt": "2025-01-15"}}},
    {"assignee": {"null": True}},
    {"assignee": {"null": False}},
    {"assignee": {}},
    {"assignee": {"isMe": {"eq": True}}},
    {"assignee": {"isMe": {"neq": True}}},
    {"assignee": {"id": {"eq": BOB}}},
    {"assignee": {"null": True, "id": {"eq": BOB}}},
    {"assignee": {"null": False, "name": {"containsIgnoreCase": "a"}}},
    {"assignee": {"or": [{"id": {"eq": BOB}}, {"null": True}]}},
    {"assignee": {"active": {"eq": True}, "admin": {"eq": False}}},
    {"creator": {"email": {"endsWith": ".test"}}},
    {"creator": {"displayName": {"eq": "bob"}}},
    {"labels": {"name": {"eq": "Bug"}}},
    {"labels": {"id": {"nin": [BUG]}}},
    {"labels": {"every": {"team": {"null": True}}}},
    {"labels": {"every": {"name": {"neq": "Bug"}}}},
    {"labels": {"some": {"team": {"key": {"eq": "ENG"}}}}},
    {"labels": {"team": {"null": True}}},
    {"labels": {"length": {"gte": 2}}},
    {"labels": {"length": {"eq": 0}}},
    {"labels": {"null": True}},
    {"labels": {"null": False}},
    {"labels": {"and": [{"id": {"eq": BUG}}, {"id": {"eq": FRONTEND}}]}},
    {"labels": {"or": [{"id": {"eq": OPS_LABEL}}, {"length": {"eq": 0}}]}},
    {"parent": {"null": True}},
    {"parent": {"null": False}},
    {"parent": {}},
    {"parent": {"id": {"eq": ENG_1}}},
    {"parent": {"team": {"key": {"eq": "ENG"}}, "title": {"startsWith": "Fix"}}},
    {"parent": {"parent": {"null": True}}},
    {"parent": {"null": False, "assignee": {"null": True}}},
    {"createdAt": {"gt": "-P2W"}},
    {"createdAt": {"lt": "2026-02-21T02:00:00+02:00"}},
    {"createdAt": {"eq": "2026-02-20T03:00:00Z"}},
    {"createdAt": {"in": ["2026-02-20T03:00:00Z", "2026-02-20T05:00:00+00:00"]}},
    {"updatedAt": {"gte": "2026-02-21T00:00:00Z", "lt": "P1D"}},
    {"completedAt": {"null": False}},
    {"completedAt": {"gt": "2026-02-22T00:00:00Z"}},
    {"startedAt": {"null": True}},
    {"canceledAt": {"null": False}},
    {"archivedAt": {"null": False}},
    {"archivedAt": {"lt": "2026-02-25T00:00:00Z"}},
    {"and": []},
    {"or": []},
    {"and": [{"team": {"key": {"eq": "ENG"}}}, {"priority": {"lte": 2}}]},
    {"or": [{"assignee": {"null": True}}, {"labels": {"name": {"eq": "Oncall"}}}]},
    {"or": [{"and": [{"priority": {"eq": 1}}]}, {"title": {"startsWith": "a_"}}]},
]

COMMENT_FILTERS: list[Filter | None] = [
    None,
    {},
    {"body": {"containsIgnoreCase": "FIX"}},
    {"body": {"startsWith": "\u0130"}},
    {"body": {"endsWith": "c1"}},
    {"id": {"neq": ENG_1}},
    {"user": {"null": True}},
    {"user": {"null": False}},
    {"user": {"isMe": {"eq": False}}},
    {"user": {"id": {"eq": ALICE}}},
    {"issue": {"team": {"key": {"eq": "OPS"}}}},
    {"issue": {"null": True}},
    {"issue": {"id": {"eq": ENG_1}}},
    {"issue": {"labels": {"name": {"eq": "Bug"}}}},
    {"parent": {"null": True}},
    {"parent": {"null": False}},
    {"parent": {"user": {"id": {"eq": BOB}}}},
    {"parent": {"parent": {"null": False}}},
    {"createdAt": {"gte": "2026-02-21T00:00:00Z"}},
    {"updatedAt": {"lt": "2026-02-22T01:00:00+01:00"}},
    {"and": [{"issue": {"id": {"eq": _id("s", 5)}}}, {"body": {"contains": "c"}}]},
    {"or": [{"user": {"null": True}}, {"parent": {"null": False}}]},
]


def test_filtered_issue_and_comment_lists_match_the_walk(served: Served) -> None:
    _seed(served, 60)
    backend = _backend(served)
    for f in ISSUE_FILTERS:
        for archived in (False, True):
            for order in ("createdAt", "updatedAt"):
                with served.app.world.session() as s:
                    got = [i.id for i in backend.issues(s, AGENT, f, archived, order)[:]]
                want = _walked_issues(served, f, archived, order)
                assert got == want, (f, archived, order)
    matched = [len(_walked_issues(served, f, False, "createdAt")) for f in ISSUE_FILTERS]
    assert sum(0 < n < 60 for n in matched) > len(ISSUE_FILTERS) * 2 // 3, matched
    for f in COMMENT_FILTERS:
        for order in ("createdAt", "updatedAt"):
            with served.app.world.session() as s:
                got = [c.id for c in backend.comments(s, AGENT, f, order)[:]]
            assert got == _walked_comments(served, f, order), (f, order)


QUERIES = {
    "issues": """query($f: IssueFilter, $first: Int, $after: String, $last: Int,
                       $before: String, $archived: Boolean) {
        issues(filter: $f, first: $first, after: $after, last: $last, before: $before,
               includeArchived: $archived) {
          nodes { id } pageInfo { startCursor endCursor hasNextPage hasPreviousPage } } }""",
    "team": """query($f: IssueFilter, $first: Int, $after: String, $last: Int,
                     $before: String, $archived: Boolean) {
        team(id: "TEAM") { issueCount(includeArchived: $archived)
          issues(filter: $f, first: $first, after: $after, last: $last, before: $before,
                 includeArchived: $archived) {
            nodes { id }
            pageInfo { startCursor endCursor hasNextPage hasPreviousPage } } } }""".replace(
        "TEAM", ENG
    ),
    "comments": """query($f: CommentFilter, $first: Int, $after: String, $last: Int,
                         $before: String) {
        comments(filter: $f, first: $first, after: $after, last: $last, before: $before) {
          nodes { id } pageInfo { startCursor endCursor hasNextPage hasPreviousPage } } }""",
}


def _data(served: Served, query: str, variables: dict[str, Any]) -> Any:
    answer = served.post({"query": query, "variables": variables})
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert "errors" not in body, body
    return body["data"]


def _page(ids: list[str], variables: dict[str, Any]) -> dict[str, Any]:
    class Node:
        def __init__(self, id: str) -> None:
            self.id = id

    page = paginate(
        [Node(i) for i in ids],
        first=variables.get("first"),
        after=variables.get("after"),
        last=variables.get("last"),
        before=variables.get("before"),
    )
    info = page.page_info
    return {
        "nodes": [{"id": n.id} for n in page.nodes],
        "pageInfo": {
            "startCursor": info.start_cursor,
            "endCursor": info.end_cursor,
            "hasNextPage": info.has_next_page,
            "hasPreviousPage": info.has_previous_page,
        },
    }


def test_filtered_pages_over_graphql_match_the_walk(served: Served) -> None:
    ids = _seed(served, 60)
    filters: list[Filter] = [
        {"assignee": {"null": False}},
        {"title": {"containsIgnoreCase": "fix"}},
        {"labels": {"name": {"eq": "Nothing"}}},  # empty
    ]
    windows: list[dict[str, Any]] = [
        {},
        {"first": 5},
        {"first": 3, "after": ids[10]},
        {"last": 4},
        {"last": 2, "before": ids[20]},
        {"first": 250},
        {"first": 0},
        {"first": 3, "after": "not-an-issue"},
    ]
    for f in filters:
        for window in windows:
            for archived in (False, True):
                variables = {"f": f, **window, "archived": archived}
                got = _data(served, QUERIES["issues"], variables)["issues"]
                assert got == _page(_walked_issues(served, f, archived, "createdAt"), window)
                team = _data(served, QUERIES["team"], variables)["team"]
                scoped = {"and": [{"team": {"id": {"eq": ENG}}}, f]}
                assert team["issues"] == _page(
                    _walked_issues(served, scoped, archived, "createdAt"), window
                ), variables
                everything = {"team": {"id": {"eq": ENG}}}
                assert team["issueCount"] == len(
                    _walked_issues(served, everything, archived, "createdAt")
                )
        comments = _data(served, QUERIES["comments"], {"f": {"body": {"contains": "c1"}}})
        want = _walked_comments(served, {"body": {"contains": "c1"}}, "createdAt")
        assert comments["comments"] == _page(want, {})


def test_filtered_pages_cost_the_same_at_2000_more_issues_and_comments(served: Served) -> None:
    """Filtered pages of issues (the workspace's, a team's) and comments, and a team's
    issue count, cost the same statements and rows before and after 2,000 more issues
    (and their comments) that match the same filters."""
    _seed(served, 40, "a")
    reads = [
        (QUERIES["issues"], {"f": {"title": {"containsIgnoreCase": "fix"}}, "first": 5}),
        (QUERIES["issues"], {"f": {"assignee": {"isMe": {"eq": True}}}, "last": 5}),
        (QUERIES["team"], {"f": {"labels": {"name": {"eq": "Bug"}}}, "first": 5}),
        (QUERIES["comments"], {"f": {"body": {"containsIgnoreCase": "FIX"}}, "first": 5}),
    ]

    before = _costs(served, reads)
    _seed(served, 2000, "b")
    after = _costs(served, reads)
    assert before == after, (before, after)
    assert all(rows <= 20 for _, rows in after), after


def _costs(served: Served, reads: list[tuple[str, dict[str, Any]]]) -> list[tuple[int, int]]:
    """The statements each read runs and the rows it loads."""
    out = []
    for query, variables in reads:
        with counted(served.app.world.engine, LinearBase) as cost:
            _data(served, query, variables)
        out.append((cost.statements, cost.rows))
    return out


def test_a_filter_of_1500_alternatives_is_answered_as_the_walk(served: Served) -> None:
    """An ``or`` (or an ``and``) of 1,500 sub-filters, as a client that pastes a list of ids
    or titles sends: SQLite refuses an expression deeper than 1,000, so the fake groups the
    terms; the answers are the walk's."""
    ids = _seed(served, 60)
    backend = _backend(served)
    with served.app.world.session() as s:
        titles = [i.title for i in s.scalars(select(Issue).where(Issue.id.in_(ids[:3])))]
    wide: list[Filter] = [
        {"or": [{"title": {"eq": t}} for t in [f"none {i}" for i in range(1497)] + titles]},
        {"and": [{"title": {"neq": f"none {i}"}} for i in range(1500)]},
        {
            "or": [
                {"and": [{"priority": {"eq": i % 5}}, {"number": {"neq": i}}]} for i in range(1500)
            ]
        },
    ]
    comments: Filter = {"or": [{"body": {"endsWith": f"c{i % 3}"}} for i in range(1500)]}
    for f in wide:
        with served.app.world.session() as s:
            got = [i.id for i in backend.issues(s, AGENT, f)[:]]
        assert got == _walked_issues(served, f, False, "createdAt")
        assert got, f"{str(f)[:80]} matched nothing: the check would have no teeth"
    with served.app.world.session() as s:
        got = [c.id for c in backend.comments(s, AGENT, comments)[:]]
    assert got == _walked_comments(served, comments, "createdAt") and got
