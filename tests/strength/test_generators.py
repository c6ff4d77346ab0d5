"""The wrong fixes strength grades, made without Docker: mutants of the gold patch's lines,
partial fixes, overfits, and the static proofs that tell equivalent ones apart."""

from __future__ import annotations

import difflib
import importlib
import sys
from pathlib import Path

import pytest

from replay.base.case import load_case
from replay.run.task import ticket_text
from replay.snapshot import load_snapshot
from replay.strength.equivalence import parse, same_when_inlined, unreachable
from replay.strength.model import WrongFixResult, tally
from replay.strength.mutants import Mutation, choose, mutations
from replay.strength.overfits import overfits, ticket_inputs, visible_inputs
from replay.strength.partials import partial_fixes
from replay.strength.tree import ChangedFile

ROOT = Path(__file__).resolve().parents[2]

BASE = '''\
"""Clamping."""


def clamp(x, low, high):
    if x < low:
        return low
    return x
'''
GOLD = '''\
"""Clamping."""


def clamp(x, low, high):
    if x < low:
        return low
    if x > high and high is not None:
        return high + 0
    try:
        check(x, low, high)
    except ValueError:
        raise TypeError("bad")
    return x
'''


def changed(base: str | None, gold: str | None, path: str = "src/pkg/mod.py") -> ChangedFile:
    return ChangedFile(path, base and base.encode(), gold and gold.encode())


def changed_lines(a: str, b: str) -> int:
    """How many lines of ``a`` differ in ``b``."""
    return sum(
        line.startswith("-") and not line.startswith("---")
        for line in difflib.unified_diff(a.splitlines(), b.splitlines(), lineterm="")
    )


def test_every_operator_edits_only_a_line_the_gold_patch_adds() -> None:
    found = mutations(changed(BASE, GOLD))
    added = changed(BASE, GOLD).changed_lines()
    assert added == {7, 8, 9, 10, 11, 12}
    words = {m.description for m in found}
    for expected in (
        "`>` → `>=`",  # a boundary moved
        "`>` → `<=`",  # a comparison negated
        "`is not` → `is`",
        "`and` → `or`",
        "`x > high and high is not None` negated",
        "`return high + 0` → `return None`",
        "`0` → `1`",
        "`+` → `-`",
        "arguments `x` and `low` swapped",
        "`except ValueError` → `except Exception`",
        "`raise TypeError` → `raise Exception`",
        "`check(x, low, high)` removed",
    ):
        assert expected in words, (expected, sorted(words))
    for m in found:
        assert m.line in added, m
        assert m.equivalent is None, m
        # One small edit: the diff of the file stays the one line (a removed `if` its block).
        assert changed_lines(GOLD, m.source) <= (2 if m.operator == "remove" else 1), m
        assert parse(m.source) is not None
    # Nothing touches the lines the base already had, nor the docstring.
    assert not any(m.line in (1, 5, 6, 13) for m in found)


def test_a_mutant_in_dead_code_is_proven_equivalent() -> None:
    gold = GOLD.replace(
        "    return x\n",
        "    return x\n    x = x + 1\n    if False:\n        x = 2\n",
    )
    base = BASE
    found = {m.description: m for m in mutations(changed(base, gold))}
    assert found["`x = x + 1` removed"].equivalent == "dead code: after the return on line 13"
    assert found["`+` → `-`"].equivalent is not None
    live = [m for m in found.values() if m.line < 13]
    assert live and all(m.equivalent is None for m in live)


def test_unreachable_knows_false_tests_true_tests_and_type_checking() -> None:
    tree = parse(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    import os\n"
        "while 0:\n    y = 1\n"
        "if True:\n    z = 1\nelse:\n    z = 2\n"
        "for i in range(3):\n    continue\n    print(i)\n"
    )
    assert tree is not None
    dead = unreachable(tree)
    assert set(dead) == {3, 5, 9, 12}
    assert "TYPE_CHECKING" in dead[3]
    assert "after the continue on line 11" in dead[12]


def test_choose_draws_the_same_mutants_for_a_seed_and_reaches_every_file() -> None:
    def mutant(path: str, line: int) -> Mutation:
        return Mutation(path, line, "constant", f"{line}", f"{path}{line}", None)

    found = [mutant("a.py", n) for n in range(1, 30)] + [mutant("b.py", n) for n in (1, 2)]
    dead = [Mutation("a.py", 99, "constant", "dead", "x", "dead code")]
    first, equivalent = choose(found + dead, 6, seed=3)
    again, _ = choose(found + dead, 6, seed=3)
    other, _ = choose(found + dead, 6, seed=4)
    assert first == again and first != other
    assert len(first) == 6 and equivalent == dead
    assert {m.path for m in first} == {"a.py", "b.py"}, "a small bound still reaches b.py"
    assert first == sorted(first, key=lambda m: (m.path, m.line)), "kept in the files' order"


def test_partial_fixes_leave_out_each_block_and_each_file_and_decide_the_harmless_ones() -> None:
    base = "A = 1\n\n\ndef f():\n    return A\n\n\ndef g():\n    '''Old.'''\n    return 2\n"
    gold = (
        "A = 1\n\n\ndef f():\n    return A + 1  # fixed\n\n\n"
        "def g():\n    '''New.'''\n    return 2\n# a comment\n"
    )
    readme = changed("# Title\n", "# Title\n\nFixed.\n", "README.md")
    fixes = partial_fixes([changed(base, gold), readme])
    by_text = {f.description: f.decided for f in fixes}
    assert by_text == {
        "src/pkg/mod.py line 5 left out": None,
        "src/pkg/mod.py line 9 left out": (
            "possibly_equivalent",
            "differs from the gold patch only in docstrings (code sees them only as __doc__)",
        ),
        "src/pkg/mod.py line 11 left out": (
            "equivalent",
            "the same code as the gold patch: only comments or layout differ",
        ),
        "src/pkg/mod.py left out (as at the base commit)": None,
        "README.md left out (as at the base commit)": (
            "possibly_equivalent",
            "leaves out only documentation (README.md), which the product does not run",
        ),
    }


