"""World state at T, per service, as stored in a snapshot (``github.json`` and friends).

These models are the snapshot's file format, not the fakes' storage: each fake seeds its own
SQLAlchemy rows from them. Every timestamp is timezone-aware; a snapshot holds nothing dated
after its T (see :func:`replay.snapshot.audit.dated_after`).
"""

from __future__ import annotations

from typing import Literal

from pydantic import AwareDatetime, Field, model_validator

from replay.base.formats import Strict

# --------------------------------------------------------------------------- GitHub


class GitHubUser(Strict):
    login: str
    id: int = Field(gt=0)
    name: str | None = None
    email: str | None = None
    type: Literal["User", "Bot", "Organization"] = "User"
    created_at: AwareDatetime


class GitHubLabel(Strict):
    name: str
    color: str = Field(default="ededed", pattern=r"^[0-9a-fA-F]{6}$")
    description: str | None = None


class GitHubRepo(Strict):
    owner: str
    name: str
    id: int = Field(gt=0)
    description: str | None = None
    private: bool = False
    default_branch: str = "main"
    created_at: AwareDatetime
    pushed_at: AwareDatetime | None = None
    labels: list[GitHubLabel] = Field(default_factory=list)

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.name}"


class GitHubComment(Strict):
    id: int = Field(gt=0)
    author: str
    body: str
    created_at: AwareDatetime
    updated_at: AwareDatetime


class GitHubReview(Strict):
    id: int = Field(gt=0)
    author: str
    state: Literal["APPROVED", "CHANGES_REQUESTED", "COMMENTED", "DISMISSED", "PENDING"]
    body: str = ""
    commit_id: str
    submitted_at: AwareDatetime


class GitHubIssueEvent(Strict):
    """One entry of a thread's history, as ``GET /repos/{o}/{r}/issues/{n}/events`` lists it.

    Kept in the snapshot so that the fake serves the history an agent (or a capture) would
    read; every entry is dated at or before T like everything else here.
    """

    id: int = Field(gt=0)
    event: Literal[
        "closed", "reopened", "merged", "labeled", "unlabeled", "renamed", "assigned",
        "unassigned", "convert_to_draft", "ready_for_review",
    ]  # fmt: skip
    actor: str
    created_at: AwareDatetime
    label: str | None = None
    """For ``labeled``/``unlabeled``: the label's name."""
    assignee: str | None = None
    """For ``assigned``/``unassigned``: the login."""
    rename_from: str | None = None
    rename_to: str | None = None
    commit_id: str | None = Field(default=None, pattern=r"^[0-9a-f]{40}$")
    """For ``merged`` (the merge commit) and ``closed`` by a commit."""
    state_reason: Literal["completed", "not_planned", "reopened"] | None = None


class _Thread(Strict):
    """What issues and pull requests share: one number space per repository."""

    repo: str = Field(pattern=r"^[\w.-]+/[\w.-]+$")
    number: int = Field(gt=0)
    id: int = Field(gt=0)
    title: str
    body: str | None = None
    state: Literal["open", "closed"]
    author: str
    labels: list[str] = Field(default_factory=list)
    assignees: list[str] = Field(default_factory=list)
    comments: list[GitHubComment] = Field(default_factory=list)
    created_at: AwareDatetime
    updated_at: AwareDatetime
    closed_at: AwareDatetime | None = None
    events: list[GitHubIssueEvent] = Field(default_factory=list)
    """The thread's issue events, oldest first."""

    @model_validator(mode="after")
    def _closed_has_date(self) -> _Thread:
        if (self.state == "closed") != (self.closed_at is not None):
            raise ValueError("closed_at must be set exactly when state is closed")
        return self


class GitHubIssue(_Thread):
    state_reason: Literal["completed", "not_planned", "reopened"] | None = None


class GitHubPull(_Thread):
    head_ref: str
    base_ref: str
    head_sha: str = Field(pattern=r"^[0-9a-f]{40}$")
    base_sha: str = Field(pattern=r"^[0-9a-f]{40}$")
    draft: bool = False
    merged_at: AwareDatetime | None = None
    merge_commit_sha: str | None = Field(default=None, pattern=r"^[0-9a-f]{40}$")
    merged_by: str | None = None
    reviews: list[GitHubReview] = Field(default_factory=list)


