"""A merged pull request on GitHub as a case's fix, with its Linear ticket and Slack thread.

:func:`fix_source_from_pr` reads the pull request (and the issue its body closes, or the
Linear ticket and Slack thread given), clones the repository with its tags, and returns the
:class:`~replay.casebuild.create.FixSource` that ``case create`` builds from: the ticket as
it stood at T, and as proposed side effects what the real fix did between T and the merge.
"""

from __future__ import annotations

import base64
import dataclasses
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from replay.base import gitrepo
from replay.base.errors import InputError
from replay.capture.common import CaptureError, Ledger, when
from replay.capture.github import GitHubReader
from replay.capture.linear import LinearReader, capture_linear
from replay.capture.slack import capture_slack
from replay.casebuild.casedir import (
    ProposedEffect,
)
from replay.casebuild.create import FixSource, pick_at


@dataclass(frozen=True)
class LinearTicket:
    """The fix's ticket on Linear: captured at T with its team, its later moves proposed."""

    identifier: str
    key: str
    url: str = "https://api.linear.app/graphql"


@dataclass(frozen=True)
class SlackThread:
    """The Slack thread the fix was discussed in: captured at T, its later answer proposed."""

    channel: str
    ts: str
    token: str
    url: str = "https://slack.com/api/"


_CLOSES = re.compile(r"(?i)\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\s+#(\d+)")


def fix_source_from_pr(
    reader: GitHubReader,
    git_url: str,
    token: str,
    repo: str,
    number: int,
    clone: Path,
    *,
    at: datetime | None = None,
    linear: LinearTicket | None = None,
    slack: SlackThread | None = None,
) -> FixSource:
    """A merged pull request on GitHub as a fix: base = the merge base of its base and head,
    fix = its head; the ticket is the Linear issue given, else the issue its body closes, else
    the PR itself. Linear and Slack, when given, are captured at T into the case's snapshot.

    The side effects proposed beyond the pull request are what the real fix did between T and
    the merge: the PR's author commenting on the ticket, the ticket moved on Linear, an
    answer in the Slack thread. What happened at or after the merge (an issue closed by it, a
    ticket moved to Done by an automation) is the merge's doing, not the agent's.
    """
    pr = reader.get(f"/repos/{repo}/pulls/{number}")
    if not pr.get("merged_at"):
        raise InputError(Path(f"{repo}#{number}"), "the pull request was not merged")
    merged = when(pr["merged_at"])
    fixer = (pr.get("user") or {}).get("login", "")
    m = _CLOSES.search(pr.get("body") or "")
    ticket = reader.get(f"/repos/{repo}/issues/{m.group(1)}") if m else pr
    basic = base64.b64encode(f"x-access-token:{token}".encode()).decode()
    # With its tags: the snapshot keeps those T knew, which a version from git tags needs.
    gitrepo.run(
        clone.parent, "-c", f"http.extraHeader=Authorization: Basic {basic}", "clone", "-q",
        f"{git_url.rstrip('/')}/{repo}.git", str(clone),
    )  # fmt: skip
    head = pr["head"]["sha"]
    gitrepo.run(clone, "cat-file", "-e", f"{head}^{{commit}}")
    base = gitrepo.run(clone, "merge-base", pr["base"]["sha"], head)
    src = FixSource(
        repo=clone,
        fix=head,
        base=base,
        repo_name=repo,
        ticket_title=ticket["title"],
        ticket_body=ticket.get("body") or "",
        issue_number=int(ticket["number"]),
        ticket_author=(ticket.get("user") or {}).get("login", "reporter"),
        ticket_created=when(ticket["created_at"]),
    )
    effects: list[ProposedEffect] = []
    states: dict[str, dict[str, Any]] = {}
    if linear is None:
        created, t, moved = pick_at(clone, base, head, src.ticket_created, at)
    else:
        lr = LinearReader(linear.url, linear.key)
        try:
            issue = lr.data(_LINEAR_ISSUE, id=linear.identifier)["issue"]
            src = _linear_ticket(src, issue)
            created, t, moved = pick_at(clone, base, head, src.ticket_created, at)
            states["linear"] = capture_linear(lr, issue["team"]["key"], t, set(), Ledger())
        finally:
            lr.close()
        effects += _linear_moves(issue, t, merged)
    if linear is None and m is not None:
        effects += _ticket_answers(reader, repo, int(ticket["number"]), fixer, t, merged)
    if slack is not None:
        state, answered = _slack_thread(slack, t, merged)
        states["slack"] = state
        effects += answered
    return dataclasses.replace(
        src,
        at=t,
        ticket_created=created,
        effects=tuple(effects),
        states=states,
        notes=(moved,) if moved else (),
    )


