"""Whose refusal: a refused key or account voids a run only when it stopped the harness's work.

The records are made by the gateway's own observer from the headers and bodies each client
really sends: the reference harness (``urllib``, as ``replay/harness/reference/agent.py``), the
OpenAI SDK's identity headers, and ``curl`` from the agent's shell. See the module doc of
:mod:`replay.grade.wire` for the rule each test holds an edge of.
"""

from __future__ import annotations

import json
from typing import Any

from replay.gateway.modelcalls import ModelCall, ModelCallObserver
from replay.grade.wire import Harness, summarize_wire

URL = "https://api.openai.com/v1/chat/completions"
HARNESS = {"User-Agent": "Python-urllib/3.11", "content-type": "application/json"}
SDK = {
    "user-agent": "OpenAI/Python 1.99.1",
    "x-stainless-lang": "python",
    "x-stainless-package-version": "1.99.1",
    "x-stainless-runtime": "CPython",
    "x-stainless-runtime-version": "3.11.2",
}
CURL = {"user-agent": "curl/7.88.1", "accept": "*/*", "content-type": "application/json"}
MODEL = "gpt-4.1"
OK = b'{"choices": [{"message": {"role": "assistant", "content": "hi"}}], "usage": {}}'
FORBIDDEN = json.dumps(
    {
        "error": {
            "message": "Project `proj_x` does not have access to model `o1-pro`",
            "type": "invalid_request_error",
            "param": None,
            "code": "model_not_found",
        }
    }
).encode()
BAD_KEY = b'{"error": {"message": "Incorrect API key provided", "code": "invalid_api_key"}}'
QUOTA = b'{"error": {"message": "You exceeded your current quota", "code": "insufficient_quota"}}'


def sent(
    t: float,
    status: int,
    body: bytes = OK,
    *,
    headers: dict[str, str] | None = None,
    model: str = MODEL,
    retry: int = 0,
    step: int = 0,
) -> ModelCall:
    """One call as the gateway records it: sent at ``t``, answered 0.5 s later."""
    obs = ModelCallObserver()
    request = json.dumps({"model": model, "messages": [{"role": "user", "content": str(step)}]})
    obs.begin(
        "POST",
        URL,
        {**(HARNESS if headers is None else headers), "x-stainless-retry-count": str(retry)},
        request.encode(),
        t,
    )
    obs.headers(status, {"content-type": "application/json"}, t + 0.4)
    return obs.end(t + 0.5, body)


def answered(t: float, step: int, **kw: Any) -> ModelCall:
    return sent(t, 200, step=step, **kw)


def test_the_first_calls_refused_are_a_bad_key_whatever_they_carry() -> None:
    """Nothing but the harness can call before a first answer: the runner's, retries too."""
    calls = [sent(t, 401, BAD_KEY, retry=r) for r, t in enumerate((0.0, 1.0, 2.0))]
    wire = summarize_wire(calls, MODEL, harness_ended=10.0)
    assert wire.account_refused == "auth (HTTP 401): Incorrect API key provided"
    assert wire.agent_refusals == 0
    # Even a client and model the harness was not configured with: nothing else could act.
    odd = [sent(0.0, 403, FORBIDDEN, headers=CURL, model="o1-pro")]
    assert summarize_wire(odd, MODEL).account_refused is not None


def test_a_refusal_of_the_harnesss_own_call_after_answers_is_the_runners() -> None:
    """A quota stop (or a revoked key) mid-run, on the harness's client and model."""
    calls = [answered(0.0, 0), answered(2.0, 1), sent(4.0, 429, QUOTA, step=2)]
    wire = summarize_wire(calls, MODEL, harness_ended=5.0)
    assert wire.account_refused is not None and wire.account_refused.startswith("quota (HTTP 429)")
    assert wire.quota_stop and wire.agent_refusals == 0
    # The harness's retries of it are its own too.
    retried = [*calls, sent(4.5, 429, QUOTA, step=2, retry=1)]
    assert summarize_wire(retried, MODEL, harness_ended=5.0).account_refused is not None


