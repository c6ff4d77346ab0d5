"""git itself against the fake over smart HTTP: clone, fetch and push with a token; 401 and
no change without one; pushes move the fake's branches and pull request heads, and are logged
with the right ``forced`` flag; reset restores the repository."""

from __future__ import annotations

import os
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from fakes.github.gitstore import ZERO
from tests.fakes.github.conftest import (
    GITHUB,
    REPO,
    Served,
    clone,
    commit_file,
    events,
    git,
    server_refs,
)


def test_clone_holds_only_history_up_to_t(served: Served, tmp_path: Path, fix_commit: str) -> None:
    work = clone(served, tmp_path)
    log = git(served, work, "log", "--all", "--format=%s").stdout.split("\n")
    assert [line for line in log if line] == ["Add tests", "Initial commit"]
    assert "a - b" in (work / "lib.py").read_text()
    missing = git(served, work, "cat-file", "-e", fix_commit, check=False)
    assert missing.returncode != 0
    # Without .git in the URL too, as github.com allows.
    git(served, tmp_path, "clone", "-q", f"{GITHUB}{REPO}", "plain")
    assert (tmp_path / "plain" / "lib.py").is_file()


def test_no_token_gets_401_and_a_push_changes_nothing(served: Served, tmp_path: Path) -> None:
    req = urllib.request.Request(f"{served.url}/{REPO}.git/info/refs?service=git-upload-pack")
    with pytest.raises(urllib.error.HTTPError) as info:
        urllib.request.urlopen(req)
    assert info.value.code == 401
    assert info.value.headers["WWW-Authenticate"] == 'Basic realm="GitHub"'
    info.value.close()

    denied = git(served, tmp_path, "clone", f"{GITHUB}{REPO}.git", "x", token=None, check=False)
    assert denied.returncode != 0
    assert not (tmp_path / "x" / "lib.py").exists()

    work = clone(served, tmp_path)
    before = server_refs(served)
    commit_file(served, work, "x.txt", "x\n", "sneaky")
    pushed = git(served, work, "push", "origin", "HEAD:main", token=None, check=False)
    assert pushed.returncode != 0
    assert "Authentication failed" in pushed.stderr or "could not read" in pushed.stderr
    other = git(served, work, "push", "origin", "HEAD:refs/heads/evil", token=None, check=False)
    assert other.returncode != 0
    assert server_refs(served) == before
    assert events(served) == []


def test_push_moves_branches_and_logs_forced_flag(served: Served, tmp_path: Path) -> None:
    work = clone(served, tmp_path)
    base = git(served, work, "rev-parse", "HEAD").stdout.strip()
    git(served, work, "checkout", "-q", "-b", "fix-add")
    first = commit_file(served, work, "lib.py", "def add(a, b):\n    return a + b\n", "Fix add")
    git(served, work, "push", "-q", "origin", "fix-add")
    assert server_refs(served)["refs/heads/fix-add"] == first
    with served.world.session() as s:
        assert served.backend.repos.branch(s, REPO, "fix-add") is not None

    second = commit_file(served, work, "notes.txt", "n\n", "Notes")
    git(served, work, "push", "-q", "origin", "fix-add")
    git(served, work, "reset", "-q", "--hard", first)
    rewritten = commit_file(served, work, "other.txt", "o\n", "Rewrite")
    rejected = git(served, work, "push", "origin", "fix-add", check=False)
    assert rejected.returncode != 0  # not a fast-forward: git refuses without --force
    git(served, work, "push", "-q", "--force", "origin", "fix-add")
    git(served, work, "push", "-q", "origin", "--delete", "fix-add")

    pushes = [e["data"] for e in events(served, "git.push")]
    assert [(p["before"], p["after"], p["forced"], p["created"], p["deleted"]) for p in pushes] == [
        (ZERO, first, False, True, False),
        (first, second, False, False, False),
        (second, rewritten, True, False, False),
        (rewritten, ZERO, False, False, True),
    ]
    assert {p["ref"] for p in pushes} == {"refs/heads/fix-add"}
    assert all(p["repo"] == REPO for p in pushes)
    logged = events(served, "git.push")
    assert all(e["service"] == "git" and e["actor"] == "agent" for e in logged)
    assert all(e["at"] > "2026-03-12T09:00:00" for e in logged)
    assert "refs/heads/fix-add" not in server_refs(served)
    assert server_refs(served)["refs/heads/main"] == base


