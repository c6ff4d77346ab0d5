"""Reading a repository's history from a local clone and from GitHub, Linear and Slack.

The services are read by the same code ``replay snapshot capture`` uses
(:mod:`replay.capture`), cut at ``until`` (default: now) instead of at a case's T, and the
result is validated into the world-state models before it is turned into the miners' records
(:mod:`replay.mine.history`). In tests the services are the fakes serving a world cut late.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from replay.base.worldstate import GitHubState, LinearState, SlackState
from replay.capture.common import Ledger
from replay.capture.github import GitHubReader, capture_github
from replay.capture.linear import LinearReader, capture_linear
from replay.capture.slack import capture_slack
from replay.mine.history import History, Post, Pull, SlackThread, Ticket, closed_refs, read_commits


@dataclass(frozen=True)
class Sources:
    """Where the history is read from."""

    clone: Path
    """A local clone of the repository (its default branch is read)."""
    repo: str
    """``owner/name`` on GitHub."""
    github_api: str
    github_token: str
    linear_url: str | None = None
    linear_key: str = ""
    linear_team: str | None = None
    """The Linear team whose tickets are read (its key, ``ENG``); None: Linear is not read."""
    slack_url: str | None = None
    slack_token: str = ""
    agents: frozenset[str] = frozenset()
    """Accounts that are the agent (GitHub logins, Linear display names, Slack user names),
    beside every bot account; default: the GitHub token's own user."""
    until: datetime | None = None
    """Read the history up to here (default: now)."""


def read_history(src: Sources) -> History:
    """The history as the miners read it."""
    until = src.until or datetime.now(UTC)
    reader = GitHubReader(src.github_api, src.github_token)
    try:
        raw, branch = capture_github(reader, src.repo, until, set(), Ledger())
    finally:
        reader.close()
    github = GitHubState.model_validate(raw)
    agents = set(src.agents) or {github.viewer}
    agents |= {u.login for u in github.users if u.type == "Bot" or u.login.endswith("[bot]")}
    history = History(src.repo, src.clone.resolve(), branch, read_commits(src.clone, branch))
    _github(history, github, agents)
    if src.linear_url is not None and src.linear_team is not None:
        lr = LinearReader(src.linear_url, src.linear_key)
        try:
            linear = LinearState.model_validate(
                capture_linear(lr, src.linear_team, until, set(), Ledger())
            )
        finally:
            lr.close()
        _linear(history, linear, agents)
    if src.slack_url is not None:
        from slack_sdk import WebClient

        client = WebClient(token=src.slack_token, base_url=src.slack_url)
        _slack(history, SlackState.model_validate(capture_slack(client, until, None, Ledger())),
               agents)  # fmt: skip
    return history


def _github(history: History, state: GitHubState, agents: set[str]) -> None:
    repo = history.repo_name
    for issue in state.issues:
        where = f"{repo}#{issue.number}"
        comments = tuple(
            Post("github", where, c.author, c.author, c.created_at, c.body, c.author in agents)
            for c in issue.comments
        )
        history.tickets[f"#{issue.number}"] = Ticket(
            f"#{issue.number}", "github", issue.title, issue.body or "", issue.author,
            issue.created_at, comments,
        )  # fmt: skip
    for p in state.pulls:
        where = f"{repo}#{p.number}"
        posts: list[Post] = [
            Post("github", where, c.author, c.author, c.created_at, c.body, c.author in agents)
            for c in p.comments
        ]
        posts += [
            Post("github", where, r.author, r.author, r.submitted_at, r.body, r.author in agents)
            for r in p.reviews
            if r.body.strip()
        ]
        history.pulls.append(
            Pull(
                number=p.number,
                title=p.title,
                body=p.body or "",
                author=p.author,
                agent=p.author in agents,
                created_at=p.created_at,
                closed_at=p.closed_at,
                merged_at=p.merged_at,
                head_sha=p.head_sha,
                base_sha=p.base_sha,
                merge_commit=p.merge_commit_sha,
                closes=closed_refs(f"{p.title}\n{p.body or ''}"),
                posts=tuple(sorted(posts, key=lambda x: x.at)),
            )
        )


def _linear(history: History, state: LinearState, agents: set[str]) -> None:
    names = {u.id: u.display_name for u in state.users}
    bots = {u.id for u in state.users if u.display_name in agents} | {state.viewer}
    for issue in state.issues:
        ref = issue.identifier
        posts = tuple(
            Post(
                "linear",
                ref,
                c.user,
                names.get(c.user, c.user),
                c.created_at,
                c.body,
                c.user in bots,
            )
            for c in issue.comments
        )
        history.tickets[ref] = Ticket(
            ref, "linear", issue.title, issue.description or "",
            names.get(issue.creator, issue.creator), issue.created_at, posts,
        )  # fmt: skip


def _slack(history: History, state: SlackState, agents: set[str]) -> None:
    users: dict[str, Any] = {u.id: u for u in state.users}
    bots = {u.id for u in state.users if u.is_bot or u.name in agents} | {state.bot_user}
    for ch in state.channels:
        parents = [m for m in ch.messages if m.thread_ts is None]
        for parent in parents:
            replies = [m for m in ch.messages if m.thread_ts == parent.ts]
            if not replies:
                continue
            where = f"#{ch.name}/{parent.ts}"
            posts = tuple(
                Post(
                    "slack",
                    where,
                    m.user,
                    users[m.user].name if m.user in users else m.user,
                    datetime.fromtimestamp(float(m.ts), UTC),
                    m.text,
                    m.user in bots,
                )
                for m in [parent, *replies]
            )
            history.threads.append(SlackThread(ch.id, ch.name, parent.ts, posts))
