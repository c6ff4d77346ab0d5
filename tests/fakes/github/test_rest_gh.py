"""The REST side of the real ``gh`` CLI (Debian's gh 2.23): ``gh pr diff`` (a REST call with
the diff media type), ``gh api`` reads, writes and ``--paginate`` over ``Link`` headers, and
GitHub's error text for a 404. gh reaches the world over a Unix socket (``http_unix_socket``),
sending ``Host: api.github.com``; git pushes over TCP with github.com rewritten."""

from __future__ import annotations

import json
from pathlib import Path

from tests.fakes.github.conftest import REPO, GhServed, clone, commit_file, events, gh, git


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
    assert kinds == ["git.push", "github.branch.moved", "github.pull_request.opened"]


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