def test_pull_request_head_follows_pushes_and_fetch_sees_merges(
    served: Served, tmp_path: Path
) -> None:
    work = clone(served, tmp_path)
    git(served, work, "checkout", "-q", "-b", "feature")
    first = commit_file(served, work, "a.txt", "a\n", "A")
    git(served, work, "push", "-q", "-u", "origin", "feature")
    with served.world.session() as s:
        pr = served.backend.pulls.create(s, "agent", REPO, "Feature", "Adds a", "feature", "main")
        number = pr.number
        assert pr.pull is not None and pr.pull.head_sha == first
    pull_ref = f"refs/pull/{number}/head"
    assert f"{first}\t{pull_ref}" in git(served, work, "ls-remote", "origin").stdout
    second = commit_file(served, work, "b.txt", "b\n", "B")
    git(served, work, "push", "-q")
    with served.world.session() as s:
        pull = served.backend.pulls.get(s, REPO, number).pull
        assert pull is not None and pull.head_sha == second
    assert f"{second}\t{pull_ref}" in git(served, work, "ls-remote", "origin").stdout
    # GitHub's pull refs are read-only.
    hidden = git(served, work, "push", "origin", f"HEAD~1:{pull_ref}", check=False)
    assert hidden.returncode != 0 and "hidden ref" in hidden.stderr
    git(served, work, "fetch", "-q", "origin", f"{pull_ref}:refs/remotes/origin/pr")
    assert git(served, work, "rev-parse", "origin/pr").stdout.strip() == second
    with served.world.session() as s:
        merged = served.backend.pulls.merge(s, "agent", REPO, number, method="merge")
        assert merged.pull is not None
        merge_sha = merged.pull.merge_commit_sha
    git(served, work, "fetch", "-q", "origin")
    assert git(served, work, "rev-parse", "origin/main").stdout.strip() == merge_sha
    parents = git(served, work, "log", "-1", "--format=%P", "origin/main").stdout.split()
    assert parents[1] == second


def test_reset_restores_the_repository(served: Served, tmp_path: Path) -> None:
    work = clone(served, tmp_path)
    original = server_refs(served)
    commit_file(served, work, "x.txt", "x\n", "X")
    git(served, work, "push", "-q", "origin", "HEAD:main", "HEAD:refs/heads/extra")
    assert server_refs(served) != original
    reset = urllib.request.Request(f"{served.url}/_replay/reset", method="POST")
    with urllib.request.urlopen(reset) as resp:
        assert resp.status == 200
    assert server_refs(served) == original
    assert events(served) == []
    again = git(served, tmp_path, "ls-remote", f"{GITHUB}{REPO}.git").stdout
    assert "extra" not in again
    assert original["refs/heads/main"] in again


def test_large_push_streams_through(served: Served, tmp_path: Path) -> None:
    """A push bigger than git's post buffer goes chunked, without a Content-Length."""
    work = clone(served, tmp_path)
    git(served, work, "checkout", "-q", "-b", "big")
    (work / "blob.bin").write_bytes(os.urandom(3 * 1024 * 1024))
    git(served, work, "add", "blob.bin")
    git(served, work, "commit", "-q", "-m", "Big file")
    tip = git(served, work, "rev-parse", "HEAD").stdout.strip()
    git(served, work, "-c", "http.postBuffer=65536", "push", "-q", "origin", "big")
    assert server_refs(served)["refs/heads/big"] == tip
    fresh = clone(served, tmp_path, "again")
    git(served, fresh, "fetch", "-q", "origin", "big")
    assert git(served, fresh, "rev-parse", "FETCH_HEAD").stdout.strip() == tip
