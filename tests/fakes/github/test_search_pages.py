"""Issue search (REST ``/search/issues``, GraphQL ``search(type: ISSUE)``) is matched, counted
and paged in SQL (issue 19). Here its answers are compared with the previous implementation
(every issue the qualifiers in SQL let through loaded, then labels, authors, assignees and
words matched in Python, and the list sliced) on a world seeded with the awkward cases
(case folding beyond ASCII, several labels, authors and assignees, closed issues, another
repository), and a page's cost is counted at 2,000 more matching issues against none."""

from __future__ import annotations

from datetime import timedelta
from typing import Any
from urllib.parse import urlencode

import httpx
from sqlalchemy import select

from fakes.core.paging import Paging
from fakes.github.backend_state import split_query
from fakes.github.models import GitHubBase, Issue, Label, Pull, Repo
from tests.fakes.cost import counted
from tests.fakes.github.conftest import TOKEN, Served
from tests.serving import LOOPBACK_TIMEOUT

AUTH = {"Authorization": f"token {TOKEN}"}
TITLES = ("Fix add", "fix ADD again", "Kelvin \u212a scale", "\u0130stanbul", "50% done", "a_b")
USERS = ("alice", "bob", "agent")


def _seed(served: Served, count: int, start: int = 1000, days_before: int = 30) -> None:
    """``count`` issues in acme/tiny, varied in every field the search reads, opened from
    ``days_before`` T on."""
    with served.world.session() as s:
        repo = served.backend.repos.get(s, "acme", "tiny")
        users = [served.backend.repos.actor(s, u) for u in USERS]
        labels = list(s.scalars(select(Label).where(Label.repo_id == repo.id)))
        assert len(labels) >= 2
        at = served.world.clock.now() - timedelta(days=days_before)
        for i in range(count):
            n = start + i
            s.add(
                Issue(
                    id=10_000 + n,
                    repo_id=repo.id,
                    number=n,
                    title=f"{TITLES[i % len(TITLES)]} {i}",
                    body=None if i % 4 == 0 else f"body {TITLES[(i + 2) % 6]} w{i % 7}",
                    state=("open", "closed")[i % 3 == 2],
                    author_id=users[i % 3].id,
                    created_at=at + timedelta(minutes=i // 2),  # pairs tie: by id
                    updated_at=at + timedelta(minutes=i),
                    labels=[labels[j] for j in range(len(labels)) if (i >> j) & 1],
                    assignees=[users[j] for j in range(3) if (i * 5 >> j) & 1],
                )
            )


def _walked(served: Served, query: str) -> list[int]:
    """The previous ``Issues.search``: qualifiers of place and state in SQL, the rest of
    every issue they let through matched in Python. Issue numbers, newest first."""
    backend = served.backend.issues
    with served.world.session() as s:
        q = select(Issue)
        terms: list[str] = []
        labels: list[str] = []
        authors: list[str] = []
        assignees: list[str] = []
        for token in split_query(query):
            key, sep, value = token.partition(":")
            key = key.lower()
            value = value.strip('"')
            if not sep:
                terms.append(token.strip('"').lower())
            elif key == "repo":
                owner, _, name = value.partition("/")
                found = s.scalar(select(Repo).where(Repo.owner == owner, Repo.name == name))
                if found is None:
                    return []
                q = q.where(Issue.repo_id == found.id)
            elif key in ("is", "type"):
                v = value.lower()
                if v in ("issue", "pr", "pull-request"):
                    q = q.where(Issue.is_pull == (v != "issue"))
                elif v in ("open", "closed"):
                    q = q.where(Issue.state == v)
                elif v == "merged":
                    q = q.where(Issue.id.in_(select(Pull.id).where(Pull.merged_at.is_not(None))))
            elif key == "state":
                q = q.where(Issue.state == value.lower())
            elif key == "label":
                labels.append(value.lower())
            elif key == "author":
                authors.append(value.lower())
            elif key == "assignee":
                assignees.append(value.lower())
            elif key == "in":
                continue
            else:
                terms.append(token.lower())
        out = []
        for i in s.scalars(q.order_by(Issue.created_at.desc(), Issue.id.desc())):
            names = {lb.name.lower() for lb in i.labels}
            if any(label not in names for label in labels):
                continue
            if authors and i.author.login.lower() not in authors:
                continue
            if assignees and not {u.login.lower() for u in i.assignees} & set(assignees):
                continue
            text = f"{i.title}\n{i.body or ''}".lower()
            if any(t not in text for t in terms):
                continue
            out.append(i.number)
        assert backend is not None
        return out


QUERIES = [
    "fix",
    "FIX add",
    "repo:acme/tiny fix",
    "repo:acme/none fix",
    "k",  # the Kelvin sign lowers to k
    "\u0130stanbul",
    "i\u0307",
    "50%",
    "a_b w3",
    '"fix add"',
    "in:title fix",
    "label:bug",
    "label:BUG label:docs",
    "author:bob",
    "author:bob author:ALICE",
    "assignee:agent",
    "assignee:bob assignee:alice fix",
    "is:issue is:closed",
    "is:open label:docs author:alice",
    "state:closed w1",
    "is:pr",
    "nothing-like-this",
    " ".join(f"w{n}" for n in range(7)),  # no body has them all
]


def _rest_page(served: Served, query: str, params: dict[str, str]) -> dict[str, Any]:
    """What the walk's list, sliced as ``Paging.slice`` slices, answers for a page."""
    numbers = _walked(served, query)
    paging = Paging(
        per_page=min(int(params.get("per_page", 30)), 100),
        page=int(params.get("page", 1)),
        base=f"{served.url}/search/issues",
        params={"q": query, **params},
    )
    page, headers = paging.slice(numbers)
    return {"total": len(numbers), "numbers": page, "link": headers.get("Link")}


def test_search_pages_match_the_walk(served: Served) -> None:
    _seed(served, 60)
    hits = 0
    with httpx.Client(timeout=LOOPBACK_TIMEOUT, base_url=served.url, headers=AUTH) as http:
        for query in QUERIES:
            for params in ({}, {"per_page": "7"}, {"per_page": "7", "page": "3"}):
                answer = http.get("/search/issues", params={"q": query, **params})
                assert answer.status_code == 200, answer.text
                body = answer.json()
                got = {
                    "total": body["total_count"],
                    "numbers": [i["number"] for i in body["items"]],
                    "link": answer.headers.get("link"),
                }
                assert got == _rest_page(served, query, params), (query, params)
                hits += bool(got["total"])
            graphql = http.post(
                "/graphql",
                json={
                    "query": """query($q: String!) { search(query: $q, type: ISSUE, first: 9) {
                        issueCount nodes { ... on Issue { number } ... on PullRequest { number } }
                      } }""",
                    "variables": {"q": query},
                },
            ).json()
            found = graphql["data"]["search"]
            walked = _walked(served, query)
            assert found["issueCount"] == len(walked), query
            assert [n["number"] for n in found["nodes"]] == walked[:9], query
    assert hits > len(QUERIES) * 3 * 2 // 3  # most searches find something: the check has teeth


def test_a_search_of_a_long_pasted_term_is_answered(served: Served) -> None:
    """1,500 different words (a pasted log) find the one issue whose body has them all."""
    _seed(served, 10)
    words = [f"q{i}z" for i in range(1500)]
    with served.world.session() as s:
        issue = s.scalars(select(Issue).where(Issue.number == 1003)).one()
        issue.body = " ".join(words)
    query = "repo:acme/tiny " + " ".join(reversed(words))
    with httpx.Client(timeout=LOOPBACK_TIMEOUT, base_url=served.url, headers=AUTH) as http:
        found = http.get("/search/issues", params={"q": query}).json()
        assert [i["number"] for i in found["items"]] == [1003] == _walked(served, query)
        none = http.get("/search/issues", params={"q": query + " elsewhere"}).json()
        assert none["total_count"] == 0


def test_a_search_page_costs_the_same_at_2000_more_matches(served: Served) -> None:
    """A page of search results (REST and GraphQL, with the count) costs the same statements
    and loads the same rows before and after 2,000 more issues that match it (older ones:
    the page shows the same issues, so what it loads for them is the same too)."""
    _seed(served, 40)
    reads = [
        ("GET", "/search/issues?" + urlencode({"q": "repo:acme/tiny fix", "per_page": "5"}), None),
        ("GET", "/search/issues?" + urlencode({"q": "label:bug is:open", "per_page": "5"}), None),
        (
            "POST",
            "/graphql",
            {
                "query": '{ search(query: "author:bob add", type: ISSUE, first: 5) '
                "{ issueCount nodes { ... on Issue { title } } } }"
            },
        ),
    ]
    with httpx.Client(timeout=LOOPBACK_TIMEOUT, base_url=served.url, headers=AUTH) as http:

        def costs() -> list[tuple[int, int]]:
            return request_costs(served, http, reads)

        before = costs()
        _seed(served, 2000, start=5000, days_before=400)
        after = costs()
    assert before == after, (before, after)


Read = tuple[str, str, dict[str, Any] | None]
"""A request: method, path, JSON body."""


def request_costs(served: Served, http: httpx.Client, reads: list[Read]) -> list[tuple[int, int]]:
    """The statements each request runs and the rows it loads; each must answer 200 with
    something in it and no GraphQL error."""
    out = []
    for method, path, body in reads:
        with counted(served.world.engine, GitHubBase) as cost:
            answer = http.request(method, path, json=body)
        assert answer.status_code == 200 and answer.json(), answer.text
        assert "errors" not in answer.json(), answer.text
        out.append((cost.statements, cost.rows))
    return out
