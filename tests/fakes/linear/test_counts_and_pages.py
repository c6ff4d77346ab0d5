"""An issue's ``comments`` and a comment's ``children`` page in SQL (``LIMIT``, and a cursor's
place by ``row_number()``); here their pages are compared with the previous implementation's
(every comment matched by the filter in Python, sorted, and paged over the list), and their
cost is counted at 2,000 comments against a page's worth."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import select

from fakes.linear import LinearBackend
from fakes.linear.graphql.connections import paginate
from fakes.linear.models import Comment, LinearBase, aware
from tests.fakes.cost import counted
from tests.fakes.linear.conftest import Served
from tests.fakes.linear.world import AGENT, ALICE, BOB, ENG_1, ENG_2

QUERY = """
query($id: String!, $first: Int, $last: Int, $after: String, $before: String,
      $order: PaginationOrderBy) {
  issue(id: $id) {
    comments(first: $first, last: $last, after: $after, before: $before, orderBy: $order) {
      nodes { id }
      pageInfo { startCursor endCursor hasNextPage hasPreviousPage }
    }
  }
}
"""
CHILDREN = QUERY.replace("issue(id: $id)", "comment(id: $id)").replace("comments(", "children(")
START = datetime(2026, 3, 1, tzinfo=UTC)


def _seed(served: Served, issue: str, count: int, parent: str | None = None) -> list[str]:
    ids = []
    with served.app.world.session() as s:
        for i in range(count):
            cid = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{issue}/{parent}/{i}"))
            ids.append(cid)
            created = START + timedelta(minutes=i // 3)  # three to a minute: ties, by id
            s.add(
                Comment(
                    id=cid,
                    issue_id=issue,
                    user_id=(ALICE, BOB)[i % 2],
                    body=f"c{i}",
                    parent_id=parent,
                    created_at=created,
                    updated_at=created + timedelta(hours=(i * 7) % 11),
                )
            )
    return ids


def _answer(served: Served, query: str, variables: dict[str, Any]) -> Any:
    answer = served.post({"query": query, "variables": variables})
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert "errors" not in body, body
    data = body["data"]
    return (data.get("issue") or data.get("comment"))["comments" if "issue" in data else "children"]


def _walked(served: Served, base: dict[str, Any], variables: dict[str, Any]) -> Any:
    backend = served.app.world.fakes["linear"]
    assert isinstance(backend, LinearBackend)
    with served.app.world.session() as s:
        m = backend.matcher(AGENT)
        rows = [c for c in s.scalars(select(Comment)) if m.comment(c, base)]
        key = "updated_at" if variables.get("order") == "updatedAt" else "created_at"
        rows.sort(key=lambda c: (aware(getattr(c, key)), c.id), reverse=True)
        page = paginate(
            rows,
            first=variables.get("first"),
            after=variables.get("after"),
            last=variables.get("last"),
            before=variables.get("before"),
        )
        info = page.page_info
        return {
            "nodes": [{"id": c.id} for c in page.nodes],
            "pageInfo": {
                "startCursor": info.start_cursor,
                "endCursor": info.end_cursor,
                "hasNextPage": info.has_next_page,
                "hasPreviousPage": info.has_previous_page,
            },
        }


def test_comment_pages_match_the_walk(served: Served) -> None:
    ids = _seed(served, ENG_1, 30)
    children = _seed(served, ENG_1, 8, parent=ids[4])
    cases: list[tuple[str, str, dict[str, Any]]] = [
        (QUERY, ENG_1, {"issue": {"id": {"eq": ENG_1}}}),
        (CHILDREN, ids[4], {"parent": {"id": {"eq": ids[4]}}}),
    ]
    for query, node, base in cases:
        for order in (None, "createdAt", "updatedAt"):
            pages: list[dict[str, Any]] = [
                {},
                {"first": 5},
                {"last": 4},
                {"first": 250},
                {"first": 0},
                {"first": 6, "after": ids[10]},
                {"first": 6, "after": children[2]},
                {"last": 3, "before": ids[20]},
                {"after": ids[3], "before": ids[25]},
                {"first": 3, "after": "not-a-comment"},
                {"last": 2, "before": "not-a-comment"},
            ]
            for page in pages:
                variables = {"id": node, **page, "order": order}
                got = _answer(served, query, variables)
                assert got == _walked(served, base, variables), variables


def test_comment_pages_cost_the_same_at_2000_comments(served: Served) -> None:
    small = _seed(served, ENG_1, 12)
    large = _seed(served, ENG_2, 2000)
    costs = []
    for issue, ids in ((ENG_1, small), (ENG_2, large)):
        for variables in ({"first": 5}, {"first": 5, "after": ids[7]}, {"last": 5}):
            with counted(served.app.world.engine, LinearBase) as cost:
                _answer(served, QUERY, {"id": issue, **variables})
            costs.append((cost.statements, cost.rows))
    assert costs[:3] == costs[3:], costs
    assert all(rows <= 20 for _, rows in costs), costs
