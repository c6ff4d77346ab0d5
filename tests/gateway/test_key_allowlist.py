"""Where the real key may go, decided before anything leaves: the allow-list per provider,
HTTPS on 443 only, and never in cleartext off loopback."""

from __future__ import annotations

from pathlib import Path

import pytest

from replay.base.errors import ReplayError
from replay.gateway.config import GatewayConfig, key_may_go_to, model_call_refusal

ALLOWED = [
    ("api.openai.com", "POST", "/v1/chat/completions"),
    ("api.openai.com", "POST", "/v1/responses"),
    ("api.openai.com", "GET", "/v1/models"),
    ("api.openai.com", "GET", "/v1/models/gpt-4.1-2025-04-14"),
    ("api.openai.com", "GET", "/v1/models/ft:gpt-4o-mini:acme::abc123"),
    ("API.OpenAI.com.", "POST", "/v1/chat/completions?foo=bar"),
    ("api.anthropic.com", "POST", "/v1/messages"),
    ("api.anthropic.com", "POST", "/v1/messages?beta=true"),
    ("api.anthropic.com", "POST", "/v1/messages/count_tokens?beta=true"),
    ("api.anthropic.com", "GET", "/v1/models?limit=1000"),
    ("api.anthropic.com", "GET", "/v1/models/claude-opus-4-1-20250805"),
    # Another model host (--model-host) gets both providers' inference calls.
    ("llm.internal", "POST", "/v1/messages"),
    ("llm.internal", "POST", "/v1/chat/completions"),
]
REFUSED = [
    ("api.openai.com", "POST", "/v1/messages", "not an inference endpoint"),
    ("api.openai.com", "GET", "/v1/chat/completions", "GET is not allowed"),
    ("api.openai.com", "HEAD", "/v1/models", "HEAD is not allowed"),
    ("api.openai.com", "DELETE", "/v1/models/ft:x", "DELETE is not allowed"),
    ("api.openai.com", "POST", "/v1/chat/completions/", "not an inference endpoint"),
    ("api.openai.com", "POST", "//v1/chat/completions", "not an inference endpoint"),
    ("api.openai.com", "GET", "/v1/models/../files", "not an inference endpoint"),
    ("api.openai.com", "GET", "/v1/models/..", "not an inference endpoint"),
    ("api.openai.com", "GET", "/v1/models/%2e%2e%2ffiles", "not an inference endpoint"),
    ("api.openai.com", "GET", "/v1/responses/resp_1", "not an inference endpoint"),
    ("api.openai.com", "POST", "/v1/responses/resp_1/cancel", "not an inference endpoint"),
    ("api.openai.com", "POST", "/v1/embeddings", "not an inference endpoint"),
    ("api.openai.com", "DELETE", "/v1/organization/admin_api_keys/k", "not an inference"),
    ("api.anthropic.com", "POST", "/v1/chat/completions", "not an inference endpoint"),
    ("api.anthropic.com", "POST", "/v1/messages/batches", "not an inference endpoint"),
    ("api.anthropic.com", "GET", "/v1/messages", "GET is not allowed"),
    ("api.anthropic.com", "GET", "/v1/organizations/api_keys", "not an inference endpoint"),
]


@pytest.mark.parametrize(("host", "method", "path"), ALLOWED)
def test_inference_calls_over_https_are_allowed(host: str, method: str, path: str) -> None:
    assert model_call_refusal(host, method, "https", 443, path) is None


@pytest.mark.parametrize(("host", "method", "path", "why"), REFUSED)
def test_everything_else_is_refused_with_a_reason(
    host: str, method: str, path: str, why: str
) -> None:
    reason = model_call_refusal(host, method, "https", 443, path)
    assert reason is not None and why in reason


@pytest.mark.parametrize(
    ("scheme", "port"), [("http", 80), ("http", 443), ("https", 8443), ("http", 8080)]
)
def test_only_https_on_443_reaches_a_provider(scheme: str, port: int) -> None:
    reason = model_call_refusal("api.openai.com", "POST", scheme, port, "/v1/chat/completions")
    assert reason is not None and "HTTPS on port 443 only" in reason


@pytest.mark.parametrize(
    ("upstream", "ok"),
    [
        (None, True),
        ("https://models.example.com", True),
        ("https://10.0.0.5:8443", True),
        ("http://127.0.0.1:8000", True),
        ("http://127.9.9.9:8000", True),
        ("http://localhost:8000", True),
        ("http://[::1]:8000", True),
        ("http://10.0.0.5:8000", False),
        ("http://models.example.com", False),
        ("http://127.0.0.1.example.com", False),
    ],
)
def test_the_key_never_travels_in_cleartext_off_loopback(upstream: str | None, ok: bool) -> None:
    assert key_may_go_to(upstream) is ok


def test_deadlines_and_the_upstream_ca_come_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    paths = {"snapshot": tmp_path, "confdir": tmp_path, "state_file": tmp_path / "s.json"}
    default = GatewayConfig(**paths)
    assert default.model_first_byte_timeout == 540 and default.model_idle_timeout == 300
    assert default.model_upstream_ca is None
    monkeypatch.setenv("REPLAY_MODEL_FIRST_BYTE_TIMEOUT", "15")
    monkeypatch.setenv("REPLAY_MODEL_IDLE_TIMEOUT", "2.5")
    monkeypatch.setenv("REPLAY_MODEL_UPSTREAM_CA", str(tmp_path / "ca.pem"))
    config = GatewayConfig(**paths)
    assert (config.model_first_byte_timeout, config.model_idle_timeout) == (15, 2.5)
    assert config.model_upstream_ca == tmp_path / "ca.pem"
    for bad in ("soon", "0", "-1", "nan"):
        monkeypatch.setenv("REPLAY_MODEL_IDLE_TIMEOUT", bad)
        with pytest.raises(ReplayError, match="REPLAY_MODEL_IDLE_TIMEOUT"):
            GatewayConfig(**paths)
