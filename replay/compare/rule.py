"""The decision rule of a comparison, written before its runs (YAML, ``schema: 1``)::

    schema: 1
    metric: pass@1            # or pass^k, with k
    margin: 0.0               # B must beat A by more than this (negative: B may be worse by
                              # up to this much, a non-inferiority rule for a cheaper model)
    confidence: 0.95          # two-sided confidence of the interval on B - A
    power: 0.8                # for the minimum detectable effect and the cases needed
    side_effects_margin: 0.05 # B's rate of runs with a forbidden side effect may exceed A's
                              # by at most this much
    cost_ceiling_usd: null    # B's cost per solved case may not exceed this (null: no gate)
    effect_of_interest: 0.1   # the smallest difference worth finding (for cases needed)
    min_strength: null        # leave out cases whose recorded strength (replay case
                              # strength --record) is under this, or never measured at the
                              # case's version (null: no minimum; --min-strength overrides)

A comparison records its rule, verbatim, with its first invocation and before any of its runs;
a later invocation with a different rule is refused (a rule chosen after seeing the numbers
decides nothing).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Literal

from pydantic import Field, model_validator

from replay.base.formats import Strict, parse_yaml, read_text, validate_data

DEFAULT_RULE = """\
schema: 1
metric: pass@1
margin: 0.0
confidence: 0.95
power: 0.8
side_effects_margin: 0.05
cost_ceiling_usd: null
effect_of_interest: 0.1
"""


class DecisionRule(Strict):
    schema_: Literal[1] = Field(alias="schema")
    metric: Literal["pass@1", "pass^k"] = "pass@1"
    k: int = Field(default=1, ge=1)
    """For ``pass^k``: all of k runs of a case must pass."""
    margin: float = Field(default=0.0, ge=-1, le=1)
    confidence: float = Field(default=0.95, gt=0.5, lt=1)
    power: float = Field(default=0.8, gt=0.5, lt=1)
    side_effects_margin: float = Field(default=0.05, ge=0, le=1)
    cost_ceiling_usd: float | None = Field(default=None, gt=0)
    effect_of_interest: float = Field(default=0.1, gt=0, le=1)
    min_strength: float | None = Field(default=None, ge=0, le=1)
    """The least strength (``docs/strength.md``) a case must have, recorded at its current
    version, to be compared; the others are left out and said so."""

    model_config = Strict.model_config | {"populate_by_name": True}

    @model_validator(mode="after")
    def _k_for_pass_hat(self) -> DecisionRule:
        if self.metric == "pass@1" and self.k != 1:
            raise ValueError("k is for metric pass^k; pass@1 reads one run at a time")
        return self

    @property
    def metric_label(self) -> str:
        return "pass@1" if self.metric == "pass@1" else f"pass^{self.k}"


def load_rule(path: Path | None) -> tuple[DecisionRule, str]:
    """The rule and its text (the built-in default when ``path`` is None)."""
    if path is None:
        text, where = DEFAULT_RULE, Path("<default rule>")
    else:
        text, where = read_text(path), path
    return validate_data(where, parse_yaml(where, text), DecisionRule), text


def rule_digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()