class GitHubState(Strict):
    viewer: str
    """The login the agent's token belongs to."""
    users: list[GitHubUser]
    repos: list[GitHubRepo]
    issues: list[GitHubIssue] = Field(default_factory=list)
    pulls: list[GitHubPull] = Field(default_factory=list)

    @model_validator(mode="after")
    def _consistent(self) -> GitHubState:
        logins = {u.login for u in self.users}
        if self.viewer not in logins:
            raise ValueError(f"viewer {self.viewer!r} is not among users")
        repos = {r.full_name: r for r in self.repos}
        numbers: set[tuple[str, int]] = set()
        threads: list[_Thread] = [*self.issues, *self.pulls]
        for t in threads:
            if t.repo not in repos:
                raise ValueError(f"{t.repo}#{t.number}: unknown repository")
            if (t.repo, t.number) in numbers:
                raise ValueError(f"{t.repo}#{t.number}: number used twice")
            numbers.add((t.repo, t.number))
            people = [t.author, *t.assignees, *(c.author for c in t.comments)]
            people += [e.actor for e in t.events]
            people += [e.assignee for e in t.events if e.assignee is not None]
            for login in people:
                if login not in logins:
                    raise ValueError(f"{t.repo}#{t.number}: unknown user {login!r}")
            names = {label.name for label in repos[t.repo].labels}
            for label in t.labels:
                if label not in names:
                    raise ValueError(f"{t.repo}#{t.number}: unknown label {label!r}")
        return self


# --------------------------------------------------------------------------- Linear

LinearStateType = Literal["triage", "backlog", "unstarted", "started", "completed", "canceled"]


class LinearOrganization(Strict):
    id: str
    name: str
    url_key: str


class LinearTeam(Strict):
    id: str
    key: str = Field(pattern=r"^[A-Z][A-Z0-9]*$")
    name: str
    created_at: AwareDatetime


class LinearUser(Strict):
    id: str
    name: str
    display_name: str
    email: str
    active: bool = True
    admin: bool = False
    created_at: AwareDatetime


class LinearWorkflowState(Strict):
    id: str
    team: str
    """The team's key."""
    name: str
    type: LinearStateType
    position: float
    color: str = "#95a2b3"


class LinearLabel(Strict):
    id: str
    name: str
    color: str = "#95a2b3"
    team: str | None = None
    """The team's key, or None for a workspace label."""


class LinearComment(Strict):
    id: str
    user: str
    body: str
    parent: str | None = None
    created_at: AwareDatetime
    updated_at: AwareDatetime


class LinearHistoryEntry(Strict):
    """One ``IssueHistory`` node: what a single change did to an issue (empty sides unset)."""

    id: str
    actor: str | None = None
    """The user who made the change; None for automations."""
    created_at: AwareDatetime
    from_state: str | None = None
    to_state: str | None = None
    from_assignee: str | None = None
    to_assignee: str | None = None
    from_title: str | None = None
    to_title: str | None = None
    from_priority: int | None = None
    to_priority: int | None = None
    from_estimate: float | None = None
    to_estimate: float | None = None
    from_parent: str | None = None
    to_parent: str | None = None
    added_labels: list[str] = Field(default_factory=list)
    removed_labels: list[str] = Field(default_factory=list)
    updated_description: bool = False
    """The description was edited; Linear keeps no earlier text."""


class LinearIssue(Strict):
    id: str
    team: str
    number: int = Field(gt=0)
    title: str
    description: str | None = None
    state: str
    """A workflow state's id."""
    priority: int = Field(default=0, ge=0, le=4)
    estimate: float | None = None
    assignee: str | None = None
    creator: str
    labels: list[str] = Field(default_factory=list)
    parent: str | None = None
    comments: list[LinearComment] = Field(default_factory=list)
    created_at: AwareDatetime
    updated_at: AwareDatetime
    started_at: AwareDatetime | None = None
    completed_at: AwareDatetime | None = None
    canceled_at: AwareDatetime | None = None
    history: list[LinearHistoryEntry] = Field(default_factory=list)
    """``Issue.history``, oldest first."""

    @property
    def identifier(self) -> str:
        return f"{self.team}-{self.number}"