def test_a_refusal_for_another_model_is_the_agents() -> None:
    """The late refusal: the agent asks for a model the account may not use, after the
    harness's last call, from its own shell; forging the harness's headers does not help."""
    late = sent(4.0, 403, FORBIDDEN, headers=CURL, model="o1-pro")
    calls = [answered(0.0, 0), answered(2.0, 1), late]
    wire = summarize_wire(calls, MODEL, harness_ended=5.0)
    assert wire.account_refused is None
    assert (wire.agent_refusals, wire.rejected, wire.healthy) == (1, 1, True)
    forged = sent(4.0, 403, FORBIDDEN, model="o1-pro")  # the harness's own user agent
    assert summarize_wire([*calls[:2], forged], MODEL, 5.0).account_refused is None
    # Retried by the agent: still the agent's, every attempt counted.
    again = [*calls, sent(4.2, 403, FORBIDDEN, headers=CURL, model="o1-pro", retry=1)]
    assert summarize_wire(again, MODEL, 5.0).agent_refusals == 2


def test_a_refusal_from_another_client_for_the_same_model_is_the_agents() -> None:
    calls = [answered(0.0, 0, headers=SDK), sent(3.0, 429, QUOTA, headers=CURL)]
    wire = summarize_wire(calls, MODEL, harness_ended=5.0)
    assert (wire.account_refused, wire.agent_refusals) == (None, 1)
    # The same refusal on the harness's own SDK headers is the runner's.
    own = [calls[0], sent(3.0, 429, QUOTA, headers=SDK)]
    assert summarize_wire(own, MODEL, harness_ended=5.0).account_refused is not None


def test_a_refusal_sent_after_the_harness_exited_is_the_agents() -> None:
    """A background process the agent left, forging client and model alike."""
    calls = [answered(0.0, 0), answered(2.0, 1), sent(6.0, 401, BAD_KEY, step=2)]
    assert summarize_wire(calls, MODEL, harness_ended=5.0).account_refused is None
    # Unknown exit: the client and model say the harness's, so the runner's.
    assert summarize_wire(calls, MODEL).account_refused is not None


def test_a_refusal_followed_by_the_harnesss_answer_is_not_the_runners() -> None:
    """The key worked after all and the harness went on; an agent's own answered call,
    though, does not take a refusal of the harness's back."""
    calls = [answered(0.0, 0), sent(2.0, 429, QUOTA, step=1), answered(4.0, 2)]
    assert summarize_wire(calls, MODEL, harness_ended=5.0).account_refused is None
    agent_after = [*calls[:2], answered(4.0, 2, headers=CURL, model="gpt-4.1-mini")]
    assert summarize_wire(agent_after, MODEL, harness_ended=5.0).account_refused is not None


def test_the_harnesss_models_are_the_configured_one_and_those_it_asked_for_first() -> None:
    """A harness whose first call asks a small model (Claude Code's start-up check) and whose
    configured model is refused later: the runner's. Without the configured model, only the
    first calls' models are the harness's."""
    first = answered(0.0, 0, model="claude-haiku-4-5")
    refused = sent(3.0, 403, FORBIDDEN, model="claude-sonnet-4-5", step=1)
    assert summarize_wire([first, refused], "claude-sonnet-4-5").account_refused is not None
    assert summarize_wire([first, refused]).account_refused is None
    harness = Harness.of([first, refused], "claude-sonnet-4-5")
    assert harness.models == {"claude-haiku-4-5", "claude-sonnet-4-5"}
    assert harness.clients == {"user-agent=Python-urllib/3.11"}


def test_records_without_request_facts_read_as_before() -> None:
    """A model-call log of format 1 kept no headers: every call is one client."""
    old = [
        c.model_copy(update={"request": None, "schema_version": 1})
        for c in (answered(0.0, 0), sent(2.0, 429, QUOTA, step=1))
    ]
    assert summarize_wire(old).account_refused is not None
