"""The REST side of the real ``gh`` CLI (Debian's gh 2.23): ``gh pr diff`` (a REST call with
the diff media type), ``gh api`` reads, writes and ``--paginate`` over ``Link`` headers, and
GitHub's error text for a 404. gh reaches the world over a Unix socket (``http_unix_socket``),
sending ``Host: api.github.com``; git pushes over TCP with github.com rewritten."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import pytest

from fakes.core import WorldApp, build_world
from fakes.github.backend import GitHubBackend
from replay.base.snapshot import load_snapshot
from tests.fakes.github.conftest import REPO, TOKEN, Served, clone, commit_file, events, git
from tests.serving import port_of, serving

GH = "/usr/bin/gh"


@dataclass
class GhServed:
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


def test_gh_pr_diff_reads_the_rest_diff(ghs: GhServed, tmp_path: Path) -> None:
    work = clone(ghs.served, tmp_path)
    git(ghs.served, work, "checkout", "-q", "-b", "fix-add")
    commit_file(ghs.served, work, "lib.py", "def add(a, b):\n    return a + b\n", "Fix add")
    git(ghs.served, work, "push", "-q", "origin", "fix-add")
    made = json.loads(
        gh(ghs, "api", "-X", "POST", f"repos/{REPO}/pulls", "-f", "title=Fix add",
           "-f", "head=fix-add", "-f", "base=main", "-f", "body=Fixes #1").stdout
    )  # fmt: skip
    assert made["number"] == 3 and made["head"]["ref"] == "fix-add"
    diff = gh(ghs, "pr", "diff", "3", "--color", "never").stdout
    assert diff.startswith("diff --git a/lib.py b/lib.py")
    assert "-    return a - b\n+    return a + b" in diff
    kinds = [e["kind"] for e in events(ghs.served)]
    assert kinds == ["git.push", "github.pull_request.opened"]


def test_gh_api_writes_reads_and_paginates(ghs: GhServed) -> None:
    created = json.loads(
        gh(ghs, "api", "-X", "POST", f"repos/{REPO}/issues", "-f", "title=From gh api",
           "-f", "body=hello", "-f", "labels[]=bug").stdout
    )  # fmt: skip
    assert created["number"] == 3 and [lb["name"] for lb in created["labels"]] == ["bug"]
    assert created["created_at"] > "2026-03-12T09:00:00Z"
    gh(ghs, "api", "-X", "PATCH", f"repos/{REPO}/issues/3", "-f", "state=closed")
    pages = gh(ghs, "api", "--paginate", f"repos/{REPO}/issues?state=all&per_page=1").stdout
    numbers = [i["number"] for i in json.loads(pages.replace("][", ","))]
    assert numbers == [3, 2, 1]
    closed = json.loads(gh(ghs, "api", f"repos/{REPO}/issues/3").stdout)
    assert closed["state"] == "closed" and closed["state_reason"] == "completed"
    missing = gh(ghs, "api", f"repos/{REPO}/readme", ok=False)
    assert missing.returncode != 0 and "Not Found (HTTP 404)" in missing.stderr
    invalid = gh(ghs, "api", "-X", "POST", f"repos/{REPO}/issues", "-f", "title=", ok=False)
    assert "Validation Failed (HTTP 422)" in invalid.stderr
    kinds = [e["kind"] for e in events(ghs.served)]
    assert kinds == ["github.issue.opened", "github.issue.updated"]
