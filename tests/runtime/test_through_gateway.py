"""Through the gateway from inside the sandbox: git, gh, pip; and the frozen clock."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from replay.runtime import Runtime, Sandbox, SandboxConfig
from replay.snapshot import load_snapshot
from tests.gateway.conftest import DEMO, Gateway


def test_git_clone_and_gh_through_the_gateway(
    runtime: Runtime, base_image: str, demo_gateway: Gateway, run_root: Path
) -> None:
    snapshot = load_snapshot(DEMO)
    repo = snapshot.manifest.repositories[0]
    with Sandbox(runtime, demo_gateway.state, SandboxConfig(image=base_image)) as box:
        helper = 'credential.helper=!f() { echo username=x; echo "password=$GH_TOKEN"; }; f'
        clone = box.exec(
            ["git", "-c", helper, "clone", "-q", f"https://github.com/{repo.name}", "/tmp/repo"],
            timeout=120,
        )
        assert clone.ok, clone.err
        clone = box.exec(["git", "-C", "/tmp/repo", "rev-parse", "HEAD"])
        assert clone.ok, clone.err
        assert clone.out.strip() == repo.base_commit
        log = box.sh("git -C /tmp/repo log --oneline | wc -l")
        assert int(log.out) > 1

        issue = box.exec(["gh", "issue", "view", "7", "-R", repo.name], timeout=60)
        assert issue.ok, issue.err
        assert "^0.2.3 matches 0.3.0" in issue.out

        # The system bundle holds the gateway's CA alone: curl trusts it without variables.
        plain = box.sh(
            "env -u CURL_CA_BUNDLE -u SSL_CERT_FILE curl -sS -o /dev/null -w '%{http_code}'"
            ' -H "Authorization: token $GH_TOKEN"'
            " https://api.github.com/repos/acme/semverkit",
            timeout=30,
        )
        assert plain.out == "200", plain.err
    kinds = {e["kind"] for e in demo_gateway.events()}
    assert "egress.denied" not in kinds or all(
        e["data"]["host"] != "github.com" for e in demo_gateway.events()
    )


def test_pip_install_from_the_frozen_registry(
    runtime: Runtime, base_image: str, demo_gateway: Gateway, run_root: Path
) -> None:
    """pip resolves against pypi.org, which the gateway serves from the snapshot as of T."""
    with Sandbox(runtime, demo_gateway.state, SandboxConfig(image=base_image)) as box:
        done = box.sh(
            "python -m venv /tmp/v && /tmp/v/bin/pip install -q pytest==8.3.5"
            " && /tmp/v/bin/python -m pytest --version",
            timeout=300,
        )
        assert done.ok, done.out + done.err
        assert "pytest 8.3.5" in done.out + done.err


def test_frozen_clock_reads_t_inside(
    runtime: Runtime, base_image: str, demo_gateway: Gateway, run_root: Path
) -> None:
    at = load_snapshot(DEMO).at
    config = SandboxConfig(image=base_image, clock_at=at)
    with Sandbox(runtime, demo_gateway.state, config) as box:
        shown = box.exec(["date", "-u", "+%Y-%m-%dT%H:%M:%S+00:00"])
        assert shown.ok, shown.err
        seen = datetime.fromisoformat(shown.out.strip())
        assert 0 <= (seen - at).total_seconds() < 60, (seen, at)
        py = box.exec(["python3", "-c", "import time; print(int(time.time()))"])
        assert 0 <= int(py.out) - at.timestamp() < 60
    # Off by default: the real date.
    with Sandbox(runtime, demo_gateway.state, SandboxConfig(image=base_image)) as box:
        year = box.exec(["date", "-u", "+%Y"]).out.strip()
        assert year == str(datetime.now().year)


def test_tls_through_the_gateway_under_the_frozen_clock(
    runtime: Runtime, base_image: str, demo_gateway: Gateway, run_root: Path
) -> None:
    config = SandboxConfig(image=base_image, clock_at=load_snapshot(DEMO).at)
    with Sandbox(runtime, demo_gateway.state, config) as box:
        r = box.sh(
            "curl -sS -o /dev/null -w '%{http_code}' -H \"Authorization: token $GH_TOKEN\""
            " https://api.github.com/repos/acme/semverkit",
            timeout=30,
        )
    assert r.out == "200", r.err
