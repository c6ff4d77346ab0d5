"""The task a harness is given: the ticket as the world shows it at T, and how the team works."""

from __future__ import annotations

import re

from replay.base.case import Case
from replay.base.snapshot import Snapshot

TEMPLATE = """\
You are {agent}, an engineer on the {org} team. The repository {repo} is checked out in
{workdir} (remote `origin` is https://github.com/{repo}).

{ticket}

Work this ticket the way the team does: {steps}. {ask} `git`, `gh` and `curl` work; your
tokens are in GH_TOKEN, SLACK_BOT_TOKEN, SLACK_USER_TOKEN and LINEAR_API_KEY.
"""


def render_task(case: Case, snapshot: Snapshot) -> str:
    return TEMPLATE.format(
        agent=snapshot.github.viewer,
        org=snapshot.linear.organization.name,
        repo=case.repository.name,
        workdir=case.environment.workdir,
        ticket=ticket_text(case, snapshot),
        steps=_join(work_steps(case, snapshot)),
        ask=(
            "Ask in the thread if something is unclear."
            if case.ticket.service == "slack"
            else "Ask on the ticket if something is unclear."
        ),
    )


def work_steps(case: Case, snapshot: Snapshot) -> list[str]:
    """What the team does with a fix, as far as this case's world has the places for it: a
    ticket is moved to review only in Linear (a GitHub issue has no such state), and a thread
    is answered only where one is: the ticket itself in Slack, or a Slack thread that names
    the ticket (:func:`threads_naming`). A case with neither is not told to do either."""
    steps = [
        "fix it on a branch of your own",
        "push the branch",
        "open a pull request that references the ticket",
    ]
    if case.ticket.service == "linear":
        steps.append("move the ticket to review")
    if case.ticket.service == "slack":
        steps.append("answer in the thread")
    else:
        channels = threads_naming(case, snapshot)
        if channels:
            where = ", ".join(f"#{c}" for c in channels)
            steps.append(f"answer in the Slack thread where it was discussed ({where})")
    return steps


def threads_naming(case: Case, snapshot: Snapshot) -> list[str]:
    """The Slack channels holding a thread whose messages name the ticket (``ENG-12``;
    ``acme/semverkit#7`` or its issue's URL), in the snapshot's order."""
    ref = case.ticket.ref
    names = [ref]
    if case.ticket.service == "github":
        repo, _, number = ref.partition("#")
        names.append(f"github.com/{repo}/issues/{number}")
    pattern = re.compile(
        "|".join(rf"(?<![\w/-]){re.escape(n)}(?![\w-])" for n in names), re.IGNORECASE
    )
    found: list[str] = []
    for channel in snapshot.slack.channels:
        if channel.name not in found and any(
            pattern.search(m.text or "") for m in channel.messages
        ):
            found.append(channel.name)
    return found


def _join(steps: list[str]) -> str:
    return steps[0] if len(steps) == 1 else ", ".join(steps[:-1]) + ", and " + steps[-1]


def ticket_text(case: Case, snapshot: Snapshot) -> str:
    ref = case.ticket.ref
    if case.ticket.service == "github":
        repo, _, number = ref.partition("#")
        issue = next(
            t
            for t in [*snapshot.github.issues, *snapshot.github.pulls]
            if t.repo == repo and t.number == int(number)
        )
        lines = [f"GitHub issue {ref}: {issue.title}", "", issue.body or "(no description)"]
        for gc in issue.comments:
            lines += ["", f"@{gc.author} commented on {gc.created_at:%Y-%m-%d %H:%M}:", gc.body]
        return "\n".join(lines)
    if case.ticket.service == "linear":
        lin = next(i for i in snapshot.linear.issues if i.identifier == ref)
        users = {u.id: u.display_name for u in snapshot.linear.users}
        lines = [f"Linear issue {ref}: {lin.title}", "", lin.description or "(no description)"]
        for c in lin.comments:
            lines += [
                "",
                f"{users.get(c.user, c.user)} commented on {c.created_at:%Y-%m-%d %H:%M}:",
                c.body,
            ]
        return "\n".join(lines)
    channel, _, ts = ref.lstrip("#").partition("/")
    ch = next(c for c in snapshot.slack.channels if c.name == channel)
    people = {u.id: u.name for u in snapshot.slack.users}
    thread = [m for m in ch.messages if m.ts == ts or m.thread_ts == ts]
    lines = [f"Slack thread in #{channel}:"]
    lines += [f"@{people.get(m.user, m.user)}: {m.text}" for m in thread]
    return "\n".join(lines)
