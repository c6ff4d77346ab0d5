"""The outcome of a run: the one vocabulary the grader, the results store and the CLI share.

Five outcomes, separating the wire from the brain (how each is decided:
:func:`replay.grade.outcome.classify`). Quality is computed only over runs whose outcome
says something about the model (:data:`HEALTHY`); the others (:data:`SPOILED`) are reported
beside it as reliability, never folded in.
"""

from __future__ import annotations

from enum import StrEnum


class Outcome(StrEnum):
    """How a run ended. A ``str``: it is stored, printed and compared as its value."""

    PASS = "pass"
    """Hidden tests resolved, every side-effect rule held, no limit hit."""
    MODEL_FAIL = "model_fail"
    """The model's work failed: tests, side effects, or a budget."""
    TRANSPORT_FAIL = "transport_fail"
    """A model call failed on the wire after the client's retries: says nothing of the model."""
    PROTOCOL_FAIL = "protocol_fail"
    """A model answer could not be parsed (the model's output, so it counts as healthy)."""
    INFRA_FAIL = "infra_fail"
    """The sandbox, the grader or the runner's account broke: says nothing of the model."""


OUTCOMES: tuple[Outcome, ...] = tuple(Outcome)
"""Every outcome, in the order above."""

HEALTHY: frozenset[Outcome] = frozenset({Outcome.PASS, Outcome.MODEL_FAIL, Outcome.PROTOCOL_FAIL})
"""Outcomes that say something about the model: the denominator of quality."""

SPOILED: frozenset[Outcome] = frozenset({Outcome.TRANSPORT_FAIL, Outcome.INFRA_FAIL})
"""Outcomes of runs the wire or the sandbox spoiled: the reliability figures."""
