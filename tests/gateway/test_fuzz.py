"""Property-based fuzzing of the gateway's request handling: nothing the agent sends may fail an
addon (a failed addon marks the run invalid, so one odd header would void a losing run).

Two levels. The model-call observer and the grader's roll-up run here, on any request line,
headers, body and answer hypothesis makes; the whole addon chain runs in the gateway's venv,
beside mitmproxy (``fuzz_check.py``), on requests to every route. Examples are bounded for
``make test``, derandomised (the same examples every run, no example database) and without a
deadline (the machine is shared).
"""

from __future__ import annotations

import itertools
import json
import subprocess
from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from replay.gateway.modelcalls import ModelCall, ModelCallObserver, failure_class
from replay.grade.wire import summarize_wire
from tests.gateway.conftest import DEMO, GATEWAY_PYTHON, ROOT

FUZZ = settings(
    max_examples=300,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)
ADDON_EXAMPLES = 400
"""Requests the addon chain gets in the gateway's venv (about 20 s on a busy machine)."""

# Header values as the gateway hands them to the observer: bytes read as latin-1, so any code
# point below 256; the same through mitmproxy's own reading (UTF-8, surrogateescape) adds lone
# surrogates and every other character.
latin1 = st.binary(max_size=40).map(lambda b: b.decode("latin-1"))
odd_counts = st.sampled_from(
    ["\xb2", "\xc2\xb2", "\u0661", "9" * 5000, "-1", " 2 ", "1, 2", "\udcff"]
)
values = st.one_of(latin1, st.text(st.characters(codec=None), max_size=40), odd_counts)
names = st.one_of(
    st.sampled_from(["x-stainless-retry-count", "X-Stainless-Retry-Count", "user-agent", "x-app"]),
    latin1,
)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(st.characters(codec=None)),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner),
    max_leaves=10,
)


@st.composite
def bodies(draw: st.DrawFn) -> bytes:
    kind = draw(st.sampled_from(["bytes", "json", "request", "deep"]))
    if kind == "bytes":
        return draw(st.binary(max_size=200))
    if kind == "deep":
        return draw(st.sampled_from([b"[", b'{"a":'])) * draw(st.integers(900, 100_000))
    if kind == "json":
        return json.dumps(draw(json_values)).encode()
    fields = {"model": draw(st.one_of(st.text(st.characters(codec=None)), json_values))}
    fields["stream"] = draw(st.one_of(st.booleans(), json_values))
    fields["stream_options"] = draw(st.one_of(st.just({"include_usage": True}), json_values))
    return json.dumps(fields).encode()


paths = st.one_of(
    st.sampled_from(["/v1/chat/completions", "/v1/responses", "/v1/messages", "/v1/models"]),
    st.text(st.characters(codec=None), max_size=30).map(lambda p: "/" + p),
)
urls = st.one_of(
    st.tuples(st.sampled_from(["api.openai.com", "api.anthropic.com"]), paths).map(
        lambda hp: f"https://{hp[0]}{hp[1]}"
    ),
    st.text(st.characters(codec=None), max_size=40),
)
answers = st.one_of(
    st.sampled_from(
        [
            b'data: {"choices": [], "usage": {"prompt_tokens": 1}}\n\ndata: [DONE]\n\n',
            b'event: message_stop\ndata: {"type": "message_stop"}\n\n',
            b'{"error": {"message": "no", "code": "model_not_found"}}',
            b"data: " + b"[" * 5000 + b"\n\n",
        ]
    ),
    st.binary(max_size=300),
    json_values.map(lambda v: json.dumps(v).encode()),
)


def recordable(call: ModelCall) -> None:
    """What the gateway does with a record: dump it as JSON (UTF-8), and read it back."""
    text = call.model_dump_json()
    text.encode("utf-8")
    assert ModelCall.model_validate_json(text) == call


