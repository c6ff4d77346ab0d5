"""npm's version ranges (node-semver's grammar), enough to pick what npm would install.

Supports ``||``, hyphen ranges, x-ranges (``1.x``, ``1.2``, ``*``), ``^``, ``~``, and the
comparators ``< <= > >= =``; a prerelease satisfies a range only when one of its comparators
names a prerelease of the same ``major.minor.patch`` (node-semver's rule).
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Iterable
from typing import Any

from replay.registry.npm import SemVer, semver_key

Comparator = tuple[str, SemVer]
"""An operator (``<``, ``<=``, ``>``, ``>=``, ``=``) and the version it compares with."""

_PARTIAL = re.compile(
    r"^v?(\d+|[xX*])(?:\.(\d+|[xX*]))?(?:\.(\d+|[xX*]))?"
    r"(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$"
)
_OPS: dict[str, Callable[[Any, Any], bool]] = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "=": operator.eq,
}
_FLOOR = (0,)  # "-0": the lowest prerelease, so "<2.0.0-0" excludes 2.0.0's prereleases


class RangeError(ValueError):
    """Not a range node-semver would accept (a git URL, a tag, a typo)."""


def _num(part: str | None) -> int | None:
    return None if part is None or part in ("x", "X", "*") else int(part)


def _partial(text: str) -> tuple[int | None, int | None, int | None, tuple[int | str, ...]]:
    text = text.strip().lstrip("=").strip()
    if text in ("", "*", "x", "X"):
        return None, None, None, ()
    m = _PARTIAL.match(text)
    if not m:
        raise RangeError(f"not a version: {text!r}")
    major, minor, patch = _num(m[1]), _num(m[2]), _num(m[3])
    if major is None:
        minor = patch = None
    elif minor is None:
        patch = None
    pre = tuple(int(p) if p.isdigit() else p for p in m[4].split(".")) if m[4] else ()
    return major, minor, patch, pre


def _v(major: int, minor: int, patch: int, pre: tuple[int | str, ...] = ()) -> SemVer:
    return SemVer(major, minor, patch, pre)


def _ge(v: SemVer) -> Comparator:
    return (">=", v)


def _lt(v: SemVer) -> Comparator:
    return ("<", v)


def _comparators(token: str) -> list[Comparator]:
    m = re.match(r"^(\^|~>?|<=|>=|<|>|=)?\s*(.*)$", token)
    assert m is not None
    op, rest = m[1] or "", m[2]
    major, minor, patch, pre = _partial(rest)
    if major is None:
        return [] if op not in ("<", ">") else [_lt(_v(0, 0, 0, _FLOOR))]
    full = minor is not None and patch is not None
    lo = _v(major, minor or 0, patch or 0, pre)
    if op in ("", "="):
        if full:
            return [("=", lo)]
        upper = (
            _v(major, minor + 1, 0, _FLOOR) if minor is not None else _v(major + 1, 0, 0, _FLOOR)
        )
        return [_ge(lo), _lt(upper)]
    if op == "^":
        if major > 0 or minor is None:
            upper = _v(major + 1, 0, 0, _FLOOR)
        elif minor > 0 or patch is None:
            upper = _v(0, minor + 1, 0, _FLOOR)
        else:
            upper = _v(0, 0, patch + 1, _FLOOR)
        return [_ge(lo), _lt(upper)]
    if op.startswith("~"):
        upper = (
            _v(major, minor + 1, 0, _FLOOR) if minor is not None else _v(major + 1, 0, 0, _FLOOR)
        )
        return [_ge(lo), _lt(upper)]
    if full:
        return [(op, lo)]
    # Partial versions with a comparator: fill them in the way node-semver does.
    next_up = _v(major, minor + 1, 0) if minor is not None else _v(major + 1, 0, 0)
    if op == ">":
        return [_ge(next_up)]
    if op == "<=":
        return [_lt(_v(next_up.major, next_up.minor, next_up.patch, _FLOOR))]
    if op == "<":
        return [_lt(_v(major, minor or 0, 0, _FLOOR))]
    return [_ge(lo)]  # >=


def parse_range(text: str) -> list[list[Comparator]]:
    """The range as alternatives (``||``), each a list of comparators that must all hold."""
    alternatives = []
    for alt in text.split("||"):
        alt = alt.strip()
        hyphen = re.match(r"^(\S+)\s+-\s+(\S+)$", alt)
        if hyphen:
            lo = _comparators(">=" + hyphen[1])
            major, minor, patch, pre = _partial(hyphen[2])
            if major is None:
                hi: list[Comparator] = []
            elif minor is None:
                hi = [_lt(_v(major + 1, 0, 0, _FLOOR))]
            elif patch is None:
                hi = [_lt(_v(major, minor + 1, 0, _FLOOR))]
            else:
                hi = [("<=", _v(major, minor, patch, pre))]
            alternatives.append(lo + hi)
            continue
        # "> 1.2" is one comparator: glue operators to their versions first.
        tokens = re.sub(r"(<=|>=|<|>|=|\^|~>?)\s+", r"\1", alt).split()
        comps: list[Comparator] = []
        for token in tokens:
            comps += _comparators(token)
        alternatives.append(comps)
    return alternatives


def _holds(comp: Comparator, v: SemVer) -> bool:
    op, bound = comp
    return _OPS[op](v.key(), bound.key())


def satisfies(version: str, range_: str) -> bool:
    v = SemVer.parse(version)
    if v is None:
        return False
    for comps in parse_range(range_):
        if not all(_holds(c, v) for c in comps):
            continue
        if v.pre and not any(
            b.pre and (b.major, b.minor, b.patch) == (v.major, v.minor, v.patch) for _, b in comps
        ):
            continue
        return True
    return False


def max_satisfying(versions: Iterable[str], range_: str) -> str | None:
    ok = [v for v in versions if satisfies(v, range_)]
    return max(ok, key=semver_key) if ok else None


__all__ = ["RangeError", "max_satisfying", "parse_range", "satisfies"]
