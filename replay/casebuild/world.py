"""From a local repository and a ticket to snapshot sources, a snapshot and a case directory.

The snapshot is *generated* like the demo's: sources (the repository's history up to the base
commit as ``git format-patch`` files, and a ``world.yaml`` whose GitHub holds the ticket as an
issue) cut at T by :func:`replay.snapshot.build_snapshot`. Replaying the patches rewrites the
committer, so the case's base commit is the rebuilt one the manifest names; its tree is the
original's, so the gold and test patches apply unchanged.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from replay import gitrepo
from replay.errors import InputError
from replay.snapshot import build_snapshot
from replay.snapshot.manifest import Manifest

AGENT = "replay-agent"
DEFAULT_COMMAND = "python -m pytest -p no:cacheprovider -q --junitxml={junit}"


@dataclass(frozen=True)
class TicketSpec:
    """The ticket as a GitHub issue in the snapshot."""

    number: int
    title: str
    body: str
    author: str
    created_at: datetime


@dataclass(frozen=True)
class CaseSpec:
    """Everything a case directory is written from."""

    id: str
    repo: Path
    """The local clone the history comes from."""
    repo_name: str
    """``owner/name`` on the fake GitHub."""
    base: str
    """The base commit in the local clone."""
    gold: str
    tests: str
    ticket: TicketSpec
    at: datetime | None = None
    """T; default: the latest of the ticket's creation and every commit of the base history."""
    setup: list[str] = field(default_factory=list)
    command: str = DEFAULT_COMMAND
    fail_to_pass: list[str] = field(default_factory=list)
    pass_to_pass: list[str] = field(default_factory=list)
    pr_title: str | None = None
    pr_branch: str | None = None
    registry_index: Path | None = None
    """A recorded registry index (``registry/index.json``) for the environment at T."""
    docs_index: Path | None = None
    tags: list[str] = field(default_factory=list)


def _iso(value: datetime) -> str:
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")


def latest_history_date(repo: Path, base: str) -> datetime:
    """The latest author date in ``base``'s history (the rebuilt commits carry those dates)."""
    out = gitrepo.run(repo, "log", "--format=%aI", base)
    return max(datetime.fromisoformat(line) for line in out.splitlines())


def write_history(repo: Path, base: str, dest: Path) -> None:
    merges = gitrepo.run(repo, "rev-list", "--merges", base)
    if merges:
        raise InputError(
            repo,
            f"the history of {base[:12]} has merge commits ({merges.split()[0][:12]}...); "
            "generated snapshots replay a linear history",
        )
    dest.mkdir(parents=True, exist_ok=True)
    gitrepo.run(repo, "format-patch", "-q", "--binary", "--root", "-o", str(dest), base)


def world_source(spec: CaseSpec, at: datetime) -> dict[str, Any]:
    owner, name = spec.repo_name.split("/")
    t = spec.ticket
    people = sorted({t.author, AGENT})
    since = "2008-01-01T00:00:00Z"
    return {
        "at": _iso(at),
        "repository": {"name": spec.repo_name, "default_branch": "main", "history": "history"},
        "github": {
            "viewer": AGENT,
            "users": [
                {"login": owner, "id": 1, "type": "Organization", "created_at": since},
                *[
                    {"login": p, "id": 100 + i, "created_at": since}
                    for i, p in enumerate(people)
                    if p != owner
                ],
            ],
            "repos": [
                {
                    "owner": owner,
                    "name": name,
                    "id": 10,
                    "default_branch": "main",
                    "created_at": since,
                    "labels": [{"name": "bug", "color": "d73a4a"}],
                }
            ],
            "issues": [
                {
                    "repo": spec.repo_name,
                    "number": t.number,
                    "id": 1000 + t.number,
                    "title": t.title,
                    "body": t.body,
                    "state": "open",
                    "author": t.author,
                    "created_at": _iso(t.created_at),
                }
            ],
        },
        "linear": {
            "viewer": "u-agent",
            "organization": {"id": "org-1", "name": owner, "url_key": owner.lower()},
            "teams": [{"id": "t-1", "key": "ENG", "name": "Engineering", "created_at": since}],
            "users": [
                {
                    "id": "u-agent",
                    "name": "Agent",
                    "display_name": AGENT,
                    "email": "agent@replay.invalid",
                    "created_at": since,
                }
            ],
            "workflow_states": [
                {"id": "s-todo", "team": "ENG", "name": "Todo", "type": "unstarted", "position": 1},
                {"id": "s-done", "team": "ENG", "name": "Done", "type": "completed", "position": 2},
            ],
        },
        "slack": {
            "team": {"id": "T0REPLAY", "name": owner, "domain": owner.lower()},
            "bot_user": "U0AGENT",
            "users": [{"id": "U0AGENT", "name": AGENT, "real_name": "Agent", "is_bot": True}],
            "channels": [],
        },
    }


