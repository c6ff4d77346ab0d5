"""The gateway, for real: mitmproxy in its own process, clients through HTTPS_PROXY.

Stand-ins for "the internet" are listeners on this machine that must see no connection.
"""

from __future__ import annotations

import json
import socket
import ssl
import threading
from typing import Any

import httpx
import pytest
from fastapi import FastAPI, Request

from tests.gateway.conftest import DEMO, Gateway
from tests.serving import serving


class Listener:
    """A TCP listener that only counts who connects to it."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            self.accepted += 1
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self.thread.join()
        self.sock.close()


def denied(gw: Gateway) -> list[dict[str, Any]]:
    return [e for e in gw.events() if e["kind"] == "egress.denied"]


def test_everything_outside_the_world_is_refused_and_recorded(gateway_factory) -> None:
    outside = Listener()
    try:
        gw = gateway_factory(str(DEMO), "--service", "slack")
        with gw.client() as client:
            plain = client.get(f"http://127.0.0.1:{outside.port}/secret")
            assert plain.status_code == 403
            assert "outside the frozen world" in plain.text
            named = client.get("http://example.invalid/")
            assert named.status_code == 403
            with pytest.raises(httpx.ProxyError, match="403"):
                client.get(f"https://127.0.0.1:{outside.port}/")
            with pytest.raises(httpx.ProxyError, match="403"):
                client.get("https://pypi.example.invalid/simple/")
        assert outside.accepted == 0, "no connection reached the stand-in for the outside"
    finally:
        outside.close()
    hosts = [(e["data"]["host"], e["data"]["method"]) for e in denied(gw)]
    assert hosts == [
        ("127.0.0.1", "GET"),
        ("example.invalid", "GET"),
        ("127.0.0.1", "CONNECT"),
        ("pypi.example.invalid", "CONNECT"),
    ]


def test_the_control_plane_is_only_on_the_runners_socket(gateway_factory) -> None:
    gw = gateway_factory(str(DEMO), "--service", "slack")
    with gw.client() as client:
        response = client.post("https://slack.com/_replay/reset")
    assert response.status_code == 403
    with gw.control() as control:
        assert control.get("/_replay/health").json()["fakes"] == ["slack"]
    (event,) = denied(gw)
    assert event["data"]["path"] == "/_replay/reset"


def test_a_host_header_that_lies_is_refused(gateway_factory) -> None:
    gw = gateway_factory(str(DEMO), "--service", "slack")
    with gw.client() as client:
        response = client.get("http://slack.com/api/auth.test", headers={"host": "example.org"})
    assert response.status_code == 403
    assert "does not match" in denied(gw)[0]["data"]["reason"]


def test_slack_sdk_reaches_its_fake_over_tls_with_the_printed_ca(gateway_factory) -> None:
    from slack_sdk import WebClient

    gw = gateway_factory(str(DEMO), "--service", "slack")
    env = gw.env
    context = ssl.create_default_context(cafile=env["SSL_CERT_FILE"])
    client = WebClient(token=env["SLACK_BOT_TOKEN"], proxy=env["HTTPS_PROXY"], ssl=context)
    auth = client.auth_test()
    assert auth["ok"] and auth["team"]
    posted = client.chat_postMessage(channel="#eng", text="hello from inside")
    assert posted["ok"]
    kinds = [e["kind"] for e in gw.events()]
    assert kinds == ["slack.message.posted"]


def echo_model() -> FastAPI:
    """An OpenAI-shaped upstream that reports which credential reached it."""
    app = FastAPI()
    seen: list[str] = []
    app.state.seen = seen

    @app.post("/v1/chat/completions")
    async def chat(request: Request) -> dict[str, Any]:
        seen.append(request.headers.get("authorization", ""))
        body = await request.json()
        return {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 0,
            "model": body["model"],
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {
                        "role": "assistant",
                        "content": f"you sent {request.headers.get('authorization')}",
                    },
                }
            ],
            "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18},
        }

    return app


def test_model_route_injects_the_real_key_and_logs_the_call(gateway_factory) -> None:
    import openai

    upstream_app = echo_model()
    with serving(upstream_app) as upstream_url:
        gw = gateway_factory(
            str(DEMO),
            "--service",
            "slack",
            "--model-upstream",
            upstream_url,
            env={"OPENAI_API_KEY": "sk-real-secret-0123456789"},
        )
        env = gw.env
        context = ssl.create_default_context(cafile=env["SSL_CERT_FILE"])
        with httpx.Client(proxy=env["HTTPS_PROXY"], verify=context) as http_client:
            client = openai.OpenAI(
                api_key=env["OPENAI_API_KEY"], http_client=http_client, max_retries=0
            )
            raw = client.chat.completions.with_raw_response.create(
                model="gpt-test", messages=[{"role": "user", "content": "hi"}]
            )
            completion = raw.parse()
    assert upstream_app.state.seen == ["Bearer sk-real-secret-0123456789"]
    assert env["OPENAI_API_KEY"] == "sk-replay-placeholder"
    assert "sk-real-secret" not in raw.http_response.text
    assert "credential removed" in (completion.choices[0].message.content or "")
    (call,) = [e for e in gw.events() if e["kind"] == "model.call"]
    data = call["data"]
    assert data["verdict"] == "ok" and data["status"] == 200
    assert data["usage"]["input_tokens"] == 11 and data["usage"]["output_tokens"] == 7
    assert data["host"] == "api.openai.com" and data["model"] == "gpt-test"
    assert json.dumps(call).find("sk-real") == -1, "the log never holds the real key"


def test_event_log_file_and_printed_environment(gateway_factory, tmp_path, capsys) -> None:
    from tests.cli_helpers import run_cli
    from tests.gateway.conftest import stop_gateway

    db = tmp_path / "run" / "events.db"
    db.parent.mkdir()
    gw = gateway_factory(str(DEMO), "--service", "slack", "--events-db", f"sqlite:///{db}")
    printed = gw.log.read_text()
    assert f"export HTTPS_PROXY={gw.proxy}" in printed and "# proxy " in printed
    exports = run_cli(capsys, "world", "env", "--state", str(tmp_path / "world.json"))
    assert exports.code == 0, exports.err
    assert f"export HTTPS_PROXY={gw.proxy}" in exports.out
    assert f"export SSL_CERT_FILE={gw.ca}" in exports.out
    assert "export OPENAI_API_KEY=sk-replay-placeholder" in exports.out
    with gw.client() as client:
        assert client.get("http://example.invalid/x").status_code == 403
    stop_gateway(gw)
    result = run_cli(capsys, "events", str(db.parent), "--jsonl")
    assert result.code == 0, result.err
    (line,) = result.out.splitlines()
    event = json.loads(line)
    assert event["kind"] == "egress.denied" and event["data"]["host"] == "example.invalid"
    bad = run_cli(capsys, "events", str(tmp_path / "nothing"))
    assert bad.code == 2 and "no event log here" in bad.err
