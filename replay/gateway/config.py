"""What the gateway routes where, and what a client inside the world is told."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

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
