"""The outcome of a run, separating the wire from the brain.

Order matters: a broken sandbox says nothing about the model (``infra_fail``); a run whose
wire failed says nothing about the model either (``transport_fail``); a model that answered
garbage the gateway could not parse is ``protocol_fail``; only then do tests and side effects
decide between ``pass`` and ``model_fail``.

Who broke the wire is decided from the gateway's evidence (:mod:`replay.grade.wire`), not
from what the harness says: a provider refusing the runner's key or account (401/403, an
exhausted quota) with no answered call after it is ``infra_fail``; a call the agent's own
client abandoned, or a request it malformed (a 400), is the agent's and leaves the wire
healthy; only failures between the gateway and the provider (connect, TLS, reset, the
gateway's own deadline, 408/429/5xx/529, a truncated stream) make it unhealthy.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from replay.base.outcomes import Outcome


@dataclass(frozen=True)
class Evidence:
    """Everything the outcome depends on, gathered by the grader (:mod:`replay.grade.grader`)."""

    infra_errors: list[str] = field(default_factory=list)
    """The sandbox broke: container failed to start, gateway addon crashed, grading failed."""
    wire_healthy: bool = True
    """No logical model call failed on the transport after the client's retries (a call the
    agent's client abandoned is not a transport failure)."""
    protocol_failures: int = 0
    """Logical model calls whose final answer could not be parsed."""
    tests_resolved: bool = False
    spoofed: str | None = None
    """Why the hidden tests' reports could not be trusted (the run bent them): the tests
    failed, and the reason says ``spoofed`` and why."""
    side_effects_ok: bool = False
    violated: list[str] = field(default_factory=list)
    """The side-effect rules that did not hold, forbidden ones first."""
    stopped_by: str | None = None
    """A budget or limit the run hit (wall time, tokens, memory...)."""
    tests: str | None = None
    """The hidden tests in a few words (``FAIL_TO_PASS 0/8 passed: 8 skipped``), said with
    an unresolved verdict: a cheat that skip-marked the tests shows it in the reason."""


def classify(evidence: Evidence) -> tuple[Outcome, str]:
    """The outcome and a one-line reason."""
    if evidence.infra_errors:
        return Outcome.INFRA_FAIL, "; ".join(evidence.infra_errors)
    if not evidence.wire_healthy:
        return Outcome.TRANSPORT_FAIL, "model calls failed on the wire after retries"
    if evidence.protocol_failures:
        return (
            Outcome.PROTOCOL_FAIL,
            f"{evidence.protocol_failures} model answer(s) could not be parsed",
        )
    reasons = []
    if evidence.spoofed:
        reasons.append(f"hidden tests not resolved: spoofed ({evidence.spoofed})")
    elif not evidence.tests_resolved:
        reasons.append(
            "hidden tests not resolved" + (f" ({evidence.tests})" if evidence.tests else "")
        )
    if not evidence.side_effects_ok:
        named = f": {', '.join(evidence.violated)}" if evidence.violated else ""
        reasons.append(f"side-effect rules violated{named}")
    if evidence.stopped_by:
        reasons.append(f"stopped by {evidence.stopped_by}")
    if reasons:
        return Outcome.MODEL_FAIL, "; ".join(reasons)
    return Outcome.PASS, "hidden tests resolved and every side-effect rule held"


def tests_in_words(fail_to_pass: Mapping[str, str], pass_to_pass: Mapping[str, str]) -> str:
    """``FAIL_TO_PASS 0/8 passed: 8 skipped; PASS_TO_PASS 13/13 passed``: each list's passes
    and what the others were; empty when no listed test ran at all (the grader then says
    why the command reported none)."""
    if all(s == "missing" for s in [*fail_to_pass.values(), *pass_to_pass.values()]):
        return ""
    parts = []
    for label, statuses in (("FAIL_TO_PASS", fail_to_pass), ("PASS_TO_PASS", pass_to_pass)):
        if not statuses:
            continue
        counts: dict[str, int] = {}
        for status in statuses.values():
            counts[status] = counts.get(status, 0) + 1
        passed = counts.pop("passed", 0)
        rest = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
        parts.append(f"{label} {passed}/{len(statuses)} passed" + (f": {rest}" if rest else ""))
    return "; ".join(parts)
