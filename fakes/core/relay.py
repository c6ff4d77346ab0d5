"""Relay connections, as the GraphQL fakes page their lists: ``first``/``after`` forward,
``last``/``before`` backward; ``edges``, ``nodes``, ``pageInfo`` and ``totalCount``.

The shapes and the steps are the same for GitHub and Linear; what differs is written in each
service's :class:`Paging`: its cursor format (GitHub's opaque ``cursor:v2:`` naming the node's
row, Linear's node id), its page limit and the error for a size out of range, and where a window
falls (:data:`Place`: GitHub takes ``first`` then ``last`` of it and returns everything when
neither is given; Linear pages 50 by default and takes ``last`` only without ``first``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar, Generic, TypeVar, overload

from sqlalchemy import ColumnElement, Select, func, select
from sqlalchemy.orm import Session
from sqlalchemy.sql.base import ExecutableOption

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


class Rows(Sequence[T]):
    """A connection's list kept in SQL: its length is one ``COUNT``, a slice one
    ``LIMIT``/``OFFSET`` query, and where a row stands (a cursor naming a node) one
    ``row_number()`` query. So a page of a thread's comments, or its ``totalCount``, costs
    the same at 2,000 comments as at none (issue 19): nothing loads the whole list.

    ``query`` selects the rows (one entity, no ``ORDER BY``), ``order_by`` is their order (it
    must end in a unique column, so that it is total), ``wrap`` makes each row the node the
    connection serves, ``key`` names the column a cursor carries (Linear's node ids), and
    ``options`` (eager loads) apply to the page's query only.
    """

    def __init__(
        self,
        session: Session,
        query: Select[Any],
        order_by: Sequence[ColumnElement[Any]],
        wrap: Callable[[Any], T],
        key: str = "id",
        options: Sequence[ExecutableOption] = (),
    ) -> None:
        self._session = session
        self._query = query
        self._options = list(options)
        self._order_by = list(order_by)
        self._wrap = wrap
        self._key = key

    @property
    def query(self) -> Select[Any]:
        """The rows' query (unordered): a narrower list is ``Rows(s, rows.query.where(...),
        rows.order_by, ...)``."""
        return self._query

    @property
    def order_by(self) -> list[ColumnElement[Any]]:
        return list(self._order_by)

    @cached_property
    def _count(self) -> int:
        counted = select(func.count()).select_from(self._query.subquery())
        return int(self._session.scalar(counted) or 0)

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, index: int) -> T: ...

    @overload
    def __getitem__(self, index: slice) -> list[T]: ...

    def __getitem__(self, index: int | slice) -> T | list[T]:
        if isinstance(index, slice):
            lo, hi, step = index.indices(len(self))
            if step != 1:
                raise ValueError("Rows slices in steps of one only")
            if hi <= lo:
                return []
            page = self._query.options(*self._options).order_by(*self._order_by)
            page = page.offset(lo).limit(hi - lo)
            return [self._wrap(row) for row in self._session.scalars(page)]
        at = index + len(self) if index < 0 else index
        found = self[at : at + 1] if 0 <= at < len(self) else []
        if not found:
            raise IndexError(index)
        return found[0]

    def position(self, key: object) -> int | None:
        """The index of the row whose ``key`` column is ``key``; None when there is none."""
        numbered = self._query.add_columns(
            func.row_number().over(order_by=self._order_by).label("replay_position")
        ).subquery()
        found = self._session.scalar(
            select(numbered.c.replay_position).where(numbered.c[self._key] == key)
        )
        return None if found is None else int(found) - 1


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
        self._items = items
        self._paging = paging
        self._lo, self._hi, self._has_next = lo, hi, has_next

    @cached_property
    def nodes(self) -> list[T]:
        """The page, loaded when asked for (a query for ``totalCount`` alone loads none)."""
        return list(self._items[self._lo : self._hi])

    @cached_property
    def page_info(self) -> PageInfo:
        nodes, lo, hi = self.nodes, self._lo, self._hi
        return PageInfo(
            self._paging.cursor(lo, nodes[0]) if nodes else None,
            self._paging.cursor(hi - 1, nodes[-1]) if nodes else None,
            self._has_next,
            lo > 0,
        )

    @property
    def edges(self) -> list[Edge[T]]:
        typename = self.typename.removesuffix("Connection") + "Edge"
        cursor = self._paging.cursor
        return [Edge(typename, cursor(self._lo + i, n), n) for i, n in enumerate(self.nodes)]
