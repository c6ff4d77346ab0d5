"""The runner's real key goes to the allow-listed inference endpoints over TLS, and nowhere else.

Two gateways, each in front of a provider of the test's own on loopback:

- a TLS provider (a self-signed certificate the gateway is told to trust) that records every
  request it gets and, on cue, answers the way a careless or hostile one might: the key echoed
  in a header, split across two stream chunks, inside a gzip stream it was asked not to send,
  quoted in a 401;
- a plain TCP listener that only records the bytes it receives, behind a gateway whose
  ``--model-upstream`` is plain HTTP on loopback: what the agent could reach there if a route
  check came too late (after a large body made mitmproxy connect).
"""

from __future__ import annotations

import asyncio
import gzip
import json
import socket
import ssl
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.gateway.conftest import DEMO, Gateway, start_gateway, stop_gateway
from tests.serving import serving

OPENAI_KEY = "sk-proj-REALKEYdoNotLeak0123456789abcdefghijklmnopqrstuv"
ANTHROPIC_KEY = "sk-ant-api03-REALKEYdoNotLeak0123456789abcdefghijklmnopq"
KEYS = (OPENAI_KEY, ANTHROPIC_KEY)
SECRETS_ENV = {"REPLAY_OPENAI_API_KEY": OPENAI_KEY, "REPLAY_ANTHROPIC_API_KEY": ANTHROPIC_KEY}
BIG = 70 * 1024 * 1024  # past the gateway's 64 MB body limit

ALLOWED = [
    ("POST", "https://api.openai.com/v1/chat/completions"),
    ("POST", "https://api.openai.com/v1/responses"),
    ("GET", "https://api.openai.com/v1/models"),
    ("GET", "https://api.openai.com/v1/models/gpt-4.1"),
    ("GET", "https://api.openai.com/v1/models/ft:gpt-4o-mini:acme:tuned:abc123"),
    ("POST", "https://api.anthropic.com/v1/messages?beta=true"),
    ("POST", "https://api.anthropic.com/v1/messages/count_tokens?beta=true"),
    ("GET", "https://api.anthropic.com/v1/models?limit=20"),
    ("GET", "https://api.anthropic.com/v1/models/claude-sonnet-4-5"),
]
REFUSED = [
    ("DELETE", "https://api.openai.com/v1/organization/admin_api_keys/key_abc"),
    ("GET", "https://api.openai.com/v1/organization/admin_api_keys"),
    ("POST", "https://api.openai.com/v1/organization/projects"),
    ("GET", "https://api.openai.com/v1/files"),
    ("POST", "https://api.openai.com/v1/fine_tuning/jobs"),
    ("GET", "https://api.openai.com/v1/responses/resp_123"),
    ("GET", "https://api.openai.com/v1/chat/completions"),
    ("DELETE", "https://api.openai.com/v1/models/gpt-4.1"),
    ("POST", "https://api.openai.com/v1/chat/completions/"),
    ("POST", "https://api.openai.com/v1/messages"),
    ("POST", "https://api.anthropic.com/v1/messages/batches"),
    ("GET", "https://api.anthropic.com/v1/organizations/api_keys"),
    ("PUT", "https://api.anthropic.com/v1/messages"),
    # Plain HTTP to a real provider, and other ports: the key would travel in cleartext or
    # somewhere that is not the provider's API.
    ("POST", "http://api.openai.com/v1/chat/completions"),
    ("POST", "http://api.anthropic.com/v1/messages"),
    ("POST", "https://api.openai.com:8443/v1/chat/completions"),
]


# ----------------------------------------------------------------- the test's own providers


def self_signed(tmp: Path) -> tuple[Path, Path]:
    key, cert = tmp / "upstream-key.pem", tmp / "upstream-cert.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            str(key),
            "-out",
            str(cert),
            "-days",
            "2",
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
        ],
        check=True,
        capture_output=True,
    )
    return key, cert


def _key_in(headers: dict[str, str]) -> str:
    return headers.get("x-api-key") or headers.get("authorization", "").removeprefix("Bearer ")


