"""Mutants of the lines the gold patch adds or changes: one small edit each.

The gold version of each changed Python file is parsed with :mod:`ast`; every node that
starts an edit on a line the gold patch added or changed gets each operator that applies:

* ``boundary``: a comparison's boundary moved (``<`` → ``<=``, ``>=`` → ``>``);
* ``negate``: a comparison negated (``<`` → ``>=``, ``==`` → ``!=``, ``in`` → ``not in``),
  a condition negated (``if c`` → ``if not (c)``), ``and`` ↔ ``or``;
* ``constant``: a constant changed (``n`` → ``n + 1``, ``0`` → ``1``, ``True`` ↔ ``False``,
  a string emptied);
* ``return``: a returned value replaced by ``None``;
* ``remove``: a statement replaced by ``pass``;
* ``swap``: a call's first two positional arguments swapped;
* ``widen``: an exception type widened to ``Exception`` (in an ``except`` or a ``raise``);
* ``arith``: ``+`` ↔ ``-``, ``*`` ↔ ``/``, ``//`` → ``/``.

The edit is made in the text at the node's position (never by re-rendering the tree, which
would lose the file's layout and make the diff the whole file), and kept only if the result
parses to a different tree. Annotations, docstrings and f-strings are left alone.

No mutation tool is used: mutmut, cosmic-ray and mutatest mutate whole modules and run the
tests themselves, while a case's wrong fixes must be confined to the gold patch's lines and
go through the case's own grading (:mod:`replay.strength.engine`) as diffs.
"""

from __future__ import annotations

import ast
import random
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from replay.strength.equivalence import dead_reason, parse
from replay.strength.tree import ChangedFile, lines_of

COMPARE = re.compile(r"<=|>=|==|!=|<|>|\bis\s+not\b|\bnot\s+in\b|\bis\b|\bin\b")
BOOL = re.compile(r"\band\b|\bor\b")
ARITH = re.compile(r"//|\*\*|<<|>>|[-+*/%@&|^]")
AUG = re.compile(r"(//|\*\*|<<|>>|[-+*/%@&|^])=")

BOUNDARY = {ast.Lt: "<=", ast.LtE: "<", ast.Gt: ">=", ast.GtE: ">"}
NEGATION = {
    ast.Lt: ">=",
    ast.LtE: ">",
    ast.Gt: "<=",
    ast.GtE: "<",
    ast.Eq: "!=",
    ast.NotEq: "==",
    ast.Is: "is not",
    ast.IsNot: "is",
    ast.In: "not in",
    ast.NotIn: "in",
}
ARITHMETIC = {ast.Add: "-", ast.Sub: "+", ast.Mult: "/", ast.Div: "*", ast.FloorDiv: "/"}
SIMPLE = (
    ast.Assign,
    ast.AugAssign,
    ast.AnnAssign,
    ast.Expr,
    ast.Raise,
    ast.Delete,
    ast.Assert,
    ast.If,
)
"""Statements ``remove`` replaces by ``pass`` (a ``return`` has its own operator)."""
BROAD = frozenset({"Exception", "BaseException"})


@dataclass(frozen=True)
class Mutation:
    """One edit of one changed file's gold version."""

    path: str
    line: int
    """Where the edit starts (a line the gold patch added or changed)."""
    operator: str
    """boundary, negate, constant, return, remove, swap, widen or arith."""
    description: str
    """The edit in a few words: ``< → <=``."""
    source: str
    """The whole file with the edit made."""
    equivalent: str | None
    """Why the edit cannot change behaviour (it is in dead code), or None."""
    column: int = 1
    """Where on :attr:`line` the edit starts (from 1, in characters)."""


@dataclass(frozen=True)
class _Edit:
    start: int
    end: int
    text: str
    line: int
    last: int
    operator: str
    description: str


