"""Overfits: the fix taken only for the literal inputs the ticket and the visible tests name.

An agent that special-cases the example in the ticket (``if range == "^0.2.3": ...``) passes
hidden tests that check only that example, and a team would reject it in review. Which
argument of which function carries the example cannot be known in general (the ticket names
``satisfies("0.3.0", "^0.2.3")``; the fix is in ``_expand_caret(p)``, three calls down), so
the overfit is made the same way for every function the gold patch changes: its body becomes

.. code-block:: python

    if not _replay_named_input():
        <the function's body at the base commit>
        return None
    <the function's body with the gold patch>

where ``_replay_named_input()`` (appended to the module) says whether a frame of the
package's own code up the call stack (``satisfies(version, range_)`` above
``_expand_caret``) holds one of the named inputs: a string or number the ticket or the
visible tests name, or an object of the package whose ``str()`` is one. The tests' own frames
are not looked at: the value a test expects is not an input. On those inputs the overfit
behaves as the gold patch; on every other input as the code before the fix.

The named inputs: the string and number literals (no small integers) of the ticket's code
blocks and inline code, inline code that is not a name (``^0.2.3``), and the same literals of
the visible test files (as at the base commit) that hold the case's listed tests, docstrings
left out. Nothing is made when there are none, or when the gold patch changes no function's
body.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

from replay.strength.equivalence import is_docstring, parse
from replay.strength.tree import ChangedFile, WrongFix, lines_of

GUARD = "_replay_named_input"
MAX_INPUTS = 2000
"""At most this many named inputs (the shortest kept): a guard, not a copy of the tests."""
MAX_LENGTH = 200
"""Literals longer than this are not inputs anyone would special-case."""

GUARD_CODE = '''

# replay case strength: an overfit. The fix is taken only for the inputs the ticket and the
# visible tests name; any other input gets the code as it was before the fix.
_REPLAY_NAMED_INPUTS = frozenset({inputs})
_REPLAY_BUSY = []


def _replay_named_input():
    """Whether a frame of this package's code up the call stack holds an input the ticket
    or the visible tests name."""
    import sys

    if _REPLAY_BUSY:
        return False
    _REPLAY_BUSY.append(True)
    try:
        package = __name__.split(".")[0]
        frame = sys._getframe(1)
        while frame is not None:
            module = frame.f_globals.get("__name__") or ""
            if module.split(".")[0] == package and frame.f_locals is not frame.f_globals:
                for value in list(frame.f_locals.values()):
                    if _replay_is_named(value, package):
                        return True
            frame = frame.f_back
        return False
    finally:
        _REPLAY_BUSY.pop()


def _replay_is_named(value, package):
    if isinstance(value, bool):
        return False
    if isinstance(value, (str, int, float)):
        return value in _REPLAY_NAMED_INPUTS
    if type(value).__module__.split(".")[0] != package:
        return False
    try:
        return str(value) in _REPLAY_NAMED_INPUTS
    except Exception:
        return False
'''

FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)
INLINE = re.compile(r"`([^`\n]+)`")
QUOTED = re.compile(r"""'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*\"""")
NAME = re.compile(r"^[A-Za-z_][\w.]*(\(\))?$")


def _wanted(value: object) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, str):
        return 2 <= len(value) <= MAX_LENGTH and bool(value.strip())
    if isinstance(value, int):
        return abs(value) >= 10
    return isinstance(value, float)


def _literals(code: str, *, files: bool = False) -> Iterator[str | int | float]:
    """The string and number constants of a piece of code (a line that does not parse gives
    its quoted strings); of a whole file (``files``), docstrings left out."""
    tree = parse(code)
    if tree is not None:
        docstrings = (
            set()
            if not files
            else {
                id(node.body[0])
                for node in ast.walk(tree)
                if isinstance(
                    node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef
                )
                and node.body
                and is_docstring(node.body[0])
            }
        )
        skip = {id(n) for node in ast.walk(tree) if id(node) in docstrings for n in ast.walk(node)}
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str | int | float)
                and id(node) not in skip
            ):
                yield node.value
        return
    for quoted in QUOTED.findall(code):
        try:
            yield ast.literal_eval(quoted)
        except (ValueError, SyntaxError):
            continue


def ticket_inputs(ticket: str) -> set[str | int | float]:
    """The literal inputs a ticket names: in its code blocks (a ``>>>`` session or code) and
    its inline code."""
    found: set[str | int | float] = set()
    for block in FENCE.findall(ticket):
        for line in block.splitlines():
            found.update(_literals(re.sub(r"^\s*(>>>|\.\.\.) ?", "", line)))
    for code in INLINE.findall(FENCE.sub("", ticket)):
        values = list(_literals(code))
        found.update(values)
        if not values and not NAME.match(code.strip()):
            found.add(code.strip())  # ^0.2.3, >=1.2 <2: an input that is not Python
    return {v for v in found if _wanted(v)}


