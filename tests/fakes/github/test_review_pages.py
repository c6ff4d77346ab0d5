"""A pull request's reviews and review comments are paged and counted in SQL (REST
``.../pulls/{n}/reviews`` and ``.../comments``, one review; GraphQL ``reviews``,
``latestReviews``, ``reviewDecision`` and a review's ``comments``). Here their answers are
compared with the previous implementation's (every review or comment of the pull request
loaded, filtered in Python and sliced), and their cost is counted with 2,000 reviews and
2,000 review comments against a handful."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from urllib.parse import urlencode

import httpx

from fakes.core.paging import Paging
from fakes.github import render
from fakes.github.graphql.connections import Connection, cursor
from fakes.github.models import GitHubBase, Review, ReviewComment
from tests.fakes.cost import counted
from tests.fakes.github.conftest import REPO, TOKEN, Served, clone, commit_file, git
from tests.serving import LOOPBACK_TIMEOUT

AUTH = {"Authorization": f"token {TOKEN}"}
NUMBER = 3
VIEWER = "agent"
# (author, state): the viewer's and another's pending reviews, reviews that replace
# earlier ones in latestReviews and ones that do not.
REVIEWS = [
    ("bob", "COMMENTED"),
    ("agent", "PENDING"),
    ("bob", "APPROVED"),
    ("alice", "COMMENTED"),
    ("bob", "PENDING"),
    ("bob", "COMMENTED"),
    ("agent", "CHANGES_REQUESTED"),
    ("alice", "APPROVED"),
    ("agent", "APPROVED"),
    ("alice", "PENDING"),
    ("bob", "CHANGES_REQUESTED"),
]


def _open_pull(served: Served, tmp_path: Path) -> None:
    """Pull request number 3, from a pushed branch (the world's own is after T)."""
    work = clone(served, tmp_path)
    git(served, work, "checkout", "-q", "-b", "feature")
    commit_file(served, work, "calc.py", "x = 1\n", "Add calc")
    git(served, work, "push", "-q", "origin", "feature")
    with httpx.Client(timeout=LOOPBACK_TIMEOUT, base_url=served.url, headers=AUTH) as http:
        made = http.post(
            f"/repos/{REPO}/pulls", json={"title": "t", "head": "feature", "base": "main"}
        )
    assert made.status_code == 201 and made.json()["number"] == NUMBER, made.text


def _seed(served: Served, reviews: list[tuple[str, str]], comments: int) -> list[int]:
    """Reviews in order, and ``comments`` review comments spread over the first three
    reviews and none (a lone comment). Returns the reviews' ids."""
    with served.world.session() as s:
        issue = served.backend.pulls.get(s, REPO, NUMBER)
        pull = issue.pull
        assert pull is not None
        users = {u: served.backend.repos.actor(s, u) for u in {a for a, _ in reviews}}
        start = issue.created_at
        rows = [
            Review(
                pull=pull,
                author=users[author],
                state=state,
                body=f"review {i}",
                commit_id=pull.head_sha,
                submitted_at=None if state == "PENDING" else start + timedelta(minutes=i),
            )
            for i, (author, state) in enumerate(reviews)
        ]
        s.add_all(rows)
        s.flush()
        targets = [rows[0].id, rows[1].id, rows[2].id, None] if rows else [None]
        for j in range(comments):
            s.add(
                ReviewComment(
                    pull_id=pull.id,
                    review_id=targets[j % len(targets)],
                    author_id=users[reviews[j % len(reviews)][0]].id
                    if reviews
                    else issue.author_id,
                    path="calc.py",
                    line=j % 7 + 1,
                    commit_id=pull.head_sha,
                    body=f"rc{j}",
                    created_at=start + timedelta(seconds=j),
                    updated_at=start + timedelta(seconds=j),
                )
            )
        return [r.id for r in rows]


def _paging(served: Served, path: str, query: dict[str, str]) -> Paging:
    return Paging(
        per_page=min(int(query.get("per_page", 30)), 100),
        page=int(query.get("page", 1)),
        base=f"{served.url}{path}",
        params=dict(query),
    )


def _shown(review: Review, viewer: str = VIEWER) -> bool:
    """GitHub shows a pending review (and its comments) to its author alone."""
    return review.state != "PENDING" or review.author.login.lower() == viewer


def _walked_rest(served: Served, kind: str, query: dict[str, str]) -> tuple[Any, Any]:
    """The previous routes: every review (submitted, or the viewer's pending one) or every
    review comment loaded and sliced."""
    path = f"/repos/{REPO}/pulls/{NUMBER}/{kind}"
    with served.world.session() as s:
        pull = served.backend.pulls.get(s, REPO, NUMBER).pull
        assert pull is not None
        if kind == "reviews":
            items = [render.review(rv).wire() for rv in pull.reviews if _shown(rv)]
        else:
            items = [
                render.review_comment(c).wire()
                for c in pull.review_comments
                if c.review_id is None or _shown(s.get_one(Review, c.review_id))
            ]
        chunk, headers = _paging(served, path, query).slice(items)
    return chunk, headers.get("Link")


def _check_rest(served: Served, http: httpx.Client) -> None:
    with served.world.session() as s:
        pull = served.backend.pulls.get(s, REPO, NUMBER).pull
        assert pull is not None
        counts = {"reviews": len(pull.reviews), "comments": len(pull.review_comments)}
        every = [(rv.id, _shown(rv)) for rv in pull.reviews]
    for kind, count in counts.items():
        queries: list[dict[str, str]] = [{}, {"page": "2"}]
        for per_page in ("1", "4", "30", "100"):
            last = max(-(-count // int(per_page)), 1)
            for page in ("1", "2", str(last), str(last + 1)):
                queries.append({"per_page": per_page, "page": page})
        for query in queries:
            answer = http.get(f"/repos/{REPO}/pulls/{NUMBER}/{kind}?{urlencode(query)}")
            assert answer.status_code == 200, answer.text
            body, link = _walked_rest(served, kind, query)
            assert answer.json() == body, (kind, query)
            assert answer.headers.get("link") == link, (kind, query)
    for review_id, shown in [*every, (10**9, False)]:
        answer = http.get(f"/repos/{REPO}/pulls/{NUMBER}/reviews/{review_id}")
        assert answer.status_code == (200 if shown else 404), (review_id, answer.text)
        if shown:
            with served.world.session() as s:
                assert answer.json() == render.review(s.get_one(Review, review_id)).wire()


REVIEWS_QUERY = """
query($first: Int, $last: Int, $after: String, $before: String, $states: [PullRequestReviewState!],
      $author: String) {
  repository(owner: "acme", name: "tiny") {
    pullRequest(number: 3) {
      reviewDecision
      reviews(first: $first, last: $last, after: $after, before: $before, states: $states,
              author: $author) {
        totalCount
        pageInfo { startCursor endCursor hasNextPage hasPreviousPage }
        edges { cursor node { databaseId state author { login }
          comments(first: 2) { totalCount nodes { databaseId body } } } }
      }
      latestReviews(first: $first, last: $last, after: $after, before: $before) {
        totalCount
        pageInfo { startCursor endCursor hasNextPage hasPreviousPage }
        nodes { databaseId state }
      }
    }
  }
}
"""


def _connection(items: list[Any], variables: dict[str, Any], node: Any) -> dict[str, Any]:
    page = Connection(
        "PullRequestReviewConnection",
        [SimpleNamespace(row=r) for r in items],  # a node carries its row, as the fake's do
        connection="reviews",
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
        **node(page),
    }


def _walked_graphql(served: Served, variables: dict[str, Any]) -> dict[str, Any]:
    """The previous ``PullRequest`` resolvers: every review loaded, filtered in Python; a
    review's comments picked from every review comment of the pull request."""
    with served.world.session() as s:
        pull = served.backend.pulls.get(s, REPO, NUMBER).pull
        assert pull is not None
        rows = [r for r in pull.reviews if _shown(r)]
        if variables.get("states"):
            rows = [r for r in rows if r.state in variables["states"]]
        if variables.get("author"):
            rows = [r for r in rows if r.author.login.lower() == variables["author"].lower()]
        latest: dict[int, Review] = {}
        for r in filter(_shown, pull.reviews):
            if r.state in ("PENDING", "COMMENTED"):
                latest.setdefault(r.author_id, r)
                continue
            latest[r.author_id] = r
        chosen = sorted(latest.values(), key=lambda r: r.id)
        states = {r.state for r in chosen}
        decision = next((d for d in ("CHANGES_REQUESTED", "APPROVED") if d in states), None)

        def review(r: Review) -> dict[str, Any]:
            mine = [c for c in pull.review_comments if c.review_id == r.id]
            return {
                "databaseId": r.id,
                "state": r.state,
                "author": {"login": r.author.login},
                "comments": {
                    "totalCount": len(mine),
                    "nodes": [{"databaseId": c.id, "body": c.body} for c in mine[:2]],
                },
            }

        return {
            "reviewDecision": decision,
            "reviews": _connection(
                rows,
                variables,
                lambda p: {
                    "edges": [{"cursor": e.cursor, "node": review(e.node.row)} for e in p.edges]
                },
            ),
            "latestReviews": _connection(
                chosen,
                variables,
                lambda p: {
                    "nodes": [{"databaseId": n.row.id, "state": n.row.state} for n in p.nodes]
                },
            ),
        }


def _check_graphql(served: Served, http: httpx.Client) -> None:
    pages: list[dict[str, Any]] = [
        {},
        {"first": 0},
        {"first": 3},
        {"last": 2},
        {"first": 100},
        {"first": 2, "after": cursor(1)},
        {"last": 2, "before": cursor(4)},
        {"first": 3, "after": cursor(500)},
        {"after": cursor(0), "before": cursor(3)},
    ]
    filters: list[dict[str, Any]] = [
        {},
        {"states": ["APPROVED", "CHANGES_REQUESTED"]},
        {"states": ["PENDING"]},
        {"author": "BOB"},
        {"author": "nobody"},
        {"author": "agent", "states": ["APPROVED"]},
    ]
    for page in pages:
        for where in filters:
            variables = {**page, **where}
            answer = http.post("/graphql", json={"query": REVIEWS_QUERY, "variables": variables})
            assert answer.status_code == 200, answer.text
            body = answer.json()
            assert "errors" not in body, body
            got = body["data"]["repository"]["pullRequest"]
            assert got == _walked_graphql(served, variables), variables


def test_review_pages_match_the_walk(served: Served, tmp_path: Path) -> None:
    _open_pull(served, tmp_path)
    with httpx.Client(timeout=LOOPBACK_TIMEOUT, base_url=served.url, headers=AUTH) as http:
        _check_rest(served, http)  # none yet: empty lists
        _check_graphql(served, http)
        _seed(served, REVIEWS, 23)
        _check_rest(served, http)
        _check_graphql(served, http)


def test_review_reads_cost_the_same_at_2000_reviews_and_comments(
    served: Served, tmp_path: Path
) -> None:
    """Each read of a pull request's reviews or review comments costs the same statements
    and loads the same rows with 33 reviews and 30 comments as with 2,000 more of each."""
    _open_pull(served, tmp_path)
    first = _seed(served, REVIEWS * 3, 30)  # every page below full already
    reads = [
        ("GET", f"/repos/{REPO}/pulls/{NUMBER}", None),  # its review_comments count
        ("GET", f"/repos/{REPO}/pulls/{NUMBER}/reviews?per_page=10", None),
        ("GET", f"/repos/{REPO}/pulls/{NUMBER}/reviews?per_page=10&page=2", None),
        ("GET", f"/repos/{REPO}/pulls/{NUMBER}/reviews/{first[2]}", None),
        ("GET", f"/repos/{REPO}/pulls/{NUMBER}/comments?per_page=10", None),
        ("POST", "/graphql", "reviews(first: 10) { totalCount nodes { body } }"),
        ("POST", "/graphql", "reviews(last: 5, states: [APPROVED]) { nodes { body } }"),
        ("POST", "/graphql", 'reviews(first: 5, author: "bob") { totalCount nodes { body } }'),
        ("POST", "/graphql", "latestReviews(first: 10) { totalCount nodes { state } }"),
        ("POST", "/graphql", "reviewDecision"),
        (
            "POST",
            "/graphql",
            "reviews(first: 1) { nodes { comments(first: 5) { totalCount nodes { body } } } }",
        ),
    ]
    with httpx.Client(timeout=LOOPBACK_TIMEOUT, base_url=served.url, headers=AUTH) as http:

        def costs() -> list[tuple[int, int]]:
            out = []
            for method, path, selection in reads:
                body = None
                if selection is not None:
                    query = (
                        '{ repository(owner: "acme", name: "tiny") '
                        f"{{ pullRequest(number: {NUMBER}) {{ {selection} }} }} }}"
                    )
                    body = {"query": query}
                with counted(served.world.engine, GitHubBase) as cost:
                    answer = http.request(method, path, json=body)
                assert answer.status_code == 200, answer.text
                assert "errors" not in answer.json(), answer.text
                out.append((cost.statements, cost.rows))
            return out

        before = costs()
        more = [REVIEWS[i % len(REVIEWS)] for i in range(2000)]
        _seed(served, more, 2000)
        after = costs()
    assert before == after, list(zip(reads, before, after, strict=True))
    assert all(rows <= 40 for _, rows in after), after


def test_a_new_reviews_edge_stands_where_the_list_has_it_at_any_count(
    served: Served, tmp_path: Path
) -> None:
    """``addPullRequestReview``'s ``reviewEdge`` has the cursor the pull request's
    ``reviews`` list gives that review, and submitting one costs the same statements and
    rows after 2,000 more reviews."""
    _open_pull(served, tmp_path)
    _seed(served, REVIEWS * 3, 0)
    with httpx.Client(timeout=LOOPBACK_TIMEOUT, base_url=served.url, headers=AUTH) as http:

        def graphql(query: str, variables: dict[str, Any] | None = None) -> Any:
            answer = http.post("/graphql", json={"query": query, "variables": variables or {}})
            assert answer.status_code == 200 and "errors" not in answer.json(), answer.text
            return answer.json()["data"]

        pull = graphql(
            '{ repository(owner: "acme", name: "tiny") '
            f"{{ pullRequest(number: {NUMBER}) {{ id }} }} }}"
        )["repository"]["pullRequest"]["id"]
        submit = """mutation($id: ID!) { addPullRequestReview(
                      input: {pullRequestId: $id, event: COMMENT, body: "noted"}) {
                      pullRequestReview { id } reviewEdge { cursor node { id } } } }"""
        listed = (
            '{ repository(owner: "acme", name: "tiny") '
            f"{{ pullRequest(number: {NUMBER}) {{ reviews(last: 1) "
            "{ edges { cursor node { id } } } } } }"
        )

        def submitted() -> tuple[tuple[int, int], Any, Any]:
            with counted(served.world.engine, GitHubBase) as cost:
                made = graphql(submit, {"id": pull})["addPullRequestReview"]
            [last] = graphql(listed)["repository"]["pullRequest"]["reviews"]["edges"]
            assert made["reviewEdge"]["node"]["id"] == made["pullRequestReview"]["id"]
            return (cost.statements, cost.rows), made["reviewEdge"], last

        before, edge, last = submitted()
        assert edge == last
        _seed(served, [REVIEWS[i % len(REVIEWS)] for i in range(2000)], 0)
        after, edge, last = submitted()
        assert edge == last
    assert before == after


def test_another_users_pending_review_is_theirs_alone(served: Served, tmp_path: Path) -> None:
    """GitHub shows a pending review, and the comments drafted in it, to its author alone:
    bob's pending review is in none of the agent's lists (REST or GraphQL), cannot be read
    by its id or global id, and its comment cannot be answered; the agent's own pending
    review stays visible to the agent, and bob's to bob."""
    _open_pull(served, tmp_path)
    ids = _seed(served, [("bob", "PENDING"), ("agent", "PENDING"), ("bob", "APPROVED")], 6)
    bobs, mine, approved = ids
    with served.world.session() as s:
        drafted = {
            c.review_id: c.id for c in s.query(ReviewComment).order_by(ReviewComment.id.desc())
        }
        pull = served.backend.pulls.get(s, REPO, NUMBER).pull
        assert pull is not None
        as_bob = s.scalars(served.backend.pulls.reviews_query(pull, "bob")).all()
        assert {r.id for r in as_bob} == {bobs, approved}
    hidden_comment = drafted[bobs]
    with httpx.Client(timeout=LOOPBACK_TIMEOUT, base_url=served.url, headers=AUTH) as http:
        reviews = http.get(f"/repos/{REPO}/pulls/{NUMBER}/reviews").json()
        assert [r["id"] for r in reviews] == [mine, approved]
        comments = http.get(f"/repos/{REPO}/pulls/{NUMBER}/comments").json()
        assert hidden_comment not in [c["id"] for c in comments]
        assert {c["pull_request_review_id"] for c in comments} == {None, mine, approved}
        # The pull request's counts leave them out too (6 seeded, 2 of them in bob's draft).
        shown = http.get(f"/repos/{REPO}/pulls/{NUMBER}").json()
        assert shown["review_comments"] == len(comments) == 4
        total = http.post(
            "/graphql",
            json={
                "query": '{ repository(owner: "acme", name: "tiny") '
                f"{{ pullRequest(number: {NUMBER}) "
                "{ totalCommentsCount comments { totalCount } } } }"
            },
        ).json()["data"]["repository"]["pullRequest"]
        assert total["totalCommentsCount"] == total["comments"]["totalCount"] + 4
        assert http.get(f"/repos/{REPO}/pulls/{NUMBER}/reviews/{bobs}").status_code == 404
        assert http.get(f"/repos/{REPO}/pulls/comments/{hidden_comment}").status_code == 404
        reply = http.post(
            f"/repos/{REPO}/pulls/{NUMBER}/comments/{hidden_comment}/replies",
            json={"body": "seen it"},
        )
        assert reply.status_code == 404, reply.text
        answer = http.post("/graphql", json={"query": REVIEWS_QUERY, "variables": {}}).json()
        got = answer["data"]["repository"]["pullRequest"]
        assert [e["node"]["databaseId"] for e in got["reviews"]["edges"]] == [mine, approved]
        assert [n["databaseId"] for n in got["latestReviews"]["nodes"]] == [mine, approved]

        def node(global_id: str) -> Any:
            query = "query($id: ID!) { node(id: $id) { id } }"
            body = {"query": query, "variables": {"id": global_id}}
            return http.post("/graphql", json=body).json()

        for typename, db_id in (
            ("PullRequestReview", bobs),
            ("PullRequestReviewComment", hidden_comment),
        ):
            found = node(render.node_id(typename, db_id))
            assert found["data"]["node"] is None and found["errors"][0]["type"] == "NOT_FOUND"
        visible = render.node_id("PullRequestReview", mine)
        found = node(visible)
        assert found["data"]["node"] == {"id": visible}
