"""GitHub's pagination rules for :mod:`fakes.core.relay`: opaque cursors, at most 100 a page,
``first`` then ``last`` of what the cursors leave.

A cursor names its node's row, ``cursor:v2:<offset>:<table>.<id>``, so it keeps its place when
items are added ahead of it while a client pages (a list newest first): GitHub's cursors name
a node too (its GraphQL pagination guide's example, ``Y3Vyc29yOnYyOpHOUH8B7g==``, is
``cursor:v2:`` and a node id), not an offset. The offset is where the node stood, used when
the node has no row (a commit, a changed file) or is no longer in the list.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable, Sequence
from typing import Any

from fakes.core import relay
from fakes.core.relay import Edge, PageInfo
from fakes.github.graphql.faults import Fault

__all__ = ["MAX_PAGE", "PAGING", "Connection", "Edge", "PageInfo", "connection", "cursor", "edge"]

MAX_PAGE = 100


# Only what cursor() makes: ASCII digits, no sign (a negative offset counted from the end).
_CURSOR = re.compile(r"cursor:v2:(?P<offset>[0-9]+)(?::(?P<key>[a-z_]+\.[0-9]+))?")


def _row_key(node: Any) -> str | None:
    """``<table>.<id>`` of the node's row; None for a node without one."""
    row = getattr(node, "row", None)
    table, ident = getattr(row, "__tablename__", None), getattr(row, "id", None)
    if isinstance(table, str) and isinstance(ident, int) and not isinstance(ident, bool):
        return f"{table}.{ident}"
    return None


def cursor(index: int, node: Any = None) -> str:
    key = _row_key(node)
    raw = f"cursor:v2:{index}" if key is None else f"cursor:v2:{index}:{key}"
    return base64.b64encode(raw.encode()).decode()


def _offset(value: str, items: Sequence[Any]) -> int:
    try:
        raw = base64.b64decode(value.encode(), validate=True).decode()
        found = _CURSOR.fullmatch(raw)
        if found is None:
            raise ValueError(raw)
        offset, key = int(found["offset"]), found["key"]
    except ValueError as exc:
        raise Fault(
            "INVALID_CURSOR_ARGUMENTS", f"`{value}` does not appear to be a valid cursor."
        ) from exc
    if key is None:
        return offset
    if isinstance(items, relay.Rows):  # one table's rows, kept in SQL: found by id
        at = items.position(int(key.partition(".")[2]))
    else:
        keys = [_row_key(n) for n in items]
        at = keys.index(key) if key in keys else None
    return offset if at is None else at


def _refuse(arg: str, value: int, connection: str) -> Fault:
    if value < 0:
        return Fault(
            "INVALID_PAGINATION_ARGUMENT",
            f"`{arg}` on the `{connection}` connection cannot be less than zero.",
        )
    return Fault(
        "EXCESSIVE_PAGINATION",
        f"Requesting {value} records on the `{connection}` connection exceeds the "
        f"`{arg}` limit of {MAX_PAGE} records.",
    )


def _place(
    count: int, start: int, end: int, first: int | None, last: int | None
) -> tuple[int, int, bool]:
    lo, hi = start, max(start, end)
    if first is not None:
        hi = min(hi, lo + first)
    if last is not None:
        lo = max(lo, hi - last)
    return lo, hi, hi < count


PAGING = relay.Paging(cursor, _offset, MAX_PAGE, _refuse, _place)


class Connection(relay.Connection[Any]):
    """A page of ``items`` (already view objects) plus the total before paging."""

    def __init__(
        self,
        typename: str,
        items: Sequence[Any],
        *,
        connection: str,
        first: int | None = None,
        after: str | None = None,
        last: int | None = None,
        before: str | None = None,
    ) -> None:
        super().__init__(
            PAGING,
            items,
            typename=typename,
            connection=connection,
            first=first,
            after=after,
            last=last,
            before=before,
        )


def edge(typename: str, index: int, node: Any) -> Edge[Any]:
    """The edge of the node at ``index`` of its connection (a mutation's payload)."""
    return Edge(typename, cursor(index, node), node)


def connection(
    typename: str, connection_name: str, make: Callable[[], Sequence[Any]], **args: Any
) -> Connection:
    """Build a connection from the pagination arguments a resolver received."""
    return Connection(
        typename,
        make(),
        connection=connection_name,
        first=args.get("first"),
        after=args.get("after"),
        last=args.get("last"),
        before=args.get("before"),
    )
