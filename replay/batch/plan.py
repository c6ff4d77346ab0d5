"""A batch plan (YAML, ``schema: 1``)::

    schema: 1
    name: nightly-2026-12
    cases: [cases/demo-*/case.yaml, cases/tomli-error-module/case.yaml]   # globs, from here
    candidates:
      - {name: gold, stub: gold}
      - {name: gpt, harness: reference, model: gpt-4.1}
    runs: 3                 # runs per case and candidate
    infra_retries: 2        # an infra_fail is tried again up to this many times
    budget: {tokens: 2000000, usd: 50}   # stop submitting new runs once reached

Every run has a stable key: the case's version (digest), the candidate (name and settings
digest) and the run's index. The keys are the plan's identity: a batch run again under its
name must plan the same keys (the budget may change between invocations; the keys may not).
"""

from __future__ import annotations

import glob
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import Field

from replay.base.case import LoadedCase, case_digest, read_case
from replay.base.errors import InputError
from replay.base.formats import Strict, load_model
from replay.cases.retired import active_case_files
from replay.compare.candidate import Candidate


class Budget(Strict):
    tokens: int | None = Field(default=None, gt=0)
    """Stop submitting runs once the batch's runs used this many tokens."""
    usd: float | None = Field(default=None, gt=0)
    """Stop submitting runs once the batch's runs cost this much (the price table's USD)."""


class BatchPlan(Strict):
    schema_: Literal[1] = Field(alias="schema")
    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
    cases: list[str] = Field(min_length=1)
    """Case files or globs, relative to the plan file."""
    candidates: list[Candidate] = Field(min_length=1)
    runs: int = Field(default=1, ge=1)
    infra_retries: int = Field(default=2, ge=0)
    budget: Budget = Field(default_factory=Budget)
    include_retired: bool = False
    """Run retired cases too (``replay case retire``); by default they are left out of the
    plan, each named in :attr:`Plan.skipped`."""

    model_config = Strict.model_config | {"populate_by_name": True}


@dataclass(frozen=True)
class PlannedRun:
    key: str
    case: LoadedCase
    digest: str
    candidate: Candidate
    index: int


@dataclass(frozen=True)
class Plan:
    spec: BatchPlan
    path: Path
    runs: list[PlannedRun]
    skipped: list[str] = field(default_factory=list)
    """Retired cases the plan leaves out, why, one line each."""

    @property
    def digest(self) -> str:
        """sha256 over the planned keys: what a rerun under the same name must match."""
        return hashlib.sha256(json.dumps(sorted(r.key for r in self.runs)).encode()).hexdigest()


def load_plan(path: Path) -> Plan:
    spec = load_model(path, BatchPlan)
    names = [c.name for c in spec.candidates]
    if len(set(names)) != len(names):
        raise InputError(path, "two candidates share a name", "candidates")
    files: list[Path] = []
    for i, pattern in enumerate(spec.cases):
        full = str(path.parent / pattern)
        matches = sorted(Path(m) for m in glob.glob(full)) if glob.has_magic(full) else [Path(full)]
        if not matches or not all(m.is_file() for m in matches):
            raise InputError(path, f"{pattern!r} names no case file", f"cases.{i}")
        files += [m for m in matches if m not in files]
    skipped: list[str] = []
    files = active_case_files(files, include_retired=spec.include_retired, notice=skipped.append)
    runs = []
    for file in files:
        loaded = read_case(file)
        digest = case_digest(loaded)
        for cand in spec.candidates:
            for index in range(1, spec.runs + 1):
                key = f"{digest}:{cand.key}:{index}"
                runs.append(PlannedRun(key, loaded, digest, cand, index))
    return Plan(spec, path, runs, skipped)
