"""Real clients inside the world, with nothing but the environment the gateway prints.

git, gh, pip, uv, slack_sdk (see test_proxy) and a Linear GraphQL client reach their fakes
and the registry frozen at T through the proxy, over TLS, trusting only the gateway's CA.
"""

from __future__ import annotations

import ssl
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.gateway.conftest import DEMO, Gateway, start_gateway, stop_gateway

CREDENTIAL_HELPER = "!f() { echo username=x-access-token; echo password=$GH_TOKEN; }; f"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    gw = start_gateway(tmp_path_factory.mktemp("world"), str(DEMO))
    yield gw
    stop_gateway(gw)


def inside(gw: Gateway, home: Path) -> dict[str, str]:
    """The printed environment, on a PATH with the tools, and nothing else of ours."""
    home.mkdir(parents=True, exist_ok=True)
    return {
        "PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin",
        "HOME": str(home),
        "GH_CONFIG_DIR": str(home / "gh"),
        **gw.env,
    }


def run(
    cmd: list[str], env: dict[str, str], cwd: Path | None = None, ok: bool = True
) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=300, check=False
    )
    if ok:
        assert done.returncode == 0, f"{cmd}: {done.stdout}\n{done.stderr}"
    return done


def no_denials(gw: Gateway) -> None:
    denied = [e for e in gw.events() if e["kind"] == "egress.denied"]
    assert denied == [], denied


def test_git_clone_and_push_and_gh(world: Gateway, tmp_path: Path) -> None:
    env = inside(world, tmp_path / "home")
    git = [
        "git",
        "-c",
        f"credential.helper={CREDENTIAL_HELPER}",
        "-c",
        "user.name=agent",
        "-c",
        "user.email=agent@example.test",
    ]
    run([*git, "clone", "-q", "https://github.com/acme/semverkit", str(tmp_path / "repo")], env)
    repo = tmp_path / "repo"
    assert (repo / "src" / "semverkit").is_dir()
    log = run(["git", "log", "--format=%cI", "--all"], env, cwd=repo).stdout.split()
    assert log and max(log) <= "2026-03-12T09:00:00+00:00", "nothing after T came through"
    run(["git", "checkout", "-q", "-b", "fix-caret"], env, cwd=repo)
    (repo / "NOTES.md").write_text("caret zero\n")
    run([*git, "add", "NOTES.md"], env, cwd=repo)
    run([*git, "commit", "-q", "-m", "Note"], env, cwd=repo)
    run([*git, "push", "-q", "origin", "fix-caret"], env, cwd=repo)
    view = run(["gh", "issue", "view", "7", "-R", "acme/semverkit"], env)
    assert "^0.2.3" in view.stdout
    pr = run(
        [
            "gh",
            "pr",
            "create",
            "-R",
            "acme/semverkit",
            "--head",
            "fix-caret",
            "--base",
            "main",
            "--title",
            "Fix caret",
            "--body",
            "Fixes #7",
        ],
        env,
    )
    assert "https://github.com/acme/semverkit/pull/" in pr.stdout
    kinds = [e["kind"] for e in world.events()]
    assert "git.push" in kinds and "github.pull_request.opened" in kinds
    no_denials(world)


def test_linear_graphql_client(world: Gateway) -> None:
    from gql import Client, gql
    from gql.transport.httpx import HTTPXTransport

    env = world.env
    transport = HTTPXTransport(
        url="https://api.linear.app/graphql",
        headers={"Authorization": env["LINEAR_API_KEY"]},
        proxy=env["HTTPS_PROXY"],
        verify=ssl.create_default_context(cafile=env["SSL_CERT_FILE"]),
    )
    with Client(transport=transport) as session:
        result: dict[str, Any] = session.execute(
            gql('query { issue(id: "ENG-12") { identifier title state { name } } }')
        )
    assert result["issue"]["identifier"] == "ENG-12"
    assert result["issue"]["state"]["name"] == "Todo"
    no_denials(world)


def test_pip_gets_the_versions_of_t(world: Gateway, tmp_path: Path) -> None:
    env = inside(world, tmp_path / "home")
    target = tmp_path / "site"
    run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--disable-pip-version-check",
            "--no-cache-dir",
            "--target",
            str(target),
            "pytest",
            "setuptools",
        ],
        env,
    )
    installed = sorted(p.name for p in target.glob("*.dist-info"))
    assert "pytest-9.0.2.dist-info" in installed, "the newest pytest uploaded by T"
    assert "setuptools-82.0.1.dist-info" in installed
    newer = run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--disable-pip-version-check",
            "--no-cache-dir",
            "--target",
            str(tmp_path / "x"),
            "pytest==9.0.3",
        ],
        env,
        ok=False,
    )
    assert newer.returncode != 0
    assert "from versions: 8.3.5, 9.0.2)" in newer.stderr
    no_denials(world)


def test_uv_gets_the_versions_of_t(world: Gateway, tmp_path: Path) -> None:
    env = inside(world, tmp_path / "home")
    uv = str(Path(sys.executable).parent / "uv")
    target = tmp_path / "site"
    run(
        [
            uv,
            "pip",
            "install",
            "--no-cache",
            "--python",
            sys.executable,
            "--target",
            str(target),
            "pluggy",
            "iniconfig",
        ],
        {**env, "UV_NO_CONFIG": "1"},
    )
    installed = sorted(p.name for p in target.glob("*.dist-info"))
    assert installed == ["iniconfig-2.3.0.dist-info", "pluggy-1.6.0.dist-info"]
    newer = run(
        [
            uv,
            "pip",
            "install",
            "--no-cache",
            "--python",
            sys.executable,
            "--target",
            str(tmp_path / "x"),
            "pluggy==9.9",
        ],
        {**env, "UV_NO_CONFIG": "1"},
        ok=False,
    )
    assert newer.returncode != 0
    no_denials(world)
