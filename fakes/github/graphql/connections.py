"""Relay connections with GitHub's pagination rules: ``first``/``after``, ``last``/``before``."""

from __future__ import annotations

import base64
from collections.abc import Callable, Sequence
from typing import Any

from fakes.github.graphql.faults import Fault

MAX_PAGE = 100


def cursor(index: int) -> str:
    return base64.b64encode(f"cursor:v2:{index}".encode()).decode()


def _offset(value: str | None, name: str) -> int | None:
    if value is None:
        return None
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


class PageInfo:
    typename = "PageInfo"

    def __init__(self, start: str | None, end: str | None, has_next: bool, has_prev: bool):
        self.start_cursor = start
        self.end_cursor = end
        self.has_next_page = has_next
        self.has_previous_page = has_prev


class Edge:
    def __init__(self, typename: str, index: int, node: Any) -> None:
        self.typename = typename
        self.cursor = cursor(index)
        self.node = node


class Connection:
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
        for arg, value in (("first", first), ("last", last)):
            if value is not None and value < 0:
                raise Fault(
                    "INVALID_PAGINATION_ARGUMENT",
                    f"`{arg}` on the `{connection}` connection cannot be less than zero.",
                )
            if value is not None and value > MAX_PAGE:
                raise Fault(
                    "EXCESSIVE_PAGINATION",
                    f"Requesting {value} records on the `{connection}` connection exceeds the "
                    f"`{arg}` limit of {MAX_PAGE} records.",
                )
        self.typename = typename
        self.total_count = len(items)
        lo, hi = 0, len(items)
        after_at = _offset(after, connection)
        before_at = _offset(before, connection)
        if after_at is not None:
            lo = max(lo, after_at + 1)
        if before_at is not None:
            hi = min(hi, before_at)
        hi = max(lo, hi)
        if first is not None:
            hi = min(hi, lo + first)
        if last is not None:
            lo = max(lo, hi - last)
        self._lo = lo
        self._page = list(items[lo:hi])
        self.page_info = PageInfo(
            cursor(lo) if self._page else None,
            cursor(hi - 1) if self._page else None,
            hi < len(items),
            lo > 0,
        )

    def nodes(self) -> list[Any]:
        return self._page

    def edges(self) -> list[Edge]:
        edge = self.typename.removesuffix("Connection") + "Edge"
        return [Edge(edge, self._lo + i, node) for i, node in enumerate(self._page)]


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
