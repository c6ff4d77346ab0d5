"""A candidate: what ``replay compare`` puts in one arm (harness, model and settings).

Given as a YAML file or inline (``name=gold,harness=reference,stub=gold``). Its runs are
stored under :attr:`Candidate.key`, its name and a digest of its settings: two candidates with
the same settings under different names are different arms (an A/A comparison), and a
candidate whose settings change gets new runs, never the old ones.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import replace
from datetime import UTC, date, datetime, time
from pathlib import Path
from typing import Any

from pydantic import AwareDatetime, Field, field_validator

from replay.base.errors import InputError, UsageError
from replay.base.formats import Strict, load_model, validate_data
from replay.run.runner import RunOptions

INLINE_KEYS = (
    "name",
    "harness",
    "model",
    "stub",
    "model_upstream",
    "seed",
    "wire_retries",
    "training_cutoff",
)


class Candidate(Strict):
    """One arm of a comparison."""

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
    """What reports call it."""
    harness: str = "reference"
    """A built-in harness name or a spec file."""
    model: str = "gpt-4.1"
    """The model the harness asks for."""
    stub: str | None = None
    """Play this stub trajectory instead of a model (tests and demos)."""
    model_upstream: str | None = None
    """Send model calls here instead of the provider's API."""
    harness_env: dict[str, str] = Field(default_factory=dict)
    stub_faults: list[str] = Field(default_factory=list)
    seed: int = 0
    wire_retries: int = Field(default=2, ge=0)
    """Replay a run the wire spoiled up to this many more times (spoiled runs are listed,
    never counted in quality)."""
    training_cutoff: AwareDatetime | None = None
    """The model's stated training cutoff (``2025-04-01``: midnight UTC), set against each
    case's fix date: a case fixed after it is ``after-cutoff`` (clean), one fixed before it
    ``before-cutoff`` (the public fix may be in the model's training data). Part of the
    candidate's settings, like everything but its name."""

    @field_validator("harness")
    @classmethod
    def _known_harness(cls, value: str) -> str:
        from replay.harness.spec import check_harness

        try:
            check_harness(value)
        except UsageError as exc:
            raise ValueError(str(exc)) from None
        return value

    @field_validator("stub")
    @classmethod
    def _known_stub(cls, value: str | None) -> str | None:
        from replay.run.trajectories import check_trajectory

        if value is not None:
            try:
                check_trajectory(value)
            except UsageError as exc:
                raise ValueError(str(exc)) from None
        return value

    @field_validator("training_cutoff", mode="before")
    @classmethod
    def _date_is_midnight_utc(cls, value: Any) -> Any:
        if isinstance(value, date) and not isinstance(value, datetime):
            return datetime.combine(value, time(0), tzinfo=UTC)
        if isinstance(value, str) and re.fullmatch(r"\d{4}-\d{2}-\d{2}", value.strip()):
            return f"{value.strip()}T00:00:00Z"
        return value

    @property
    def settings(self) -> dict[str, Any]:
        """Everything that makes the arm what it is (all but its name)."""
        return self.model_dump(mode="json", exclude={"name"})

    @property
    def key(self) -> str:
        blob = json.dumps(self.settings, sort_keys=True).encode()
        return f"{self.name}:{hashlib.sha256(blob).hexdigest()[:12]}"

    @property
    def model_label(self) -> str:
        return f"stub:{self.stub}" if self.stub else self.model

    def options(self, base: RunOptions, *, runs: int, first_attempt: int) -> RunOptions:
        """Run options for ``runs`` more runs of this candidate."""
        return replace(
            base,
            harness=self.harness,
            model=self.model,
            stub=self.stub,
            model_upstream=self.model_upstream,
            harness_env=dict(self.harness_env),
            stub_faults=tuple(self.stub_faults),
            stub_seed=self.seed,
            wire_retries=self.wire_retries,
            runs=runs,
            candidate=self.key,
            first_attempt=first_attempt,
        )


def parse_candidate(value: str) -> Candidate:
    """A candidate from a YAML file, or from ``key=value,key=value`` (keys: name, harness,
    model, stub, model_upstream, seed, wire_retries, training_cutoff)."""
    path = Path(value)
    if path.suffix in (".yaml", ".yml") or path.is_file():
        if not path.is_file():
            raise InputError(path, "file not found")
        return load_model(path, Candidate)
    fields: dict[str, Any] = {}
    for item in value.split(","):
        key, sep, val = item.partition("=")
        key = key.strip()
        if not sep or key not in INLINE_KEYS:
            raise InputError(
                Path("<candidate>"),
                f"{item!r}: expected KEY=VALUE with KEY one of {', '.join(INLINE_KEYS)} "
                "(or a candidate YAML file)",
            )
        fields[key] = val.strip()
    for key in ("seed", "wire_retries"):
        if key in fields:
            try:
                fields[key] = int(fields[key])
            except ValueError:
                raise InputError(
                    Path("<candidate>"), f"{fields[key]!r} is not a whole number", key
                ) from None
    return validate_data(Path(f"<candidate {value}>"), fields, Candidate)