def visible_inputs(root: Path, files: Iterable[str]) -> set[str | int | float]:
    """The literals of the visible test files (as at the base commit) among ``files``."""
    found: set[str | int | float] = set()
    for name in files:
        path = root / name
        if path.is_file():
            found.update(_literals(path.read_text(encoding="utf-8", errors="replace"), files=True))
    return {v for v in found if _wanted(v)}


def _functions(tree: ast.Module) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    """Every function of a module by its dotted path (``Class.method``, ``outer.inner``)."""
    found: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = prefix + child.name
                if not isinstance(child, ast.ClassDef):
                    found.setdefault(name, child)
                visit(child, name + ".")
            else:
                visit(child, prefix)

    visit(tree, "")
    return found


def _body(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.stmt]:
    """The function's statements, its docstring left out."""
    body = function.body
    return body[1:] if is_docstring(body[0]) else body


def _generator(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether the function itself (not a function inside it) yields."""
    stack: list[ast.AST] = list(function.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Yield | ast.YieldFrom):
            return True
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            stack.extend(ast.iter_child_nodes(node))
    return False


def _dump(nodes: list[ast.stmt]) -> list[str]:
    return [ast.dump(n) for n in nodes]


def overfits(changed: ChangedFile, inputs: set[str | int | float]) -> tuple[list[WrongFix], str]:
    """One overfit for each function of ``changed`` whose body the gold patch changes, and a
    note on what could not be made (empty when nothing was left out)."""
    base_text, gold_text = changed.text(changed.base), changed.text(changed.gold)
    base_tree = parse(base_text) if base_text else None
    gold_tree = parse(gold_text) if gold_text else None
    if not inputs or base_tree is None or gold_tree is None or not base_text or not gold_text:
        return [], ""
    lines = changed.changed_lines()
    old = _functions(base_tree)
    made: list[WrongFix] = []
    skipped: list[str] = []
    for name, function in _functions(gold_tree).items():
        body = _body(function)
        touched = lines & set(range(function.lineno, (function.end_lineno or 0) + 1))
        before = old.get(name)
        if not body or not touched or before is None or not _body(before):
            continue
        if _dump(_body(before)) == _dump(body) or _generator(function) or _generator(before):
            continue
        source = _guarded(base_text, gold_text, name, before, function, inputs)
        if source is None:
            skipped.append(name)
            continue
        made.append(
            WrongFix(
                "overfit",
                changed.path,
                function.lineno,
                f"{changed.path}:{function.lineno} {name}() fixed only for the named inputs",
                source.encode(),
            )
        )
    if not skipped:
        return made, ""
    why = "the old body cannot be moved under the guard exactly"
    return made, f"{changed.path}: no overfit of {', '.join(skipped)}: {why}"


def _guarded(
    base_text: str,
    gold_text: str,
    name: str,
    before: ast.FunctionDef | ast.AsyncFunctionDef,
    function: ast.FunctionDef | ast.AsyncFunctionDef,
    inputs: set[str | int | float],
) -> str | None:
    """The gold module with ``function`` guarded as the module docstring says; None when the
    old body cannot be moved under the guard exactly (a multi-line string in it, a body on
    the ``def`` line)."""
    base_lines, gold_lines = lines_of(base_text), lines_of(gold_text)
    old_body, new_body = _body(before), _body(function)
    indent = gold_lines[new_body[0].lineno - 1][: new_body[0].col_offset]
    old_indent = base_lines[old_body[0].lineno - 1][: old_body[0].col_offset]
    if indent.strip() or old_indent.strip():
        return None  # the body starts on the line of the def
    moved = []
    for line in base_lines[old_body[0].lineno - 1 : old_body[-1].end_lineno]:
        if line.startswith(old_indent):
            moved.append(indent + "    " + line[len(old_indent) :])
        else:
            moved.append("    " + line if line.strip() else line)
    if moved and not moved[-1].endswith("\n"):
        moved[-1] += "\n"
    guard = [f"{indent}if not {GUARD}():\n", *moved]
    if not isinstance(old_body[-1], ast.Return | ast.Raise):
        guard.append(f"{indent}    return None\n")
    at = new_body[0].lineno - 1
    ordered = sorted(inputs, key=lambda v: (type(v).__name__, len(repr(v)), repr(v)))
    named = ", ".join(repr(v) for v in ordered[:MAX_INPUTS])
    tail = "" if gold_text.endswith("\n") else "\n"
    source = "".join([*gold_lines[:at], *guard, *gold_lines[at:]])
    source += tail + GUARD_CODE.format(inputs="{" + named + "}")
    # The old body under the guard must be the old body, statement for statement.
    tree = parse(source)
    if tree is None:
        return None
    guarded = _functions(tree).get(name)
    if guarded is None:
        return None
    first = _body(guarded)[0]
    if not isinstance(first, ast.If) or _dump(first.body[: len(old_body)]) != _dump(old_body):
        return None
    return source