class _Text:
    """A source's text, addressed as :mod:`ast` addresses it (lines from 1, UTF-8 byte
    columns)."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.lines = lines_of(source)
        self.starts = [0]
        for line in self.lines:
            self.starts.append(self.starts[-1] + len(line))

    def offset(self, line: int, col: int) -> int:
        text = self.lines[line - 1] if line - 1 < len(self.lines) else ""
        return self.starts[line - 1] + len(text.encode()[:col].decode(errors="ignore"))

    def start(self, node: ast.AST) -> int:
        return self.offset(node.lineno, node.col_offset)  # type: ignore[attr-defined]

    def end(self, node: ast.AST) -> int:
        return self.offset(node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]

    def segment(self, node: ast.AST) -> str:
        return self.source[self.start(node) : self.end(node)]

    def line_of(self, offset: int) -> int:
        low, high = 0, len(self.starts) - 1
        while low < high:  # the last line start at or before offset
            mid = (low + high + 1) // 2
            if self.starts[mid] <= offset:
                low = mid
            else:
                high = mid - 1
        return low + 1


_At = Callable[[ast.AST, str, str, str], _Edit]
"""``at(node, new text, operator, description)``: an edit replacing ``node``."""


def _skipped(tree: ast.Module) -> set[int]:
    """Ids of the nodes no operator touches: annotations, docstrings, f-strings' insides."""
    roots: list[ast.AST] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            if node.returns is not None:
                roots.append(node.returns)
            args = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
            args += [a for a in (node.args.vararg, node.args.kwarg) if a is not None]
            roots += [a.annotation for a in args if a.annotation is not None]
        elif isinstance(node, ast.AnnAssign):
            roots.append(node.annotation)
        elif isinstance(node, ast.JoinedStr):
            roots += list(ast.iter_child_nodes(node))
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                roots.append(first)
    return {id(n) for root in roots for n in ast.walk(root)}


def _token(
    text: _Text, after: ast.AST, before: ast.AST, pattern: re.Pattern[str]
) -> tuple[int, int] | None:
    """The first operator ``pattern`` finds between two nodes, as offsets."""
    low, high = text.end(after), text.start(before)
    found = pattern.search(text.source, low, high)
    return None if found is None else (found.start(), found.end())


def _edits(text: _Text, tree: ast.Module) -> Iterator[_Edit]:
    skip = _skipped(tree)

    def edit(start: int, end: int, new: str, op: str, words: str) -> _Edit:
        line, last = text.line_of(start), text.line_of(max(start, end - 1))
        return _Edit(start, end, new, line, last, op, words)

    def at(node: ast.AST, new: str, op: str, words: str) -> _Edit:
        return edit(text.start(node), text.end(node), new, op, words)

    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Compare):
            left = node.left
            for op, right in zip(node.ops, node.comparators, strict=True):
                span = _token(text, left, right, COMPARE)
                if span is not None:
                    old = text.source[span[0] : span[1]]
                    for table, name in ((BOUNDARY, "boundary"), (NEGATION, "negate")):
                        new = table.get(type(op))
                        if new is not None:
                            yield edit(*span, new, name, f"`{old}` → `{new}`")
                left = right
        elif isinstance(node, ast.BoolOp) and len(node.values) >= 2:
            span = _token(text, node.values[0], node.values[1], BOOL)
            if span is not None:
                old = text.source[span[0] : span[1]]
                new = "or" if old == "and" else "and"
                yield edit(*span, new, "negate", f"`{old}` → `{new}`")
        elif isinstance(node, ast.BinOp) and type(node.op) in ARITHMETIC:
            span = _token(text, node.left, node.right, ARITH)
            if span is not None:
                old, new = text.source[span[0] : span[1]], ARITHMETIC[type(node.op)]
                yield edit(*span, new, "arith", f"`{old}` → `{new}`")
        elif isinstance(node, ast.AugAssign) and type(node.op) in ARITHMETIC:
            span = _token(text, node.target, node.value, AUG)
            if span is not None:
                old, new = text.source[span[0] : span[1]], ARITHMETIC[type(node.op)] + "="
                yield edit(*span, new, "arith", f"`{old}` → `{new}`")
        elif isinstance(node, ast.Constant):
            new_value = _changed_constant(node.value)
            if new_value is not None:
                yield at(node, new_value, "constant", f"`{text.segment(node)}` → `{new_value}`")
        elif isinstance(node, ast.Return) and node.value is not None:
            value = node.value
            if not (isinstance(value, ast.Constant) and value.value is None):
                yield at(
                    value,
                    "None",
                    "return",
                    f"`return {_short(text.segment(value))}` → `return None`",
                )
        elif isinstance(node, ast.Call) and len(node.args) >= 2:
            first, second = node.args[0], node.args[1]
            a, b = text.segment(first), text.segment(second)
            if (
                a != b
                and not isinstance(first, ast.Starred)
                and not isinstance(second, ast.Starred)
            ):
                middle = text.source[text.end(first) : text.start(second)]
                words = f"arguments `{_short(a)}` and `{_short(b)}` swapped"
                yield edit(text.start(first), text.end(second), b + middle + a, "swap", words)
        elif isinstance(node, ast.ExceptHandler) and node.type is not None:
            if not (isinstance(node.type, ast.Name) and node.type.id in BROAD):
                old = _short(text.segment(node.type))
                yield at(node.type, "Exception", "widen", f"`except {old}` → `except Exception`")
        elif isinstance(node, ast.Raise) and node.exc is not None:
            raised = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            kind = raised.id if isinstance(raised, ast.Name) else getattr(raised, "attr", "")
            if kind[:1].isupper() and kind not in BROAD:
                yield at(raised, "Exception", "widen", f"`raise {kind}` → `raise Exception`")
        if isinstance(node, ast.If | ast.While | ast.IfExp | ast.Assert):
            yield from _negated(text, node.test, at)
        for name in ("body", "orelse", "finalbody"):
            block = getattr(node, name, None)
            for stmt in block if isinstance(block, list) else []:
                if isinstance(stmt, SIMPLE) and id(stmt) not in skip:
                    head = text.segment(stmt).splitlines()[0]
                    yield at(stmt, "pass", "remove", f"`{_short(head)}` removed")


