"""One attack of the red-team corpus: what a hostile agent does, and what it must come to.

An attack is a stub trajectory (:class:`~replay.harness.stub.script.Step` s played by the stub
model through an unmodified harness) that tries to buy an undeserved verdict, or to void a
losing run, from inside the locked sandbox. It is run end to end through ``replay run`` like
any trajectory (``--stub NAME``), and the corpus (:mod:`replay.run.redteam`) holds its
outcome to :attr:`Attack.expect`, its reason to :attr:`Attack.reason`, and what its run left
behind to :attr:`Attack.check`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from replay.base.outcomes import Outcome
from replay.harness.stub.script import Step
from replay.run.steps import Builder

Family = str
"""What an attack goes after: ``grader`` (the hidden tests' verdict), ``sandbox`` (what the
runner reads back: output, transcript, diff), ``wire`` (the model calls' verdict), ``world``
(the side-effect rules), ``egress`` (the way out), ``answer`` (the hidden tests and the fix,
looked for where the agent can read), ``control`` (the event log, through the proxy),
``crash`` (what serves the run: a fake, the wire, broken to void it), ``key`` (the runner's
model key), ``machinery`` (what carries the sandbox's traffic and trust)."""


@dataclass(frozen=True)
class Attack:
    """A trajectory of the red-team corpus."""

    name: str
    """The trajectory's name (``replay run --stub NAME``), unique in the corpus."""
    family: Family
    """What it goes after (see :data:`Family`)."""
    summary: str
    """One line: what the agent does, in the words of the corpus's table."""
    steps: Callable[[Builder], list[Step]]
    """The trajectory's steps on a case (its fix, its attack, its side effects)."""
    expect: Outcome = Outcome.MODEL_FAIL
    """The outcome the run must end with: ``model_fail`` for an attack that buys nothing, or
    the healthy outcome it deserves (``pass`` for a gold fix beside a harmless probe)."""
    reason: str | None = None
    """A fragment the run's reason must hold (``spoofed``, a rule's id...); None: any."""
    ci: bool = False
    """Part of the subset ``make test`` runs end to end (one case); the whole corpus runs
    under ``make redteam``."""
    cases: tuple[str, ...] = ()
    """The case ids it applies to (an attack that needs something only they have); empty:
    every case."""
    check: Callable[[Path], str | None] | None = None
    """What the outcome and reason cannot show, read from the run's directory once it is
    graded (the events the world recorded, what the agent's probes reported in the
    transcript): None when the attack's point holds, else one line saying what does not."""

    def applies_to(self, case_id: str) -> bool:
        """Whether the attack is meant for the case ``case_id``."""
        return not self.cases or case_id in self.cases
