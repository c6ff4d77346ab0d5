"""What a read costs the database, counted rather than timed: the SQL statements it runs and
the rows the ORM builds into objects. Used to show a read's cost does not grow with how many
comments, replies or events the object has (issue 19): the same read of an object with 2,000
children and of one with a page's worth must cost the same."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine, event
from sqlalchemy.orm import DeclarativeBase


@dataclass
class Cost:
    statements: int = 0
    """SQL statements sent to the database."""
    rows: int = 0
    """Rows loaded as ORM objects (of the fake's tables)."""


@contextmanager
def counted(engine: Engine, base: type[DeclarativeBase]) -> Iterator[Cost]:
    """Count what runs on ``engine`` and what loads as a ``base`` object inside the block."""
    cost = Cost()

    def on_statement(*_: Any) -> None:
        cost.statements += 1

    def on_load(*_: Any) -> None:
        cost.rows += 1

    event.listen(engine, "before_cursor_execute", on_statement)
    event.listen(base, "load", on_load, propagate=True)
    try:
        yield cost
    finally:
        event.remove(engine, "before_cursor_execute", on_statement)
        event.remove(base, "load", on_load)
