"""A tiny world for tests: a three-commit repository, a timeline that runs past T."""

from __future__ import annotations

import subprocess
from pathlib import Path

import yaml

from replay.base.gitrepo import clean_env

T = "2026-03-12T09:00:00Z"

COMMITS = [
    ("2026-03-01T10:00:00Z", "Initial commit", {"lib.py": "def add(a, b):\n    return a - b\n"}),
    (
        "2026-03-05T10:00:00Z",
        "Add tests",
        {"test_lib.py": "from lib import add\n\n\ndef test_zero():\n    assert add(0, 0) == 0\n"},
    ),
    ("2026-03-13T10:00:00Z", "Fix add (#3)", {"lib.py": "def add(a, b):\n    return a + b\n"}),
]

GOLD = """\
diff --git a/lib.py b/lib.py
--- a/lib.py
+++ b/lib.py
@@ -1,2 +1,2 @@
 def add(a, b):
-    return a - b
+    return a + b
"""

HIDDEN = """\
diff --git a/test_lib.py b/test_lib.py
--- a/test_lib.py
+++ b/test_lib.py
@@ -3,3 +3,7 @@ from lib import add
 
 def test_zero():
     assert add(0, 0) == 0
+
+
+def test_two():
+    assert add(1, 1) == 2
"""


