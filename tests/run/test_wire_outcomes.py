"""Who broke the wire, end to end: the reference harness on demo-caret-zero, against the stub.

A provider that refuses the runner's key is the runner's problem (``infra_fail``); a wire
that fails between the gateway and the provider is ``transport_fail``; a model call the agent
itself abandons is the agent's doing and spoils nothing. Each run goes through the real
gateway, sandbox and grader (Docker), as ``replay run`` does.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from pathlib import Path
from typing import Any

import pytest

from replay.base.case import load_case
from replay.harness.spec import load_harness
from replay.harness.stub import StubConfig, make_stub_app
from replay.harness.stub.script import Script
from replay.run.runner import RunOptions, RunResult, run_case
from replay.run.trajectories import build_script
from replay.snapshot import load_snapshot
from tests.serving import serving

ROOT = Path(__file__).resolve().parents[2]
CARET = ROOT / "cases" / "demo-caret-zero" / "case.yaml"


def replay(tmp: Path, **kw: Any) -> RunResult:
    (run,) = run_case(CARET, RunOptions(out=tmp / "runs", db=str(tmp / "results.db"), **kw))
    return run


def model_calls(run: RunResult) -> list[dict[str, Any]]:
    lines = (run.run_dir / "model_calls.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


@pytest.mark.parametrize("status", [401, 403])
def test_a_provider_refusing_the_key_on_every_call_is_infra(tmp_path: Path, status: int) -> None:
    run = replay(tmp_path, stub="gold", stub_faults=(f"http_{status}=every:1",))
    assert run.outcome == "infra_fail", run.reason
    assert "refused the runner's key or account" in run.reason
    calls = model_calls(run)
    assert calls and {(c["status"], c["error_class"]) for c in calls} == {(status, "auth")}
    assert run.grade.harness_exit == 5, "the harness itself saw an answer it could not use"


@pytest.mark.parametrize("fault", ["reset=every:1", "http_503=every:1"])
def test_a_wire_that_fails_every_call_is_transport(tmp_path: Path, fault: str) -> None:
    run = replay(tmp_path, stub="gold", stub_faults=(fault,))
    assert run.outcome == "transport_fail", run.reason
    assert not run.grade.wire.healthy
    calls = model_calls(run)
    assert len(calls) == 3, "the first call and the harness's two retries"
    assert {c["verdict"] for c in calls} == {"transport_fail"}


def test_a_provider_that_hangs_is_timed_out_by_the_gateway_not_abandoned(tmp_path: Path) -> None:
    """The stub holds the call; the gateway's deadline for stub runs passes long before the
    harness's own client would give up, so the call is the provider's timeout."""
    run = replay(
        tmp_path,
        stub="gold",
        stub_faults=("timeout=every:1",),
        harness_env={"REPLAY_MODEL_RETRIES": "0"},
    )
    assert run.outcome == "transport_fail", run.reason
    [call] = model_calls(run)
    assert (call["error_class"], call["verdict"]) == ("timeout", "transport_fail"), call
    assert call["error_detail"].startswith("gateway deadline: no answer from the provider")


ABANDON_MODEL = "replay-abandoned-call"


class HoldsOneCall:
    """The stub model, except that a call for :data:`ABANDON_MODEL` gets no answer until
    its client hangs up (at most 60 s)."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.held = threading.Event()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        body, more = b"", True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body += message.get("body", b"")
            more = message.get("more_body", False)
        try:
            model = json.loads(body).get("model")
        except (ValueError, AttributeError):
            model = None
        if model == ABANDON_MODEL:
            self.held.set()

            async def until_disconnect() -> None:
                while (await receive())["type"] != "http.disconnect":
                    pass

            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(until_disconnect(), 60)
            return
        replayed = False

        async def again() -> Any:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, again, send)