class Provider:
    """Records each request; answers by cue words in the request body."""

    def __init__(self) -> None:
        self.seen: list[dict[str, Any]] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body, more = b"", True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        self.seen.append(
            {
                "method": scope["method"],
                "path": scope["path"],
                "query": scope["query_string"].decode(),
                "headers": headers,
            }
        )
        key = _key_in(headers).encode()

        async def start(status: int, extra: list[tuple[bytes, bytes]]) -> None:
            await send({"type": "http.response.start", "status": status, "headers": extra})

        async def chunk(data: bytes, more: bool = True) -> None:
            await send({"type": "http.response.body", "body": data, "more_body": more})

        sse = [(b"content-type", b"text/event-stream")]
        if b"split-stream" in body:
            await start(200, sse)
            head = b'data: {"choices":[{"index":0,"delta":{"content":"key ' + key[:11]
            await chunk(head)
            await asyncio.sleep(0.2)  # two reads at the gateway, the key cut between them
            await chunk(key[11:] + b' end"},"finish_reason":null}]}\n\n')
            await asyncio.sleep(0.2)
            await chunk(b"data: [DONE]\n\n", more=False)
        elif b"gzip-stream" in body:
            raw = gzip.compress(
                b'data: {"choices":[{"index":0,"delta":{"content":"' + key + b'"}}]}\n\n'
                b"data: [DONE]\n\n"
            )
            await start(200, [*sse, (b"content-encoding", b"gzip")])
            for i in range(0, len(raw), 16):
                await chunk(raw[i : i + 16])
                await asyncio.sleep(0.01)
            await chunk(b"", more=False)
        elif b"brotli-body" in body:
            # An encoding the gateway cannot read (so cannot scrub): the key, as it would
            # look to a client that decodes it (the gateway cannot tell).
            await start(200, [(b"content-type", b"application/json"), (b"content-encoding", b"br")])
            await chunk(b'{"echo": "' + key + b'"}', more=False)
        elif b"quote-key-401" in body:
            error = {
                "error": {
                    "message": f"Incorrect API key provided: {key.decode()}.",
                    "type": "invalid_request_error",
                    "param": None,
                    "code": "invalid_api_key",
                }
            }
            await start(401, [(b"content-type", b"application/json")])
            await chunk(json.dumps(error).encode(), more=False)
        else:
            answer = {
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": f"you sent {key.decode()}"},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            }
            payload = json.dumps(answer).encode()
            await start(
                200,
                [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(payload)).encode()),
                    (b"x-echo-key", key),
                ],
            )
            await chunk(payload, more=False)


class RawListener:
    """A TCP listener on loopback that accepts and keeps every byte it receives."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.received = bytearray()
        self.connections = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            self.connections += 1
            threading.Thread(target=self._read, args=(conn,), daemon=True).start()

    def _read(self, conn: socket.socket) -> None:
        conn.settimeout(0.2)
        with conn:
            while not self._stop.is_set():
                try:
                    data = conn.recv(65536)
                except TimeoutError:
                    continue
                except OSError:
                    return
                if not data:
                    return
                self.received += data

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)
        self.sock.close()


# ----------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def tls_world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Gateway, Provider, Path]]:
    tmp = tmp_path_factory.mktemp("tls")
    key, cert = self_signed(tmp)
    provider = Provider()
    events_db = tmp / "events.db"
    with serving(provider, ssl_keyfile=str(key), ssl_certfile=str(cert)) as url:
        upstream = url.replace("http://", "https://")
        gw = start_gateway(
            tmp,
            str(DEMO),
            "--service",
            "slack",
            "--model-upstream",
            upstream,
            "--events-db",
            f"sqlite:///{events_db}",
            env={**SECRETS_ENV, "REPLAY_MODEL_UPSTREAM_CA": str(cert)},
        )
        try:
            yield gw, provider, events_db
        finally:
            stop_gateway(gw)


@pytest.fixture(scope="module")
def plain_world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Gateway, RawListener]]:
    tmp = tmp_path_factory.mktemp("plain")
    listener = RawListener()
    gw = start_gateway(
        tmp,
        str(DEMO),
        "--service",
        "slack",
        "--model-upstream",
        f"http://127.0.0.1:{listener.port}",
        env=SECRETS_ENV,
    )
    try:
        yield gw, listener
    finally:
        stop_gateway(gw)
        listener.close()


def agent(gw: Gateway, timeout: float = 20) -> httpx.Client:
    """A client inside the world: the proxy, trust in the gateway's CA, placeholder keys."""
    context = ssl.create_default_context(cafile=gw.ca)
    headers = {"authorization": "Bearer sk-replay-placeholder", "x-api-key": "placeholder"}
    return httpx.Client(proxy=gw.proxy, verify=context, timeout=timeout, headers=headers)


