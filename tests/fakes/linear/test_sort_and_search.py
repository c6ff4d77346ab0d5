"""``issues(sort:)`` and ``searchIssues``/``issueSearch`` are ordered, matched, counted and
paged in SQL (issue 19), as the filtered lists are. Here each is compared with the Python
walk it replaced (every matching issue loaded, then sorted or searched row by row) on the
seeded world of :mod:`tests.fakes.linear.test_filtered_lists` (non-ASCII case folding, ties,
archived issues, comments), and their pages are counted at 2,000 more matching issues
against none.

``sort`` is a list of ``IssueSortInput``s, the first the primary key (as any list of sort
keys reads); the list's own order (newest first, then the id) breaks the remaining ties.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from fakes.linear.filters import Filter
from fakes.linear.models import Issue, aware
from tests.fakes.linear.conftest import Served
from tests.fakes.linear.test_filtered_lists import (
    _backend,
    _costs,
    _data,
    _page,
    _seed,
    _walked_issues,
)
from tests.fakes.linear.world import AGENT, ENG

Sort = list[dict[str, Any]]

SORTS: list[Sort] = [
    [{"priority": {}}],
    [{"priority": {"order": "Ascending"}}],
    [{"priority": {"order": "Descending"}}],
    [{"priority": {"noPriorityFirst": True}}],
    [{"priority": {"order": "Descending", "noPriorityFirst": True}}],
    [{"createdAt": {"order": "Ascending"}}],
    [{"createdAt": {"order": "Descending"}}],
    [{"updatedAt": {"order": "Ascending"}}],
    [{"updatedAt": {}}],
    [{"priority": {}}, {"updatedAt": {"order": "Ascending"}}],
    [{"priority": {"order": "Descending"}}, {"createdAt": {"order": "Ascending"}}],
    [{"createdAt": {"order": "Ascending"}}, {"priority": {}}],
    [{}],
]


def _sorted(served: Served, ids: list[str], sort: Sort) -> list[str]:
    """``ids`` (in the list's own order) sorted by ``sort`` in Python: stable sorts from the
    last key to the first, so the first is the primary one."""
    with served.app.world.session() as s:
        issues = {i.id: i for i in s.scalars(select(Issue).where(Issue.id.in_(ids)))}
        rows = [issues[i] for i in ids]
        for item in reversed(sort):
            for field, attr in (("createdAt", "created_at"), ("updatedAt", "updated_at")):
                if item.get(field) is not None:
                    desc = item[field].get("order") != "Ascending"
                    rows.sort(key=lambda i, a=attr: aware(getattr(i, a)), reverse=desc)
            if item.get("priority") is not None:
                spec = item["priority"]
                none = 0 if spec.get("noPriorityFirst") else 5
                desc = spec.get("order") == "Descending"
                rows.sort(key=lambda i, n=none: i.priority or n, reverse=desc)
        return [i.id for i in rows]


_LISTED: dict[tuple[str, bool], list[str]] = {}


def _searched(
    served: Served, term: str, f: Filter | None, comments: bool, archived: bool
) -> list[str]:
    """The previous ``LinearBackend.search_issues``: every issue of the list loaded, its
    text (and its comments') lowered and searched in Python."""
    words = term.lower().split()
    key = (repr(f), archived)
    if key not in _LISTED:
        _LISTED[key] = _walked_issues(served, f, archived, "createdAt")
    with served.app.world.session() as s:
        found = []
        for iid in _LISTED[key]:
            i = s.get(Issue, iid)
            assert i is not None
            if term.strip().upper() == i.identifier:
                found.append(i.id)
                continue
            text = " ".join([i.title, i.description or ""]).lower()
            if comments:
                text += " " + " ".join(c.body for c in i.comments).lower()
            if words and all(w in text for w in words):
                found.append(i.id)
        return found


def test_sorted_issues_match_the_walk(served: Served) -> None:
    _seed(served, 60)
    backend = _backend(served)
    filters: list[Filter | None] = [None, {"team": {"id": {"eq": ENG}}}]
    for sort in SORTS:
        for f in filters:
            for archived in (False, True):
                for order in ("createdAt", "updatedAt"):
                    with served.app.world.session() as s:
                        rows = backend.issues(s, AGENT, f, archived, order, sort=sort)
                        got = [i.id for i in rows[:]]
                    listed = _walked_issues(served, f, archived, order)
                    assert got == _sorted(served, listed, sort), (sort, f, archived, order)
    # The sorts do sort: by priority, Urgent first and "no priority" last.
    with served.app.world.session() as s:
        ranked = [i.priority for i in backend.issues(s, AGENT, sort=SORTS[0])[:]]
    assert ranked == sorted(ranked, key=lambda p: p or 5) and ranked[0] == 1 and ranked[-1] == 0


SORTED = """query($sort: [IssueSortInput!], $first: Int, $after: String, $last: Int,
                  $before: String) {
  issues(sort: $sort, first: $first, after: $after, last: $last, before: $before) {
    nodes { id } pageInfo { startCursor endCursor hasNextPage hasPreviousPage } } }"""

SEARCH = """query($term: String!, $f: IssueFilter, $first: Int, $after: String,
                  $comments: Boolean, $archived: Boolean) {
  searchIssues(term: $term, filter: $f, first: $first, after: $after,
               includeComments: $comments, includeArchived: $archived) {
    totalCount nodes { id } pageInfo { startCursor endCursor hasNextPage hasPreviousPage } } }"""

ISSUE_SEARCH = """query($q: String, $first: Int) {
  issueSearch(query: $q, first: $first) { nodes { id } } }"""


def test_sorted_pages_over_graphql_match_the_walk(served: Served) -> None:
    _seed(served, 60)
    listed = _walked_issues(served, None, False, "createdAt")
    for sort in (SORTS[0], SORTS[4], SORTS[10]):
        want = _sorted(served, listed, sort)
        windows: list[dict[str, Any]] = [
            {},
            {"first": 7},
            {"first": 5, "after": want[20]},
            {"last": 4},
            {"last": 3, "before": want[30]},
        ]
        for window in windows:
            got = _data(served, SORTED, {"sort": sort, **window})["issues"]
            assert got == _page(want, window), (sort, window)


TERMS = [
    "fix",
    "FIX add",
    "add fix",
    "k",  # the Kelvin sign lowers to k
    "\u0130stanbul",  # İ lowers to i + combining dot
    "i\u0307",
    "50%",
    "%",
    "_",
    "a_b",
    "d1 again",
    "c1",  # in comments only
    "fix c0",  # one word in the title, one in a comment
    "ENG-1005",
    "  eng-1007  ",  # the identifier, spaced and lower case
    "OPS-1004",
    "ENG-01005",
    "nothing-like-this",
    "",
    "   ",
]


def test_search_matches_the_walk(served: Served) -> None:
    _seed(served, 60)
    _LISTED.clear()
    backend = _backend(served)
    filters: list[Filter | None] = [None, {"priority": {"gte": 2}}]
    hits = 0
    for term in TERMS:
        for f in filters:
            for comments in (False, True):
                for archived in (False, True):
                    with served.app.world.session() as s:
                        rows = backend.search_issues(s, AGENT, term, f, comments, archived)
                        got = [i.id for i in rows[:]]
                    want = _searched(served, term, f, comments, archived)
                    assert got == want, (term, f, comments, archived)
                    hits += bool(want)
    assert hits > len(TERMS) * 8 // 2  # most searches find something: the check has teeth
    with served.app.world.session() as s:
        assert [i.identifier for i in backend.search_issues(s, AGENT, "eng-1005")[:]] == [
            "ENG-1005"
        ]
        comment_only = backend.search_issues(s, AGENT, "c1", include_comments=True)
        assert len(comment_only) > 0 and len(backend.search_issues(s, AGENT, "c1")) == 0


def test_search_pages_over_graphql_match_the_walk(served: Served) -> None:
    _seed(served, 60)
    _LISTED.clear()
    want = _searched(served, "fix", None, True, False)
    assert len(want) > 12
    for window in ({}, {"first": 5}, {"first": 4, "after": want[6]}):
        got = _data(served, SEARCH, {"term": "fix", "comments": True, **window})["searchIssues"]
        assert got["totalCount"] == len(want)
        page = _page(want, window)
        assert {"nodes": got["nodes"], "pageInfo": got["pageInfo"]} == page, window
    older = _data(served, ISSUE_SEARCH, {"q": "FIX add", "first": 3})["issueSearch"]
    assert (
        older["nodes"]
        == _page(_searched(served, "FIX add", None, False, False), {"first": 3})["nodes"]
    )


def test_sorted_and_searched_pages_cost_the_same_at_2000_more_issues(served: Served) -> None:
    """A page of issues sorted by priority, and a page of a search (comments included) with
    its ``totalCount``, cost the same statements and rows before and after 2,000 more
    issues (and their comments) that sort into and match the same lists."""
    _seed(served, 40, "a")
    reads = [
        (SORTED, {"sort": SORTS[0], "first": 5}),
        (SORTED, {"sort": SORTS[11], "last": 5}),
        (SEARCH, {"term": "fix", "comments": True, "first": 5}),
        (SEARCH, {"term": "fix", "first": 5, "f": {"team": {"id": {"eq": ENG}}}}),
    ]

    before = _costs(served, reads)
    _seed(served, 2000, "b")
    after = _costs(served, reads)
    assert before == after, (before, after)
    assert all(rows <= 20 for _, rows in after), after


def test_a_search_of_a_long_pasted_term_is_answered(served: Served) -> None:
    """A term of 1,500 different words (a pasted log, say) finds the issue whose text has
    them all and none other, as the walk does; one word more that no text has finds
    nothing. (A condition per word passed SQLite's expression depth of 1,000.)"""
    _seed(served, 20)
    _LISTED.clear()
    words = [f"w{i}x" for i in range(1500)]
    with served.app.world.session() as s:
        issue = s.get(Issue, _seed_ids(served)[3])
        assert issue is not None
        issue.description = " ".join(words)
    backend = _backend(served)
    term = " ".join(reversed(words))
    for comments in (False, True):
        with served.app.world.session() as s:
            found = [i.id for i in backend.search_issues(s, AGENT, term, None, comments)[:]]
            assert found == _searched(served, term, None, comments, False)
            assert found == [issue.id]
            more = backend.search_issues(s, AGENT, term + " nowhere", None, comments)
            assert len(more) == 0


def _seed_ids(served: Served) -> list[str]:
    return _walked_issues(served, None, False, "createdAt")
