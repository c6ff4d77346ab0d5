"""Linear's pagination rules for :mod:`fakes.core.relay`: a node's cursor is its id, 50 a
page by default and at most 250; ``last``/``before`` page backward when ``first`` is not given."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from fakes.core import relay
from fakes.core.relay import Connection, Edge, PageInfo
from fakes.linear.errors import InvalidInput

__all__ = ["DEFAULT_PAGE", "MAX_PAGE", "PAGING", "Connection", "Edge", "PageInfo", "paginate"]

T = TypeVar("T")

DEFAULT_PAGE = 50
MAX_PAGE = 250


def _cursor(index: int, node: Any) -> str:
    return str(node.id)


def _index(cursor: str, items: Sequence[Any]) -> int | None:
    if isinstance(items, relay.Rows):  # kept in SQL: one query, not the whole list
        return items.position(cursor)
    ids = [str(i.id) for i in items]
    return ids.index(cursor) if cursor in ids else None


def _refuse(arg: str, value: int, connection: str) -> InvalidInput:
    return InvalidInput(f"{arg} must be between 0 and {MAX_PAGE}.")


def _place(
    count: int, start: int, end: int, first: int | None, last: int | None
) -> tuple[int, int, bool]:
    if last is not None and first is None:
        return max(start, end - last), end, end < count
    hi = min(end, start + (DEFAULT_PAGE if first is None else first))
    return start, hi, hi < end


PAGING = relay.Paging(_cursor, _index, MAX_PAGE, _refuse, _place)


def paginate(
    items: Sequence[T],
    first: int | None = None,
    after: str | None = None,
    last: int | None = None,
    before: str | None = None,
) -> Connection[T]:
    return Connection(PAGING, items, first=first, after=after, last=last, before=before)