def denied(gw: Gateway) -> list[dict[str, Any]]:
    return [e["data"] for e in gw.events() if e["kind"] == "egress.denied"]


# ----------------------------------------------------------------- the allow-list


def test_the_key_goes_only_to_allow_listed_inference_calls(tls_world) -> None:
    gw, provider, _ = tls_world
    before = len(provider.seen)
    with agent(gw) as client:
        for method, url in ALLOWED:
            r = client.request(method, url, json={"model": "m"} if method == "POST" else None)
            assert r.status_code == 200, (method, url, r.text)
    seen = provider.seen[before:]
    assert [(s["method"], s["path"]) for s in seen] == [(m, httpx.URL(u).path) for m, u in ALLOWED]
    for request, (_, url) in zip(seen, ALLOWED, strict=True):
        headers = request["headers"]
        if "anthropic" in url:
            assert headers["x-api-key"] == ANTHROPIC_KEY and "authorization" not in headers
        else:
            assert headers["authorization"] == f"Bearer {OPENAI_KEY}"
            assert "x-api-key" not in headers
        assert headers["accept-encoding"] == "identity"
        assert headers["host"] == httpx.URL(url).host, "the provider's own name"
    assert seen[5]["query"] == "beta=true", "the Anthropic SDK's beta query passes"


def test_everything_else_on_a_model_host_is_refused_before_it_leaves(tls_world) -> None:
    gw, provider, _ = tls_world
    before, denied_before = len(provider.seen), len(denied(gw))
    with agent(gw) as client:
        for method, url in REFUSED:
            r = client.request(method, url, content=b'{"model": "m"}')
            assert r.status_code == 403, (method, url, r.status_code)
            assert OPENAI_KEY not in r.text and ANTHROPIC_KEY not in r.text
    assert provider.seen[before:] == [], "no refused request reached the provider"
    events = denied(gw)[denied_before:]
    assert len(events) == len(REFUSED)
    reasons = [e["reason"] for e in events]
    assert "/v1/organization/admin_api_keys/key_abc is not an inference endpoint" in reasons[0]
    assert "GET is not allowed on /v1/chat/completions" in reasons[6]
    assert "HTTPS on port 443 only, not http on 80" in reasons[-3]
    assert "not https on 8443" in reasons[-1]


def test_the_agent_cannot_choose_the_account_the_key_bills(tls_world) -> None:
    gw, provider, _ = tls_world
    with agent(gw) as client:
        r = client.post(
            "https://api.openai.com/v1/chat/completions",
            json={"model": "m"},
            headers={"openai-organization": "org-evil", "openai-project": "proj_evil"},
        )
    assert r.status_code == 200
    headers = provider.seen[-1]["headers"]
    assert "openai-organization" not in headers and "openai-project" not in headers


# ----------------------------------------------------------------- nothing comes back


def test_a_key_echoed_in_a_header_or_a_body_is_scrubbed(tls_world) -> None:
    gw, _, _ = tls_world
    with agent(gw) as client:
        r = client.post("https://api.openai.com/v1/chat/completions", json={"model": "m"})
    assert r.status_code == 200
    assert OPENAI_KEY not in r.text and OPENAI_KEY not in str(r.headers)
    assert "[replay: credential removed]" in r.headers["x-echo-key"]
    assert json.loads(r.text)["choices"][0]["message"]["content"].startswith(
        "you sent [replay: credential removed]"
    )
    assert len(r.content) == int(r.headers["content-length"]), "the mask keeps the length"


def test_a_key_split_across_two_stream_chunks_is_scrubbed(tls_world) -> None:
    gw, _, _ = tls_world
    with (
        agent(gw) as client,
        client.stream(
            "POST", "https://api.openai.com/v1/chat/completions", json={"cue": "split-stream"}
        ) as r,
    ):
        body = b"".join(r.iter_raw())
    assert r.status_code == 200
    assert OPENAI_KEY.encode() not in body
    assert OPENAI_KEY[:11].encode() not in body, "not even the half before the cut"
    assert b"key [replay: credential removed]" in body and body.endswith(b"data: [DONE]\n\n")


