"""Every wrong fix of a case, as the diffs that will be graded.

Mutants first (:mod:`replay.strength.mutants`), then partial fixes
(:mod:`replay.strength.partials`), then overfits (:mod:`replay.strength.overfits`). Each is
turned into the diff a run would take of it (:meth:`GoldTree.diff`); a variant whose diff is
the gold patch's, empty (the idle run: calibration covers it) or the same as an earlier
one's is dropped, with a note for the first two.
"""

from __future__ import annotations

from dataclasses import dataclass

from replay.base.case import Case
from replay.base.snapshot import Snapshot
from replay.run.task import ticket_text
from replay.strength.mutants import choose, mutations
from replay.strength.overfits import overfits, ticket_inputs, visible_inputs
from replay.strength.partials import partial_fixes
from replay.strength.tree import GoldTree, WrongFix, from_gold

PREFIX = {"mutant": "m", "partial": "p", "overfit": "o"}


@dataclass(frozen=True)
class Candidate:
    """A wrong fix with its name and its diff, ready to grade (or decided without)."""

    name: str
    """``m3``, ``p1``, ``o1``: the kind's letter and its place among the kind's."""
    fix: WrongFix
    diff: str
    """From the base commit, as a run's final diff."""
    from_gold: str
    """How it differs from the gold patch, for a reader."""


def generate(
    tree: GoldTree, case: Case, snapshot: Snapshot, max_mutants: int, seed: int
) -> tuple[list[Candidate], list[str]]:
    """The case's wrong fixes (at most ``max_mutants`` mutants graded, drawn with ``seed``)
    and notes on what could not be made."""
    notes: list[str] = []
    fixes = _mutants(tree, max_mutants, seed, notes)
    fixes += partial_fixes(tree.files)
    fixes += _overfits(tree, case, snapshot, max_mutants, notes)
    return _candidates(tree, fixes, notes), notes


def _mutants(tree: GoldTree, bound: int, seed: int, notes: list[str]) -> list[WrongFix]:
    found = []
    for changed in tree.files:
        if not changed.path.endswith(".py") or changed.gold is None:
            continue
        made = mutations(changed) if changed.python else []
        if not made:
            notes.append(f"{changed.path}: no mutant (not text, does not parse, or no line fits)")
        found += made
    live, dead = choose(found, bound, seed)
    alive = len(found) - sum(m.equivalent is not None for m in found)
    if alive > len(live):
        notes.append(f"{len(live)} of {alive} mutants drawn (seed {seed})")
    return [
        WrongFix(
            "mutant",
            m.path,
            m.line,
            f"{m.path}:{m.line}:{m.column} {m.description}",
            m.source.encode(),
            None if m.equivalent is None else ("equivalent", m.equivalent),
        )
        for m in sorted([*live, *dead], key=lambda m: (m.path, m.line))
    ]


def _overfits(
    tree: GoldTree, case: Case, snapshot: Snapshot, bound: int, notes: list[str]
) -> list[WrongFix]:
    hidden = case.hidden_tests
    listed = sorted({t.split("::")[0] for t in [*hidden.fail_to_pass, *hidden.pass_to_pass]})
    inputs = ticket_inputs(ticket_text(case, snapshot)) | visible_inputs(tree.root, listed)
    if not inputs:
        notes.append("no overfit: neither the ticket nor the visible tests name a literal input")
        return []
    made: list[WrongFix] = []
    for changed in tree.files:
        if changed.python:
            found, note = overfits(changed, inputs)
            made += found
            notes += [note] if note else []
    if not made:
        notes.append("no overfit: the gold patch changes no function's body")
    elif len(made) > bound:
        notes.append(f"{bound} of {len(made)} overfits made (the first ones)")
    return made[:bound]


def _candidates(tree: GoldTree, fixes: list[WrongFix], notes: list[str]) -> list[Candidate]:
    by_path = {f.path: f for f in tree.files}
    seen = {tree.gold_diff}
    counts = dict.fromkeys(PREFIX, 0)
    found: list[Candidate] = []
    for fix in fixes:
        diff = tree.diff({fix.path: fix.content})
        if not diff.strip():
            notes.append(f"{fix.description}: no change at all (the idle run, as calibrated)")
            continue
        if diff == tree.gold_diff:
            notes.append(f"{fix.description}: the gold patch itself")
            continue
        if diff in seen:
            continue
        seen.add(diff)
        counts[fix.kind] += 1
        name = f"{PREFIX[fix.kind]}{counts[fix.kind]}"
        found.append(Candidate(name, fix, diff, from_gold(by_path[fix.path], fix.content)))
    return found
