"""Running the red-team corpus end to end: every attack, through ``replay run``, held to its
expected outcome and reason.

Each attack of :data:`replay.run.attacks.ATTACKS` is played by the stub model through the
reference harness on every case it applies to, graded as any run is, and its outcome and
reason are held to what the attack declares, and its run directory to the attack's check
(:attr:`~replay.run.attacks.base.Attack.check`). Every row is also held to one point of its
own: the runner's model keys (made up for the corpus, set for the worlds it starts: the
gateway puts them on every model call) appear nowhere in the run's directory, the
transcript of all the agent saw included. The rows are the corpus's table (attack, case,
outcome, reason); a row that misses its expectation is a hole in the grader.
"""

from __future__ import annotations

import difflib
import os
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

from replay.base.case import read_case
from replay.base.errors import UsageError
from replay.base.outcomes import Outcome
from replay.gateway.config import CREDENTIALS
from replay.run.attacks import ATTACKS, Attack
from replay.run.attacks.evidence import holding
from replay.run.runner import RunOptions, run_case
from replay.world.warm import keep_warm


class UnknownAttackError(UsageError):
    """An attack or family named that the corpus does not have."""


@dataclass(frozen=True)
class CorpusRow:
    """One attack on one case, and what came of it."""

    attack: Attack
    case_id: str
    outcome: Outcome
    reason: str
    run_dir: Path
    problems: tuple[str, ...] = ()
    """What the run's directory shows against the attack's point (its check, and the
    corpus's own: no model key of the runner's in it); empty when every check held."""
    seconds: float = 0.0
    """Wall time of the run, graded."""

    @property
    def held(self) -> bool:
        """The run ended as the attack says it must (outcome, the reason's fragment, and
        every check on its directory)."""
        want = self.attack.reason
        return (
            self.outcome == self.attack.expect
            and (want is None or want in self.reason)
            and not self.problems
        )


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
    with ExitStack() as stack:
        # The keys first: the worlds keep_warm() starts read them from the environment.
        keys = stack.enter_context(made_up_keys())
        stack.enter_context(keep_warm())
        for path in cases:
            loaded = read_case(path)
            for attack in attacks:
                if not attack.applies_to(loaded.case.id):
                    continue
                options = RunOptions(harness=harness, stub=attack.name, out=out, db=db)
                started = time.monotonic()
                for result in run_case(loaded, options):
                    row = CorpusRow(
                        attack,
                        result.case_id,
                        result.outcome,
                        result.reason,
                        result.run_dir,
                        inspect(attack, result.run_dir, keys),
                        time.monotonic() - started,
                    )
                    rows.append(row)
                    progress(row)
    return rows


def inspect(attack: Attack, run_dir: Path, keys: Sequence[str]) -> tuple[str, ...]:
    """What the run's directory shows against the attack: its own check's finding, and any
    file holding one of the runner's model ``keys``."""
    problems: list[str] = []
    leaked = holding(run_dir, keys)
    if leaked:
        problems.append(f"the runner's model key is in {', '.join(leaked[:5])}")
    if attack.check is not None:
        try:
            found = attack.check(run_dir)
        except Exception as exc:  # a broken check is a row that did not hold, not a crash
            found = f"the check failed: {type(exc).__name__}: {exc}"
        if found:
            problems.append(found)
    return tuple(problems)


@contextmanager
def made_up_keys() -> Iterator[list[str]]:
    """The runner's model keys, made up for one corpus run, in the environment the gateways
    it starts read them from (the first variable each provider's key is read from); the
    environment as it was afterwards. A corpus run's model is the stub: no real key is
    needed, and the user's own is never sent to it."""
    tag = uuid.uuid4().hex
    made = {
        names[0]: f"sk-redteam-{host.split('.')[1]}-{tag}"
        for host, (_, _, names) in CREDENTIALS.items()
    }
    before = {name: os.environ.get(name) for name in made}
    os.environ.update(made)
    try:
        yield list(made.values())
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
