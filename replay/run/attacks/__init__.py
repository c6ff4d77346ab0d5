"""The red-team corpus: every attack on the grader as a trajectory the stub model plays.

Each family of attacks lives in a module of its own (:mod:`.grader`, ...) and lists its
:class:`~replay.run.attacks.base.Attack` s; :data:`ATTACKS` is all of them by name. ``replay
run --stub NAME`` plays any of them; ``replay redteam`` runs the corpus and prints its table.
"""

from __future__ import annotations

from replay.run.attacks import (
    answer,
    control,
    crash,
    egress,
    grader,
    key,
    machinery,
    sandbox,
    wire,
    world,
)
from replay.run.attacks.base import Attack

FAMILIES = (grader, wire, world, sandbox, answer, control, crash, egress, key, machinery)
"""The modules of the corpus, one per family of attacks."""


def _by_name() -> dict[str, Attack]:
    found: dict[str, Attack] = {}
    for family in FAMILIES:
        for attack in family.ATTACKS:
            if attack.name in found:
                raise RuntimeError(f"two attacks of the corpus are named {attack.name!r}")
            found[attack.name] = attack
    return found


ATTACKS: dict[str, Attack] = _by_name()
"""Every attack of the corpus, by name."""

__all__ = ["ATTACKS", "Attack"]
