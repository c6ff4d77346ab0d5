"""A repository's issue and pull request lists (REST ``.../issues``, ``.../pulls``) are
matched, ordered, counted and paged in SQL (issue 19). Here their pages and ``Link`` headers
are compared with the previous implementation (every issue of the repository loaded, then
labels, assignee, creator, head and base matched and the list sorted in Python, and sliced)
on the seeded world of :mod:`tests.fakes.github.test_search_pages`, and a page's cost is
counted at 2,000 more matching issues against none."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx
from sqlalchemy import select

from fakes.core.paging import Paging
from fakes.github.models import Issue, Repo
from fakes.github.routes_issues import parse_since
from tests.fakes.github.conftest import REPO, Served
from tests.fakes.github.test_review_pages import _open_pull
from tests.fakes.github.test_search_pages import AUTH, Read, _seed, request_costs
from tests.serving import LOOPBACK_TIMEOUT


def _walked(served: Served, params: dict[str, str], pulls: bool) -> list[int]:
    """The previous ``Issues.find`` (and ``Pulls.find``): numbers in the list's order."""
    with served.world.session() as s:
        r = s.scalars(select(Repo).where(Repo.owner == "acme", Repo.name == "tiny")).one()
        q = select(Issue).where(Issue.repo_id == r.id)
        if pulls:
            q = q.where(Issue.is_pull)
        state = params.get("state", "open")
        if state in ("open", "closed"):
            q = q.where(Issue.state == state)
        since = parse_since(params.get("since"))
        if since is not None:
            q = q.where(Issue.updated_at >= since)
        rows = list(s.scalars(q))
        labels = [x.strip() for x in params.get("labels", "").split(",") if x.strip()]
        wanted = {name.lower() for name in labels}
        if wanted:
            rows = [i for i in rows if wanted <= {lb.name.lower() for lb in i.labels}]
        assignee = params.get("assignee")
        if assignee == "none":
            rows = [i for i in rows if not i.assignees]
        elif assignee == "*":
            rows = [i for i in rows if i.assignees]
        elif assignee:
            rows = [i for i in rows if assignee.lower() in {u.login.lower() for u in i.assignees}]
        creator = params.get("creator")
        if creator:
            rows = [i for i in rows if i.author.login.lower() == creator.lower()]
        keys = {
            "created": lambda i: (i.created_at, i.id),
            "updated": lambda i: (i.updated_at, i.id),
            "comments": lambda i: (i.comment_count, i.id),
        }
        sort = params.get("sort", "created")
        rows.sort(key=keys.get(sort, keys["created"]), reverse=params.get("direction") != "asc")
        head, base = params.get("head"), params.get("base")
        if head:
            owner, _, ref = head.rpartition(":")
            if owner and owner.lower() != r.owner.lower():
                return []
            rows = [i for i in rows if i.pull is not None and i.pull.head_ref == ref]
        if base:
            rows = [i for i in rows if i.pull is not None and i.pull.base_ref == base]
        return [i.number for i in rows]


def _page(served: Served, kind: str, params: dict[str, str]) -> dict[str, Any]:
    numbers = _walked(served, params, pulls=kind == "pulls")
    paging = Paging(
        per_page=min(int(params.get("per_page", 30)), 100),
        page=int(params.get("page", 1)),
        base=f"{served.url}/repos/{REPO}/{kind}",
        params=params,
    )
    page, headers = paging.slice(numbers)
    return {"numbers": page, "link": headers.get("Link")}


ISSUE_PARAMS: list[dict[str, str]] = [
    {},
    {"state": "all"},
    {"state": "closed", "per_page": "4", "page": "2"},
    {"labels": "bug"},
    {"labels": "BUG, docs", "state": "all"},
    {"labels": "nothing-so-named"},
    {"assignee": "none"},
    {"assignee": "*", "state": "all"},
    {"assignee": "BOB", "per_page": "5"},
    {"creator": "alice", "state": "all"},
    {"creator": "Agent", "assignee": "alice"},
    {"sort": "updated", "direction": "asc", "state": "all"},
    {"sort": "comments", "state": "all", "per_page": "10", "page": "3"},
    {"sort": "bogus", "direction": "sideways"},
    {"since": "2026-02-20T00:00:00Z", "state": "all"},
    {"per_page": "7", "page": "9"},
]
PULL_PARAMS: list[dict[str, str]] = [
    {},
    {"state": "all"},
    {"state": "all", "head": "acme:feature"},
    {"state": "all", "head": "feature"},
    {"state": "all", "head": "someone:feature"},
    {"state": "all", "base": "main"},
    {"state": "all", "base": "nowhere"},
    {"state": "all", "sort": "updated", "direction": "asc"},
]


