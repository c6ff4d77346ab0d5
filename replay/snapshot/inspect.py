"""A summary of a snapshot for people: T, where it came from, and what it holds."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from replay.base import gitrepo
from replay.base.snapshot import Snapshot


@dataclass(frozen=True)
class RepoSummary:
    name: str
    base_commit: str
    default_branch: str
    commits: int
    newest_commit_at: datetime


@dataclass(frozen=True)
class Summary:
    path: Path
    at: datetime
    source: str
    repositories: list[RepoSummary]
    counts: dict[str, int] = field(default_factory=dict)


def summarize(snapshot: Snapshot) -> Summary:
    repos = []
    with tempfile.TemporaryDirectory(prefix="replay-inspect-") as tmp:
        for r in snapshot.manifest.repositories:
            dest = gitrepo.checkout_from_bundle(
                snapshot.bundle(r.name), r.base_commit, Path(tmp) / r.name, r.default_branch
            )
            dates = gitrepo.commit_dates(dest, r.default_branch)
            repos.append(
                RepoSummary(r.name, r.base_commit, r.default_branch, len(dates), dates[0][1])
            )
    gh, lin, sl = snapshot.github, snapshot.linear, snapshot.slack
    messages = [m for ch in sl.channels for m in ch.messages]
    counts = {
        "github users": len(gh.users),
        "github repositories": len(gh.repos),
        "github issues": len(gh.issues),
        "github open issues": sum(i.state == "open" for i in gh.issues),
        "github pull requests": len(gh.pulls),
        "github comments": sum(len(t.comments) for t in [*gh.issues, *gh.pulls]),
        "linear teams": len(lin.teams),
        "linear issues": len(lin.issues),
        "linear comments": sum(len(i.comments) for i in lin.issues),
        "slack channels": len(sl.channels),
        "slack messages": len(messages),
        "slack thread replies": sum(m.thread_ts not in (None, m.ts) for m in messages),
        "registry python files": len(snapshot.registry.python),
        "registry npm versions": len(snapshot.registry.npm),
        "docs pages": len(snapshot.docs.pages),
    }
    src = snapshot.manifest.source
    return Summary(snapshot.path, snapshot.at, f"{src.kind} from {src.origin}", repos, counts)