def write_history(dest: Path) -> None:
    scratch = dest.parent / "scratch-repo"
    env = clean_env({"GIT_AUTHOR_NAME": "Alice", "GIT_AUTHOR_EMAIL": "alice@example.test"})
    subprocess.run(["git", "init", "-q", "-b", "main", str(scratch)], check=True, env=env)
    for when, subject, files in COMMITS:
        for name, text in files.items():
            (scratch / name).write_text(text)
        subprocess.run(["git", "add", "-A"], cwd=scratch, check=True, env=env)
        dated = {**env, "GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}
        subprocess.run(["git", "commit", "-q", "-m", subject], cwd=scratch, check=True, env=dated)
    dest.mkdir(parents=True)
    subprocess.run(
        ["git", "format-patch", "-q", "--root", "-o", str(dest)], cwd=scratch, check=True, env=env
    )


def world() -> dict:
    return {
        "at": T,
        "repository": {"name": "acme/tiny", "default_branch": "main", "history": "history"},
        "github": {
            "viewer": "agent",
            "users": [
                {"login": "alice", "id": 1, "created_at": "2020-01-01T00:00:00Z"},
                {"login": "agent", "id": 2, "type": "Bot", "created_at": "2020-01-01T00:00:00Z"},
                {"login": "late", "id": 3, "created_at": "2026-03-14T00:00:00Z"},
            ],
            "repos": [
                {
                    "owner": "acme",
                    "name": "tiny",
                    "id": 10,
                    "created_at": "2026-03-01T00:00:00Z",
                    "pushed_at": "2026-03-13T10:00:00Z",
                    "labels": [{"name": "bug", "color": "d73a4a"}],
                }
            ],
            "issues": [
                {
                    "repo": "acme/tiny",
                    "number": 1,
                    "id": 101,
                    "title": "add() subtracts",
                    "body": "1 + 1 gives 0",
                    "state": "open",
                    "author": "alice",
                    "labels": ["bug"],
                    "created_at": "2026-03-10T00:00:00Z",
                    "comments": [
                        {
                            "id": 1001,
                            "author": "alice",
                            "body": "still broken",
                            "created_at": "2026-03-11T00:00:00Z",
                        },
                        {
                            "id": 1002,
                            "author": "alice",
                            "body": "fixed in #3, thanks",
                            "created_at": "2026-03-13T12:00:00Z",
                        },
                    ],
                    "history": [
                        {
                            "at": "2026-03-13T11:00:00Z",
                            "set": {
                                "state": "closed",
                                "closed_at": "2026-03-13T11:00:00Z",
                                "state_reason": "completed",
                            },
                        },
                    ],
                }
            ],
            "pulls": [
                {
                    "repo": "acme/tiny",
                    "number": 3,
                    "id": 103,
                    "title": "Fix add",
                    "body": "Fixes #1",
                    "state": "closed",
                    "author": "alice",
                    "head_ref": "fix-add",
                    "base_ref": "main",
                    "head_sha": "@commit:Fix add (#3)",
                    "base_sha": "@commit:Add tests",
                    "merged_at": "2026-03-13T10:00:00Z",
                    "closed_at": "2026-03-13T10:00:00Z",
                    "created_at": "2026-03-12T10:00:00Z",
                }
            ],
        },
        "linear": {
            "viewer": "u-agent",
            "organization": {"id": "org-1", "name": "Acme", "url_key": "acme"},
            "teams": [
                {
                    "id": "t-1",
                    "key": "ENG",
                    "name": "Engineering",
                    "created_at": "2025-01-01T00:00:00Z",
                }
            ],
            "users": [
                {
                    "id": "u-agent",
                    "name": "Agent",
                    "display_name": "agent",
                    "email": "agent@acme.test",
                    "created_at": "2025-01-01T00:00:00Z",
                },
            ],
            "workflow_states": [
                {"id": "s-todo", "team": "ENG", "name": "Todo", "type": "unstarted", "position": 1},
                {"id": "s-done", "team": "ENG", "name": "Done", "type": "completed", "position": 2},
            ],
            "issues": [
                {
                    "id": "i-1",
                    "team": "ENG",
                    "number": 1,
                    "title": "add is wrong",
                    "state": "s-todo",
                    "creator": "u-agent",
                    "created_at": "2026-03-10T00:00:00Z",
                    "history": [
                        {
                            "at": "2026-03-13T10:00:00Z",
                            "set": {"state": "s-done", "completed_at": "2026-03-13T10:00:00Z"},
                        }
                    ],
                },
            ],
        },
        "slack": {
            "team": {"id": "T01", "name": "Acme", "domain": "acme"},
            "bot_user": "U0BOT",
            "users": [
                {"id": "U0BOT", "name": "agent", "real_name": "Agent", "is_bot": True},
                {"id": "U0ALICE", "name": "alice", "real_name": "Alice"},
            ],
            "channels": [
                {
                    "id": "C0ENG",
                    "name": "eng",
                    "created": 1700000000,
                    "creator": "U0ALICE",
                    "members": ["U0BOT", "U0ALICE"],
                    "messages": [
                        # 2026-03-11T00:00:00Z, before T
                        {
                            "ts": "1773187200.000100",
                            "user": "U0ALICE",
                            "text": "add() is broken",
                            "reactions": [
                                {"name": "eyes", "users": ["U0BOT"], "at": "2026-03-11T01:00:00Z"},
                                {
                                    "name": "tada",
                                    "users": ["U0ALICE"],
                                    "at": "2026-03-14T00:00:00Z",
                                },
                            ],
                        },
                        # 2026-03-13T00:00:00Z, after T
                        {
                            "ts": "1773360000.000100",
                            "user": "U0ALICE",
                            "text": "fixed",
                            "thread_ts": "1773187200.000100",
                        },
                    ],
                },
            ],
        },
    }


def case(snapshot: str, base_commit: str) -> dict:
    return {
        "schema": 1,
        "id": "tiny-add",
        "title": "add() subtracts",
        "ticket": {"service": "github", "ref": "acme/tiny#1"},
        "snapshot": snapshot,
        "at": T,
        "repository": {"name": "acme/tiny", "base_commit": base_commit},
        "environment": {"base_image": "replay-base:bookworm", "setup": []},
        "hidden_tests": {
            "patch": "hidden.patch",
            "fail_to_pass": ["test_lib.py::test_two"],
            "pass_to_pass": ["test_lib.py::test_zero"],
            "command": "python -m pytest --junitxml={junit}",
        },
        "side_effects": [
            {
                "id": "no-push-main",
                "kind": "git.push",
                "at_most": 0,
                "where": [{"field": "data.ref", "equals": "refs/heads/main"}],
            },
            {
                "id": "pr",
                "kind": "github.pull_request.opened",
                "at_least": 1,
                "where": [{"field": "data.body", "contains": "#1"}],
            },
        ],
        "gold": {"patch": "gold.patch"},
    }


def make_sources(root: Path) -> Path:
    src = root / "sources"
    src.mkdir(parents=True)
    write_history(src / "history")
    (src / "world.yaml").write_text(yaml.safe_dump(world(), sort_keys=False))
    return src


def write_case(dest: Path, snapshot: Path, base_commit: str) -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    (dest / "gold.patch").write_text(GOLD)
    (dest / "hidden.patch").write_text(HIDDEN)
    path = dest / "case.yaml"
    path.write_text(yaml.safe_dump(case(str(snapshot), base_commit), sort_keys=False))
    return path
