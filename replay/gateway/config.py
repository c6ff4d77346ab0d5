"""What the gateway routes where, and what a client inside the world is told."""

from __future__ import annotations

import ipaddress
import os
import re
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field

from replay.base.errors import ReplayError

Route = Literal["fake", "registry", "docs", "model", "deny"]

GITHUB_HOSTS = (
    "api.github.com",
    "github.com",
    "raw.githubusercontent.com",
    "uploads.github.com",
    "codeload.github.com",
)
REGISTRY_HOSTS = ("pypi.org", "files.pythonhosted.org", "registry.npmjs.org")
MODEL_HOSTS = ("api.openai.com", "api.anthropic.com")

PLACEHOLDERS = {
    "GH_TOKEN": "ghp_replayPlaceholderToken000000000000000",
    "GITHUB_TOKEN": "ghp_replayPlaceholderToken000000000000000",
    "SLACK_BOT_TOKEN": "xoxb-replay-placeholder",
    "SLACK_USER_TOKEN": "xoxp-replay-placeholder",
    "LINEAR_API_KEY": "lin_api_replayplaceholder",
    "OPENAI_API_KEY": "sk-replay-placeholder",
    "ANTHROPIC_API_KEY": "sk-ant-replay-placeholder",
}
"""What the agent holds instead of secrets. The fakes accept these; the model route replaces
the model keys with the runner's real ones on the way out."""

CREDENTIALS = {
    # model host -> (header, format, environment variables of the runner to read, in order)
    "api.openai.com": ("authorization", "Bearer {}", ("REPLAY_OPENAI_API_KEY", "OPENAI_API_KEY")),
    "api.anthropic.com": ("x-api-key", "{}", ("REPLAY_ANTHROPIC_API_KEY", "ANTHROPIC_API_KEY")),
}


# The model route is an allow-list: the inference endpoints the harnesses call, per provider
# (what the OpenAI and Anthropic SDKs, litellm under mini-swe-agent, Codex and Claude Code
# send). The real key goes on these and nothing else; anything else on a model host (admin
# keys, files, batches, fine-tuning, organisation settings...) is refused before it leaves.
# A query string is allowed (the Anthropic SDK's beta namespace adds ``?beta=true``; model
# listings page with ``limit``/``after_id``); the path itself must match exactly.
_MODEL_ID = r"[A-Za-z0-9][A-Za-z0-9._:-]{0,199}"
OPENAI_CALLS: tuple[tuple[str, str], ...] = (
    ("POST", r"/v1/chat/completions"),
    ("POST", r"/v1/responses"),
    ("GET", r"/v1/models"),
    ("GET", rf"/v1/models/{_MODEL_ID}"),
)
ANTHROPIC_CALLS: tuple[tuple[str, str], ...] = (
    ("POST", r"/v1/messages"),
    ("POST", r"/v1/messages/count_tokens"),
    ("GET", r"/v1/models"),
    ("GET", rf"/v1/models/{_MODEL_ID}"),
)
MODEL_CALLS: dict[str, tuple[tuple[str, str], ...]] = {
    "api.openai.com": OPENAI_CALLS,
    "api.anthropic.com": ANTHROPIC_CALLS,
}
"""Allowed (method, path pattern) per model host; another model host (``--model-host``) gets
the union of both."""
_ANY_PROVIDER = tuple(dict.fromkeys(OPENAI_CALLS + ANTHROPIC_CALLS))


def model_call_refusal(host: str, method: str, scheme: str, port: int, path: str) -> str | None:
    """Why a request to a model host may not go out, or None when it is an inference call.

    Only HTTPS on port 443 (what a client addressing the real provider sends), only the
    allow-listed method and path; ``path`` may carry a query string.
    """
    if scheme != "https" or port != 443:
        return f"the model API is reached over HTTPS on port 443 only, not {scheme} on {port}"
    bare = path.split("?", 1)[0]
    calls = MODEL_CALLS.get(host.lower().rstrip("."), _ANY_PROVIDER)
    if any(method == m and re.fullmatch(pattern, bare) for m, pattern in calls):
        return None
    if any(re.fullmatch(pattern, bare) for _, pattern in calls):
        return f"{method} is not allowed on {bare}"
    return f"{bare} is not an inference endpoint of the model API"


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address) is this machine's loopback."""
    if host.lower().rstrip(".") == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def key_may_go_to(upstream: str | None) -> bool:
    """Whether the real key may be sent to the model upstream: to the real providers (HTTPS),
    to an HTTPS ``--model-upstream``, or to one on loopback (the stub, a test's server);
    never in cleartext across a network."""
    if upstream is None:
        return True
    parts = urlsplit(upstream)
    return parts.scheme == "https" or is_loopback(parts.hostname or "")


