"""Run inside .venv-gateway (mitmproxy and hypothesis): fuzz the gateway's addon chain.

Hypothesis builds requests an agent could send (any method, host among the world's, the model
hosts and others, path bytes, header names and values in any bytes, repeated headers, odd
counts, bodies that are JSON of the wrong types, nested past the parser's limit, compressed or
claiming to be, or not JSON at all) and drives them through the real addons in mitmproxy's
order (``requestheaders``, ``request``; for a call the model route lets out, an upstream answer
of any status, headers and body, passed through the stream the route installs, then
``response``, or a transport ``error``). The world behind them is the demo snapshot's, served
in process as the gateway serves it. Nothing may fail an addon: ``gate.invalid`` must stay
empty. Also feeds the logging filter that records requests mitmproxy refuses to parse.

``python fuzz_check.py SNAPSHOT EXAMPLES``; prints one JSON line (what the examples reached)
for tests/gateway/test_fuzz.py, or raises hypothesis's falsifying example.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mitmproxy import flow as mflow
from mitmproxy import http
from mitmproxy.test import tflow

from replay.gateway.addons import addons
from replay.gateway.config import REGISTRY_HOSTS, GatewayConfig
from replay.gateway.gate import ROUTE, Gate
from replay.gateway.model_route import MODEL_ALLOWED
from replay.gateway.proxy import build_gate
from replay.gateway.unparsed import Unparsed

KEY = "sk-fuzz-real-key-0123456789abcdef"
ODD_NUMBERS = [
    "\xb2",  # '²' as a single byte, read as latin-1: isdigit() but not int()
    "\xc2\xb2",  # the same in UTF-8, read as latin-1
    "²",
    "\u0661",
    "\u0966",
    "9" * 5000,
    "-1",
    " 1 ",
    "1, 2",
    "0x1",
    "",
    "\x00",
    "1" * 40,
]
NAMES = [
    b"x-stainless-retry-count",
    b"user-agent",
    b"content-type",
    b"content-encoding",
    b"content-length",
    b"transfer-encoding",
    b"authorization",
    b"x-api-key",
    b"anthropic-version",
    b"host",
    b"accept-encoding",
    b"openai-organization",
    b"cookie",
]
MODEL_CALLS = [
    ("POST", b"/v1/chat/completions"),
    ("POST", b"/v1/responses"),
    ("POST", b"/v1/messages"),
    ("POST", b"/v1/messages/count_tokens"),
    ("GET", b"/v1/models"),
    ("GET", b"/v1/models/gpt-4.1"),
    ("POST", b"/v1/messages?beta=true"),
]
WORLD_PATHS = [
    b"/",
    b"/user",
    b"/repos/acme/caret/issues",
    b"/repos/acme/caret/pulls?per_page=\xff",
    b"/graphql",
    b"/api/chat.postMessage",
    b"/simple/",
    b"/simple/caret/",
    b"/pypi/caret/json",
    b"/_replay/reset",
    b"/%5Freplay/events",
]


def _lenient_text(max_size: int = 40) -> st.SearchStrategy[str]:
    # Any code point, lone surrogates included (what JSON's \\ud800 decodes to).
    return st.text(st.characters(codec=None), max_size=max_size)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | _lenient_text(),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(_lenient_text(8), inner, max_size=4)
    ),
    max_leaves=12,
)


@st.composite
def bodies(draw: st.DrawFn) -> bytes:
    kind = draw(st.sampled_from(["empty", "bytes", "json", "request", "deep", "gzip-claim"]))
    if kind == "empty":
        return b""
    if kind == "bytes":
        return draw(st.binary(max_size=200))
    if kind == "deep":
        depth = draw(st.integers(min_value=900, max_value=200_000))
        return draw(st.sampled_from([b"[", b'{"a":'])) * depth
    if kind == "gzip-claim":
        return b"\x1f\x8b" + draw(st.binary(max_size=50))
    if kind == "json":
        return json.dumps(draw(json_values)).encode()
    # A model request with fields of any type.
    request: dict[str, Any] = {
        "model": draw(st.one_of(_lenient_text(300), json_values)),
        "messages": draw(st.one_of(st.just([{"role": "user", "content": "hi"}]), json_values)),
        "max_tokens": draw(st.one_of(st.integers(), json_values)),
    }
    if draw(st.booleans()):
        request["stream"] = draw(st.one_of(st.booleans(), json_values))
        request["stream_options"] = draw(st.one_of(st.just({"include_usage": True}), json_values))
    return json.dumps(request).encode()


header_values = st.one_of(
    st.binary(max_size=60),
    st.sampled_from(ODD_NUMBERS).map(lambda s: s.encode("utf-8", "surrogatepass")),
    st.sampled_from([b"gzip", b"br", b"deflate", b"zstd", b"identity", b"gzip, br", b"chunked"]),
    st.sampled_from([b"application/json", b"text/event-stream", b"multipart/form-data; b=x"]),
)
header_lists = st.lists(
    st.tuples(st.one_of(st.sampled_from(NAMES), st.binary(min_size=1, max_size=20)), header_values),
    max_size=10,
)


@st.composite
def requests(draw: st.DrawFn, hosts: list[str]) -> http.Request:
    """A request of one of three kinds: an inference call the model route lets out (so the
    observer reads it), a request to the world's hosts, or anything at all."""
    kind = draw(st.sampled_from(["model", "world", "any"]))
    if kind == "model":
        host = draw(st.sampled_from(["api.openai.com", "api.anthropic.com"]))
        method, path = draw(st.sampled_from(MODEL_CALLS))
        port = 443
    else:
        host = draw(st.sampled_from(hosts)) if kind == "world" else draw(st.text(max_size=30))
        path = draw(
            st.one_of(st.sampled_from(WORLD_PATHS), st.binary(max_size=60).map(lambda b: b"/" + b))
        )
        method = draw(
            st.one_of(
                st.sampled_from(["POST", "GET", "HEAD", "PUT", "DELETE", "PATCH", "OPTIONS"]),
                st.text(min_size=1, max_size=10),
            )
        )
        port = draw(st.sampled_from([443, 80, 8443]))
    fields = draw(header_lists)
    if kind != "any":
        # A Host header that names another host is refused before any route (tested apart).
        fields = [(k, v) for k, v in fields if k.lower() != b"host"]
    if draw(st.booleans()):
        fields.append((b"host", host.encode("utf-8", "surrogateescape")))
    return http.Request(
        host=host,
        port=port,
        method=method.encode("utf-8", "surrogatepass"),
        scheme=b"https",
        authority=b"",
        path=path,
        http_version=draw(st.sampled_from([b"HTTP/1.1", b"HTTP/2.0"])),
        headers=http.Headers(fields),
        content=draw(bodies()),
        trailers=None,
        timestamp_start=1000.0,
        timestamp_end=1000.1,
    )


