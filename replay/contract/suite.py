"""One scenario checked end to end: run it on a target, compare the run with the recording,
validate its GitHub REST bodies with githubkit's models and its GraphQL documents with the
schema. Tests and ``replay contract run`` both go through :func:`check`."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from replay.contract.recording import (
    Difference,
    Gap,
    Recording,
    compare,
    load,
    open_differences,
    save,
)
from replay.contract.runner import RECORDINGS, Run, run_scenario
from replay.contract.scenarios import Scenario, Skip
from replay.contract.schema import check_github_body, check_graphql
from replay.contract.targets import Target


@dataclass
class Outcome:
    """What one scenario showed on one target."""

    scenario: Scenario
    run: Run | None = None
    skipped: str | None = None
    """Why the scenario did not run on this target."""
    differences: list[Difference] = field(default_factory=list)
    """Against the recording, known gaps removed."""
    schema: list[Difference] = field(default_factory=list)
    """Schema problems (githubkit models, GraphQL validation), known gaps removed."""
    missing_recording: bool = False
    recorded_against: str | None = None
    """Where the recording compared with came from: ``live`` (evidence) or ``self``."""
    rest_checked: int = 0
    """GitHub REST bodies of the run validated against githubkit's models (GitHub's OpenAPI
    description): evidence about shapes, counted apart from the recording comparison."""

    @property
    def error(self) -> str | None:
        """The scenario stopped early: a response its client could not use."""
        return self.run.error if self.run else None

    @property
    def ok(self) -> bool:
        return not (self.differences or self.schema or self.missing_recording or self.error)

    def lines(self) -> list[str]:
        name = f"{self.scenario.service}/{self.scenario.name}"
        if self.skipped:
            return [f"SKIP {name}: {self.skipped}"]
        out = [f"{'ok  ' if self.ok else 'FAIL'} {name}"]
        if self.error:
            out.append(f"  stopped: {self.error}")
        if self.missing_recording:
            out.append("  no recording (run `replay contract record`)")
        out += [f"  differs: {d}" for d in self.differences]
        out += [f"  schema: {d.where}" for d in self.schema]
        return out


def schema_problems(run: Run) -> list[Difference]:
    """Every schema problem of a run, as differences at ``<step>.schema``."""
    rec = run.recording
    out: list[Difference] = []
    for exchange, raw, model in run.recorder.raws:
        if exchange.query:
            problems = check_graphql(rec.service, exchange.query)
        elif rec.service == "github":
            problems = check_github_body(model, exchange.status, raw.body)
        else:
            continue
        out += [
            Difference(rec.scenario, f"{exchange.step}.schema {p}", exchange.model, p)
            for p in problems
        ]
    return out


def check(
    target: Target,
    scenario: Scenario,
    gaps: list[Gap],
    recordings: Path = RECORDINGS,
    *,
    record: bool = False,
) -> Outcome:
    """Run ``scenario`` on ``target``; with ``record``, write its recording first."""
    outcome = Outcome(scenario)
    try:
        run = run_scenario(target, scenario)
    except Skip as exc:
        outcome.skipped = str(exc)
        return outcome
    outcome.run = run
    if record and run.error is None:
        save(run.recording, recordings)
    recorded: Recording | None = load(recordings, scenario.service, scenario.name)
    if recorded is None:
        outcome.missing_recording = True
    else:
        outcome.recorded_against = recorded.recorded_against
        outcome.differences = compare(recorded, run.recording, gaps)
    outcome.rest_checked = sum(
        1
        for exchange, _raw, model in run.recorder.raws
        if scenario.service == "github"
        and not exchange.query
        and (model is not None or exchange.status >= 400)
    )
    outcome.schema = open_differences(scenario.service, schema_problems(run), gaps)
    return outcome
