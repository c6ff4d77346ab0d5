"""The run's wire, rolled up from the gateway's model-call log: what the grader needs of it.

The gateway records one :class:`~replay.gateway.modelcalls.ModelCall` per HTTP call on the
model route, each with its own verdict (``ok``, ``transport_fail``, ``protocol_fail``,
``rejected``, ``abandoned``: see :mod:`replay.gateway.modelcalls`). Here those records become
the run's :class:`WireSummary`: healthy or not, how many answers could not be parsed, and
whether the provider refused the runner's own key or account.

Retries: the SDKs resend the same bytes with ``x-stainless-retry-count`` raised, so calls with
the same :attr:`~replay.gateway.modelcalls.ModelCall.logical_key` that follow each other until
one succeeds are one logical call (:func:`group_logical_calls`). This also groups a harness's
own resend of the same request.

Whose refusal. A refusal of the key or account (``auth``: 401/403; ``quota``) says nothing
about the model, and voids the run (``infra_fail``) when it stopped the *harness's* work. But
the agent holds a placeholder key and the proxy too: from its shell it can ask the model API for
a model the account may not use and draw a 403 whenever it likes, for instance after the
harness's last call, where nothing answered follows to contradict it. Such a call is the
agent's act: it is recorded (``model_calls.jsonl``, :attr:`WireSummary.agent_refusals`) and
never voids the run. The grader tells the two apart from evidence the agent could not shape
(:func:`harness_refusal`):

1. **Before the first answer, every call is the harness's.** The agent acts only through the
   model's answers, so until one has arrived (a call answered below 400, up to its last byte)
   nothing in the sandbox but the harness can have called. A run whose first calls are all
   refused is a bad key or account: the runner's, whoever's fingerprint they carry.
2. **The harness's client** is the set of
   :attr:`~replay.gateway.modelcalls.RequestFacts.client` fingerprints of those first calls (the
   identity headers its HTTP client sends: user agent, the SDKs' ``x-stainless-*`` package and
   runtime, ``anthropic-version``...). Every call one client makes carries the same; ``curl``
   or another SDK from the agent's shell carries another.
3. **The harness's models** are the model the run configured (the runner hands it to the
   grader: ``RunToGrade.harness_model``) and the models of those first calls.
4. **The harness's lifetime**: a call sent after the harness exited (``RunToGrade.harness_ended``)
   cannot be its own, whatever it carries (a background process the agent left).

A refusal is the harness's when it came from the harness's client, for one of the harness's
models, while the harness ran; it voids the run unless a later call of the harness's was
answered (the key worked after all, and the harness went on). Every other refusal is the
agent's, and so is every other answer: an agent's own answered call neither voids nor
un-voids anything. Retries of a refused call carry the
same client and model, so they are attributed alike.

What is still possible: an agent that copies the harness's identity headers exactly *and*
asks for the harness's own model *and* draws a refusal the harness's calls did not (a feature
the account may not use on that model, say), in the window between the harness's last call and
its exit, still voids its run. A harness whose own later calls come from another client (a
helper process with another SDK) or for a model neither configured nor asked for first has
those calls' refusals counted as the agent's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import Field

from replay.base.formats import Strict
from replay.gateway.modelcalls import ErrorClass, ModelCall, TokenUsage, Verdict

ACCOUNT_CLASSES: frozenset[str] = frozenset({"auth", "quota"})
"""Refusals of the runner's key or account: they say nothing about the model."""


class LogicalCall(Strict):
    """One call the harness made, with the SDK's retries of it."""

    logical_key: str
    """The attempts' shared :attr:`ModelCall.logical_key`."""
    attempts: list[ModelCall]
    """Every attempt, in order."""
    verdict: Verdict
    """The last attempt's verdict: what the harness finally got."""

    @property
    def recovered(self) -> bool:
        """Some attempt failed on the wire but the last one succeeded."""
        return self.verdict == "ok" and any(a.verdict != "ok" for a in self.attempts)


class WireSummary(Strict):
    """The run's wire, rolled up from its model calls (``wire`` in ``grade.json``)."""

    calls: int
    """HTTP calls on the model route, retries included."""
    logical_calls: int
    """Calls after grouping retries."""
    failed_attempts: dict[ErrorClass, int] = Field(default_factory=dict)
    """Failed HTTP calls by error class, retries included."""
    recovered: int
    """Logical calls that failed on the wire at least once and then succeeded."""
    transport_failed: int
    """Logical calls whose last attempt failed on the wire: the harness saw the failure."""
    protocol_failed: int
    """Logical calls whose last attempt was unparseable."""
    rejected: int
    """Logical calls whose last attempt was refused (4xx, 401/403, quota)."""
    abandoned: int = 0
    """Logical calls the agent's own client gave up on (not a wire failure)."""
    quota_stop: bool
    """A call hit an exhausted quota or spend limit."""
    account_refused: str | None = None
    """The provider refused the runner's key or account (401/403, quota) on a call of the
    harness's own (see the module doc) and no call was answered after that: the run says
    nothing about the model. The refusal's class and detail; None otherwise. A refusal
    followed by an answered call does not count (the key worked), nor does one the agent's
    own calls drew (:attr:`agent_refusals`)."""
    agent_refusals: int = 0
    """Calls refused for the key or account (401/403, quota) that were the agent's own:
    another model than the harness's, another client than the harness's, or sent after the
    harness exited (see the module doc). Recorded, never held against the runner."""
    healthy: bool
    """No logical call ended in a transport failure."""
    usage: TokenUsage
    """Tokens reported over all attempts (billed ones included)."""
    model_wait_ms: float
    """Sum of every attempt's total time: time spent waiting on the model route."""


