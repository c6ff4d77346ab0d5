"""A GitHub world for the fake's tests, served by a real HTTP server on 127.0.0.1.

The world is the tiny one (tests/worlds.py) with more GitHub activity on both sides of T:
labelled and assigned issues before T, and after T a new issue, a late comment, the merged
fix pull request and the fix commit itself, none of which the fake may serve.
"""

from __future__ import annotations

import json
import os
import subprocess
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import pytest
import yaml
from githubkit import GitHub, Response, TokenAuthStrategy

from fakes.core import World, WorldApp, build_world
from fakes.github import HOSTS
from fakes.github.backend import GitHubBackend
from replay.base.gitrepo import clean_env
from replay.base.snapshot import load_snapshot
from replay.contract.schema import strict_problems
from replay.snapshot import build_snapshot
from tests import worlds
from tests.serving import port_of, serving

TOKEN = "ghp_replaytesttoken000000000000000000"
T = worlds.T
REPO = "acme/tiny"


def github_world() -> dict[str, Any]:
    world = worlds.world()
    gh = world["github"]
    gh["users"][0].update(name="Alice Liddell", email="alice@example.test")
    gh["users"].append({"login": "bob", "id": 4, "created_at": "2021-01-01T00:00:00Z"})
    gh["repos"][0]["labels"].append({"name": "docs", "color": "0075ca", "description": "Docs"})
    gh["issues"] += [
        {
            "repo": REPO,
            "number": 2,
            "id": 102,
            "title": "Document add()",
            "body": "The README should say what add does",
            "state": "open",
            "author": "bob",
            "labels": ["docs"],
            "assignees": ["alice"],
            "created_at": "2026-03-11T08:00:00Z",
        },
        {
            "repo": REPO,
            "number": 4,
            "id": 104,
            "title": "Filed after T",
            "body": "must never be served",
            "state": "open",
            "author": "alice",
            "created_at": "2026-03-14T00:00:00Z",
        },
    ]
    return world


def make_sources(root: Path) -> Path:
    src = root / "sources"
    src.mkdir(parents=True)
    worlds.write_history(src / "history")
    (src / "world.yaml").write_text(yaml.safe_dump(github_world(), sort_keys=False))
    return src


@pytest.fixture(scope="session")
def github_snapshot_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("github-world")
    out = root / "snapshot"
    build_snapshot(make_sources(root), out)
    return out


@pytest.fixture(scope="session")
def fix_commit(github_snapshot_dir: Path) -> str:
    """The SHA of the fix commit, which exists only after T (the sources' full history)."""
    full = github_snapshot_dir.parent / "full"
    if not full.exists():
        subprocess.run(["git", "init", "-q", "-b", "main", str(full)], check=True, env=clean_env())
        patches = sorted((github_snapshot_dir.parent / "sources/history").glob("*.patch"))
        subprocess.run(
            ["git", "am", "-q", "--committer-date-is-author-date", *map(str, patches)],
            cwd=full,
            check=True,
            env=clean_env(
                {"GIT_COMMITTER_NAME": "GitHub", "GIT_COMMITTER_EMAIL": "noreply@github.com"}
            ),
        )
    return subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=full, capture_output=True, text=True, check=True
    ).stdout.strip()


@dataclass
class Served:
    """A world served over HTTP: its base URL, the world, and the GitHub backend."""

    url: str
    port: int
    world: World
    backend: GitHubBackend
    app: WorldApp


@contextmanager
def serve(snapshot_dir: Path) -> Iterator[Served]:
    """The GitHub fake for a snapshot on a real uvicorn server on 127.0.0.1 (any port).

    The world's host router also answers for 127.0.0.1 with the GitHub app, so clients can
    use ``http://127.0.0.1:PORT`` as their base URL; the control plane is under /_replay.
    """
    app = build_world(load_snapshot(snapshot_dir), services=("github",))
    app.routes["127.0.0.1"] = app.routes[HOSTS[0]]
    backend = cast(GitHubBackend, app.world.fakes["github"])
    try:
        with serving(app, ws="none") as url:
            yield Served(url, port_of(url), app.world, backend, app)
    finally:
        backend.close()
        app.world.engine.dispose()


@pytest.fixture()
def served(github_snapshot_dir: Path) -> Iterator[Served]:
    """The test world's GitHub, served (see :func:`serve`)."""
    with serve(github_snapshot_dir) as world:
        yield world


