"""A case's strength (``schema: 1``): how many plausible wrong fixes its hidden tests reject.

Written by :func:`replay.strength.measure_strength` and, with ``replay case strength
--json``, to a file; meant to be recorded beside the case's version later, so every field
says what it holds and the format is versioned like ``grade.json``.
"""

from __future__ import annotations

import json
from typing import Any, Literal, get_args

from pydantic import AwareDatetime, Field

from replay.base.formats import Strict

STRENGTH_VERSION = 1
"""The format this code writes."""

NOT_PASSED_KEPT = 20
"""The tests that rejected a wrong fix kept by name (the count says how many there were)."""

Kind = Literal["mutant", "partial", "overfit"]
"""What a wrong fix is: a ``mutant`` of a line the gold patch adds or changes, a ``partial``
fix (the gold patch with one change block or one file left out), or an ``overfit`` (a changed
function that takes the gold path only for the literal inputs the ticket and the visible
tests name, and the old path otherwise)."""

Verdict = Literal["rejected", "survived", "equivalent", "possibly_equivalent", "error"]
"""What became of a wrong fix. ``rejected``: graded, the hidden tests were not resolved.
``survived``: graded, the hidden tests were resolved (the case cannot tell it from the real
fix). ``equivalent``: proven not to change what the code does (dead code, comments), so not
graded. ``possibly_equivalent``: changes only what the product's code does not run
(documentation, docstrings), so not graded; the reason says what. ``error``: the grading
itself failed (the sandbox, not the wrong fix); neither rejected nor survived."""


class WrongFixResult(Strict):
    """One wrong fix and what the hidden tests made of it."""

    kind: Kind
    """mutant, partial or overfit."""
    name: str
    """Short and stable within the case: ``m3``, ``p1``, ``o1``."""
    description: str
    """What was changed from the gold patch, in a few words with the file and line."""
    path: str
    """The file the wrong fix differs from the gold patch in."""
    line: int | None
    """The line of :attr:`path` (in the gold version) where it differs; None for a whole
    file."""
    diff: str
    """The wrong fix as graded: a diff from the base commit, exactly what an agent's final
    diff would be."""
    from_gold: str
    """How the wrong fix differs from the gold patch (a unified diff of the one file), for
    a reader."""
    verdict: Verdict
    """rejected, survived, equivalent, possibly_equivalent or error."""
    reason: str
    """Why: the hidden tests in a few words, the equivalence proof, or the error."""
    seconds: float
    """The grading's wall time, from the diff's hand-over (its container was made while the
    previous one was graded); 0 when not graded."""
    applied: str | None = None
    """How the diff went in at grading (``apply`` for every generated diff); None when not
    graded."""
    not_passed: dict[str, str] = Field(default_factory=dict)
    """The listed hidden tests that did not pass, with their status: the tests that reject
    it (FAIL_TO_PASS first; at most :data:`NOT_PASSED_KEPT` of them)."""
    not_passed_count: int = 0
    """How many listed hidden tests did not pass in all."""
    restored: list[str] = Field(default_factory=list)
    """Paths the grading put back as the case has them (test infrastructure)."""


class Acceptance(Strict):
    """A weak case kept as it is, on purpose (``replay case strength --accept REASON``): who
    reads the case's numbers sees that its hidden tests let some wrong fixes through, and why
    the team keeps it anyway."""

    reason: str = Field(min_length=1)
    """Why the survivors do not matter (e.g. they are equivalent in ways the measurement
    cannot prove), in the team's words."""
    at: AwareDatetime
    """When it was accepted."""