def group_logical_calls(calls: Sequence[ModelCall]) -> list[LogicalCall]:
    """Group attempts into logical calls, in order of their request times.

    An attempt joins the open group with its key; a group closes when an attempt answers
    (anything but a transport failure), so an identical request sent later after a success
    starts a new logical call.
    """
    groups: list[list[ModelCall]] = []
    open_by_key: dict[str, list[ModelCall]] = {}
    for call in sorted(calls, key=lambda c: c.t_request_end):
        group = open_by_key.get(call.logical_key)
        if group is None:
            group = []
            groups.append(group)
        group.append(call)
        if call.verdict in ("transport_fail", "abandoned"):
            # The SDK resends what timed out or failed on the wire: the same logical call.
            open_by_key[call.logical_key] = group
        else:
            open_by_key.pop(call.logical_key, None)
    return [
        LogicalCall(logical_key=g[0].logical_key, attempts=g, verdict=g[-1].verdict) for g in groups
    ]


def summarize_wire(
    calls: Sequence[ModelCall],
    harness_model: str | None = None,
    harness_ended: float | None = None,
) -> WireSummary:
    """Roll a run's model calls up into its wire verdict.

    ``harness_model``: the model the run configured the harness with; ``harness_ended``: when
    the harness exited (epoch seconds, the gateway's clock). Both tell the harness's refused
    calls from the agent's (see the module doc); unknown, the first calls alone do.
    """
    logical = group_logical_calls(calls)
    failed: dict[ErrorClass, int] = {}
    usage = TokenUsage()
    for call in calls:
        if call.error_class is not None:
            failed[call.error_class] = failed.get(call.error_class, 0) + 1
        if call.usage is not None:
            usage = usage + call.usage
    transport_failed = sum(1 for lc in logical if lc.verdict == "transport_fail")
    harness = Harness.of(calls, harness_model, harness_ended)
    refused = [c for c in calls if c.error_class in ACCOUNT_CLASSES]
    return WireSummary(
        abandoned=sum(1 for lc in logical if lc.verdict == "abandoned"),
        account_refused=harness_refusal(calls, harness),
        agent_refusals=sum(1 for c in refused if not harness.sent(c)),
        calls=len(calls),
        logical_calls=len(logical),
        failed_attempts=dict(sorted(failed.items())),
        recovered=sum(1 for lc in logical if lc.recovered),
        transport_failed=transport_failed,
        protocol_failed=sum(1 for lc in logical if lc.verdict == "protocol_fail"),
        rejected=sum(1 for lc in logical if lc.verdict == "rejected"),
        quota_stop=any(c.error_class == "quota" for c in calls),
        healthy=transport_failed == 0,
        usage=usage,
        model_wait_ms=round(sum(c.total_ms or 0.0 for c in calls), 3),
    )


def _answered(call: ModelCall) -> bool:
    return call.status is not None and call.status < 400


def _ended(call: ModelCall) -> float:
    return call.t_request_end + (call.total_ms or 0.0) / 1000


def _client(call: ModelCall) -> str | None:
    # None for a record of format 1, which did not keep the headers: all such calls match.
    return call.request.client if call.request is not None else None


@dataclass(frozen=True)
class Harness:
    """What the run's log says of the harness's own calls (see the module doc)."""

    clients: frozenset[str | None]
    """The client fingerprints of the calls sent before the first answer."""
    models: frozenset[str | None]
    """The configured model and the models of the calls sent before the first answer."""
    first_answer: float | None
    """When the first answered call's last byte arrived; None: no call was answered."""
    ended: float | None
    """When the harness exited; None when not known."""

    @classmethod
    def of(
        cls, calls: Sequence[ModelCall], model: str | None = None, ended: float | None = None
    ) -> Harness:
        """The harness's evidence in ``calls``."""
        answers = [_ended(c) for c in calls if _answered(c)]
        first = min(answers) if answers else None
        before = [c for c in calls if first is None or c.t_request_end < first]
        models = {c.model for c in before}
        if model is not None:
            models.add(model)
        return cls(frozenset(_client(c) for c in before), frozenset(models), first, ended)

    def sent(self, call: ModelCall) -> bool:
        """Whether ``call`` is the harness's own."""
        if self.first_answer is None or call.t_request_end < self.first_answer:
            return True  # nothing could act but the harness yet
        if self.ended is not None and call.t_request_end > self.ended:
            return False
        return _client(call) in self.clients and call.model in self.models


def harness_refusal(calls: Sequence[ModelCall], harness: Harness | None = None) -> str | None:
    """The last refusal of the key or account on a call of the harness's own, unless a later
    call of the harness's was answered; the agent's own calls, refused or answered, are passed
    over (see the module doc)."""
    harness = harness or Harness.of(calls)
    refusal: ModelCall | None = None
    for call in sorted(calls, key=lambda c: c.t_request_end):
        if call.error_class in ACCOUNT_CLASSES:
            if harness.sent(call):
                refusal = call
        elif _answered(call) and harness.sent(call):
            refusal = None  # the harness went on: the refusal did not stop its work
    if refusal is None:
        return None
    return f"{refusal.error_class} (HTTP {refusal.status}): {refusal.error_detail or ''}".strip()