def test_a_gzip_stream_is_decoded_and_scrubbed(tls_world) -> None:
    gw, provider, _ = tls_world
    with (
        agent(gw) as client,
        client.stream(
            "POST", "https://api.openai.com/v1/chat/completions", json={"cue": "gzip-stream"}
        ) as r,
    ):
        raw = b"".join(r.iter_raw())
    assert provider.seen[-1]["headers"]["accept-encoding"] == "identity", "it was asked"
    assert r.status_code == 200 and "content-encoding" not in r.headers
    assert OPENAI_KEY.encode() not in raw
    assert b"[replay: credential removed]" in raw and raw.endswith(b"data: [DONE]\n\n")


def test_an_encoding_the_gateway_cannot_read_is_refused_not_passed(tls_world) -> None:
    gw, _, _ = tls_world
    with agent(gw) as client:
        try:
            r = client.post(
                "https://api.openai.com/v1/chat/completions", json={"cue": "brotli-body"}
            )
            seen = r.content + str(r.headers).encode()
            assert r.status_code >= 500, r.status_code
        except httpx.TransportError:
            seen = b""  # the gateway cut the connection: nothing came through
    assert OPENAI_KEY.encode() not in seen
    call = [e["data"] for e in gw.events() if e["kind"] == "model.call"][-1]
    assert (call["error_class"], call["verdict"]) == ("encoding", "transport_fail"), call
    assert "content-encoding 'br'" in call["error_detail"]


def test_a_401_quoting_the_key_is_scrubbed_before_anything_is_logged(tls_world) -> None:
    gw, _, events_db = tls_world
    with agent(gw) as client:
        r = client.post(
            "https://api.anthropic.com/v1/messages",
            json={"cue": "quote-key-401"},
            headers={"anthropic-version": "2023-06-01"},
        )
    assert r.status_code == 401 and ANTHROPIC_KEY not in r.text
    assert "Incorrect API key provided: [replay: credential removed]" in r.text
    calls = [e["data"] for e in gw.events() if e["kind"] == "model.call"]
    assert calls[-1]["error_class"] == "auth" and calls[-1]["status"] == 401
    assert "[replay: credential removed]" in calls[-1]["error_detail"]
    # Everything the gateway recorded, as served and as stored on disk.
    with gw.control() as c:
        everything = c.get("/_replay/events").text
    stored = b"".join(p.read_bytes() for p in events_db.parent.glob(events_db.name + "*"))
    for key in KEYS:
        assert key not in everything
        assert key.encode() not in stored
    assert b"Incorrect API key provided" in stored, "the record is there, scrubbed"


# ----------------------------------------------------------------- no upstream bytes


def test_refused_requests_send_no_byte_upstream_whatever_their_size(plain_world) -> None:
    gw, listener = plain_world
    upstream = f"http://127.0.0.1:{listener.port}"
    big = b"x" * BIG
    denied_before = len(denied(gw))
    with agent(gw, timeout=60) as client:
        cases = [
            # The upstream's own address, addressed directly: not part of the world.
            ("POST", f"{upstream}/v1/chat/completions", big),
            ("POST", f"{upstream}/v1/chat/completions", b"{}"),
            # The model host, off the allow-list, with a body past the streaming limit.
            ("POST", "https://api.openai.com/v1/files", big),
            ("DELETE", "https://api.openai.com/v1/organization/admin_api_keys/key_abc", None),
            ("POST", "http://api.openai.com/v1/chat/completions", b"{}"),
            ("POST", "https://api.openai.com:8443/v1/chat/completions", b"{}"),
        ]
        for method, url, body in cases:
            try:
                r = client.request(method, url, content=body)
            except httpx.TransportError:
                continue  # a refusal may also close the connection mid-upload
            assert r.status_code in (403, 413), (method, url, r.status_code)
    assert listener.connections == 0 and bytes(listener.received) == b""
    assert len(denied(gw)) - denied_before == len(cases), "each refusal is recorded"
    # The control: an allowed call does reach this listener, with the real key (plain HTTP
    # to loopback is the stub's case). It never answers, so the client gives up.
    with agent(gw, timeout=1) as client, pytest.raises(httpx.TimeoutException):
        client.post("https://api.openai.com/v1/chat/completions", json={"model": "m"})
    for _ in range(100):
        if b"\r\n\r\n" in listener.received:
            break
        threading.Event().wait(0.05)
    head = bytes(listener.received).split(b"\r\n\r\n")[0].decode()
    assert head.startswith("POST /v1/chat/completions HTTP/1.1")
    assert f"authorization: Bearer {OPENAI_KEY}".lower() in head.lower()
