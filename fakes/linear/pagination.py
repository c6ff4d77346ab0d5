"""Relay pagination as Linear does it: ``first``/``after`` forward, ``last``/``before``
backward, 50 by default; the cursor of a node is its id."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from fakes.linear.errors import InvalidInput

T = TypeVar("T")

DEFAULT_PAGE = 50
MAX_PAGE = 250


@dataclass
class PageInfo:
    has_next_page: bool
    has_previous_page: bool
    start_cursor: str | None
    end_cursor: str | None


@dataclass
class Edge(Generic[T]):
    node: T
    cursor: str


@dataclass
class Connection(Generic[T]):
    nodes: list[T]
    page_info: PageInfo
    total_count: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def edges(self) -> list[Edge[T]]:
        return [Edge(n, _cursor(n)) for n in self.nodes]


def _cursor(node: Any) -> str:
    return str(node.id)


def paginate(
    items: Sequence[T],
    first: int | None = None,
    after: str | None = None,
    last: int | None = None,
    before: str | None = None,
) -> Connection[T]:
    for name, n in (("first", first), ("last", last)):
        if n is not None and not 0 <= n <= MAX_PAGE:
            raise InvalidInput(f"{name} must be between 0 and {MAX_PAGE}.")
    ids = [_cursor(i) for i in items]
    start, end = 0, len(items)
    if after is not None:
        start = ids.index(after) + 1 if after in ids else end
    if before is not None and before in ids:
        end = ids.index(before)
    if last is not None and first is None:
        lo = max(start, end - last)
        window = list(items[lo:end])
        has_prev, has_next = lo > start or lo > 0, end < len(items)
    else:
        size = DEFAULT_PAGE if first is None else first
        hi = min(end, start + size)
        window = list(items[start:hi])
        has_prev, has_next = start > 0, hi < end
    return Connection(
        nodes=window,
        page_info=PageInfo(
            has_next_page=has_next,
            has_previous_page=has_prev,
            start_cursor=_cursor(window[0]) if window else None,
            end_cursor=_cursor(window[-1]) if window else None,
        ),
        total_count=len(items),
    )
