"""A run that crashed the runner, and what the runner cut: two records of a run's directory.

A crash (anything the runner or the grader raises while a run is under way: a bug, a store
that failed, input no reader expected) ends that run only. It is graded ``infra_fail`` with
its error (:func:`crash_grade`; the traceback in ``crash.txt``), so ``grade.json`` and the
results store always have an outcome, and the runs after it go on; the tokens its model calls
reported still count (a batch's budget sees them).

What the runner cut at its caps (:class:`~replay.runtime.bounded.Caps`) from the sandbox's
output is listed in ``cut.json`` (:class:`Cuts`), beside the marker each cut file holds.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Literal, Protocol

from pydantic import Field

from replay.base.events import Event
from replay.base.formats import Strict
from replay.base.outcomes import Outcome
from replay.gateway.modelcalls import ModelCall
from replay.grade.model import Attempts, Grade, Seconds, SideEffectsGrade, Tokens
from replay.grade.wire import summarize_wire
from replay.runtime.bounded import Caps

CRASH_FILE = "crash.txt"
"""The traceback of a run that crashed the runner, in its directory."""
CUTS_FILE = "cut.json"
"""What the runner cut from a run's sandbox output, in its directory (only when it cut)."""


class Pricing(Protocol):
    """A price table: what a model's tokens cost (``replay.run.prices.PriceTable``)."""

    def cost(
        self, model: str, input_tokens: int, output_tokens: int, cached: int = 0
    ) -> float | None:
        """USD for these tokens; None for a model the table does not know."""
        ...


def crash_grade(
    *,
    run_id: str,
    case_id: str,
    attempt: int,
    harness: str,
    model: str,
    image: str,
    harness_image: str | None,
    error: str,
    events: Sequence[Event],
    seconds: float,
    prices: Pricing,
) -> Grade:
    """The grade of a run that crashed the runner: ``infra_fail`` with ``error``; the hidden
    tests not run and the side effects not judged; the model calls the event log holds
    counted, so the tokens and cost spent are not lost."""
    calls = []
    for e in events:
        if e.kind == "model.call":
            try:
                calls.append(ModelCall.model_validate(e.data))
            except ValueError:
                continue  # a call the log holds in a shape of its own: not counted
    wire = summarize_wire(calls)
    usage = wire.usage
    why = f"the runner crashed: {error}"
    return Grade(
        run_id=run_id,
        case_id=case_id,
        attempt=attempt,
        harness=harness,
        model=model,
        image=image,
        harness_image=harness_image,
        outcome=Outcome.INFRA_FAIL,
        reason=f"infrastructure failure: {why}"[:2000],
        tests=None,
        world_errors=[],
        side_effects=SideEffectsGrade(ok=False, violated=[], rules=[], mutations=0),
        interventions=0,
        attempts=Attempts(
            pushes=sum(e.kind == "git.push" for e in events),
            prs_opened=sum(e.kind == "github.pull_request.opened" for e in events),
        ),
        tokens=Tokens(input=usage.input_tokens, output=usage.output_tokens),
        cost_usd=prices.cost(
            model, usage.input_tokens, usage.output_tokens, usage.cached_input_tokens
        ),
        model_wait_s=round(wire.model_wait_ms / 1000, 3),
        wire=wire,
        harness_exit=None,
        harness_claims=[],
        stopped_by=None,
        infra_errors=[why],
        seconds=Seconds(harness=0.0, total=round(seconds, 3)),
        diff_bytes=0,
    )


class Cuts(Strict):
    """``cut.json``: what of a run's sandbox output the runner cut at its caps."""

    schema_: Literal[1] = Field(default=1, alias="schema")
    """The format's version."""
    cut: dict[str, int]
    """Bytes cut, by file of the run's directory (``stdout.txt``, the harness's transcript,
    ``diff.patch``...). A cut file holds a ``[replay: ... cut here ...]`` marker where its
    middle was; a cut diff is not graded (``diff-error.txt``)."""
    caps: dict[str, int]
    """The caps in force (:class:`~replay.runtime.bounded.Caps`, by field)."""

    model_config = Strict.model_config | {"populate_by_name": True}


def write_cuts(run_dir: Path, caps: Caps, cuts: Mapping[str, int]) -> Path | None:
    """Write ``cut.json`` when anything was cut; its path (None when nothing was)."""
    cut = {name: n for name, n in cuts.items() if n > 0}
    if not cut:
        return None
    record = Cuts(cut=cut, caps=asdict(caps))
    path = run_dir / CUTS_FILE
    path.write_text(json.dumps(record.model_dump(by_alias=True), indent=2) + "\n")
    return path
