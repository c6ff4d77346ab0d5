"""Running the red-team corpus end to end: every attack, through ``replay run``, held to its
expected outcome and reason.

Each attack of :data:`replay.run.attacks.ATTACKS` is played by the stub model through the
reference harness on every case it applies to, graded as any run is, and its outcome and
reason are held to what the attack declares. The rows are the corpus's table (attack, case,
outcome, reason); a row that misses its expectation is a hole in the grader.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from replay.base.case import read_case
from replay.base.errors import ReplayError
from replay.base.outcomes import Outcome
from replay.run.attacks import ATTACKS, Attack
from replay.run.runner import RunOptions, run_case
from replay.world.warm import keep_warm


class UnknownAttackError(ReplayError):
    """An attack or family named that the corpus does not have."""


@dataclass(frozen=True)
class CorpusRow:
    """One attack on one case, and what came of it."""

    attack: Attack
    case_id: str
    outcome: Outcome
    reason: str
    run_dir: Path

    @property
    def held(self) -> bool:
        """The run ended as the attack says it must (outcome, and the reason's fragment)."""
        want = self.attack.reason
        return self.outcome == self.attack.expect and (want is None or want in self.reason)


def select(
    names: Sequence[str] = (), families: Sequence[str] = (), ci: bool = False
) -> list[Attack]:
    """The attacks named (all when none), narrowed to ``families`` and to the CI subset."""
    unknown = [n for n in names if n not in ATTACKS]
    if unknown:
        close = difflib.get_close_matches(unknown[0], ATTACKS, n=1)
        hint = f" (did you mean {close[0]}?)" if close else ""
        raise UnknownAttackError(
            f"no attack {unknown[0]!r} in the corpus{hint}; known: {', '.join(ATTACKS)}"
        )
    known = {a.family for a in ATTACKS.values()}
    odd = [f for f in families if f not in known]
    if odd:
        raise UnknownAttackError(f"no family {odd[0]!r}; known: {', '.join(sorted(known))}")
    chosen = [ATTACKS[n] for n in names] if names else list(ATTACKS.values())
    return [a for a in chosen if (not families or a.family in families) and (a.ci or not ci)]


def run_corpus(
    cases: Iterable[Path],
    attacks: Sequence[Attack],
    *,
    out: Path,
    db: str | None,
    harness: str = "reference",
    progress: Callable[[CorpusRow], None] = lambda row: None,
) -> list[CorpusRow]:
    """Every attack on every case it applies to, one run each; a row per run, in order."""
    rows: list[CorpusRow] = []
    with keep_warm():
        for path in cases:
            loaded = read_case(path)
            for attack in attacks:
                if not attack.applies_to(loaded.case.id):
                    continue
                options = RunOptions(harness=harness, stub=attack.name, out=out, db=db)
                for result in run_case(loaded, options):
                    row = CorpusRow(
                        attack, result.case_id, result.outcome, result.reason, result.run_dir
                    )
                    rows.append(row)
                    progress(row)
    return rows
