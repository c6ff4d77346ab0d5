"""Relay pagination written once (``fakes.core.relay``), paged by GitHub's rules and Linear's."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from fakes.core.relay import Connection
from fakes.github.graphql import connections as github
from fakes.github.graphql.faults import Fault
from fakes.linear.errors import InvalidInput
from fakes.linear.graphql import connections as linear


@dataclass(frozen=True)
class Node:
    id: str


NODES = [Node(f"n{i}") for i in range(5)]


def ids(conn: Connection[Node]) -> list[str]:
    return [n.id for n in conn.nodes]


def test_github_pages_by_offset_cursors_first_then_last() -> None:
    page = github.Connection("NodeConnection", NODES, connection="nodes", first=2)
    assert ids(page) == ["n0", "n1"] and page.total_count == 5
    info = page.page_info
    assert (info.start_cursor, info.end_cursor) == (github.cursor(0), github.cursor(1))
    assert (info.has_next_page, info.has_previous_page) == (True, False)
    assert [(e.typename, e.cursor) for e in page.edges] == [
        ("NodeEdge", github.cursor(0)),
        ("NodeEdge", github.cursor(1)),
    ]
    after = github.Connection(
        "NodeConnection", NODES, connection="nodes", after=github.cursor(1), first=2
    )
    assert ids(after) == ["n2", "n3"] and after.page_info.has_previous_page
    both = github.Connection("NodeConnection", NODES, connection="nodes", first=4, last=2)
    assert ids(both) == ["n2", "n3"]
    # Everything when neither first nor last is given; a next page past ``before`` counts.
    assert ids(github.Connection("NodeConnection", NODES, connection="nodes")) == ids(
        Connection(github.PAGING, NODES)
    )
    short = github.Connection(
        "NodeConnection", NODES, connection="nodes", before=github.cursor(3), first=3
    )
    assert ids(short) == ["n0", "n1", "n2"] and short.page_info.has_next_page


@pytest.mark.parametrize(
    ("args", "kind"),
    [
        ({"first": -1}, "INVALID_PAGINATION_ARGUMENT"),
        ({"last": 101}, "EXCESSIVE_PAGINATION"),
        ({"after": "bm90IGEgY3Vyc29y"}, "INVALID_CURSOR_ARGUMENTS"),
    ],
)
def test_github_refuses_in_its_words(args: dict[str, object], kind: str) -> None:
    with pytest.raises(Fault) as caught:
        github.connection("NodeConnection", "nodes", lambda: NODES, **args)
    assert caught.value.type == kind


def test_linear_pages_by_node_ids_fifty_by_default() -> None:
    many = [Node(f"m{i}") for i in range(60)]
    assert len(linear.paginate(many).nodes) == 50
    page = linear.paginate(NODES, first=2, after="n1")
    assert ids(page) == ["n2", "n3"]
    assert (page.page_info.start_cursor, page.page_info.end_cursor) == ("n2", "n3")
    assert [e.cursor for e in page.edges] == ["n2", "n3"]
    # ``last`` counts only without ``first``; ``before`` bounds ``hasNextPage`` going forward.
    assert ids(linear.paginate(NODES, first=1, last=3)) == ["n0"]
    assert ids(linear.paginate(NODES, last=2, before="n4")) == ["n2", "n3"]
    short = linear.paginate(NODES, first=3, before="n3")
    assert ids(short) == ["n0", "n1", "n2"] and not short.page_info.has_next_page
    # A cursor that names no node: nothing after it, no bound before it.
    gone = linear.paginate(NODES, after="nobody")
    assert ids(gone) == [] and gone.page_info.has_previous_page
    assert ids(linear.paginate(NODES, before="nobody")) == ids(linear.paginate(NODES))
    with pytest.raises(InvalidInput):
        linear.paginate(NODES, first=251)
