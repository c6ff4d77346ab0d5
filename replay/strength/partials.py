"""Partial fixes: the gold patch with one change block, or one whole file, left out.

A change block is a run of lines the gold patch changes together in one file
(:meth:`ChangedFile.blocks`), finer than a ``git diff`` hunk, whose three lines of context
merge neighbouring changes: two one-line changes three lines apart are two blocks. A file
of one block gives only the whole-file variant. Leaving out something the product does not
run (a README, a comment, a docstring, dead code) cannot make the fix partial: such a
variant is decided equivalent or possibly equivalent (:mod:`replay.strength.equivalence`) and
not graded.
"""

from __future__ import annotations

from replay.strength.equivalence import (
    dead_reason,
    is_documentation,
    parse,
    same_code,
    same_when_inlined,
)
from replay.strength.model import Verdict
from replay.strength.tree import Block, ChangedFile, WrongFix


def partial_fixes(files: list[ChangedFile]) -> list[WrongFix]:
    """For every changed file, each of its blocks left out (when it has more than one), then
    the whole file left out."""
    found: list[WrongFix] = []
    for changed in files:
        blocks = changed.blocks()
        if len(blocks) > 1:
            for block in blocks:
                content = changed.without(block)
                found.append(
                    WrongFix(
                        "partial",
                        changed.path,
                        block.j1 + 1,
                        f"{changed.path} {block.lines()} left out",
                        content,
                        _decided(changed, content, block),
                    )
                )
        found.append(
            WrongFix(
                "partial",
                changed.path,
                None,
                f"{changed.path} left out (as at the base commit)",
                changed.base,
                _decided(changed, changed.base, None),
            )
        )
    return found


def _decided(
    changed: ChangedFile, content: bytes | None, block: Block | None
) -> tuple[Verdict, str] | None:
    """Equivalent or possibly equivalent, and why, when leaving this out cannot change what
    the product does; None when only grading can tell."""
    if is_documentation(changed.path):
        return (
            "possibly_equivalent",
            f"leaves out only documentation ({changed.path}), which the product does not run",
        )
    if not changed.python:
        return None
    gold, other = changed.text(changed.gold), changed.text(content)
    assert gold is not None and other is not None  # python: both versions are text
    if same_code(gold, other):
        return "equivalent", "the same code as the gold patch: only comments or layout differ"
    if same_code(gold, other, docstrings=False):
        return (
            "possibly_equivalent",
            "differs from the gold patch only in docstrings (code sees them only as __doc__)",
        )
    if same_when_inlined(gold, other):
        return (
            "possibly_equivalent",
            "a refactoring: the gold patch names through a constant the expression this "
            "spells out (or the reverse); only a test of identity could tell them apart",
        )
    tree = parse(gold)
    if block is not None and block.j2 > block.j1 and block.i2 == block.i1 and tree is not None:
        # Lines the gold patch only adds, all of them dead: leaving them out changes nothing.
        reason = dead_reason(tree, block.j1 + 1, block.j2)
        if reason is not None:
            return "equivalent", reason
    return None
