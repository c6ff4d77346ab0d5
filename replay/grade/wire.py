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
"""

from __future__ import annotations

from collections.abc import Sequence

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
    """The provider refused the runner's key or account (401/403, quota) and no call was
    answered after that: the run says nothing about the model. The refusal's class and
    detail; None otherwise. A refusal followed by an answered call does not count (the key
    worked), so an agent cannot void its run by provoking one refusal itself."""
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


def summarize_wire(calls: Sequence[ModelCall]) -> WireSummary:
    """Roll a run's model calls up into its wire verdict."""
    logical = group_logical_calls(calls)
    failed: dict[ErrorClass, int] = {}
    usage = TokenUsage()
    for call in calls:
        if call.error_class is not None:
            failed[call.error_class] = failed.get(call.error_class, 0) + 1
        if call.usage is not None:
            usage = usage + call.usage
    transport_failed = sum(1 for lc in logical if lc.verdict == "transport_fail")
    return WireSummary(
        abandoned=sum(1 for lc in logical if lc.verdict == "abandoned"),
        account_refused=_account_refused(calls),
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


def _account_refused(calls: Sequence[ModelCall]) -> str | None:
    """The last refusal of the key or account, unless a later call was answered."""
    refusal: ModelCall | None = None
    for call in sorted(calls, key=lambda c: c.t_request_end):
        if call.error_class in ACCOUNT_CLASSES:
            refusal = call
        elif call.status is not None and call.status < 400:
            refusal = None
    if refusal is None:
        return None
    return f"{refusal.error_class} (HTTP {refusal.status}): {refusal.error_detail or ''}".strip()
