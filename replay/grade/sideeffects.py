"""Judging a run's side effects: count what each rule matches, check the bounds.

A rule on events (:class:`~replay.base.case.SideEffectRule`) counts the events of the run's log
that match it: acts. An end-state rule (:class:`~replay.base.case.EndStateRule`) counts the
objects of the world the run leaves that match it: the world at T with every event applied
(:mod:`replay.grade.endstate`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import Field

from replay.base.case import EndStateRule, SideEffectRule
from replay.base.eventkinds import SEMANTIC
from replay.base.events import Event
from replay.base.formats import Strict
from replay.grade.endstate import EndState, WorldAtT, end_state, world_at_t


class RuleResult(Strict):
    """One side-effect rule of the case, held against the run's events or the world it left."""

    rule: str
    """The rule's id."""
    description: str
    """What the rule asks, in the case's words."""
    count: int
    """Events (or, for an end-state rule, objects at the end) the rule matched."""
    at_least: int | None
    """The fewest matches the rule allows; None for no lower bound."""
    at_most: int | None
    """The most matches the rule allows; None for no upper bound."""
    ok: bool
    """The count was within the bounds."""
    forbidden: bool
    """The rule names something that must not happen (``at_most: 0``)."""
    matched: list[int]
    """Sequence numbers of the matching events (empty for an end-state rule)."""
    at_end: str | None = None
    """For an end-state rule, the type of object it counted (``github.pull_request``); None
    for a rule on events."""
    objects: list[str] = Field(default_factory=list)
    """For an end-state rule, the objects at the end it matched (``acme/semverkit#19``)."""


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
    rules: Sequence[SideEffectRule | EndStateRule],
    events: Iterable[Event],
    at_t: WorldAtT | Path | None = None,
) -> SideEffectVerdict:
    """Every rule held against ``events`` (the run's log, oldest first).

    End-state rules are held against the world at T (``at_t``: its state, or the snapshot
    directory to read it from; read only when the case has such a rule) with ``events``
    applied. Without it, the world at the end holds only what the events made or changed.
    """
    log = list(events)
    results = []
    world: EndState | None = None
    for rule in rules:
        if isinstance(rule, EndStateRule):
            if world is None:
                start = world_at_t(at_t) if isinstance(at_t, Path) else at_t
                world = end_state(log, start)
            found = [o for o in world.of(rule.at_end) if rule.matches(o)]
            results.append(
                RuleResult(
                    rule=rule.id,
                    description=rule.description,
                    count=len(found),
                    at_least=rule.at_least,
                    at_most=rule.at_most,
                    ok=rule.holds(len(found)),
                    forbidden=rule.forbidden,
                    matched=[],
                    at_end=rule.at_end,
                    objects=[rule.name_of(o) for o in found],
                )
            )
            continue
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