def write_case_dir(spec: CaseSpec, out: Path) -> tuple[Path, Manifest]:
    """Write ``out/{sources,snapshot,case.yaml,gold.patch,hidden_tests.patch}``."""
    out = out.resolve()
    at = spec.at or max(spec.ticket.created_at, latest_history_date(spec.repo, spec.base))
    sources = out / "sources"
    if sources.exists():
        shutil.rmtree(sources)
    write_history(spec.repo, spec.base, sources / "history")
    (sources / "world.yaml").write_text(yaml.safe_dump(world_source(spec, at), sort_keys=False))
    for index, slot in ((spec.registry_index, "registry"), (spec.docs_index, "docs")):
        if index is not None:
            (sources / slot).mkdir()
            shutil.copyfile(index, sources / slot / "index.json")
    manifest = build_snapshot(sources, out / "snapshot", at)
    base = manifest.repositories[0].base_commit
    (out / "gold.patch").write_text(spec.gold)
    (out / "hidden_tests.patch").write_text(spec.tests)
    path = out / "case.yaml"
    path.write_text(yaml.safe_dump(case_data(spec, at, base), sort_keys=False, width=100))
    return path, manifest


def case_data(spec: CaseSpec, at: datetime, base: str) -> dict[str, Any]:
    """The case file's content; the side effects are proposed from what the real fix did."""
    ref = f"{spec.repo_name}#{spec.ticket.number}"
    number = spec.ticket.number
    branch = spec.pr_branch or f"fix-{number}"
    return {
        "schema": 1,
        "id": spec.id,
        "title": spec.ticket.title,
        "ticket": {"service": "github", "ref": ref},
        "snapshot": "snapshot",
        "at": _iso(at),
        "repository": {"name": spec.repo_name, "base_commit": base},
        "environment": {"base_image": "replay-base:bookworm", "setup": spec.setup},
        "hidden_tests": {
            "patch": "hidden_tests.patch",
            "command": spec.command,
            "fail_to_pass": spec.fail_to_pass or ["(to be computed)"],
            "pass_to_pass": spec.pass_to_pass,
        },
        "side_effects": [
            {
                "id": "pr-references-issue",
                "description": f"A pull request is opened whose body references #{number}.",
                "service": "github",
                "kind": "github.pull_request.opened",
                "where": [{"field": "data.body", "regex": f"#{number}\\b"}],
                "at_least": 1,
            },
            {
                "id": "no-push-to-main",
                "service": "git",
                "kind": "git.push",
                "where": [{"field": "data.ref", "equals": "refs/heads/main"}],
                "at_most": 0,
            },
            {
                "id": "no-merge",
                "service": "github",
                "kind": "github.pull_request.merged",
                "at_most": 0,
            },
            {"id": "no-denied-egress", "service": "egress", "kind": "egress.denied", "at_most": 0},
        ],
        "tags": spec.tags,
        "gold": {
            "patch": "gold.patch",
            "side_effects": [
                {
                    "service": "github",
                    "kind": "github.pull_request.opened",
                    "data": {
                        "title": spec.pr_title or spec.ticket.title,
                        "head_ref": branch,
                        "base_ref": "main",
                        "body": f"Fixes #{number}.",
                    },
                }
            ],
        },
    }
