"""Linear's ``IssueFilter`` and ``CommentFilter`` as SQL conditions, so that a filtered list
of issues or comments is counted and paged in SQL rather than loaded whole and matched row
by row (issue 19).

Each condition holds for exactly the rows :class:`fakes.linear.filters.Matcher` accepts (the
tests compare them on a seeded world). Where Python and SQL differ, the SQL side is made to
agree: every comparison first requires its column to be non-null (Python refuses a ``None``
value under any operator, SQL's NULL would propagate); ``…IgnoreCase`` compares Python's
``str.lower`` (registered on the connection as ``py_lower``; SQLite's ``lower`` folds ASCII
only); ``contains``/``startsWith``/``endsWith`` compare characters exactly (``LIKE`` would
fold case and read ``%``); dates compare as the stored UTC text against the argument in UTC.
A relation absent from a row (no assignee, no parent) follows :func:`filters._nullable`.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    ColumnElement,
    and_,
    exists,
    false,
    func,
    literal_column,
    not_,
    or_,
    select,
    true,
)
from sqlalchemy.orm import aliased

from fakes.linear.filters import Filter, when
from fakes.linear.models import Comment, Issue, Label, Team, User, WorkflowState, issue_labels

Condition = ColumnElement[bool]


def _present(f: Filter) -> bool:
    """Whether ``f`` holds any test besides ``null`` (what a missing relation is judged by)."""
    return any(v is not None for k, v in f.items() if k != "null")


def _text_op(op: str, col: ColumnElement[Any], arg: Any) -> Condition:
    if op in ("eq", "neq", "in", "nin"):
        return _order_op(op, col, [str(a) for a in arg] if op in ("in", "nin") else str(arg))
    if op.endswith("IgnoreCase"):
        low = func.py_lower(col)
        larg = str(arg).lower()
        plain = op.removesuffix("IgnoreCase")
        if plain in ("eq", "neq"):
            return low == larg if plain == "eq" else low != larg
        return _text_op(plain, low, larg)
    text = str(arg)
    if op in ("contains", "notContains"):
        found = func.instr(col, text) > 0
        return found if op == "contains" else not_(found)
    if op in ("startsWith", "notStartsWith"):
        starts = func.substr(col, 1, len(text)) == text
        return starts if op == "startsWith" else not_(starts)
    if op in ("endsWith", "notEndsWith"):
        ends = true() if not text else func.substr(col, -len(text)) == text
        return ends if op == "endsWith" else not_(ends)
    raise ValueError(f"unknown string comparator {op!r}")


def _order_op(op: str, col: ColumnElement[Any], arg: Any) -> Condition:
    if op == "in":
        return col.in_(list(arg))
    if op == "nin":
        return col.not_in(list(arg))
    ops: dict[str, Callable[[Any, Any], Any]] = {
        "eq": lambda a, b: a == b,
        "neq": lambda a, b: a != b,
        "gt": lambda a, b: a > b,
        "gte": lambda a, b: a >= b,
        "lt": lambda a, b: a < b,
        "lte": lambda a, b: a <= b,
    }
    if op not in ops:
        raise ValueError(f"unknown comparator {op!r}")
    return ops[op](col, arg)  # type: ignore[no-any-return]


def _compare(
    col: ColumnElement[Any], cmp: Filter, one: Callable[[str, ColumnElement[Any], Any], Condition]
) -> Condition:
    """``filters._text``/``_ordered``: every operator given holds, on a non-null value."""
    out: list[Condition] = []
    for op, arg in cmp.items():
        if arg is None:
            continue
        if op == "null":
            out.append(col.is_(None) if arg else col.is_not(None))
        else:
            out.append(and_(col.is_not(None), one(op, col, arg)))
    return and_(true(), *out)


def _balanced(
    join: Callable[..., Condition], empty: Condition, parts: list[Condition], width: int = 64
) -> Condition:
    """``join(empty, *parts)`` as a tree of groups of at most ``width`` terms: SQLite parses
    ``a OR b OR c...`` to a depth of one per term and refuses past 1,000, so a filter's
    ``or`` of 1,500 sub-filters is grouped. SQLAlchemy flattens a group joined by the same
    operator, so each group stands behind its identity under the other one (``1 AND (...)``
    in an ``or``, ``0 OR (...)`` in an ``and``), which keeps its value, NULL included."""
    if len(parts) <= width:
        return join(empty, *parts)
    step = -(-len(parts) // width)
    groups = [
        _balanced(join, empty, parts[i : i + step], width) for i in range(0, len(parts), step)
    ]
    if join is or_:
        kept = [and_(literal_column("1"), g) for g in groups]
    else:
        kept = [or_(literal_column("0"), g) for g in groups]
    return join(empty, *kept)


def _text(col: ColumnElement[Any], cmp: Filter) -> Condition:
    return _compare(col, cmp, _text_op)


def _ordered(col: ColumnElement[Any], cmp: Filter) -> Condition:
    return _compare(col, cmp, _order_op)


def _utc(value: datetime) -> datetime:
    """A date as stored: naive UTC (``models.aware`` reads stored dates as UTC)."""
    return value.astimezone(UTC).replace(tzinfo=None)


class SqlFilter:
    """Filters as conditions for one viewer (``isMe``) at one instant (durations)."""

    def __init__(self, viewer_id: str, now: datetime) -> None:
        self.viewer_id = viewer_id
        self.now = now

    def _date(self, col: ColumnElement[Any], cmp: Filter) -> Condition:
        args: Filter = {}
        for op, arg in cmp.items():
            if op in ("in", "nin") and arg is not None:
                args[op] = [_utc(when(a, self.now)) for a in arg]
            elif op != "null" and arg is not None:
                args[op] = _utc(when(arg, self.now))
            else:
                args[op] = arg
        return _ordered(col, args)

    @staticmethod
    def _combine(
        f: Filter,
        match: Callable[[Filter], Condition],
        fields: dict[str, Callable[[Any], Condition]],
    ) -> Condition:
        """``filters._combine``: every key holds; ``and``/``or`` of sub-filters; ``null``
        is the caller's."""
        out: list[Condition] = []
        for key, sub in f.items():
            if sub is None or key == "null":
                continue
            if key == "and":
                out.append(_balanced(and_, true(), [match(s) for s in sub]))
            elif key == "or":
                out.append(_balanced(or_, false(), [match(s) for s in sub]))
            else:
                out.append(fields[key](sub))
        return and_(true(), *out)

    @staticmethod
    def _related(
        fk: ColumnElement[Any], ids: Callable[[Filter], Any], f: Filter, *, strict: bool
    ) -> Condition:
        """A relation through ``fk`` whose rows matching ``f`` are ``ids(f)`` (a select of
        ids). A missing one is judged by ``null`` as ``filters._nullable`` does; a present one
        must also pass ``null: false`` when ``strict`` (``_nullable``), not when it is matched
        directly (``Matcher.team``/``user`` ignore ``null`` for a row that is there)."""
        null = f.get("null")
        missing = (
            fk.is_(None) if null is not False and (null is True or not _present(f)) else false()
        )
        if strict and null is True:
            return missing
        return or_(missing, and_(fk.is_not(None), fk.in_(ids(f))))

    # ------------------------------------------------------------------ entities

    def team(self, f: Filter, t: Any = Team) -> Condition:
        return self._combine(
            f,
            lambda g: self.team(g, t),
            {
                "id": lambda c: _ordered(t.id, c),
                "key": lambda c: _text(t.key, c),
                "name": lambda c: _text(t.name, c),
                "createdAt": lambda c: self._date(t.created_at, c),
            },
        )

    def _team_ids(self, f: Filter) -> Any:
        t = aliased(Team)
        return select(t.id).where(self.team(f, t))

    def state(self, f: Filter, w: Any = WorkflowState) -> Condition:
        return self._combine(
            f,
            lambda g: self.state(g, w),
            {
                "id": lambda c: _ordered(w.id, c),
                "name": lambda c: _text(w.name, c),
                "type": lambda c: _text(w.type, c),
                "position": lambda c: _ordered(w.position, c),
                "team": lambda c: self._related(w.team_id, self._team_ids, c, strict=False),
                "createdAt": lambda c: self._date(w.created_at, c),
            },
        )

    def user(self, f: Filter, u: Any = User) -> Condition:
        return self._combine(
            f,
            lambda g: self.user(g, u),
            {
                "id": lambda c: _ordered(u.id, c),
                "name": lambda c: _text(u.name, c),
                "displayName": lambda c: _text(u.display_name, c),
                "email": lambda c: _text(u.email, c),
                "active": lambda c: _ordered(u.active, c),
                "admin": lambda c: _ordered(u.admin, c),
                "isMe": lambda c: _ordered(u.id == self.viewer_id, c),
                "createdAt": lambda c: self._date(u.created_at, c),
            },
        )

    def _user_ids(self, f: Filter) -> Any:
        u = aliased(User)
        return select(u.id).where(self.user(f, u))

    def label(self, f: Filter, lb: Any = Label) -> Condition:
        return self._combine(
            f,
            lambda g: self.label(g, lb),
            {
                "id": lambda c: _ordered(lb.id, c),
                "name": lambda c: _text(lb.name, c),
                "team": lambda c: self._related(lb.team_id, self._team_ids, c, strict=False),
                "createdAt": lambda c: self._date(lb.created_at, c),
            },
        )

    def labels(self, f: Filter, i: Any) -> Condition:
        """``IssueLabelCollectionFilter`` on issue ``i``: plain keys mean some label."""

        def some(c: Filter) -> Condition:
            lb = aliased(Label)
            return exists(
                select(issue_labels.c.label_id)
                .join(lb, lb.id == issue_labels.c.label_id)
                .where(issue_labels.c.issue_id == i.id, self.label(c, lb))
            )

        def every(c: Filter) -> Condition:
            lb = aliased(Label)
            return not_(
                exists(
                    select(issue_labels.c.label_id)
                    .join(lb, lb.id == issue_labels.c.label_id)
                    .where(issue_labels.c.issue_id == i.id, not_(self.label(c, lb)))
                )
            )

        count = (
            select(func.count())
            .select_from(issue_labels)
            .where(issue_labels.c.issue_id == i.id)
            .scalar_subquery()
        )
        out = self._combine(
            f,
            lambda g: self.labels(g, i),
            {
                "id": lambda c: some({"id": c}),
                "name": lambda c: some({"name": c}),
                "team": lambda c: some({"team": c}),
                "some": some,
                "every": every,
                "length": lambda c: _ordered(count, c),
            },
        )
        if f.get("null") is not None:
            out = and_(out, (count == 0) if f["null"] else (count != 0))
        return out

    def issue(self, f: Filter, i: Any = Issue) -> Condition:
        return self._combine(
            f,
            lambda g: self.issue(g, i),
            {
                "id": lambda c: _ordered(i.id, c),
                "number": lambda c: _ordered(i.number, c),
                "title": lambda c: _text(i.title, c),
                "description": lambda c: _text(i.description, c),
                "priority": lambda c: _ordered(i.priority, c),
                "estimate": lambda c: _ordered(i.estimate, c),
                "state": lambda c: i.state_id.in_(self._state_ids(c)),
                "team": lambda c: self._related(i.team_id, self._team_ids, c, strict=False),
                "assignee": lambda c: self._related(i.assignee_id, self._user_ids, c, strict=True),
                "creator": lambda c: self._related(i.creator_id, self._user_ids, c, strict=True),
                "labels": lambda c: self.labels(c, i),
                "parent": lambda c: self._related(i.parent_id, self._issue_ids, c, strict=True),
                "createdAt": lambda c: self._date(i.created_at, c),
                "updatedAt": lambda c: self._date(i.updated_at, c),
                "startedAt": lambda c: self._date(i.started_at, c),
                "completedAt": lambda c: self._date(i.completed_at, c),
                "canceledAt": lambda c: self._date(i.canceled_at, c),
                "archivedAt": lambda c: self._date(i.archived_at, c),
            },
        )

    def _state_ids(self, f: Filter) -> Any:
        w = aliased(WorkflowState)
        return select(w.id).where(self.state(f, w))

    def _issue_ids(self, f: Filter) -> Any:
        i = aliased(Issue)
        return select(i.id).where(self.issue(f, i))

    def comment(self, f: Filter, c: Any = Comment) -> Condition:
        return self._combine(
            f,
            lambda g: self.comment(g, c),
            {
                "id": lambda x: _ordered(c.id, x),
                "body": lambda x: _text(c.body, x),
                "user": lambda x: self._related(c.user_id, self._user_ids, x, strict=False),
                "issue": lambda x: self._related(c.issue_id, self._issue_ids, x, strict=True),
                "parent": lambda x: self._related(c.parent_id, self._comment_ids, x, strict=True),
                "createdAt": lambda x: self._date(c.created_at, x),
                "updatedAt": lambda x: self._date(c.updated_at, x),
            },
        )

    def _comment_ids(self, f: Filter) -> Any:
        c = aliased(Comment)
        return select(c.id).where(self.comment(f, c))
