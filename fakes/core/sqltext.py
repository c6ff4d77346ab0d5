"""Text matching in SQL as the fakes match it in Python: ``str.lower`` case folding, and
"every word of a term somewhere in the text" as one condition however many words."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from sqlalchemy import ColumnElement, exists, false, func, not_, select
from sqlalchemy.orm import Session


def register_lower(s: Session) -> None:
    """Make ``py_lower`` (Python's ``str.lower``) callable on this session's connection
    (SQLite's ``lower`` folds ASCII only)."""
    raw = s.connection().connection.driver_connection
    assert raw is not None
    raw.create_function(
        "py_lower", 1, lambda v: None if v is None else str(v).lower(), deterministic=True
    )


def lower(value: Any) -> ColumnElement[Any]:
    """``py_lower(value)``: :func:`register_lower` must have run on the session."""
    return func.py_lower(value)


def every_word(
    words: list[str],
    found_in: Callable[[ColumnElement[Any]], ColumnElement[bool]],
) -> ColumnElement[bool]:
    """Whether each of ``words`` is found (``found_in(word)``, a condition on the outer
    row), false when there are none. The words are one JSON parameter read as a table
    (SQLite's ``json_each``) and the condition is "no word is missing": one expression
    however many words (a condition per word passes SQLite's expression depth of 1,000 at
    a long pasted term). Repeated words count once."""
    unique = sorted(set(words))
    if not unique:
        return false()
    word = func.json_each(json.dumps(unique)).table_valued("value").alias("word")
    missing = select(word.c.value).where(not_(found_in(word.c.value)))
    return not_(exists(missing))