def test_a_model_call_the_agent_abandons_is_not_a_transport_failure(tmp_path: Path) -> None:
    """The agent's own curl asks the model API and gives up after 3 s; the provider had not
    failed and the gateway's deadline (minutes) had not passed. Gold then finishes."""
    case = load_case(CARET)
    spec, _ = load_harness("reference")
    gold = build_script(case, load_snapshot(case.snapshot), "gold")
    curl = (
        "curl -sS --max-time 3 -o /dev/null https://api.openai.com/v1/chat/completions "
        "-H 'content-type: application/json' "
        f'-d \'{{"model": "{ABANDON_MODEL}", "messages": [{{"role": "user", "content": "hi"}}]}}\''
        '; echo "curl exit $?"'
    )
    steps = [{"say": "Asking the model API myself, impatiently.", "bash": curl}]
    script = Script.model_validate(
        {**gold.model_dump(), "steps": steps + [s.model_dump() for s in gold.steps]}
    )
    upstream = HoldsOneCall(make_stub_app(StubConfig(script=spec.stub.apply(script))))
    with serving(upstream) as url:
        run = replay(tmp_path, model_upstream=url)
    assert upstream.held.is_set(), "the agent's own call reached the provider and was held"
    assert run.outcome == "pass", run.reason
    assert run.grade.wire.healthy and run.grade.wire.transport_failed == 0
    calls = model_calls(run)
    abandoned = [c for c in calls if c["verdict"] == "abandoned"]
    assert [c["model"] for c in abandoned] == [ABANDON_MODEL]
    assert abandoned[0]["error_class"] == "abandoned"
    assert "curl exit 28" in (run.run_dir / "transcript.jsonl").read_text()


def test_an_odd_retry_count_from_the_agents_shell_is_recorded_and_voids_nothing(
    tmp_path: Path,
) -> None:
    """Issue 33: ``x-stainless-retry-count: ²`` (the byte 0xB2) on a call from the agent's own
    curl failed the gateway's observer, and the run was infra_fail. Now the call is recorded
    with what was odd in it, and the run is graded on its work (no fix: model_fail)."""
    run = replay(tmp_path, stub="odd-retry-count")
    assert run.outcome == "model_fail", run.reason
    assert "hidden tests not resolved" in run.reason
    assert run.grade.infra_errors == [] and run.grade.wire.healthy
    events = (run.run_dir / "events.jsonl").read_text()
    assert "gateway.addon_failed" not in events
    odd = [c for c in model_calls(run) if c["request"]["odd"]]
    assert len(odd) == 1, odd
    assert odd[0]["request"]["odd"] == ["x-stainless-retry-count '²' is not a count"]
    assert odd[0]["request"]["client"].startswith("user-agent=curl/")
    assert (odd[0]["retry_count"], odd[0]["verdict"]) == (0, "ok")


def test_a_refusal_the_agent_draws_after_the_harness_exits_voids_nothing(tmp_path: Path) -> None:
    """Issue 33: a call for a model the account may not use, held open by the agent's
    background process until the harness exited, drew a 403 the grader took for the runner's
    (infra_fail). The stub refuses it as OpenAI does; the grader sees another model, another
    client, after the harness exited: the agent's act, recorded, and the run is graded on its
    work."""
    run = replay(tmp_path, stub="late-refusal")
    assert run.outcome == "model_fail", run.reason
    assert run.grade.infra_errors == [] and run.grade.wire.healthy
    wire = run.grade.wire
    assert (wire.account_refused, wire.agent_refusals, wire.rejected) == (None, 1, 1)
    calls = sorted(model_calls(run), key=lambda c: c["t_request_end"])
    late = calls[-1]
    assert (late["model"], late["status"], late["error_class"]) == ("o1-pro", 403, "auth")
    assert "does not have access to model `o1-pro`" in late["error_detail"]
    assert late["request"]["client"] == "user-agent=late-caller/1.0"
    harness = calls[:-1]
    last = harness[-1]
    assert late["t_request_end"] > last["t_request_end"] + last["total_ms"] / 1000
    assert harness and {c["model"] for c in harness} == {"gpt-4.1"}
    assert {c["request"]["client"] for c in harness} == {"user-agent=Python-urllib/3.11"}
    assert all(c["verdict"] == "ok" for c in harness), "the refusal is the last word on the wire"