def test_issue_and_pull_lists_match_the_walk(served: Served, tmp_path: Path) -> None:
    _open_pull(served, tmp_path)  # number 3, from the branch feature into main
    _seed(served, 60)
    with httpx.Client(timeout=LOOPBACK_TIMEOUT, base_url=served.url, headers=AUTH) as http:
        # Comments on a few, so that sort=comments is not a tie everywhere.
        for n, many in ((1003, 3), (1010, 1), (1030, 2)):
            for _ in range(many):
                made = http.post(f"/repos/{REPO}/issues/{n}/comments", json={"body": "x"})
                assert made.status_code == 201
        for kind, cases in (("issues", ISSUE_PARAMS), ("pulls", PULL_PARAMS)):
            for params in cases:
                answer = http.get(f"/repos/{REPO}/{kind}?{urlencode(params)}")
                assert answer.status_code == 200, answer.text
                got = {
                    "numbers": [i["number"] for i in answer.json()],
                    "link": answer.headers.get("link"),
                }
                assert got == _page(served, kind, params), (kind, params)
    lists = [_walked(served, p, pulls=False) for p in ISSUE_PARAMS]
    assert sum(0 < len(x) < 61 for x in lists) > len(lists) * 2 // 3, [len(x) for x in lists]
    assert any(_walked(served, p, pulls=True) for p in PULL_PARAMS)  # the world has a pull


def test_a_list_page_costs_the_same_at_2000_more_issues(served: Served, tmp_path: Path) -> None:
    """A page of a repository's issues (filtered by label, assignee or creator) and of its
    pull requests costs the same statements and rows before and after 2,000 more issues
    that match (older ones, so that each page shows the same issues)."""
    _open_pull(served, tmp_path)
    _seed(served, 40)
    paths = [
        f"/repos/{REPO}/issues?per_page=5",
        f"/repos/{REPO}/issues?labels=bug&state=all&per_page=5",
        f"/repos/{REPO}/issues?assignee=bob&creator=alice&per_page=5",
        f"/repos/{REPO}/pulls?state=all&per_page=5",
    ]
    with httpx.Client(timeout=LOOPBACK_TIMEOUT, base_url=served.url, headers=AUTH) as http:

        def costs() -> list[tuple[int, int]]:
            return request_costs(served, http, [("GET", path, None) for path in paths])

        before = costs()
        _seed(served, 2000, start=5000, days_before=400)
        after = costs()
    assert before == after, (before, after)


def _walked_graphql(served: Served, kind: str, args: dict[str, Any]) -> list[int]:
    """The previous ``issue_connection`` and ``pull_connection``: every issue or pull
    request of the repository loaded, matched and sorted in Python. Numbers, in order."""

    def any_label(row: Issue, labels: list[str] | None) -> bool:
        names = {lb.name.lower() for lb in row.labels}
        return not labels or any(name.lower() in names for name in labels)

    with served.world.session() as s:
        r = s.scalars(select(Repo).where(Repo.owner == "acme", Repo.name == "tiny")).one()
        rows = [i for i in s.scalars(select(Issue).where(Issue.repo_id == r.id))]
        rows = [i for i in rows if i.is_pull == (kind == "pullRequests")]
        f = args.get("filterBy") or {}
        if kind == "issues":
            wanted = list(args.get("states") or []) + list(f.get("states") or [])
            if wanted:
                rows = [i for i in rows if i.state.upper() in wanted]
            rows = [i for i in rows if any_label(i, f.get("labels"))]
            if f.get("assignee"):
                who = f["assignee"].lower()
                rows = [
                    i
                    for i in rows
                    if (
                        i.assignees if who == "*" else who in {u.login.lower() for u in i.assignees}
                    )
                ]
            if f.get("createdBy"):
                rows = [i for i in rows if i.author.login.lower() == f["createdBy"].lower()]
            if f.get("mentioned"):
                handle = "@" + f["mentioned"].lower()
                rows = [
                    i
                    for i in rows
                    if any(
                        handle in t.lower() for t in [i.body or "", *(c.body for c in i.comments)]
                    )
                ]
        else:
            if args.get("headRefName") is not None:
                rows = [i for i in rows if i.pull and i.pull.head_ref == args["headRefName"]]
            if args.get("states"):
                rows = [
                    i
                    for i in rows
                    if ("MERGED" if i.pull and i.pull.merged_at else i.state.upper())
                    in args["states"]
                ]
        rows = [i for i in rows if any_label(i, args.get("labels"))]
        order = args.get("orderBy") or {}
        key = {"CREATED_AT": "created_at", "UPDATED_AT": "updated_at", "COMMENTS": "comment_count"}
        attr = key[order.get("field", "CREATED_AT")]
        rows.sort(key=lambda i: (getattr(i, attr), i.id), reverse=order.get("direction") == "DESC")
        return [i.number for i in rows]


