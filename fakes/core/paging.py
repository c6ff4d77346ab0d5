"""GitHub's REST paging as a FastAPI dependency: ``per_page`` and ``page`` in the query, and
the ``Link`` header on the URL the request came in on.

``per_page`` is 30 by default and at most 100 (a larger one is served as 100, as GitHub does);
both must be whole numbers of at least 1, else FastAPI's validation fails on the ``query``
parameter and the app's own handler answers in its service's shape. A route takes
``paging: Paged`` and pages with :meth:`Paging.slice` (or in SQL, with :meth:`Paging.window`),
or, where counting everything would cost a full walk (commit lists), asks
:meth:`Paging.links` with whether there is a next page.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Annotated, TypeVar
from urllib.parse import parse_qsl, urlencode

from fastapi import Depends, Query, Request

T = TypeVar("T")

DEFAULT_PER_PAGE = 30
MAX_PER_PAGE = 100


@dataclass(frozen=True)
class Paging:
    """One request's page: its size (already capped), its number, and where it came in."""

    per_page: int
    page: int
    base: str
    """The request's URL without its query."""
    params: dict[str, str] = field(default_factory=dict)
    """The request's query, kept in every link (``per_page`` and ``page`` overwritten)."""

    @property
    def offset(self) -> int:
        return (self.page - 1) * self.per_page

    def slice(self, items: Sequence[T]) -> tuple[list[T], dict[str, str]]:
        """This page of ``items`` and its ``Link`` header (with ``last``)."""
        last = max((len(items) + self.per_page - 1) // self.per_page, 1)
        chunk = list(items[self.offset : self.offset + self.per_page])
        return chunk, self.links(self.page < last, last)

    def window(self, total: int) -> dict[str, str]:
        """The ``Link`` header of this page of ``total`` items paged in SQL (``offset`` and
        ``per_page`` as LIMIT): the same header :meth:`slice` gives for a list that long."""
        last = max((total + self.per_page - 1) // self.per_page, 1)
        return self.links(self.page < last, last)

    def links(self, has_next: bool, last: int | None = None) -> dict[str, str]:
        """The ``Link`` header; ``last`` is left out where counting would cost a full walk
        (GitHub leaves it out of commit lists too)."""

        def link(n: int, rel: str) -> str:
            query = urlencode({**self.params, "per_page": self.per_page, "page": n})
            return f'<{self.base}?{query}>; rel="{rel}"'

        rels = []
        if self.page > 1:
            rels += [link(self.page - 1, "prev")]
        if has_next:
            rels += [link(self.page + 1, "next")]
            if last is not None:
                rels += [link(last, "last")]
        if self.page > 1:
            rels += [link(1, "first")]
        return {"Link": ", ".join(rels)} if rels else {}


async def paging(
    request: Request,
    per_page: Annotated[int, Query(ge=1)] = DEFAULT_PER_PAGE,
    page: Annotated[int, Query(ge=1)] = 1,
) -> Paging:
    """The dependency: the query's paging, validated, with the size capped (``async``: it
    never blocks, so FastAPI runs it inline rather than in a worker thread)."""
    return Paging(
        per_page=min(per_page, MAX_PER_PAGE),
        page=page,
        base=str(request.url.replace(query="")),
        params=dict(parse_qsl(request.url.query, keep_blank_values=True)),
    )


Paged = Annotated[Paging, Depends(paging)]
"""A route parameter that pages: ``def list_things(..., paging: Paged)``."""
