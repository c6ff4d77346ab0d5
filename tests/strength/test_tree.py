"""Wrong fixes as diffs, on the shipped cases' repositories restored from their snapshots (no
Docker): what the gold patch changes, and diffs taken as a run takes an agent's."""

from __future__ import annotations

import subprocess
from pathlib import Path

from replay.base.case import load_case
from replay.snapshot import load_snapshot
from replay.strength.generate import generate
from replay.strength.tree import GoldTree

ROOT = Path(__file__).resolve().parents[2]
CARET = ROOT / "cases" / "demo-caret-zero" / "case.yaml"
TOMLI = ROOT / "cases" / "tomli-multiline-cr" / "case.yaml"


def restore(case_file: Path, tmp_path: Path) -> GoldTree:
    case = load_case(case_file)
    return GoldTree.restore(case, load_snapshot(case.snapshot), tmp_path / "repo")


def applies_at_base(tree: GoldTree, diff: str) -> bool:
    done = subprocess.run(
        ["git", "apply", "--check", "-"],
        cwd=tree.root,
        input=diff.encode(),
        capture_output=True,
        check=False,
    )
    return done.returncode == 0


def test_a_wrong_fix_is_the_gold_patch_with_one_file_replaced(tmp_path: Path) -> None:
    tree = restore(CARET, tmp_path)
    assert [f.path for f in tree.files] == ["README.md", "src/semverkit/ranges.py"]
    ranges = tree.files[1]
    assert ranges.base is not None and ranges.gold is not None
    wrong = ranges.gold.replace(b"patch + 1", b"patch + 2")
    diff = tree.diff({ranges.path: wrong})
    assert applies_at_base(tree, diff) and applies_at_base(tree, tree.gold_diff)
    assert "+        high = _version(0, 0, patch + 2)" in diff
    assert "+| `^0.2.3` | `>=0.2.3 <0.3.0`      |" in diff, "the rest of the gold patch stays"
    assert diff.startswith("diff --git") and tree.gold_diff != diff
    # The working copy is back at the base commit after each diff.
    assert (tree.root / ranges.path).read_bytes() == ranges.base


def test_tomli_refactoring_is_not_taken_for_a_partial_fix(tmp_path: Path) -> None:
    """tomli's gold patch sets the literal-string set to the basic-string one, the very value
    it had: leaving that line out changes nothing but identity, and is not graded."""
    case = load_case(TOMLI)
    snapshot = load_snapshot(case.snapshot)
    tree = GoldTree.restore(case, snapshot, tmp_path / "repo")
    found, notes = generate(tree, case, snapshot, max_mutants=20, seed=0)
    decided = {c.fix.description: c.fix.decided for c in found if c.fix.kind == "partial"}
    assert decided["tomli/_parser.py line 33 left out"] is not None
    assert decided["tomli/_parser.py line 33 left out"][0] == "possibly_equivalent"
    assert decided["tomli/_parser.py line 30 left out"] is None
    assert "no overfit: the gold patch changes no function's body" in notes
    assert [c.name for c in found] == sorted(
        (c.name for c in found), key=lambda n: ("mpo".index(n[0]), int(n[1:]))
    )
    for candidate in found:
        assert applies_at_base(tree, candidate.diff), candidate.name
