"""Wire faults the stub injects, at set rates (seeded) or on every Nth call."""

from __future__ import annotations

import random
import threading
from typing import Literal, get_args

from pydantic import Field, model_validator

from replay.base.formats import Strict

FaultKind = Literal[
    "timeout",
    "reset",
    "http_500",
    "http_502",
    "http_503",
    "http_529",
    "http_429",
    "http_401",
    "http_403",
    "truncate",
    "bad_json",
    "stream_error",
]
FAULT_KINDS: tuple[str, ...] = get_args(FaultKind)


class Fault(Strict):
    """One kind of fault and how often it strikes.

    - ``timeout``: hold the connection without answering until the client gives up (bounded
      by :attr:`StubConfig.hold_seconds`, then reset).
    - ``reset``: abort the TCP connection (RST): before any byte, or mid-stream for a stream.
    - ``http_500``/``http_503``/``http_529``/``http_429``: the provider's error body (429 with
      ``retry-after``); ``http_502``: a proxy's HTML page.
    - ``http_401``/``http_403``: the provider refuses the key (``invalid_api_key``,
      ``authentication_error``) or the account (``permission_error``, an unsupported
      region), in its own shape.
    - ``truncate``: a stream ends cleanly without its terminal event; a plain body is cut
      short and the connection closed.
    - ``bad_json``: 200 with a body (or SSE data) that is not JSON.
    - ``stream_error``: an error event mid-stream (Anthropic ``overloaded_error``); a
      non-streamed call gets the status instead (529 Anthropic, 500 OpenAI).
    """

    kind: FaultKind
    """What goes wrong."""
    rate: float = Field(default=0.0, ge=0.0, le=1.0)
    """Probability per call (seeded)."""
    every: int | None = Field(default=None, ge=1)
    """Strike every Nth model call instead (deterministic; N, 2N, ...)."""
    calls: tuple[int, int] | None = None
    """Strike model calls FIRST to LAST (numbered from 1, across the runs one stub serves)
    instead: a wire that fails for a while, then recovers (one run spoiled, say)."""

    @model_validator(mode="after")
    def _one_mode(self) -> Fault:
        modes = sum([self.every is not None, bool(self.rate), self.calls is not None])
        if modes > 1:
            raise ValueError("give one of rate, every or calls")
        if self.calls is not None and not 1 <= self.calls[0] <= self.calls[1]:
            raise ValueError(f"calls {self.calls[0]}-{self.calls[1]}: expected 1 <= FIRST <= LAST")
        return self

    @classmethod
    def parse(cls, spec: str) -> Fault:
        """``KIND=RATE`` (``503=0.1`` or ``http_503=0.1``), ``KIND=every:N`` or
        ``KIND=calls:FIRST-LAST``."""
        kind, sep, value = spec.partition("=")
        kind = kind.strip()
        if kind.isdigit():
            kind = f"http_{kind}"
        if not sep or kind not in FAULT_KINDS:
            raise ValueError(
                f"bad fault {spec!r}: expected KIND=RATE, KIND=every:N or KIND=calls:FIRST-LAST, "
                f"KIND one of {', '.join(FAULT_KINDS)}"
            )
        value = value.strip()
        if value.startswith("every:"):
            return cls.model_validate({"kind": kind, "every": int(value[len("every:") :])})
        if value.startswith("calls:"):
            first, dash, last = value[len("calls:") :].partition("-")
            try:
                span = (int(first), int(last if dash else first))
            except ValueError:
                raise ValueError(f"bad fault {spec!r}: expected KIND=calls:FIRST-LAST") from None
            return cls.model_validate({"kind": kind, "calls": span})
        return cls.model_validate({"kind": kind, "rate": float(value)})


class FaultInjector:
    """Decides, call by call, which fault (if any) strikes. Thread-safe and reproducible:
    one random draw per call, whatever the outcome."""

    def __init__(self, faults: list[Fault], seed: int) -> None:
        total = sum(f.rate for f in faults)
        if total > 1.0 + 1e-9:
            raise ValueError(f"fault rates add up to {total:.3f}, more than 1")
        self._faults = faults
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self.calls = 0

    def draw(self) -> tuple[int, FaultKind | None]:
        """(this call's number, from 1; the fault that strikes it)."""
        with self._lock:
            self.calls += 1
            n, u = self.calls, self._rng.random()
        for fault in self._faults:
            if fault.every is not None and n % fault.every == 0:
                return n, fault.kind
            if fault.calls is not None and fault.calls[0] <= n <= fault.calls[1]:
                return n, fault.kind
        acc = 0.0
        for fault in self._faults:
            acc += fault.rate
            if u < acc:
                return n, fault.kind
        return n, None
