"""The real ``gh`` CLI (Debian's gh 2.23) against the GitHub fake, and ``git`` for the push.

gh talks to the world over a Unix socket (its ``http_unix_socket`` setting), git over TCP
with ``Host: github.com``. The world (conftest.py) runs past T: after T issue 1 was closed
and got a second comment, the fix PR (#3) was opened and merged, and issue #4 was filed;
gh must see none of that.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from fakes.core import build_world
from replay.base.eventkinds import SEMANTIC
from replay.base.gitrepo import clean_env
from replay.base.snapshot import load_snapshot
from tests.serving import port_of, serving

GH = "/usr/bin/gh"
TOKEN = "ghp_fake_token_for_tests"


@dataclass
class GhWorld:
    sock: Path
    port: int
    home: Path

    def events(self) -> list[dict[str, Any]]:
        transport = httpx.HTTPTransport(uds=str(self.sock))
        with httpx.Client(transport=transport, base_url="http://api.github.com") as client:
            response = client.get("/_replay/events")
        response.raise_for_status()
        return [json.loads(line) for line in response.text.splitlines() if line]


@pytest.fixture()
def world(github_snapshot_dir: Path, tmp_path: Path) -> Iterator[GhWorld]:
    app = build_world(load_snapshot(github_snapshot_dir), ["github"])
    sock = tmp_path / "world.sock"
    home = tmp_path / "gh"
    home.mkdir()
    (home / "config.yml").write_text(f"http_unix_socket: {sock}\n")
    (home / "hosts.yml").write_text(
        f"github.com:\n    oauth_token: {TOKEN}\n    user: agent\n    git_protocol: https\n"
    )
    try:
        with serving(app, uds=sock), serving(app) as url:
            yield GhWorld(sock, port_of(url), home)
    finally:
        for fake in app.world.fakes.values():
            close = getattr(fake, "close", None)
            if close is not None:
                close()


def gh(
    world: GhWorld,
    *args: str,
    cwd: Path | None = None,
    repo: str | None = "acme/tiny",
    ok: bool = True,
) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(world.home),
        "GH_CONFIG_DIR": str(world.home),
        "GH_TOKEN": TOKEN,
        "GH_NO_UPDATE_NOTIFIER": "1",
        "GH_PROMPT_DISABLED": "1",
        "NO_COLOR": "1",
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    if repo is not None:
        env["GH_REPO"] = repo
    done = subprocess.run(
        [GH, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60, check=False
    )
    if ok and done.returncode != 0:
        raise AssertionError(f"gh {' '.join(args)} failed: {done.stderr}{done.stdout}")
    return done


def git(*args: str, cwd: Path | None = None) -> str:
    env = clean_env({"GIT_AUTHOR_NAME": "Agent", "GIT_AUTHOR_EMAIL": "agent@acme.test"})
    env |= {"GIT_COMMITTER_NAME": "Agent", "GIT_COMMITTER_EMAIL": "agent@acme.test"}
    done = subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60, check=False
    )
    if done.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {done.stderr}")
    return done.stdout


def clone(world: GhWorld, dest: Path) -> Path:
    """A clone whose remote *says* github.com (so gh knows it) but talks to the fake."""
    fake = f"http://agent:{TOKEN}@127.0.0.1:{world.port}/"
    git(
        "-c",
        f"url.{fake}.insteadOf=https://github.com/",
        "-c",
        "http.extraHeader=Host: github.com",
        "clone",
        "-q",
        "https://github.com/acme/tiny.git",
        str(dest),
    )
    git("config", f"url.{fake}.pushInsteadOf", "https://github.com/", cwd=dest)
    git("config", "http.extraHeader", "Host: github.com", cwd=dest)
    return dest


def test_gh_is_installed() -> None:
    assert shutil.which("gh") == GH
    out = subprocess.run([GH, "--version"], capture_output=True, text=True, check=True).stdout
    assert out.startswith("gh version 2.23")


def test_auth_status(world: GhWorld) -> None:
    done = gh(world, "auth", "status", repo=None)
    text = done.stdout + done.stderr
    assert "Logged in to github.com as agent" in text
    assert "Token scopes: repo" in text


def test_issue_view_shows_the_issue_as_it_stood_at_t(world: GhWorld) -> None:
    out = gh(world, "issue", "view", "1").stdout
    assert "title:\tadd() subtracts" in out
    assert "state:\tOPEN" in out  # closed after T
    assert "labels:\tbug" in out
    assert "comments:\t1" in out
    comments = gh(world, "issue", "view", "1", "--comments").stdout
    assert "still broken" in comments
    assert "fixed in #3" not in comments  # posted after T


def test_issue_view_of_a_missing_number_is_githubs_not_found(world: GhWorld) -> None:
    for number in ("99", "4"):  # 4 was filed after T
        done = gh(world, "issue", "view", number, ok=False)
        assert done.returncode == 1
        expected = f"Could not resolve to an issue or pull request with the number of {number}."
        assert expected in done.stderr


def test_issue_list_plain_by_label_and_by_search(world: GhWorld) -> None:
    plain = gh(world, "issue", "list").stdout.splitlines()
    assert [line.split("\t")[:3] for line in plain] == [
        ["2", "OPEN", "Document add()"],
        ["1", "OPEN", "add() subtracts"],
    ]  # newest first; #4, filed after T, is absent
    assert gh(world, "issue", "list", "--label", "bug").stdout.startswith("1\t")
    assert gh(world, "issue", "list", "--label", "docs").stdout.startswith("2\t")
    assert gh(world, "issue", "list", "--assignee", "alice").stdout.startswith("2\t")
    assert gh(world, "issue", "list", "--author", "bob").stdout.startswith("2\t")
    assert gh(world, "issue", "list", "--search", "subtracts").stdout.startswith("1\t")
    assert gh(world, "issue", "list", "--search", "never be served").stdout == ""
    assert gh(world, "issue", "list", "--state", "closed").stdout == ""
    listed = json.loads(gh(world, "issue", "list", "--json", "number,state,labels").stdout)
    assert listed == [
        {"number": 2, "state": "OPEN", "labels": [_label("docs", "0075ca", "Docs")]},
        {"number": 1, "state": "OPEN", "labels": [_label("bug", "d73a4a", "")]},
    ]


def _label(name: str, color: str, description: str) -> dict[str, str]:
    return {"id": ANY_ID, "name": name, "description": description, "color": color}


class _AnyId(str):
    def __eq__(self, other: object) -> bool:
        return isinstance(other, str) and len(other) > 8

    __hash__ = str.__hash__


ANY_ID = _AnyId("<any global id>")


def test_pr_list_hides_the_fix_opened_after_t(world: GhWorld) -> None:
    assert gh(world, "pr", "list", "--state", "all").stdout == ""
    assert json.loads(gh(world, "pr", "list", "--state", "all", "--json", "number").stdout) == []


def test_repo_view(world: GhWorld) -> None:
    out = gh(world, "repo", "view", "acme/tiny").stdout
    assert "name:\tacme/tiny" in out
    data = json.loads(
        gh(world, "repo", "view", "acme/tiny", "--json", "name,owner,defaultBranchRef").stdout
    )
    assert data["name"] == "tiny"
    assert data["owner"]["login"] == "acme"
    assert data["defaultBranchRef"] == {"name": "main"}


def test_api_rest_issues(world: GhWorld) -> None:
    issues = json.loads(gh(world, "api", "repos/acme/tiny/issues").stdout)
    assert [i["number"] for i in issues] == [2, 1]
    assert [i["comments"] for i in issues] == [0, 1]  # the comment after T is not counted


def test_push_then_pr_create_view_list_comment(world: GhWorld, tmp_path: Path) -> None:
    work = clone(world, tmp_path / "tiny")
    git("checkout", "-q", "-b", "make-add-add", cwd=work)
    (work / "lib.py").write_text("def add(a, b):\n    return a + b\n")
    git("commit", "-q", "-am", "Make add() add", cwd=work)
    git("push", "-q", "-u", "origin", "make-add-add", cwd=work)

    # Inside the clone gh finds the repository from the remote, as an agent's gh does.
    created = gh(
        world,
        "pr",
        "create",
        "--title",
        "Make add() add",
        "--body",
        "Fixes #1",
        cwd=work,
        repo=None,
    )
    url = created.stdout.strip()
    # Number 3 went, after T, to the fix PR the world does not know: at T it is free.
    assert url == "https://github.com/acme/tiny/pull/3"

    view = gh(world, "pr", "view", cwd=work, repo=None).stdout  # the current branch's PR
    assert "title:\tMake add() add" in view
    assert "state:\tOPEN" in view
    assert "additions:\t1" in view and "deletions:\t1" in view
    data = json.loads(
        gh(world, "pr", "view", "3", "--json", "headRefName,baseRefName,commits,files").stdout
    )
    assert data["headRefName"] == "make-add-add"
    assert data["baseRefName"] == "main"
    assert [c["messageHeadline"] for c in data["commits"]] == ["Make add() add"]
    assert [f["path"] for f in data["files"]] == ["lib.py"]

    listed = gh(world, "pr", "list", "--state", "all").stdout
    assert listed.splitlines() == [
        "3\tMake add() add\tmake-add-add\tOPEN\t" + listed.split("\t")[-1].rstrip("\n")
    ]  # only the new PR: the fix PR from after T is not in the world

    again = gh(world, "pr", "create", "--title", "x", "--body", "y", cwd=work, repo=None, ok=False)
    assert "already exists" in again.stderr

    comment = gh(world, "pr", "comment", "3", "--body", "Ready for review").stdout.strip()
    assert comment.startswith("https://github.com/acme/tiny/pull/3#issuecomment-")
    comments = gh(world, "pr", "view", "3", "--comments").stdout
    assert "Ready for review" in comments

    assert "name:\tacme/tiny" in gh(world, "repo", "view", cwd=work, repo=None).stdout
    rest = json.loads(gh(world, "api", "repos/acme/tiny/issues").stdout)
    assert [i["number"] for i in rest] == [3, 2, 1]

    kinds = [(e["kind"], e["actor"]) for e in world.events()]
    assert kinds == [
        ("git.push", "agent"),
        ("github.branch.moved", "agent"),
        ("github.pull_request.opened", "agent"),
        ("github.issue_comment.created", "agent"),
        ("github.comment.posted", "agent"),
    ]
    push, opened, commented = [e for e in world.events() if e["kind"] not in SEMANTIC]
    assert push["data"]["ref"] == "refs/heads/make-add-add"
    assert opened["data"] | {"repo": "acme/tiny"} == opened["data"]
    assert opened["data"]["head"] == "make-add-add" and opened["data"]["body"] == "Fixes #1"
    assert commented["data"]["number"] == 3 and commented["data"]["body"] == "Ready for review"
    t = datetime.fromisoformat("2026-03-12T09:00:00+00:00")
    assert all(datetime.fromisoformat(e["at"].replace("Z", "+00:00")) > t for e in world.events())


def test_issue_comment_shows_in_the_next_view(world: GhWorld) -> None:
    gh(world, "issue", "comment", "1", "--body", "Looking into it")
    comments = gh(world, "issue", "view", "1", "--comments").stdout
    assert comments.index("still broken") < comments.index("Looking into it")
    assert "comments:\t2" in gh(world, "issue", "view", "1").stdout
    event, posted = world.events()
    assert posted["kind"] == "github.comment.posted" and posted["data"]["via"] == "issue_comment"
    assert event["kind"] == "github.issue_comment.created"
    assert event["data"]["body"] == "Looking into it"


def test_issue_create_edit_close_reopen(world: GhWorld) -> None:
    url = gh(
        world, "issue", "create", "--title", "Found it", "--body", "b", "--label", "bug"
    ).stdout.strip()
    assert url == "https://github.com/acme/tiny/issues/3"  # 3 and 4 were taken after T
    gh(world, "issue", "edit", "3", "--add-label", "docs", "--remove-label", "bug")
    gh(world, "issue", "edit", "3", "--title", "Found it again", "--add-assignee", "alice")
    gh(world, "issue", "close", "3", "--reason", "not planned")
    closed = json.loads(gh(world, "issue", "view", "3", "--json", "state,title,labels").stdout)
    assert closed["state"] == "CLOSED" and closed["title"] == "Found it again"
    assert [label["name"] for label in closed["labels"]] == ["docs"]
    gh(world, "issue", "reopen", "3")
    listed = gh(world, "issue", "list", "--assignee", "alice").stdout.splitlines()
    assert [line.split("\t")[:2] for line in listed] == [["3", "OPEN"], ["2", "OPEN"]]
    kinds = [e["kind"] for e in world.events()]
    assert kinds[0] == "github.issue.opened" and kinds.count("github.issue.updated") >= 3
    assert {"github.label.added", "github.label.removed"} <= set(kinds)


def test_pr_ready_review_merge(world: GhWorld, tmp_path: Path) -> None:
    work = clone(world, tmp_path / "tiny")
    git("checkout", "-q", "-b", "notes", cwd=work)
    (work / "NOTES.md").write_text("notes\n")
    git("add", "NOTES.md", cwd=work)
    git("commit", "-q", "-m", "Add notes", cwd=work)
    git("push", "-q", "-u", "origin", "notes", cwd=work)
    gh(world, "pr", "create", "--draft", "--title", "Notes", "--body", "b", cwd=work, repo=None)
    assert json.loads(gh(world, "pr", "view", "3", "--json", "isDraft").stdout) == {"isDraft": True}
    gh(world, "pr", "ready", "3")
    own = gh(world, "pr", "review", "3", "--approve", ok=False)
    assert "Can not approve your own pull request" in own.stderr
    gh(world, "pr", "review", "3", "--comment", "--body", "self-check done")
    gh(world, "pr", "merge", "3", "--squash")
    merged = json.loads(gh(world, "pr", "view", "3", "--json", "state,mergedBy,reviews").stdout)
    assert merged["state"] == "MERGED"
    assert [r["body"] for r in merged["reviews"]] == ["self-check done"]
    assert gh(world, "pr", "list", "--state", "merged").stdout.startswith("3\tNotes\tnotes\tMERGED")
    kinds = [e["kind"] for e in world.events()]
    assert kinds == [
        "git.push",
        "github.branch.moved",
        "github.pull_request.opened",
        "github.pull_request.updated",
        "github.pull_request_review.submitted",
        "github.comment.posted",
        "github.pull_request.merged",
        "github.pull_request.updated",  # the merge closed it
        "github.branch.moved",  # and moved main
    ]
