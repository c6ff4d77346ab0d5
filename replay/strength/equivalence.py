"""Telling wrong fixes that cannot change behaviour from survivors, without running anything.

A survivor counts against the case; a wrong fix that cannot behave differently from the real
one is no evidence against the hidden tests, and counting it would understate the case's
strength. Three static proofs, each with its reason:

* dead code (:func:`unreachable`): the change lies only in statements that never run: after a
  ``return``, ``raise``, ``continue`` or ``break`` in the same block, under ``if False:``,
  ``while False:``, in the ``else`` of ``if True:``, or under ``if TYPE_CHECKING:`` (only type
  checkers read it). Equivalent.
* layout and comments (:func:`same_code`): the module's syntax tree is the same. Equivalent.
* documentation: the change is only in docstrings (the code reads them only through
  ``__doc__``), or only in files the product does not run (:func:`is_documentation`: README,
  changelog, ``docs/``). Possibly equivalent, not graded.
* a refactoring (:func:`same_when_inlined`): one version names, through a module-level
  constant assigned once, the very expression the other spells out (tomli's gold patch sets
  ``ILLEGAL_MULTILINE_LITERAL_STR_CHARS = ILLEGAL_MULTILINE_BASIC_STR_CHARS``, the same
  ``ASCII_CTRL - frozenset("\t\n")`` it was). Possibly equivalent (only a test of the
  objects' identity could tell), not graded.

Anything else that survives is a survivor, equivalent or not: what the static proofs miss is
left to a reader, with its diff.
"""

from __future__ import annotations

import ast
import copy
import posixpath

DOC_SUFFIXES = frozenset({".md", ".rst", ".adoc", ".markdown"})
DOC_NAMES = ("README", "CHANGELOG", "CHANGES", "HISTORY", "NEWS", "AUTHORS", "CONTRIBUTING")
DOC_DIRS = frozenset({"docs", "doc", "changelog.d", "changes", "newsfragments"})


def is_documentation(path: str) -> bool:
    """Whether ``path`` is documentation the product does not run: Markdown or reStructuredText,
    a README or changelog of any suffix, or a file under a documentation directory."""
    name = posixpath.basename(path)
    suffix = posixpath.splitext(name)[1].lower()
    top = path.split("/")[0]
    return (
        suffix in DOC_SUFFIXES
        or name.upper().startswith(DOC_NAMES)
        or (top in DOC_DIRS and "/" in path)
    )


def parse(source: str) -> ast.Module | None:
    """The module's syntax tree, or None when it does not parse here."""
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError):
        return None


def _without_docstrings(tree: ast.Module) -> ast.Module:
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and is_docstring(body[0]):
                node.body = body[1:] or [ast.Pass()]
    return tree


def is_docstring(node: ast.stmt) -> bool:
    """Whether a statement is a docstring (a string constant standing alone)."""
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    )


def same_code(a: str, b: str, *, docstrings: bool = True) -> bool:
    """Whether two versions of a module have the same syntax tree (comments and layout aside;
    docstrings too unless ``docstrings``). False when either does not parse."""
    ta, tb = parse(a), parse(b)
    if ta is None or tb is None:
        return False
    if not docstrings:
        ta, tb = _without_docstrings(ta), _without_docstrings(tb)
    return ast.dump(ta) == ast.dump(tb)


PURE_CALLS = frozenset(
    {"frozenset", "set", "tuple", "list", "dict", "chr", "ord", "range", "str", "int", "float"}
    | {"bytes", "len", "min", "max", "sorted", "abs"}
)
"""Builtins whose result depends only on their arguments: an expression of them, constants
and names can be evaluated twice instead of once without changing anything but identity."""
PURE_NODES = (
    ast.Constant,
    ast.Name,
    ast.Attribute,
    ast.BinOp,
    ast.UnaryOp,
    ast.BoolOp,
    ast.Compare,
    ast.IfExp,
    ast.Tuple,
    ast.List,
    ast.Set,
    ast.Dict,
    ast.GeneratorExp,
    ast.ListComp,
    ast.SetComp,
    ast.comprehension,
    ast.Call,
    ast.expr_context,
    ast.operator,
    ast.unaryop,
    ast.boolop,
    ast.cmpop,
)