def _ticket_answers(
    reader: GitHubReader, repo: str, number: int, fixer: str, at: datetime, merged: datetime
) -> list[ProposedEffect]:
    """The fix's author commented on the ticket after T and before the merge."""
    for c in reader.pages(f"/repos/{repo}/issues/{number}/comments"):
        if at < when(c["created_at"]) < merged and (c.get("user") or {}).get("login") == fixer:
            return [
                ProposedEffect(
                    id="ticket-answered",
                    description=f"#{number} gets a comment (the fix's author commented "
                    "there before the merge).",
                    service="github",
                    kind="github.issue_comment.created",
                    where=[{"field": "data.number", "equals": number}],
                    gold={"repo": repo, "number": number, "body": c.get("body") or ""},
                )
            ]
    return []


_LINEAR_ISSUE = """
query($id: String!) { issue(id: $id) { id identifier number title description createdAt
  team { key } creator { displayName }
  history(first: 250) { nodes { createdAt fromState { name } toState { name } } } } }
"""


def _linear_ticket(src: FixSource, issue: dict[str, Any]) -> FixSource:
    """``src`` with the Linear issue as its ticket (filed at the earlier of the two)."""
    created = when(issue["createdAt"])
    return dataclasses.replace(
        src,
        ticket_service="linear",
        ticket_identifier=issue["identifier"],
        ticket_title=issue["title"],
        ticket_body=issue.get("description") or "",
        issue_number=int(issue["number"]),
        ticket_author=(issue.get("creator") or {}).get("displayName") or "reporter",
        ticket_created=min(created, src.ticket_created or created),
    )


def _linear_moves(issue: dict[str, Any], at: datetime, merged: datetime) -> list[ProposedEffect]:
    """The ticket's last move between T and the merge, as the side effect to expect."""
    moves = [
        h
        for h in issue["history"]["nodes"]
        if h.get("toState") and at < when(h["createdAt"]) < merged
    ]
    if not moves:
        return []
    last = max(moves, key=lambda h: when(h["createdAt"]))
    to = last["toState"]["name"]
    ident = issue["identifier"]
    return [
        ProposedEffect(
            id="ticket-moved",
            description=f"{ident} is moved to {to} (as the real fix did before the merge).",
            service="linear",
            kind="linear.issue.updated",
            where=[
                {"field": "data.identifier", "equals": ident},
                {"field": "data.to_state", "equals": to},
            ],
            gold={
                "identifier": ident,
                "from_state": (last.get("fromState") or {}).get("name"),
                "to_state": to,
            },
        )
    ]


def _slack_thread(
    slack: SlackThread, at: datetime, merged: datetime
) -> tuple[dict[str, Any], list[ProposedEffect]]:
    from slack_sdk import WebClient
    from slack_sdk.errors import SlackApiError

    client = WebClient(token=slack.token, base_url=slack.url)
    state = capture_slack(client, at, frozenset({slack.channel}), Ledger())
    if not state["channels"]:
        raise InputError(Path(slack.channel), "no such Slack channel at T")
    channel = state["channels"][0]["id"]
    if not any(msg["ts"] == slack.ts for msg in state["channels"][0]["messages"]):
        raise InputError(Path(f"{slack.channel}/{slack.ts}"), "no such Slack thread at T")
    try:
        replies = client.conversations_replies(channel=channel, ts=slack.ts, limit=200)
    except SlackApiError as exc:
        raise CaptureError(f"Slack conversations.replies: {exc.response.get('error')}") from exc
    later = [
        r
        for r in replies.get("messages") or []
        if r["ts"] != slack.ts and at < datetime.fromtimestamp(float(r["ts"]), UTC) < merged
    ]
    if not later:
        return state, []
    first = later[0]
    return state, [
        ProposedEffect(
            id="thread-answered",
            description="The Slack thread gets a reply (the real fix was announced there).",
            service="slack",
            kind="slack.message.posted",
            where=[{"field": "data.thread_ts", "equals": slack.ts}],
            gold={"channel": channel, "thread_ts": slack.ts, "text": first.get("text") or ""},
        )
    ]
