"""Reads that no longer walk an issue's comments answer exactly what the walk answered.

An issue's ``comments`` is now one aggregate loaded with the issue, and its comment list is
paged in SQL; the previous implementation counted ``len(issue.comments)`` and sliced the whole
list in Python (:meth:`fakes.core.paging.Paging.slice`). Here an issue gets a few hundred
comments and every answer is compared with what that walk gives, body and ``Link`` header.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

import httpx

from fakes.core.paging import Paging
from fakes.github import render
from fakes.github.routes_issues import parse_since
from tests.fakes.github.conftest import REPO, TOKEN, Served

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
    with httpx.Client(base_url=served.url, headers=AUTH) as http:
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
    with httpx.Client(base_url=served.url, headers=AUTH) as http:
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