class LinearState(Strict):
    viewer: str
    """The user id the agent's API key belongs to."""
    organization: LinearOrganization
    teams: list[LinearTeam]
    users: list[LinearUser]
    workflow_states: list[LinearWorkflowState]
    labels: list[LinearLabel] = Field(default_factory=list)
    issues: list[LinearIssue] = Field(default_factory=list)

    @model_validator(mode="after")
    def _consistent(self) -> LinearState:
        users = {u.id for u in self.users}
        teams = {t.key for t in self.teams}
        states = {s.id: s for s in self.workflow_states}
        labels = {label.id for label in self.labels}
        if self.viewer not in users:
            raise ValueError(f"viewer {self.viewer!r} is not among users")
        for s in self.workflow_states:
            if s.team not in teams:
                raise ValueError(f"workflow state {s.name!r}: unknown team {s.team!r}")
        seen: set[str] = set()
        for i in self.issues:
            if i.identifier in seen:
                raise ValueError(f"{i.identifier}: used twice")
            seen.add(i.identifier)
            if i.team not in teams:
                raise ValueError(f"{i.identifier}: unknown team {i.team!r}")
            if i.state not in states or states[i.state].team != i.team:
                raise ValueError(f"{i.identifier}: state {i.state!r} is not one of its team's")
            people = [i.creator, i.assignee, *(c.user for c in i.comments)]
            for h in i.history:
                people += [h.actor, h.from_assignee, h.to_assignee]
                for sid in (h.from_state, h.to_state):
                    if sid is not None and sid not in states:
                        raise ValueError(f"{i.identifier}: history names unknown state {sid!r}")
            for uid in people:
                if uid is not None and uid not in users:
                    raise ValueError(f"{i.identifier}: unknown user {uid!r}")
            for lid in i.labels:
                if lid not in labels:
                    raise ValueError(f"{i.identifier}: unknown label {lid!r}")
        return self


# --------------------------------------------------------------------------- Slack


class SlackTeam(Strict):
    id: str = Field(pattern=r"^T[A-Z0-9]+$")
    name: str
    domain: str


class SlackUser(Strict):
    id: str = Field(pattern=r"^[UWB][A-Z0-9]+$")
    name: str
    real_name: str
    is_bot: bool = False
    deleted: bool = False
    tz: str = "UTC"


class SlackReaction(Strict):
    name: str
    users: list[str]


class SlackMessage(Strict):
    ts: str = Field(pattern=r"^\d{10}\.\d{6}$")
    """Slack's message id: epoch seconds with six decimals."""
    user: str
    text: str
    thread_ts: str | None = Field(default=None, pattern=r"^\d{10}\.\d{6}$")
    reactions: list[SlackReaction] = Field(default_factory=list)


class SlackChannel(Strict):
    id: str = Field(pattern=r"^[CGD][A-Z0-9]+$")
    name: str
    is_private: bool = False
    created: int
    """Epoch seconds."""
    creator: str
    topic: str = ""
    purpose: str = ""
    members: list[str] = Field(default_factory=list)
    messages: list[SlackMessage] = Field(default_factory=list)


class SlackState(Strict):
    team: SlackTeam
    bot_user: str
    """The user id of the agent's bot token."""
    users: list[SlackUser]
    channels: list[SlackChannel]

    @model_validator(mode="after")
    def _consistent(self) -> SlackState:
        users = {u.id for u in self.users}
        if self.bot_user not in users:
            raise ValueError(f"bot_user {self.bot_user!r} is not among users")
        for ch in self.channels:
            tss = {m.ts for m in ch.messages}
            for m in ch.messages:
                if m.user not in users:
                    raise ValueError(f"#{ch.name} {m.ts}: unknown user {m.user!r}")
                if m.thread_ts is not None and m.thread_ts not in tss:
                    raise ValueError(f"#{ch.name} {m.ts}: thread {m.thread_ts} not in channel")
        return self


SERVICE_MODELS: dict[str, type[Strict]] = {
    "github": GitHubState,
    "linear": LinearState,
    "slack": SlackState,
}