def _negated(text: _Text, test: ast.expr, at: _At) -> Iterator[_Edit]:
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = text.segment(test.operand)
        yield at(
            test, f"({inner})", "negate", f"`{_short(text.segment(test))}` → `{_short(inner)}`"
        )
    else:
        old = text.segment(test)
        yield at(test, f"not ({old})", "negate", f"`{_short(old)}` negated")


def _changed_constant(value: object) -> str | None:
    if isinstance(value, bool):
        return repr(not value)
    if isinstance(value, int):
        return repr(value + 1)
    if isinstance(value, float):
        return repr(value + 1.0)
    if isinstance(value, str):
        return "''" if value else "'x'"
    if isinstance(value, bytes):
        return "b''" if value else "b'x'"
    return None


def _short(text: str, width: int = 40) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def mutations(changed: ChangedFile) -> list[Mutation]:
    """Every mutant of ``changed``'s gold version at a line the gold patch added or changed,
    in the file's order; empty when it does not parse here."""
    source = changed.text(changed.gold)
    tree = parse(source) if source else None
    if source is None or tree is None:
        return []
    lines = changed.changed_lines()
    text = _Text(source)
    gold_dump = ast.dump(tree)
    found: dict[str, Mutation] = {}
    for e in sorted(_edits(text, tree), key=lambda e: (e.start, e.end, e.operator)):
        if e.line not in lines:
            continue
        mutated = source[: e.start] + e.text + source[e.end :]
        new_tree = parse(mutated)
        if new_tree is None or ast.dump(new_tree) == gold_dump or mutated in found:
            continue
        found[mutated] = Mutation(
            changed.path,
            e.line,
            e.operator,
            e.description,
            mutated,
            dead_reason(tree, e.line, e.last),
            e.start - text.starts[e.line - 1] + 1,
        )
    return list(found.values())


def choose(found: list[Mutation], bound: int, seed: int) -> tuple[list[Mutation], list[Mutation]]:
    """At most ``bound`` mutants to grade and at most ``bound`` proven equivalent, each in the
    files' order. Where there are more, they are drawn with ``seed``, in turn from each file
    (so that a small bound still reaches every file the gold patch changes)."""
    live = [m for m in found if m.equivalent is None]
    dead = [m for m in found if m.equivalent is not None]
    if len(live) > bound:
        rng = random.Random(seed)
        by_file: dict[str, list[int]] = {}
        for i, m in enumerate(live):
            by_file.setdefault(m.path, []).append(i)
        queues = [rng.sample(indexes, len(indexes)) for _, indexes in sorted(by_file.items())]
        keep: set[int] = set()
        while len(keep) < bound:
            for queue in queues:
                if queue and len(keep) < bound:
                    keep.add(queue.pop())
        live = [m for i, m in enumerate(live) if i in keep]
    return live, dead[:bound]
