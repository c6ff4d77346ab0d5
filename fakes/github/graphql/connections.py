"""GitHub's pagination rules for :mod:`fakes.core.relay`: opaque ``cursor:v2:<offset>``
cursors, at most 100 a page, ``first`` then ``last`` of what the cursors leave."""

from __future__ import annotations

import base64
from collections.abc import Callable, Sequence
from typing import Any

from fakes.core import relay
from fakes.core.relay import Edge, PageInfo
from fakes.github.graphql.faults import Fault

__all__ = ["MAX_PAGE", "PAGING", "Connection", "Edge", "PageInfo", "connection", "cursor", "edge"]

MAX_PAGE = 100


def cursor(index: int, node: Any = None) -> str:
    return base64.b64encode(f"cursor:v2:{index}".encode()).decode()


def _offset(value: str, items: Sequence[Any]) -> int:
    try:
        raw = base64.b64decode(value.encode(), validate=True).decode()
        prefix, _, number = raw.rpartition(":")
        # Only what cursor() makes: digits, no sign (a negative offset counted from the end).
        if prefix != "cursor:v2" or not number.isascii() or not number.isdigit():
            raise ValueError(raw)
        return int(number)
    except ValueError as exc:
        raise Fault(
            "INVALID_CURSOR_ARGUMENTS", f"`{value}` does not appear to be a valid cursor."
        ) from exc


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
    return Edge(typename, cursor(index), node)


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