class E(str):
    """An enum value, written bare in the query."""


GRAPHQL_LISTS: list[tuple[str, dict[str, Any]]] = [
    ("issues", {}),
    ("issues", {"states": [E("OPEN")]}),
    ("issues", {"states": [E("CLOSED")], "labels": ["BUG", "docs"]}),
    (
        "issues",
        {
            "filterBy": {"assignee": "bob"},
            "orderBy": {"field": E("UPDATED_AT"), "direction": E("DESC")},
        },
    ),
    ("issues", {"filterBy": {"assignee": "*", "createdBy": "ALICE", "states": [E("OPEN")]}}),
    (
        "issues",
        {
            "filterBy": {"labels": ["docs"]},
            "orderBy": {"field": E("COMMENTS"), "direction": E("DESC")},
        },
    ),
    ("issues", {"filterBy": {"mentioned": "Bob"}}),
    ("pullRequests", {}),
    ("pullRequests", {"states": [E("OPEN")], "headRefName": "feature"}),
    ("pullRequests", {"states": [E("MERGED"), E("CLOSED")]}),
    ("pullRequests", {"labels": ["bug"]}),
]


def test_graphql_issue_and_pull_lists_match_the_walk(served: Served, tmp_path: Path) -> None:
    _open_pull(served, tmp_path)
    _seed(served, 60)
    with httpx.Client(timeout=LOOPBACK_TIMEOUT, base_url=served.url, headers=AUTH) as http:
        for n, body in ((1003, "ask @bob"), (1010, "@BOB?"), (1030, "nobody")):
            made = http.post(f"/repos/{REPO}/issues/{n}/comments", json={"body": body})
            assert made.status_code == 201
        for kind, args in GRAPHQL_LISTS:
            walked = _walked_graphql(served, kind, args)
            for window in ({"first": 100}, {"first": 4}, {"last": 3}):
                query = (
                    '{ repository(owner: "acme", name: "tiny") { '
                    f"{kind}(ARGS) {{ totalCount nodes {{ number }} }} }} }}"
                )
                given = {**args, **window}
                rendered = ", ".join(f"{k}: {_literal(v)}" for k, v in given.items())
                answer = http.post("/graphql", json={"query": query.replace("ARGS", rendered)})
                body = answer.json()
                assert "errors" not in body, body
                got = body["data"]["repository"][kind]
                numbers = walked[: window["first"]] if "first" in window else walked[-3:]
                assert got == {
                    "totalCount": len(walked),
                    "nodes": [{"number": n} for n in numbers],
                }, (
                    kind,
                    given,
                )
    assert _walked_graphql(served, "pullRequests", {}) == [3]


def _literal(value: Any) -> str:
    """A GraphQL literal: enums (:class:`E`) bare, strings quoted."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_literal(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_literal(v) for v in value) + "]"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, E):
        return str(value)
    return '"' + value + '"'


def test_a_graphql_list_page_costs_the_same_at_2000_more_issues(
    served: Served, tmp_path: Path
) -> None:
    _open_pull(served, tmp_path)
    _seed(served, 40)
    queries = [
        '{ repository(owner: "acme", name: "tiny") { issues(first: 5, states: [OPEN], '
        "orderBy: {field: CREATED_AT, direction: DESC}) { totalCount nodes { title } } } }",
        '{ repository(owner: "acme", name: "tiny") { issues(first: 5, '
        'filterBy: {assignee: "bob", labels: ["bug"]}, orderBy: {field: CREATED_AT, '
        "direction: DESC}) { totalCount nodes { title } } } }",
        '{ repository(owner: "acme", name: "tiny") { pullRequests(first: 5, states: [OPEN]) '
        "{ totalCount nodes { title } } } }",
    ]
    with httpx.Client(timeout=LOOPBACK_TIMEOUT, base_url=served.url, headers=AUTH) as http:

        def costs() -> list[tuple[int, int]]:
            reads: list[Read] = [("POST", "/graphql", {"query": q}) for q in queries]
            return request_costs(served, http, reads)

        before = costs()
        _seed(served, 2000, start=5000, days_before=400)
        after = costs()
    assert before == after, (before, after)