SSE = (
    b'data: {"choices": [{"delta": {"content": "hi"}, "finish_reason": "stop"}]}\n\n'
    b'data: {"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 1}}\n\n'
    b"data: [DONE]\n\n"
)
ANTHROPIC_SSE = (
    b'event: message_start\ndata: {"type": "message_start", "message": {"usage": '
    b'{"input_tokens": 3}}}\n\nevent: message_stop\ndata: {"type": "message_stop"}\n\n'
)


@st.composite
def answers(draw: st.DrawFn) -> tuple[int, list[tuple[bytes, bytes]], bytes, list[int]] | str:
    """An upstream answer (status, headers, body, chunk cuts), or a transport error message."""
    if draw(st.integers(0, 9)) == 0:
        return draw(
            st.sampled_from(
                ["server closed connection", "Client disconnected.", "TLS handshake failed", ""]
            )
            | st.text(max_size=40)
        )
    status = draw(st.sampled_from([200, 400, 401, 403, 404, 429, 500, 529]) | st.integers(100, 599))
    body = draw(
        st.one_of(
            st.sampled_from([SSE, ANTHROPIC_SSE, b'{"choices": []}', b"", b"\x1f\x8b\x08garbage"]),
            st.binary(max_size=200),
            json_values.map(lambda v: json.dumps(v).encode()),
            st.just(b"data: " + b"[" * 5000 + b"\n\n"),
        )
    )
    headers = draw(header_lists)
    cuts = draw(st.lists(st.integers(0, len(body)), max_size=4))
    return status, headers, body, sorted(cuts)


