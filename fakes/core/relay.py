"""Relay connections, as the GraphQL fakes page their lists: ``first``/``after`` forward,
``last``/``before`` backward; ``edges``, ``nodes``, ``pageInfo`` and ``totalCount``.

The shapes and the steps are the same for GitHub and Linear; what differs is written in each
service's :class:`Paging`: its cursor format (GitHub's opaque ``cursor:v2:<offset>``, Linear's
node id), its page limit and the error for a size out of range, and where a window falls
(:data:`Place`: GitHub takes ``first`` then ``last`` of it and returns everything when neither
is given; Linear pages 50 by default and takes ``last`` only without ``first``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, TypeVar

T = TypeVar("T")

Place = Callable[[int, int, int, int | None, int | None], tuple[int, int, bool]]
"""Where a page falls: ``(count, start, end, first, last) -> (lo, hi, has_next_page)``.

``start``/``end`` bound the list after ``after``/``before``; the page is ``items[lo:hi]``."""


@dataclass(frozen=True)
class Paging:
    """How one service pages its connections."""

    cursor: Callable[[int, Any], str]
    """The cursor of the node at an index of the list."""
    index: Callable[[str, Sequence[Any]], int | None]
    """The index a cursor stands for, None when it names no node (raising when the service
    refuses it): past the end for ``after``, no bound for ``before``."""
    max_page: int
    refuse: Callable[[str, int, str], Exception]
    """The error for ``first``/``last`` (the argument, its value, the connection's name)
    below zero or above ``max_page``."""
    place: Place


@dataclass
class PageInfo:
    typename: ClassVar[str] = "PageInfo"

    start_cursor: str | None
    end_cursor: str | None
    has_next_page: bool
    has_previous_page: bool


class Edge(Generic[T]):
    def __init__(self, typename: str, cursor: str, node: T) -> None:
        self.typename = typename
        self.cursor = cursor
        self.node = node


class Connection(Generic[T]):
    """One page of ``items`` (in their order), and how many there are before paging."""

    def __init__(
        self,
        paging: Paging,
        items: Sequence[T],
        *,
        typename: str = "",
        connection: str = "",
        first: int | None = None,
        after: str | None = None,
        last: int | None = None,
        before: str | None = None,
    ) -> None:
        for arg, value in (("first", first), ("last", last)):
            if value is not None and not 0 <= value <= paging.max_page:
                raise paging.refuse(arg, value, connection)
        count = len(items)
        start, end = 0, count
        if after is not None:
            after_at = paging.index(after, items)
            start = count if after_at is None else after_at + 1
        if before is not None:
            before_at = paging.index(before, items)
            end = count if before_at is None else min(count, before_at)
        lo, hi, has_next = paging.place(count, start, end, first, last)
        self.typename = typename
        self.total_count = count
        self.nodes = list(items[lo:hi])
        self.page_info = PageInfo(
            paging.cursor(lo, self.nodes[0]) if self.nodes else None,
            paging.cursor(hi - 1, self.nodes[-1]) if self.nodes else None,
            has_next,
            lo > 0,
        )
        self._paging = paging
        self._lo = lo

    @property
    def edges(self) -> list[Edge[T]]:
        typename = self.typename.removesuffix("Connection") + "Edge"
        cursor = self._paging.cursor
        return [Edge(typename, cursor(self._lo + i, n), n) for i, n in enumerate(self.nodes)]
