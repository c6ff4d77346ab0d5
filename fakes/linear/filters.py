"""Linear's filter inputs (``IssueFilter``, ``WorkflowStateFilter``...) evaluated over rows.

A filter is the GraphQL input as a dict; every key present must hold (``and``/``or`` combine
sub-filters). Keys this fake does not evaluate were already refused by the schema, because the
schema declares only the ones implemented here.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from typing import Any

from fakes.linear.models import Comment, Issue, Label, Team, User, WorkflowState, aware

Filter = dict[str, Any]


def _text_op(op: str, value: str, arg: Any) -> bool:
    low = value.lower()
    larg = [a.lower() for a in arg] if isinstance(arg, list) else str(arg).lower()
    if op == "eq":
        return value == str(arg)
    if op == "neq":
        return value != str(arg)
    if op == "in":
        return value in arg
    if op == "nin":
        return value not in arg
    if op == "eqIgnoreCase":
        return low == larg
    if op == "neqIgnoreCase":
        return low != larg
    if op == "contains":
        return str(arg) in value
    if op == "notContains":
        return str(arg) not in value
    if op == "containsIgnoreCase":
        return str(larg) in low
    if op == "notContainsIgnoreCase":
        return str(larg) not in low
    if op == "startsWith":
        return value.startswith(arg)
    if op == "startsWithIgnoreCase":
        return low.startswith(str(larg))
    if op == "notStartsWith":
        return not value.startswith(arg)
    if op == "endsWith":
        return value.endswith(arg)
    if op == "notEndsWith":
        return not value.endswith(arg)
    raise ValueError(f"unknown string comparator {op!r}")


def _text(value: str | None, cmp: Filter) -> bool:
    for op, arg in cmp.items():
        if arg is None:
            continue
        if op == "null":
            if (value is None) != arg:
                return False
        elif value is None or not _text_op(op, value, arg):
            return False
    return True


def _order_op(op: str, value: Any, arg: Any) -> bool:
    if op == "eq":
        return bool(value == arg)
    if op == "neq":
        return bool(value != arg)
    if op == "in":
        return value in arg
    if op == "nin":
        return value not in arg
    if op == "gt":
        return bool(value > arg)
    if op == "gte":
        return bool(value >= arg)
    if op == "lt":
        return bool(value < arg)
    if op == "lte":
        return bool(value <= arg)
    raise ValueError(f"unknown comparator {op!r}")


def _ordered(value: Any, cmp: Filter) -> bool:
    """Numbers, dates, ids and booleans: eq/neq/in/nin, and gt/gte/lt/lte."""
    for op, arg in cmp.items():
        if arg is None:
            continue
        if op == "null":
            if (value is None) != arg:
                return False
        elif value is None or not _order_op(op, value, arg):
            return False
    return True


_DURATION = re.compile(
    r"^(?P<sign>-)?P(?:(?P<Y>\d+)Y)?(?:(?P<M>\d+)M)?(?:(?P<W>\d+)W)?(?:(?P<D>\d+)D)?"
    r"(?:T(?:(?P<h>\d+)H)?(?:(?P<m>\d+)M)?(?:(?P<s>\d+)S)?)?$"
)


def when(value: Any, now: datetime) -> datetime:
    """A ``DateTimeOrDuration``: an ISO date-time, or an ISO 8601 duration from now
    (``-P2W`` is two weeks ago, as in Linear's filters)."""
    if isinstance(value, datetime):
        return aware(value)
    text = str(value)
    m = _DURATION.match(text)
    if m and text not in ("P", "-P"):
        n = {k: int(v) for k, v in m.groupdict().items() if v and k != "sign"}
        delta = timedelta(
            days=n.get("Y", 0) * 365 + n.get("M", 0) * 30 + n.get("W", 0) * 7 + n.get("D", 0),
            hours=n.get("h", 0),
            minutes=n.get("m", 0),
            seconds=n.get("s", 0),
        )
        return now - delta if m.group("sign") else now + delta
    return aware(datetime.fromisoformat(text.replace("Z", "+00:00")))


def _combine(
    row: Any, f: Filter, match: Callable[[Any, Filter], bool], fields: dict[str, Any]
) -> bool:
    for key, sub in f.items():
        if sub is None:
            continue
        if key == "and":
            if not all(match(row, s) for s in sub):
                return False
        elif key == "or":
            if not any(match(row, s) for s in sub):
                return False
        elif key == "null":
            continue  # handled by the caller of a nullable relation
        elif not fields[key](sub):
            return False
    return True


def _nullable(row: Any, f: Filter, match: Callable[[Any, Filter], bool]) -> bool:
    if f.get("null") is not None and (row is None) != f["null"]:
        return False
    if row is None:
        return f.get("null") is True or not {k for k, v in f.items() if v is not None} - {"null"}
    return match(row, f)


class Matcher:
    """Evaluates filters for one viewer (``isMe`` needs to know who is asking).

    The fake filters teams, users, labels and states with it. Issue and comment lists are
    filtered in SQL (:mod:`fakes.linear.sql_filters`); :meth:`issue` and :meth:`comment` stay
    as the plain reading of Linear's filter semantics that those SQL conditions are held to
    (``tests/fakes/linear/test_filtered_lists.py``)."""

    def __init__(self, viewer_id: str, now: datetime) -> None:
        self.viewer_id = viewer_id
        self.now = now

    def _date(self, value: datetime | None, cmp: Filter) -> bool:
        args: Filter = {}
        for op, arg in cmp.items():
            if op in ("in", "nin") and arg is not None:
                args[op] = [when(a, self.now) for a in arg]
            elif op != "null" and arg is not None:
                args[op] = when(arg, self.now)
            else:
                args[op] = arg
        return _ordered(None if value is None else aware(value), args)

    def team(self, t: Team | None, f: Filter) -> bool:
        if t is None:
            return _nullable(t, f, self.team)
        return _combine(
            t,
            f,
            self.team,
            {
                "id": lambda c: _ordered(t.id, c),
                "key": lambda c: _text(t.key, c),
                "name": lambda c: _text(t.name, c),
                "createdAt": lambda c: self._date(t.created_at, c),
            },
        )

    def state(self, s: WorkflowState, f: Filter) -> bool:
        return _combine(
            s,
            f,
            self.state,
            {
                "id": lambda c: _ordered(s.id, c),
                "name": lambda c: _text(s.name, c),
                "type": lambda c: _text(s.type, c),
                "position": lambda c: _ordered(s.position, c),
                "team": lambda c: self.team(s.team, c),
                "createdAt": lambda c: self._date(s.created_at, c),
            },
        )

    def user(self, u: User | None, f: Filter) -> bool:
        if u is None:
            return _nullable(u, f, self.user)
        return _combine(
            u,
            f,
            self.user,
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

    def nullable_user(self, u: User | None, f: Filter) -> bool:
        return _nullable(u, f, self.user)

    def label(self, lb: Label, f: Filter) -> bool:
        return _combine(
            lb,
            f,
            self.label,
            {
                "id": lambda c: _ordered(lb.id, c),
                "name": lambda c: _text(lb.name, c),
                "team": lambda c: self.team(lb.team, c),
                "createdAt": lambda c: self._date(lb.created_at, c),
            },
        )

    def labels(self, labels: list[Label], f: Filter) -> bool:
        """``IssueLabelCollectionFilter``: plain keys mean "some label matches"."""

        def some(c: Filter) -> bool:
            return any(self.label(lb, c) for lb in labels)

        def whole(_: Any, g: Filter) -> bool:
            return self.labels(labels, g)

        return _combine(
            labels,
            f,
            whole,
            {
                "id": lambda c: some({"id": c}),
                "name": lambda c: some({"name": c}),
                "team": lambda c: some({"team": c}),
                "some": some,
                "every": lambda c: all(self.label(lb, c) for lb in labels),
                "length": lambda c: _ordered(len(labels), c),
            },
        ) and (f.get("null") is None or (not labels) == f["null"])

    def issue(self, i: Issue | None, f: Filter) -> bool:
        if i is None:
            return _nullable(i, f, self.issue)
        return _combine(
            i,
            f,
            self.issue,
            {
                "id": lambda c: _ordered(i.id, c),
                "number": lambda c: _ordered(i.number, c),
                "title": lambda c: _text(i.title, c),
                "description": lambda c: _text(i.description, c),
                "priority": lambda c: _ordered(i.priority, c),
                "estimate": lambda c: _ordered(i.estimate, c),
                "state": lambda c: self.state(i.state, c),
                "team": lambda c: self.team(i.team, c),
                "assignee": lambda c: self.nullable_user(i.assignee, c),
                "creator": lambda c: self.nullable_user(i.creator, c),
                "labels": lambda c: self.labels(list(i.labels), c),
                "parent": lambda c: _nullable(i.parent, c, self.issue),
                "createdAt": lambda c: self._date(i.created_at, c),
                "updatedAt": lambda c: self._date(i.updated_at, c),
                "startedAt": lambda c: self._date(i.started_at, c),
                "completedAt": lambda c: self._date(i.completed_at, c),
                "canceledAt": lambda c: self._date(i.canceled_at, c),
                "archivedAt": lambda c: self._date(i.archived_at, c),
            },
        )

    def comment(self, c: Comment | None, f: Filter) -> bool:
        if c is None:
            return _nullable(c, f, self.comment)
        return _combine(
            c,
            f,
            self.comment,
            {
                "id": lambda x: _ordered(c.id, x),
                "body": lambda x: _text(c.body, x),
                "user": lambda x: self.user(c.user, x),
                "issue": lambda x: _nullable(c.issue, x, self.issue),
                "parent": lambda x: _nullable(c.parent, x, self.comment),
                "createdAt": lambda x: self._date(c.created_at, x),
                "updatedAt": lambda x: self._date(c.updated_at, x),
            },
        )


def select(
    rows: Iterable[Any], f: Filter | None, match: Callable[[Any, Filter], bool]
) -> list[Any]:
    return [r for r in rows if f is None or match(r, f)]