class CaseStrength(Strict):
    """How well a case's hidden tests tell wrong fixes from the real one."""

    schema_: Literal[1] = Field(default=1, alias="schema")
    """The format's version."""
    case_id: str
    """The case measured."""
    case_digest: str
    """The case file and what it names (:func:`replay.base.case.case_digest`): a changed
    case must be measured again."""
    image: str
    """The environment image every grading ran in."""
    seed: int
    """The seed mutants were drawn with."""
    max_mutants: int
    """At most this many mutants were graded (and as many proven equivalent listed)."""
    threshold: float
    """The strength a strong case reaches at least."""
    generated: int
    """Wrong fixes made (every entry of :attr:`results`)."""
    rejected: int
    """Wrong fixes the hidden tests rejected."""
    survivors: int
    """Wrong fixes the hidden tests accepted as if they were the real fix."""
    equivalent: int
    """Wrong fixes proven to change nothing the code does (not graded)."""
    possibly_equivalent: int
    """Wrong fixes that change only what the product does not run (not graded)."""
    errors: int
    """Gradings that failed (the sandbox's fault): counted nowhere else."""
    strength: float | None
    """rejected / (rejected + survivors); None when nothing was graded."""
    strong: bool
    """The strength reaches :attr:`threshold` and no partial fix survived."""
    weak_because: list[str]
    """Why the case is not strong (empty when it is)."""
    seconds: float
    """The whole measurement's wall time (restoring, generating, every grading)."""
    gold_seconds: float
    """The gold patch's own grading (the check that the pipeline passes the real fix)."""
    timeout: float
    """The time limit of each wrong fix's hidden tests, in seconds."""
    notes: list[str] = Field(default_factory=list)
    """What could not be generated, and why (no function changed, a file that does not
    parse...)."""
    results: list[WrongFixResult] = Field(default_factory=list)
    """Every wrong fix, mutants first, then partial fixes, then overfits."""
    accepted: Acceptance | None = None
    """A weak case accepted as it is, with the reason; None when it is strong or was not."""

    def survived(self) -> list[WrongFixResult]:
        """The wrong fixes the hidden tests accepted."""
        return [r for r in self.results if r.verdict == "survived"]

    def survivors_text(self, at_most: int = 5) -> str:
        """The survivors named with their change, at most ``at_most`` and how many more
        (empty when none survived)."""
        survived = self.survived()
        named = ", ".join(f"{r.name} {r.description}" for r in survived[:at_most])
        more = f" and {len(survived) - at_most} more" if len(survived) > at_most else ""
        return named + more

    def label(self) -> str:
        """The figure as a report's cell shows it (:func:`strength_label`)."""
        return strength_label(self.strength, self.strong, self.accepted is not None)

    def dump(self) -> dict[str, Any]:
        """The JSON-ready mapping."""
        return self.model_dump(mode="json", by_alias=True)

    def to_json(self) -> str:
        """The JSON text of this measurement."""
        return json.dumps(self.dump(), indent=2) + "\n"


def strength_label(strength: float | None, strong: bool, accepted: bool = False) -> str:
    """A case's strength in a report's cell: ``96%``, ``81% weak``, ``81% weak, accepted``,
    ``n/a`` when no wrong fix could be graded."""
    figure = "n/a" if strength is None else f"{strength:.0%}"
    if strong:
        return figure
    return f"{figure} weak" + (", accepted" if accepted else "")


def tally(
    results: list[WrongFixResult], threshold: float
) -> tuple[dict[str, int], float | None, list[str]]:
    """The counts by verdict, the strength, and why the case is weak (empty: strong)."""
    counts = {v: sum(r.verdict == v for r in results) for v in get_args(Verdict)}
    judged = counts["rejected"] + counts["survived"]
    strength = counts["rejected"] / judged if judged else None
    weak: list[str] = []
    if strength is None:
        weak.append("no wrong fix could be graded")
    elif strength < threshold:
        weak.append(
            f"the hidden tests reject {counts['rejected']} of {judged} wrong fixes "
            f"({strength:.0%}, under {threshold:.0%})"
        )
    partials = [r.name for r in results if r.kind == "partial" and r.verdict == "survived"]
    if partials:
        weak.append(f"they accept the partial fix(es) {', '.join(partials)}")
    return counts, strength, weak