class GatewayConfigError(ReplayError):
    """The gateway's configuration (or the environment it reads) is wrong."""


def _seconds(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError as exc:
        raise GatewayConfigError(f"${name}={raw!r} is not a number of seconds") from exc
    if not value > 0:
        raise GatewayConfigError(f"${name}={raw!r} must be more than 0 seconds")
    return value


FIRST_BYTE_TIMEOUT_ENV = "REPLAY_MODEL_FIRST_BYTE_TIMEOUT"
IDLE_TIMEOUT_ENV = "REPLAY_MODEL_IDLE_TIMEOUT"
UPSTREAM_CA_ENV = "REPLAY_MODEL_UPSTREAM_CA"


class GatewayConfig(BaseModel):
    """One gateway in front of one world."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    snapshot: Path
    listen_host: str = "127.0.0.1"
    listen_port: int = Field(default=0, ge=0, le=65535)
    """0 picks a free port; the chosen one is in the state file."""
    confdir: Path
    """Where mitmproxy keeps its CA (created on first use, reused after)."""
    state_file: Path
    """Written once the proxy listens: address, CA bundle, client environment."""
    events_db: str = "sqlite://"
    """The run's event log (fakes' mutations, denied requests, model calls)."""
    model_hosts: tuple[str, ...] = MODEL_HOSTS
    model_upstream: str | None = None
    """Send model-host traffic here instead (e.g. the stub model at http://127.0.0.1:PORT)."""
    model_first_byte_timeout: float = Field(
        default_factory=lambda: _seconds(FIRST_BYTE_TIMEOUT_ENV, 540.0), gt=0
    )
    """The gateway's own deadline towards the provider: seconds from the end of the request
    to the answer's headers. When it passes, the gateway closes the upstream connection and
    logs a ``timeout``, so a provider that hangs is told apart from a client that gave up.
    Below the SDKs' 600 s by default (a reasoning model may think for minutes); the runner's
    stub runs set it shorter than any harness's client timeout. Default from
    ``$REPLAY_MODEL_FIRST_BYTE_TIMEOUT``."""
    model_idle_timeout: float = Field(
        default_factory=lambda: _seconds(IDLE_TIMEOUT_ENV, 300.0), gt=0
    )
    """Seconds an answer's body may stall between two chunks before the gateway gives up on
    the provider the same way. Default from ``$REPLAY_MODEL_IDLE_TIMEOUT``."""
    model_upstream_ca: Path | None = Field(
        default_factory=lambda: (
            Path(os.environ[UPSTREAM_CA_ENV]) if os.environ.get(UPSTREAM_CA_ENV) else None
        )
    )
    """A PEM bundle to trust for an HTTPS ``model_upstream`` (a test's own TLS server);
    the system's roots otherwise. Default from ``$REPLAY_MODEL_UPSTREAM_CA``."""
    case: Path | None = None
    """A case file whose scripted people the fakes play."""
    services: tuple[str, ...] = ("github", "linear", "slack")
    """The fakes to start."""

    def route_for(self, host: str, fake_hosts: frozenset[str], docs_hosts: frozenset[str]) -> Route:
        host = host.lower().rstrip(".")
        if host in fake_hosts:
            return "fake"
        if host in REGISTRY_HOSTS:
            return "registry"
        if host in docs_hosts:
            return "docs"
        if host in self.model_hosts:
            return "model"
        return "deny"


def client_env(proxy_url: str, ca_bundle: Path) -> dict[str, str]:
    """The variables a client in the world needs: the proxy, trust in its CA, placeholders."""
    ca = str(ca_bundle)
    env = {
        "HTTPS_PROXY": proxy_url,
        "HTTP_PROXY": proxy_url,
        "https_proxy": proxy_url,
        "http_proxy": proxy_url,
        "ALL_PROXY": proxy_url,
        "NO_PROXY": "",
        "no_proxy": "",
        "SSL_CERT_FILE": ca,
        "REQUESTS_CA_BUNDLE": ca,
        "CURL_CA_BUNDLE": ca,
        "NODE_EXTRA_CA_CERTS": ca,
        "NODE_USE_ENV_PROXY": "1",
        "GIT_SSL_CAINFO": ca,
        "PIP_CERT": ca,
        "PIP_INDEX_URL": "https://pypi.org/simple",
        "UV_INDEX_URL": "https://pypi.org/simple",
        "UV_NATIVE_TLS": "1",
        "npm_config_proxy": proxy_url,
        "npm_config_https_proxy": proxy_url,
        "npm_config_cafile": ca,
        "GH_NO_UPDATE_NOTIFIER": "1",
        "GH_PROMPT_DISABLED": "1",
        **PLACEHOLDERS,
    }
    return env