def _pure(value: ast.expr) -> bool:
    """Whether evaluating ``value`` twice gives equal results and does nothing else."""
    for node in ast.walk(value):
        if not isinstance(node, PURE_NODES):
            return False
        if isinstance(node, ast.Call) and not (
            isinstance(node.func, ast.Name) and node.func.id in PURE_CALLS
        ):
            return False
    return True


class _Inline(ast.NodeTransformer):
    """Every name a module assigns once, at its top level, to a pure expression (:func:`_pure`)
    replaced by that expression (names within it too, as deep as they go)."""

    def __init__(self, tree: ast.Module) -> None:
        stores: dict[str, int] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
                stores[node.id] = stores.get(node.id, 0) + 1
            elif isinstance(node, ast.Global | ast.Nonlocal):
                for name in node.names:
                    stores[name] = stores.get(name, 0) + 2  # never inlined
        self.values = {
            stmt.targets[0].id: stmt.value
            for stmt in tree.body
            if isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
            and stores.get(stmt.targets[0].id) == 1
            and _pure(stmt.value)
        }
        self.inside: set[str] = set()

    def visit_Name(self, node: ast.Name) -> ast.AST:
        value = self.values.get(node.id)
        if not isinstance(node.ctx, ast.Load) or value is None or node.id in self.inside:
            return node
        self.inside.add(node.id)
        try:
            inlined: ast.AST = self.visit(copy.deepcopy(value))
            return inlined
        finally:
            self.inside.discard(node.id)


def same_when_inlined(a: str, b: str) -> bool:
    """Whether two versions of a module are the same once every name assigned once at the
    top level is replaced by its expression: one spells out what the other names (a
    refactoring); only code that compares the objects' identity could tell them apart."""
    ta, tb = parse(a), parse(b)
    if ta is None or tb is None:
        return False
    return ast.dump(_Inline(ta).visit(ta)) == ast.dump(_Inline(tb).visit(tb))


def _constant(test: ast.expr) -> bool | None:
    """The truth of a test that is a literal constant (``False``, ``0``, ``True``, ``1``)."""
    if isinstance(test, ast.Constant) and isinstance(test.value, bool | int | str | None):
        return bool(test.value)
    return None


def _type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _mark(found: dict[int, str], nodes: list[ast.stmt], reason: str) -> None:
    for node in nodes:
        for line in range(node.lineno, (node.end_lineno or node.lineno) + 1):
            found.setdefault(line, reason)


def unreachable(tree: ast.Module) -> dict[int, str]:
    """The lines of statements that never run, each with why."""
    found: dict[int, str] = {}
    for node in ast.walk(tree):
        for name in ("body", "orelse", "finalbody"):
            block = getattr(node, name, None)
            if not isinstance(block, list):
                continue
            for i, stmt in enumerate(block):
                if isinstance(stmt, ast.Return | ast.Raise | ast.Continue | ast.Break):
                    word = type(stmt).__name__.lower()
                    after = [s for s in block[i + 1 :] if isinstance(s, ast.stmt)]
                    _mark(found, after, f"dead code: after the {word} on line {stmt.lineno}")
                    break
        if isinstance(node, ast.If | ast.While):
            truth = _constant(node.test)
            if truth is False:
                _mark(found, node.body, f"dead code: under the false test on line {node.lineno}")
            elif truth is True and isinstance(node, ast.If):
                _mark(
                    found,
                    node.orelse,
                    f"dead code: the else of the true test on line {node.lineno}",
                )
            elif isinstance(node, ast.If) and _type_checking(node.test):
                _mark(
                    found,
                    node.body,
                    f"only type checkers read it: under TYPE_CHECKING on line {node.lineno}",
                )
    return found


def dead_reason(tree: ast.Module, first: int, last: int) -> str | None:
    """Why lines ``first``..``last`` never run, or None when some of them may."""
    dead = unreachable(tree)
    reasons = [dead.get(line) for line in range(first, last + 1)]
    if reasons and all(reasons):
        return reasons[0]
    return None