def build(world: dict[str, Any], root: Path) -> Path:
    """A snapshot of ``world`` (with the tiny repository's history) under ``root``."""
    src = root / "sources"
    src.mkdir(parents=True)
    worlds.write_history(src / "history")
    (src / "world.yaml").write_text(yaml.safe_dump(world, sort_keys=False))
    out = root / "snapshot"
    build_snapshot(src, out)
    return out


# ----------------------------------------------------------------------- githubkit


def client(served: Served, token: str | None = TOKEN) -> GitHub[Any]:
    auth = TokenAuthStrategy(token) if token else None
    return GitHub(auth, base_url=served.url, http_cache=False, auto_retry=False)


def checked(resp: Response[Any, Any]) -> Any:
    """Validate a response with githubkit's own model, then strictly; return the parsed data."""
    parsed = resp.parsed_data
    data = resp.json()
    if isinstance(parsed, list):
        assert isinstance(data, list)
        problems = [
            p
            for i, item in enumerate(parsed)
            for p in strict_problems(type(item), data[i], f"$[{i}]")
        ]
    else:
        problems = strict_problems(type(parsed), data)
    assert not problems, "\n".join(problems)
    return parsed


# ----------------------------------------------------------------------- git and events

GITHUB = "https://github.com/"


def git(
    served: Served, cwd: Path, *args: str, token: str | None = TOKEN, check: bool = True
) -> subprocess.CompletedProcess[str]:
    """Run git as an agent would, with github.com rewritten to the fake's local address.

    The token comes from a credential helper, which git asks only after a 401: so every
    authenticated exchange here also proves the 401 + ``WWW-Authenticate`` handshake.
    """
    helper = f"!f() {{ echo username=x-access-token; echo password={token}; }}; f"
    config = [
        "-c", f"url.{served.url}/.insteadOf={GITHUB}",
        "-c", f"credential.helper={helper if token else ''}",
        "-c", "user.name=Agent", "-c", "user.email=agent@example.test",
    ]  # fmt: skip
    env = clean_env({"GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "", "SSH_ASKPASS": ""})
    done = subprocess.run(
        ["git", *config, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60
    )
    if check and done.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {done.stderr}")
    return done


def events(served: Served, kind: str | None = None) -> list[dict[str, Any]]:
    with urllib.request.urlopen(f"{served.url}/_replay/events") as resp:
        rows = [json.loads(line) for line in resp.read().decode().splitlines()]
    return [e for e in rows if kind is None or e["kind"] == kind]


def server_refs(served: Served) -> dict[str, str]:
    return served.backend.git.heads(REPO)


def clone(served: Served, tmp_path: Path, name: str = "work") -> Path:
    git(served, tmp_path, "clone", "-q", f"{GITHUB}{REPO}.git", name)
    return tmp_path / name


def commit_file(served: Served, repo: Path, name: str, text: str, message: str) -> str:
    (repo / name).write_text(text)
    git(served, repo, "add", name)
    git(served, repo, "commit", "-q", "-m", message)
    return git(served, repo, "rev-parse", "HEAD").stdout.strip()


# ----------------------------------------------------------------------- gh

GH = "/usr/bin/gh"


@dataclass
class GhServed:
    """The world served twice: over a Unix socket for ``gh`` (its ``http_unix_socket``),
    over TCP for git; and the world itself."""

    served: Served
    home: Path


@pytest.fixture()
def ghs(github_snapshot_dir: Path, tmp_path: Path) -> Iterator[GhServed]:
    app: WorldApp = build_world(load_snapshot(github_snapshot_dir), services=("github",))
    app.routes["127.0.0.1"] = app.routes["api.github.com"]
    sock = tmp_path / "gh.sock"
    home = tmp_path / "gh-config"
    home.mkdir()
    (home / "config.yml").write_text(f"http_unix_socket: {sock}\n")
    backend = cast(GitHubBackend, app.world.fakes["github"])
    try:
        with serving(app, uds=sock, ws="none"), serving(app, ws="none") as url:
            yield GhServed(Served(url, port_of(url), app.world, backend, app), home)
    finally:
        backend.close()
        app.world.engine.dispose()


def gh(ctx: GhServed, *args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
    """Run the real gh against the world, as an agent would, on the test repository."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(ctx.home),
        "GH_CONFIG_DIR": str(ctx.home),
        "GH_TOKEN": TOKEN,
        "GH_REPO": REPO,
        "GH_NO_UPDATE_NOTIFIER": "1",
        "GH_PROMPT_DISABLED": "1",
        "NO_COLOR": "1",
    }
    done = subprocess.run(
        [GH, *args], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    if ok and done.returncode != 0:
        raise AssertionError(f"gh {' '.join(args)} failed: {done.stderr}{done.stdout}")
    return done