async def drive(chain: list[Any], request: http.Request, answer: Any) -> str | None:
    """One request through the addons, as mitmproxy calls them; the route it took."""
    f = tflow.tflow()
    f.request = request
    f.response = None
    for hook in ("requestheaders", "request"):
        for addon in chain:
            fn = getattr(addon, hook, None)
            if fn is not None:
                result = fn(f)
                if asyncio.iscoroutine(result):
                    await result
    route: str | None = f.metadata.get(ROUTE)
    if f.metadata.get(MODEL_ALLOWED) and f.response is None and f.error is None:
        route = "model-out"
        if isinstance(answer, str):
            f.error = mflow.Error(answer)
            for addon in chain:
                if hasattr(addon, "error"):
                    addon.error(f)
        else:
            status, headers, body, cuts = answer
            f.response = http.Response.make(status, b"", headers)
            f.response.timestamp_start = 1000.2
            for addon in chain:
                if hasattr(addon, "responseheaders"):
                    addon.responseheaders(f)
            stream = f.response.stream
            if callable(stream):
                edges = [0, *cuts, len(body)]
                for a, b in itertools.pairwise(edges):
                    stream(body[a:b])
                stream(b"")
            else:
                f.response.content = body
            f.response.timestamp_end = 1000.3
            for addon in chain:
                if hasattr(addon, "response"):
                    addon.response(f)
    wire = f.metadata.get("replay.wire")
    if wire is not None:
        wire.stop()
    return route


def main() -> None:
    snapshot, examples = Path(sys.argv[1]), int(sys.argv[2])
    with tempfile.TemporaryDirectory(prefix="replay-fuzz-") as tmp:
        fuzz(snapshot, examples, Path(tmp))


def fuzz(snapshot: Path, examples: int, tmp: Path) -> None:
    """Run the examples against a gate on ``snapshot`` and print what they reached."""
    config = GatewayConfig(snapshot=snapshot, confdir=tmp, state_file=tmp / "state.json")
    gate: Gate = build_gate(config)
    chain = addons(
        gate,
        {
            "api.openai.com": ("authorization", f"Bearer {KEY}"),
            "api.anthropic.com": ("x-api-key", KEY),
        },
    )
    hosts = sorted({*gate.fake_hosts, *gate.docs_hosts, *REGISTRY_HOSTS})
    hosts += ["api.openai.com", "api.anthropic.com", "outside.invalid", "API.OPENAI.COM."]
    unparsed = Unparsed(gate, logging.INFO)
    loop = asyncio.new_event_loop()
    routes: Counter[str] = Counter()

    @settings(
        max_examples=examples,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(request=requests(hosts), answer=answers(), log_line=st.text(max_size=80))
    def one(request: http.Request, answer: Any, log_line: str) -> None:
        before = len(gate.invalid)
        routes[str(loop.run_until_complete(drive(chain, request, answer)))] += 1
        record = logging.LogRecord("mitmproxy.proxy.server", logging.INFO, "", 0, "", (), None)
        record.msg = f"client: Bad HTTP request line: {log_line}"
        unparsed.filter(record)
        assert gate.invalid[before:] == [], gate.invalid[before:]

    one()
    with gate.world.session() as s:
        kinds = Counter(e.kind for e in gate.world.events.read(s))
    loop.close()
    print(json.dumps({"routes": routes, "events": kinds, "invalid": gate.invalid}))


if __name__ == "__main__":
    main()