@FUZZ
@given(
    method=st.text(st.characters(codec=None), min_size=1, max_size=8),
    url=urls,
    headers=st.lists(st.tuples(names, values), max_size=8),
    body=bodies(),
    status=st.integers(100, 599),
    response_headers=st.lists(
        st.tuples(
            st.sampled_from(["content-type", "content-encoding", "x-request-id", "request-id"]),
            st.one_of(
                latin1, st.sampled_from(["text/event-stream", "application/json", "gzip", "br"])
            ),
        ),
        max_size=4,
    ),
    answer=answers,
    cuts=st.lists(st.integers(0, 300), max_size=4),
    ending=st.sampled_from(["chunks", "whole", "error"]),
    error=st.text(st.characters(codec=None), max_size=30),
)
def test_the_observer_records_any_request_and_answer(
    method: str,
    url: str,
    headers: list[tuple[str, str]],
    body: bytes,
    status: int,
    response_headers: list[tuple[str, str]],
    answer: bytes,
    cuts: list[int],
    ending: str,
    error: str,
) -> None:
    obs = ModelCallObserver()
    obs.begin(method, url, headers, body, 1000.0)
    if ending == "error":
        call = obs.error(failure_class(error, False), error, 1001.0)
    else:
        obs.headers(status, response_headers, 1000.5)
        if ending == "whole":
            call = obs.end(1001.0, answer)
        else:
            edges = [0, *sorted(c for c in cuts if c <= len(answer)), len(answer)]
            for a, b in itertools.pairwise(edges):
                obs.chunk(answer[a:b])
            call = obs.end(1001.0)
    recordable(call)
    assert call.request is not None
    assert call.retry_count < 10_000
    # Whatever the records, the grader rolls them up.
    summary = summarize_wire([call, call.model_copy(update={"t_request_end": 999.0})], "m", 1.0)
    assert summary.calls == 2


@FUZZ
@given(count=values, second=st.one_of(st.none(), values))
def test_any_retry_count_header_is_read_or_recorded_as_odd(count: str, second: str | None) -> None:
    headers = [("x-stainless-retry-count", count)]
    if second is not None:
        headers.append(("X-Stainless-Retry-Count", second))
    obs = ModelCallObserver()
    obs.begin("POST", "https://api.openai.com/v1/chat/completions", headers, b"{}", 0.0)
    call = obs.error("reset", "x", 1.0)
    recordable(call)
    assert call.request is not None
    plain = count.strip(" \t")
    if plain.isascii() and plain.isdigit() and len(plain) <= 4:
        assert call.retry_count == int(plain)
    else:
        assert call.retry_count == 0
        assert any("is not a count" in odd for odd in call.request.odd), call.request.odd
    assert (second is not None) == any("sent 2 times" in odd for odd in call.request.odd)


def _gateway(script: str, *args: str, timeout: float) -> dict[str, Any]:
    assert GATEWAY_PYTHON.exists(), f"{GATEWAY_PYTHON} is missing: `make test` builds it"
    done = subprocess.run(
        [str(GATEWAY_PYTHON), str(ROOT / "tests" / "gateway" / script), *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
        timeout=timeout,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-6000:]
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_no_request_to_any_route_fails_an_addon() -> None:
    """Hypothesis drives requests through the real addon chain (fuzz_check.py): every route
    is reached, every call the model route let out is logged, and no addon failed."""
    result = _gateway("fuzz_check.py", str(DEMO), str(ADDON_EXAMPLES), timeout=600)
    assert result["invalid"] == []
    routes: dict[str, int] = result["routes"]
    reached: Callable[[str], bool] = lambda r: routes.get(r, 0) > 0  # noqa: E731
    assert all(map(reached, ["model-out", "fake", "registry", "deny"])), routes
    events: dict[str, int] = result["events"]
    assert events.get("model.call") == routes["model-out"], (events, routes)
    assert "gateway.addon_failed" not in events
