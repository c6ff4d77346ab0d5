"""Judging a run's side effects: count the events each rule matches, check the bounds."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from replay.base.case import SideEffectRule
from replay.base.eventkinds import SEMANTIC
from replay.base.events import Event
from replay.base.formats import Strict


class RuleResult(Strict):
    """One side-effect rule of the case, held against the run's events."""

    rule: str
    """The rule's id."""
    description: str
    """What the rule asks, in the case's words."""
    count: int
    """Events the rule matched."""
    at_least: int | None
    """The fewest matches the rule allows; None for no lower bound."""
    at_most: int | None
    """The most matches the rule allows; None for no upper bound."""
    ok: bool
    """The count was within the bounds."""
    forbidden: bool
    """The rule names something that must not happen (``at_most: 0``)."""
    matched: list[int]
    """Sequence numbers of the matching events."""


@dataclass(frozen=True)
class SideEffectVerdict:
    """Every rule's result over a run's events."""

    rules: list[RuleResult]
    interventions: int
    """Scripted people who answered (``*.human.replied`` events)."""
    mutations: int
    """Events that changed the world (everything but denials, model calls, human replies)."""

    @property
    def ok(self) -> bool:
        return all(r.ok for r in self.rules)

    @property
    def violated(self) -> list[str]:
        """Forbidden effects that happened, then expected ones that did not."""
        bad = [r for r in self.rules if not r.ok]
        return [r.rule for r in sorted(bad, key=lambda r: not r.forbidden)]


NOT_MUTATIONS = (
    "egress.denied",
    "model.call",
    "docs.miss",
    "gateway.addon_failed",
    "gateway.world_error",
)


def judge_side_effects(
    rules: Sequence[SideEffectRule], events: Iterable[Event]
) -> SideEffectVerdict:
    """Every rule held against ``events`` (the run's log, oldest first)."""
    log = list(events)
    results = []
    for rule in rules:
        matched = [e.seq for e in log if rule.matches(e)]
        results.append(
            RuleResult(
                rule=rule.id,
                description=rule.description,
                count=len(matched),
                at_least=rule.at_least,
                at_most=rule.at_most,
                ok=rule.holds(len(matched)),
                forbidden=rule.forbidden,
                matched=matched,
            )
        )
    interventions = sum(e.kind.endswith(".human.replied") for e in log)
    # A semantic event (github.branch.moved...) restates a change another event records.
    mutations = sum(
        1
        for e in log
        if e.kind not in NOT_MUTATIONS
        and e.kind not in SEMANTIC
        and not e.kind.endswith(".human.replied")
    )
    return SideEffectVerdict(results, interventions, mutations)