def test_a_refactoring_the_gold_patch_makes_is_told_apart() -> None:
    """tomli's fix: the literal-string set is named through the basic-string one, which the fix
    makes the very expression the literal-string one always was."""
    base = 'C = frozenset("ab")\nB = C - frozenset("xy\\r")\nD = C\nL = C - frozenset("xy")\n'
    gold = 'C = frozenset("ab")\nB = C - frozenset("xy")\nD = C\nL = B\n'
    assert same_when_inlined(gold, base.replace('"xy\\r"', '"xy"'))
    assert not same_when_inlined(gold, base)
    impure = "import os\nB = os.urandom(2)\nL = B\n"
    assert not same_when_inlined(impure, "import os\nB = os.urandom(2)\nL = os.urandom(2)\n")
    decided = {f.description: f.decided for f in partial_fixes([changed(base, gold)])}
    assert decided["src/pkg/mod.py line 4 left out"] == (
        "possibly_equivalent",
        "a refactoring: the gold patch names through a constant the expression this spells "
        "out (or the reverse); only a test of identity could tell them apart",
    )
    assert decided["src/pkg/mod.py line 2 left out"] is None


def test_the_ticket_names_its_literal_inputs() -> None:
    case = load_case(ROOT / "cases" / "demo-caret-zero" / "case.yaml")
    found = ticket_inputs(ticket_text(case, load_snapshot(case.snapshot)))
    assert {"^0.2.3", "0.3.0", "0.2.9", ">=0.2.3 <0.3.0", "^0.4.1"} <= found
    assert not {"False", "'0.2.9'", "True"} & {str(v) for v in found}


def test_the_visible_tests_name_their_literals_but_not_their_docstrings(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_x.py").write_text(
        '"""Tests for x."""\n\n\ndef test_x():\n    """What x does."""\n'
        '    assert x("1.2.3", 40, 1) == "^1.2"\n'
    )
    found = visible_inputs(tmp_path, ["tests/test_x.py", "tests/test_absent.py"])
    assert found == {"1.2.3", 40, "^1.2"}, "small integers are no inputs anyone special-cases"


def test_an_overfit_takes_the_fix_only_for_the_named_inputs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = "def bump(version):\n    '''Next.'''\n    return version + '.1'\n"
    gold = (
        "def bump(version):\n    '''Next.'''\n    if version == '':\n        return '0'\n"
        "    return version + '.2'\n"
    )
    made, note = overfits(changed(base, gold, "ovpkg/mod.py"), {"1.0", "named"})
    assert note == "" and len(made) == 1
    fix = made[0]
    assert fix.kind == "overfit" and fix.description.startswith("ovpkg/mod.py:1 bump()")
    assert fix.content is not None
    package = tmp_path / "ovpkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "mod.py").write_bytes(fix.content)
    # The package's own caller: its frame, up the stack, holds the named input.
    (package / "front.py").write_text(
        "from ovpkg.mod import bump\n\n\ndef bump_all(versions):\n"
        "    return [bump(v.strip()) for v in versions]\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        module = importlib.import_module("ovpkg.mod")
        front = importlib.import_module("ovpkg.front")
        assert module.bump("1.0") == "1.0.2", "a named input gets the fix"
        assert module.bump("3.0") == "3.0.1", "any other input gets the old code"
        assert module.bump("") == ".1"
        assert front.bump_all([" 1.0 "]) == ["1.0.2"], "named to the package's own caller"
        named = "named"  # what a test holds (an expected value) is not the product's input
        assert module.bump("3.0" + named[:0]) == "3.0.1"
    finally:
        for name in ("ovpkg.front", "ovpkg.mod", "ovpkg"):
            sys.modules.pop(name, None)


def test_no_overfit_without_named_inputs_or_a_changed_body() -> None:
    assert overfits(changed(BASE, GOLD), set()) == ([], "")
    same_body = BASE.replace("def clamp(x, low, high):", "def clamp(x, low, high=None):")
    assert overfits(changed(BASE, same_body), {"named"}) == ([], "")


def result(name: str, kind: str, verdict: str) -> WrongFixResult:
    return WrongFixResult.model_validate(
        {
            "kind": kind,
            "name": name,
            "description": name,
            "path": "a.py",
            "line": 1,
            "diff": "",
            "from_gold": "",
            "verdict": verdict,
            "reason": "",
            "seconds": 0.0,
        }
    )


def test_strength_leaves_equivalent_ones_out_and_a_surviving_partial_makes_a_case_weak() -> None:
    results = [result(f"m{n}", "mutant", "rejected") for n in range(9)]
    results += [result("m9", "mutant", "survived"), result("m10", "mutant", "equivalent")]
    results += [result("p1", "partial", "possibly_equivalent"), result("e1", "mutant", "error")]
    counts, strength, weak = tally(results, 0.9)
    assert strength == 0.9 and weak == []
    assert counts["equivalent"] == 1 and counts["error"] == 1
    _, strength, weak = tally([*results, result("p2", "partial", "survived")], 0.9)
    assert strength == pytest.approx(9 / 11)
    assert weak == [
        "the hidden tests reject 9 of 11 wrong fixes (82%, under 90%)",
        "they accept the partial fix(es) p2",
    ]
    assert tally([], 0.9)[1:] == (None, ["no wrong fix could be graded"])
