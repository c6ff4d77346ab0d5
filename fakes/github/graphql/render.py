"""GraphQL objects over the fake's rows: one view class per GraphQL type GitHub answers.

Each view class answers one GraphQL type (``typename``); a field ``fooBar`` is the attribute
or method ``foo_bar`` (methods get the field's arguments in snake case). A field without one
is an error, never a silent null (see :mod:`fakes.github.graphql.resolvers`).

The types point at each other as GitHub's do (a repository lists its issues, an issue names
its repository, a comment its issue, a ref its pull requests), so their views live in this one
module, in sections: actors, repositories and labels; git and checks; comments, reviews and
changed files; issues and pull requests, their connections and issue search.
"""

from __future__ import annotations

import html
import zlib
from collections.abc import Sequence
from datetime import datetime
from functools import cached_property
from typing import Any

from sqlalchemy import ColumnElement, Select, case, exists, func, or_, select, true
from sqlalchemy.orm import joinedload

from fakes.core.relay import Rows
from fakes.core.sqltext import lower, register_lower
from fakes.github.backend_issues import assigned, authored, labelled
from fakes.github.errors import NotFound
from fakes.github.gitstore import CommitInfo, FileChange, GitFailed, Person
from fakes.github.graphql.connections import Connection, connection
from fakes.github.graphql.context import WEB, Context, iso, legacy_id
from fakes.github.graphql.faults import Fault, not_found
from fakes.github.models import (
    Branch,
    CheckRun,
    Comment,
    CommitStatus,
    Issue,
    Label,
    Pull,
    Repo,
    Review,
    ReviewComment,
    User,
    node_id,
)


def avatar(login: str, size: int | None = None) -> str:
    url = f"https://avatars.githubusercontent.com/{login}"
    return f"{url}?s={size}" if size else url


class View:
    typename = ""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx


# ---------------------------------------------------------------------------- actors


class ActorView(View):
    """A user, bot or organization of the world (``User`` rows with a ``type``)."""

    def __init__(self, ctx: Context, row: User) -> None:
        super().__init__(ctx)
        self.row = row
        self.typename = row.type if row.type in ("User", "Bot", "Organization") else "User"

    @property
    def id(self) -> str:
        return node_id(self.typename, self.row.id)

    @property
    def database_id(self) -> int:
        return self.row.id

    @property
    def login(self) -> str:
        # Bots are logged in as ``name[bot]`` on GitHub; the world names them as it saw them.
        return self.row.login

    @property
    def name(self) -> str | None:
        return self.row.name

    @property
    def email(self) -> str:
        return self.row.email or ""

    def avatar_url(self, size: int | None = None) -> str:
        return avatar(self.row.login, size)

    @property
    def resource_path(self) -> str:
        prefix = "/apps" if self.typename == "Bot" else ""
        return f"{prefix}/{self.row.login}"

    @property
    def url(self) -> str:
        return WEB + self.resource_path

    @property
    def created_at(self) -> str | None:
        return iso(self.row.created_at)

    @property
    def updated_at(self) -> str | None:
        return iso(self.row.created_at)

    @property
    def is_viewer(self) -> bool:
        return self.row.id == self.ctx.viewer.id

    is_site_admin = False
    bio: str | None = None
    company: str | None = None
    location: str | None = None
    website_url: str | None = None
    twitter_username: str | None = None
    description: str | None = None

    def repository(self, name: str, follow_renames: bool = True) -> RepositoryView | None:
        return find_repository(self.ctx, self.row.login, name)


class OwnerView(View):
    """A repository owner the world knows only by login (an organization)."""

    typename = "Organization"

    def __init__(self, ctx: Context, login: str, created: datetime) -> None:
        super().__init__(ctx)
        self.login = login
        self._created = created

    @property
    def database_id(self) -> int:
        # Stable across runs and resets: the world has no row, so derive one from the login.
        return zlib.crc32(self.login.lower().encode()) & 0x7FFFFFFF

    @property
    def id(self) -> str:
        return node_id("Organization", self.database_id)

    def avatar_url(self, size: int | None = None) -> str:
        return avatar(self.login, size)

    @property
    def resource_path(self) -> str:
        return f"/{self.login}"

    @property
    def url(self) -> str:
        return WEB + self.resource_path

    @property
    def created_at(self) -> str | None:
        return iso(self._created)

    updated_at = created_at
    name: str | None = None
    email: str | None = None
    description: str | None = None
    location: str | None = None
    website_url: str | None = None

    def repository(self, name: str, follow_renames: bool = True) -> RepositoryView | None:
        return find_repository(self.ctx, self.login, name)


def actor(ctx: Context, row: User | None) -> ActorView | None:
    return None if row is None else ActorView(ctx, row)


def owner_by_login(ctx: Context, login: str) -> ActorView | OwnerView | None:
    try:
        return ActorView(ctx, ctx.backend.repos.user(ctx.session, login))
    except NotFound:
        pass
    repos = list(ctx.session.scalars(select(Repo).where(Repo.owner == login)))
    if not repos:
        return None
    return OwnerView(ctx, repos[0].owner, min(r.created_at for r in repos))


# ---------------------------------------------------------------------------- repositories


def find_repository(ctx: Context, owner: str, name: str) -> RepositoryView | None:
    try:
        row = ctx.backend.repos.get(ctx.session, owner, name)
    except NotFound:
        return None
    # The token is the viewer's, and the snapshot holds only what the viewer could see at T.
    return RepositoryView(ctx, row)


class RepositoryView(View):
    typename = "Repository"

    def __init__(self, ctx: Context, row: Repo) -> None:
        super().__init__(ctx)
        self.row = row

    @property
    def id(self) -> str:
        return node_id("Repository", self.row.id)

    @property
    def database_id(self) -> int:
        return self.row.id

    @property
    def name(self) -> str:
        return self.row.name

    @property
    def name_with_owner(self) -> str:
        return self.row.full_name

    @property
    def owner(self) -> ActorView | OwnerView:
        if self.row.owner_user is not None:
            return ActorView(self.ctx, self.row.owner_user)
        return OwnerView(self.ctx, self.row.owner, self.row.created_at)

    @property
    def description(self) -> str | None:
        return self.row.description

    @property
    def resource_path(self) -> str:
        return f"/{self.row.full_name}"

    @property
    def url(self) -> str:
        return WEB + self.resource_path

    @property
    def ssh_url(self) -> str:
        return f"git@github.com:{self.row.full_name}.git"

    homepage_url: str | None = None
    mirror_url: str | None = None
    security_policy_url: str | None = None
    archived_at: str | None = None

    @property
    def created_at(self) -> str | None:
        return iso(self.row.created_at)

    @property
    def updated_at(self) -> str | None:
        return iso(self.row.updated_at)

    @property
    def pushed_at(self) -> str | None:
        return iso(self.row.pushed_at)

    @property
    def is_private(self) -> bool:
        return self.row.private

    @property
    def visibility(self) -> str:
        return "PRIVATE" if self.row.private else "PUBLIC"

    @property
    def is_empty(self) -> bool:
        return not self.row.has_git

    @property
    def is_in_organization(self) -> bool:
        return self.row.owner_user is None or self.row.owner_user.type == "Organization"

    # What the fake's world is: no forks, mirrors, templates, archives, locks, stars, wikis,
    # projects or discussions; issues on; every merge method allowed (the backend merges
    # with each); the viewer may push (the git server accepts their pushes).
    is_archived = False
    is_disabled = False
    is_fork = False
    is_locked = False
    is_mirror = False
    is_template = False
    is_user_configuration_repository = False
    is_blank_issues_enabled = True
    is_security_policy_enabled = False
    has_issues_enabled = True
    has_wiki_enabled = False
    has_projects_enabled = False
    has_discussions_enabled = False
    merge_commit_allowed = True
    squash_merge_allowed = True
    rebase_merge_allowed = True
    auto_merge_allowed = False
    allow_update_branch = False
    delete_branch_on_merge = False
    forking_allowed = True
    web_commit_signoff_required = False
    uses_custom_open_graph_image = False
    fork_count = 0
    stargazer_count = 0
    viewer_has_starred = False
    viewer_subscription = "UNSUBSCRIBED"
    viewer_default_merge_method = "MERGE"
    parent: RepositoryView | None = None
    template_repository: RepositoryView | None = None

    @property
    def viewer_permission(self) -> str:
        return "ADMIN" if self.row.owner.lower() == self.ctx.viewer.login.lower() else "WRITE"

    @property
    def viewer_can_administer(self) -> bool:
        return self.viewer_permission == "ADMIN"

    @property
    def viewer_default_commit_email(self) -> str | None:
        return self.ctx.viewer.email

    @property
    def viewer_possible_commit_emails(self) -> list[str]:
        return [self.ctx.viewer.email] if self.ctx.viewer.email else []

    def watchers(self, **page: Any) -> Connection:
        return connection("UserConnection", "watchers", list, **page)

    @property
    def default_branch_ref(self) -> RefView | None:
        branch = self.ctx.backend.repos.branch(self.ctx.session, self.row, self.row.default_branch)
        return None if branch is None else RefView(self.ctx, self.row, branch)

    def ref(self, qualified_name: str) -> RefView | None:
        name = qualified_name.removeprefix("refs/heads/")
        branch = self.ctx.backend.repos.branch(self.ctx.session, self.row, name)
        return None if branch is None else RefView(self.ctx, self.row, branch)

    def _users(self, query: str | None) -> list[ActorView]:
        rows = self.ctx.session.scalars(select(User).where(User.type != "Organization"))
        views = [ActorView(self.ctx, u) for u in sorted(rows, key=lambda u: u.login.lower())]
        if query:
            q = query.lower()
            views = [v for v in views if q in v.login.lower() or q in (v.name or "").lower()]
        return views

    def assignable_users(self, query: str | None = None, **page: Any) -> Connection:
        return connection("UserConnection", "assignableUsers", lambda: self._users(query), **page)

    def mentionable_users(self, query: str | None = None, **page: Any) -> Connection:
        return connection("UserConnection", "mentionableUsers", lambda: self._users(query), **page)

    def label(self, name: str) -> LabelView | None:
        try:
            return LabelView(
                self.ctx, self.ctx.backend.repos.label(self.ctx.session, self.row, name)
            )
        except NotFound:
            return None

    def labels(
        self, order_by: dict[str, str] | None = None, query: str | None = None, **page: Any
    ) -> Connection:
        def make() -> list[LabelView]:
            rows = list(self.row.labels)
            if query:
                rows = [r for r in rows if query.lower() in r.name.lower()]
            return [LabelView(self.ctx, r) for r in sort_labels(rows, order_by)]

        return connection("LabelConnection", "labels", make, **page)

    def milestone(self, number: int) -> None:
        # The world holds no milestones.
        return None

    # Issues and pull requests: their views and connections are the last section below.
    def issue(self, number: int) -> IssueView | PullRequestView:
        return thread_by_number(self.ctx, self.row, number, "Issue")

    def pull_request(self, number: int) -> IssueView | PullRequestView:
        return thread_by_number(self.ctx, self.row, number, "PullRequest")

    def issue_or_pull_request(self, number: int) -> IssueView | PullRequestView:
        return thread_by_number(self.ctx, self.row, number, None)

    def issues(self, **args: Any) -> Connection:
        return issue_connection(self.ctx, self.row, **args)

    def pull_requests(self, **args: Any) -> Connection:
        return pull_connection(self.ctx, self.row, **args)


def sort_labels(rows: list[Label], order_by: dict[str, str] | None) -> list[Label]:
    field = (order_by or {}).get("field", "CREATED_AT")
    desc = (order_by or {}).get("direction", "ASC") == "DESC"
    if field == "NAME":
        return sorted(rows, key=lambda r: r.name.lower(), reverse=desc)
    return sorted(rows, key=lambda r: r.id, reverse=desc)


class LabelView(View):
    typename = "Label"

    def __init__(self, ctx: Context, row: Label) -> None:
        super().__init__(ctx)
        self.row = row

    @property
    def id(self) -> str:
        return node_id("Label", self.row.id)

    @property
    def name(self) -> str:
        return self.row.name

    @property
    def color(self) -> str:
        return self.row.color

    @property
    def description(self) -> str | None:
        return self.row.description

    @property
    def is_default(self) -> bool:
        return self.row.name in DEFAULT_LABELS

    created_at: str | None = None
    updated_at: str | None = None

    @property
    def repository(self) -> RepositoryView:
        return RepositoryView(self.ctx, self.row.repo)

    @property
    def resource_path(self) -> str:
        return f"/{self.row.repo.full_name}/labels/{self.row.name.replace(' ', '%20')}"

    @property
    def url(self) -> str:
        return WEB + self.resource_path


DEFAULT_LABELS = frozenset(
    {
        "bug",
        "documentation",
        "duplicate",
        "enhancement",
        "good first issue",
        "help wanted",
        "invalid",
        "question",
        "wontfix",
    }
)


def html_text(text: str) -> str:
    return html.escape(text, quote=False)


# ---------------------------------------------------------------------------- git


class RefView(View):
    typename = "Ref"

    def __init__(self, ctx: Context, repo: Repo, branch: Branch) -> None:
        super().__init__(ctx)
        self.repo = repo
        self.branch = branch

    @property
    def id(self) -> str:
        return node_id("Ref", self.branch.id)

    @property
    def name(self) -> str:
        return self.branch.name

    prefix = "refs/heads/"
    branch_protection_rule: None = None  # the world has no branch protection

    @property
    def repository(self) -> RepositoryView:
        return RepositoryView(self.ctx, self.repo)

    @property
    def target(self) -> CommitView:
        return CommitView(self.ctx, self.repo, self.branch.sha)

    def associated_pull_requests(self, **args: Any) -> Connection:
        return pull_connection(self.ctx, self.repo, head_ref_name=self.branch.name, **args)


class GitActorView(View):
    typename = "GitActor"

    def __init__(self, ctx: Context, person: Person) -> None:
        super().__init__(ctx)
        self.person = person
        self.name = person.name
        self.email = person.email

    @property
    def date(self) -> str | None:
        return iso(self.person.date)

    def avatar_url(self, size: int | None = None) -> str:
        return avatar(self.person.email, size)

    @property
    def user(self) -> ActorView | None:
        rows = self.ctx.session.scalars(select(User).where(User.email == self.person.email))
        row = next(iter(rows), None)
        return actor(self.ctx, row)


class CommitView(View):
    typename = "Commit"

    def __init__(self, ctx: Context, repo: Repo, sha: str) -> None:
        super().__init__(ctx)
        self.repo = repo
        self.oid = sha

    @cached_property
    def info(self) -> CommitInfo:
        key = ("commit", self.repo.full_name, self.oid)
        info: CommitInfo = self.ctx.memo(
            key, lambda: self.ctx.backend.git.commit(self.repo.full_name, self.oid)
        )
        return info

    @property
    def id(self) -> str:
        return legacy_id(f"06:Commit{self.repo.id}:{self.oid}")

    @property
    def abbreviated_oid(self) -> str:
        return self.oid[:7]

    @property
    def message(self) -> str:
        return self.info.message

    @property
    def message_headline(self) -> str:
        return self.info.message.split("\n", 1)[0]

    @property
    def message_body(self) -> str:
        _, _, rest = self.info.message.partition("\n")
        return rest.strip("\n")

    @property
    def author(self) -> GitActorView:
        return GitActorView(self.ctx, self.info.author)

    @property
    def committer(self) -> GitActorView:
        return GitActorView(self.ctx, self.info.committer)

    @property
    def authored_date(self) -> str | None:
        return iso(self.info.author.date)

    @property
    def committed_date(self) -> str | None:
        return iso(self.info.committer.date)

    def authors(self, **page: Any) -> Connection:
        return connection("GitActorConnection", "authors", lambda: [self.author], **page)

    def parents(self, **page: Any) -> Connection:
        return connection(
            "CommitConnection",
            "parents",
            lambda: [CommitView(self.ctx, self.repo, p) for p in self.info.parents],
            **page,
        )

    @property
    def repository(self) -> RepositoryView:
        return RepositoryView(self.ctx, self.repo)

    @property
    def resource_path(self) -> str:
        return f"/{self.repo.full_name}/commit/{self.oid}"

    commit_resource_path = resource_path

    @property
    def url(self) -> str:
        return WEB + self.resource_path

    commit_url = url

    @property
    def status_check_rollup(self) -> StatusCheckRollupView | None:
        return rollup(self.ctx, self.repo, self.oid)


def commit_or_none(ctx: Context, repo: Repo, sha: str | None) -> CommitView | None:
    if not sha or not repo.has_git:
        return None
    try:
        ctx.backend.git.commit(repo.full_name, sha)
    except GitFailed:
        return None
    return CommitView(ctx, repo, sha)


# ---------------------------------------------------------------------------- checks

ROLLUP_FAIL = {"ERROR", "FAILURE", "CANCELLED", "TIMED_OUT", "ACTION_REQUIRED", "STARTUP_FAILURE"}


class StatusContextView(View):
    typename = "StatusContext"

    def __init__(self, ctx: Context, row: CommitStatus) -> None:
        super().__init__(ctx)
        self.row = row

    @property
    def id(self) -> str:
        return node_id("StatusContext", self.row.id)

    @property
    def context(self) -> str:
        return self.row.context

    @property
    def state(self) -> str:
        return self.row.state.upper()

    @property
    def description(self) -> str | None:
        return self.row.description

    @property
    def target_url(self) -> str | None:
        return self.row.target_url

    @property
    def created_at(self) -> str | None:
        return iso(self.row.created_at)

    def avatar_url(self, size: int | None = None) -> str | None:
        return None if self.row.creator is None else avatar(self.row.creator.login, size)

    @property
    def creator(self) -> ActorView | None:
        return actor(self.ctx, self.row.creator)

    @property
    def commit(self) -> CommitView | None:
        repo = self.ctx.backend.repos.by_id(self.ctx.session, self.row.repo_id)
        return commit_or_none(self.ctx, repo, self.row.sha)

    def is_required(self, **_: Any) -> bool:
        return False  # the world has no branch protection


class CheckSuiteView(View):
    """A check run's suite; the world records no suites or workflows behind its runs."""

    typename = "CheckSuite"

    def __init__(self, ctx: Context, run: CheckRun) -> None:
        super().__init__(ctx)
        self.id = node_id("CheckSuite", run.id)

    workflow_run: None = None


class CheckRunView(View):
    typename = "CheckRun"

    def __init__(self, ctx: Context, row: CheckRun) -> None:
        super().__init__(ctx)
        self.row = row

    @property
    def id(self) -> str:
        return node_id("CheckRun", self.row.id)

    @property
    def database_id(self) -> int:
        return self.row.id

    @property
    def name(self) -> str:
        return self.row.name

    @property
    def status(self) -> str:
        return self.row.status.upper()

    @property
    def conclusion(self) -> str | None:
        return self.row.conclusion.upper() if self.row.conclusion else None

    @property
    def started_at(self) -> str | None:
        return iso(self.row.started_at)

    @property
    def completed_at(self) -> str | None:
        return iso(self.row.completed_at)

    @property
    def details_url(self) -> str | None:
        return self.row.details_url

    @property
    def check_suite(self) -> CheckSuiteView:
        return CheckSuiteView(self.ctx, self.row)

    @property
    def repository(self) -> RepositoryView:
        return RepositoryView(
            self.ctx, self.ctx.backend.repos.by_id(self.ctx.session, self.row.repo_id)
        )

    @property
    def resource_path(self) -> str:
        repo = self.ctx.backend.repos.by_id(self.ctx.session, self.row.repo_id)
        return f"/{repo.full_name}/runs/{self.row.id}"

    @property
    def url(self) -> str:
        return WEB + self.resource_path

    permalink = url
    summary: str | None = None
    text: str | None = None
    title: str | None = None
    external_id: str | None = None

    def is_required(self, **_: Any) -> bool:
        return False


class StateCount:
    def __init__(self, typename: str, state: str, count: int) -> None:
        self.typename = typename
        self.state = state
        self.count = count


class ContextConnection(Connection):
    def __init__(self, contexts: list[Any], **page: Any) -> None:
        super().__init__(
            "StatusCheckRollupContextConnection",
            contexts,
            connection="contexts",
            first=page.get("first"),
            after=page.get("after"),
            last=page.get("last"),
            before=page.get("before"),
        )
        self._all = contexts

    @property
    def check_run_count(self) -> int:
        return sum(isinstance(c, CheckRunView) for c in self._all)

    @property
    def status_context_count(self) -> int:
        return sum(isinstance(c, StatusContextView) for c in self._all)

    @property
    def check_run_counts_by_state(self) -> list[StateCount]:
        counts: dict[str, int] = {}
        for c in self._all:
            if isinstance(c, CheckRunView):
                key = c.conclusion or c.status
                counts[key] = counts.get(key, 0) + 1
        return [StateCount("CheckRunStateCount", k, v) for k, v in sorted(counts.items())]

    @property
    def status_context_counts_by_state(self) -> list[StateCount]:
        counts: dict[str, int] = {}
        for c in self._all:
            if isinstance(c, StatusContextView):
                counts[c.state] = counts.get(c.state, 0) + 1
        return [StateCount("StatusContextStateCount", k, v) for k, v in sorted(counts.items())]


class StatusCheckRollupView(View):
    typename = "StatusCheckRollup"

    def __init__(self, ctx: Context, repo: Repo, sha: str, contexts: list[Any]) -> None:
        super().__init__(ctx)
        self.repo = repo
        self.sha = sha
        self._contexts = contexts

    @property
    def id(self) -> str:
        return legacy_id(f"017:StatusCheckRollup{self.repo.id}:{self.sha}")

    @property
    def commit(self) -> CommitView | None:
        return commit_or_none(self.ctx, self.repo, self.sha)

    def contexts(self, **page: Any) -> ContextConnection:
        return ContextConnection(self._contexts, **page)

    @property
    def state(self) -> str:
        states = []
        for c in self._contexts:
            if isinstance(c, StatusContextView):
                states.append(c.state)
            else:
                states.append(c.conclusion or "PENDING")
        if any(s in ROLLUP_FAIL for s in states):
            return "FAILURE" if "ERROR" not in states else "ERROR"
        if any(s in ("PENDING", "EXPECTED", "QUEUED", "IN_PROGRESS") for s in states):
            return "PENDING"
        return "SUCCESS"


def rollup(ctx: Context, repo: Repo, sha: str) -> StatusCheckRollupView | None:
    """A commit's combined checks; None when it has none (as GitHub answers)."""
    latest: dict[str, CommitStatus] = {}
    for st in ctx.backend.repos.statuses(ctx.session, repo, sha):  # newest first
        latest.setdefault(st.context, st)
    contexts: list[Any] = [StatusContextView(ctx, st) for st in latest.values()]
    contexts += [
        CheckRunView(ctx, run) for run in ctx.backend.repos.check_runs(ctx.session, repo, sha)
    ]
    if not contexts:
        return None
    return StatusCheckRollupView(ctx, repo, sha, contexts)


# ------------------------------------------------------------------ comments and reviews


REACTIONS = (
    "THUMBS_UP",
    "THUMBS_DOWN",
    "LAUGH",
    "HOORAY",
    "CONFUSED",
    "HEART",
    "ROCKET",
    "EYES",
)


class ReactionGroupView(View):
    """The world records no reactions: every group is there, with nobody in it."""

    typename = "ReactionGroup"

    def __init__(self, ctx: Context, content: str) -> None:
        super().__init__(ctx)
        self.content = content

    created_at: str | None = None
    viewer_has_reacted = False

    def users(self, **page: Any) -> Connection:
        return connection("ReactingUserConnection", "users", list, **page)


class CommentLike(View):
    """What issues, pull requests, comments and reviews share (GitHub's ``Comment``)."""

    row: Any

    @property
    def author(self) -> ActorView | None:
        return actor(self.ctx, self.row.author)

    @property
    def author_association(self) -> str:
        repo = self._repo()
        if self.row.author.login.lower() == repo.owner.lower():
            return "OWNER"
        return "NONE"

    def _repo(self) -> Repo:
        raise NotImplementedError

    @property
    def body(self) -> str:
        return self.row.body or ""

    body_text = body

    @property
    def created_at(self) -> str | None:
        return iso(self._created())

    def _created(self) -> datetime | None:
        created: datetime | None = self.row.created_at
        return created

    published_at = created_at

    @property
    def updated_at(self) -> str | None:
        return iso(getattr(self.row, "updated_at", None) or self._created())

    # The world keeps no edit history.
    includes_created_edit = False
    last_edited_at: str | None = None
    editor: ActorView | None = None
    created_via_email = False
    is_minimized = False
    minimized_reason: str | None = None

    @property
    def database_id(self) -> int:
        rid: int = self.row.id
        return rid

    @property
    def full_database_id(self) -> str:
        return str(self.row.id)

    @property
    def viewer_did_author(self) -> bool:
        return bool(self.row.author.id == self.ctx.viewer.id)

    @property
    def viewer_can_update(self) -> bool:
        return True

    viewer_can_delete = viewer_can_update
    viewer_can_react = viewer_can_update
    viewer_can_minimize = viewer_can_update

    @property
    def reaction_groups(self) -> list[ReactionGroupView]:
        return [ReactionGroupView(self.ctx, c) for c in REACTIONS]

    @property
    def repository(self) -> RepositoryView:
        return RepositoryView(self.ctx, self._repo())

    @property
    def url(self) -> str:
        return WEB + self.resource_path

    @property
    def resource_path(self) -> str:
        raise NotImplementedError


class CommentView(CommentLike):
    typename = "IssueComment"
    row: Comment

    def __init__(self, ctx: Context, row: Comment) -> None:
        super().__init__(ctx)
        self.row = row

    def _repo(self) -> Repo:
        return self.row.issue.repo

    @property
    def id(self) -> str:
        return node_id("IssueComment", self.row.id)

    @property
    def issue(self) -> IssueView | PullRequestView:
        return thread(self.ctx, self.row.issue)

    @property
    def pull_request(self) -> PullRequestView | None:
        return PullRequestView(self.ctx, self.row.issue) if self.row.issue.is_pull else None

    @property
    def resource_path(self) -> str:
        issue = self.row.issue
        kind = "pull" if issue.is_pull else "issues"
        return f"/{issue.repo.full_name}/{kind}/{issue.number}#issuecomment-{self.row.id}"


class ReviewView(CommentLike):
    typename = "PullRequestReview"
    row: Review

    def __init__(self, ctx: Context, row: Review) -> None:
        super().__init__(ctx)
        self.row = row

    def _repo(self) -> Repo:
        return self.row.pull.issue.repo

    def _created(self) -> datetime | None:
        return self.row.submitted_at

    @property
    def created_at(self) -> str | None:
        return iso(self.row.submitted_at)

    @property
    def updated_at(self) -> str | None:
        return iso(self.row.submitted_at)

    @property
    def submitted_at(self) -> str | None:
        return iso(self.row.submitted_at)

    @property
    def id(self) -> str:
        return node_id("PullRequestReview", self.row.id)

    @property
    def state(self) -> str:
        return self.row.state

    author_can_push_to_repository = True

    @property
    def commit(self) -> CommitView | None:
        return commit_or_none(self.ctx, self._repo(), self.row.commit_id)

    @property
    def pull_request(self) -> PullRequestView:
        return PullRequestView(self.ctx, self.row.pull.issue)

    def comments(self, **page: Any) -> Connection:
        def make() -> Rows[ReviewCommentView]:
            return Rows(
                self.ctx.session,
                select(ReviewComment).where(ReviewComment.review_id == self.row.id),
                [ReviewComment.id.asc()],
                lambda c: ReviewCommentView(self.ctx, c),
                options=[joinedload(ReviewComment.author)],
            )

        return connection("PullRequestReviewCommentConnection", "comments", make, **page)

    @property
    def resource_path(self) -> str:
        pr = self.row.pull.issue
        return f"/{pr.repo.full_name}/pull/{pr.number}#pullrequestreview-{self.row.id}"


class ReviewCommentView(CommentLike):
    typename = "PullRequestReviewComment"
    row: ReviewComment

    def __init__(self, ctx: Context, row: ReviewComment) -> None:
        super().__init__(ctx)
        self.row = row

    def _repo(self) -> Repo:
        return self.row.pull.issue.repo

    @property
    def id(self) -> str:
        return node_id("PullRequestReviewComment", self.row.id)

    @property
    def path(self) -> str:
        return self.row.path

    @property
    def line(self) -> int | None:
        return self.row.line

    @property
    def diff_hunk(self) -> str:
        return self.row.diff_hunk

    @property
    def commit(self) -> CommitView | None:
        return commit_or_none(self.ctx, self._repo(), self.row.commit_id)

    @property
    def pull_request(self) -> PullRequestView:
        return PullRequestView(self.ctx, self.row.pull.issue)

    @property
    def pull_request_review(self) -> ReviewView | None:
        if self.row.review_id is None:
            return None
        review = self.ctx.session.get(Review, self.row.review_id)
        return None if review is None else ReviewView(self.ctx, review)

    @property
    def reply_to(self) -> ReviewCommentView | None:
        if self.row.in_reply_to_id is None:
            return None
        other = self.ctx.session.get(ReviewComment, self.row.in_reply_to_id)
        return None if other is None else ReviewCommentView(self.ctx, other)

    @property
    def resource_path(self) -> str:
        pr = self.row.pull.issue
        return f"/{pr.repo.full_name}/pull/{pr.number}#discussion_r{self.row.id}"


class PullRequestCommitView(View):
    typename = "PullRequestCommit"

    def __init__(self, ctx: Context, issue: Issue, sha: str) -> None:
        super().__init__(ctx)
        self.issue = issue
        self.sha = sha

    @property
    def id(self) -> str:
        return legacy_id(f"017:PullRequestCommit{self.issue.id}:{self.sha}")

    @property
    def commit(self) -> CommitView:
        return CommitView(self.ctx, self.issue.repo, self.sha)

    @property
    def pull_request(self) -> PullRequestView:
        return PullRequestView(self.ctx, self.issue)

    @property
    def resource_path(self) -> str:
        return f"/{self.issue.repo.full_name}/pull/{self.issue.number}/commits/{self.sha}"

    @property
    def url(self) -> str:
        return WEB + self.resource_path


CHANGE_TYPES = {
    "added": "ADDED",
    "removed": "DELETED",
    "modified": "MODIFIED",
    "renamed": "RENAMED",
    "copied": "COPIED",
    "changed": "CHANGED",
}


class ChangedFileView(View):
    typename = "PullRequestChangedFile"

    def __init__(self, ctx: Context, change: FileChange) -> None:
        super().__init__(ctx)
        self.path = change.path
        self.additions = change.additions
        self.deletions = change.deletions
        self.change_type = CHANGE_TYPES.get(change.status, "MODIFIED")


# ---------------------------------------------------------------------------- issues and PRs


class ThreadView(CommentLike):
    """An issue or a pull request: one row, one number space."""

    row: Issue

    def __init__(self, ctx: Context, row: Issue) -> None:
        super().__init__(ctx)
        self.row = row

    def _repo(self) -> Repo:
        return self.row.repo

    @property
    def id(self) -> str:
        return node_id(self.typename, self.row.id)

    @property
    def number(self) -> int:
        return self.row.number

    @property
    def title(self) -> str:
        return self.row.title

    @property
    def title_html(self) -> str:
        return html_text(self.row.title)

    @property
    def closed(self) -> bool:
        return self.row.state == "closed"

    @property
    def closed_at(self) -> str | None:
        return iso(self.row.closed_at)

    @property
    def locked(self) -> bool:
        return self.row.locked

    @property
    def active_lock_reason(self) -> str | None:
        """REST's ``too heated`` is GraphQL's ``TOO_HEATED``."""
        reason = self.row.lock_reason
        return reason.upper().replace("-", "_").replace(" ", "_") if reason else None

    milestone: None = None  # the world holds no milestones
    is_pinned = False

    @property
    def resource_path(self) -> str:
        kind = "pull" if self.row.is_pull else "issues"
        return f"/{self.row.repo.full_name}/{kind}/{self.row.number}"

    @property
    def body_url(self) -> str:
        return self.url

    @property
    def body_resource_path(self) -> str:
        return self.resource_path

    @property
    def viewer_can_close(self) -> bool:
        return self.row.state == "open"

    @property
    def viewer_can_reopen(self) -> bool:
        return self.row.state == "closed"

    viewer_can_subscribe = True
    viewer_can_label = True

    @property
    def viewer_subscription(self) -> str:
        me = self.ctx.viewer.id
        involved = self.row.author_id == me or self.ctx.session.scalar(
            select(exists().where(Comment.issue_id == self.row.id, Comment.author_id == me))
        )
        return "SUBSCRIBED" if involved else "UNSUBSCRIBED"

    def assignees(self, **page: Any) -> Connection:
        return connection(
            "UserConnection",
            "assignees",
            lambda: [ActorView(self.ctx, u) for u in self.row.assignees],
            **page,
        )

    def labels(self, order_by: dict[str, str] | None = None, **page: Any) -> Connection:
        return connection(
            "LabelConnection",
            "labels",
            lambda: [
                LabelView(self.ctx, lb) for lb in sort_labels(list(self.row.labels), order_by)
            ],
            **page,
        )

    def comments(self, order_by: dict[str, str] | None = None, **page: Any) -> Connection:
        def make() -> Rows[CommentView]:
            return comment_rows(self.ctx, self.row, order_by)

        return connection("IssueCommentConnection", "comments", make, **page)

    def project_cards(self, archived_states: Any = None, **page: Any) -> Connection:
        return connection("ProjectCardConnection", "projectCards", list, **page)


class IssueView(ThreadView):
    typename = "Issue"

    @property
    def state(self) -> str:
        return self.row.state.upper()

    def state_reason(self, enable_duplicate: bool = False) -> str | None:
        reason = self.row.state_reason
        return reason.upper() if reason else None

    viewer_can_delete = False


class PullRequestView(ThreadView):
    typename = "PullRequest"

    @property
    def pull(self) -> Pull:
        assert self.row.pull is not None
        return self.row.pull

    @property
    def state(self) -> str:
        if self.pull.merged_at is not None:
            return "MERGED"
        return self.row.state.upper()

    @property
    def merged(self) -> bool:
        return self.pull.merged_at is not None

    @property
    def merged_at(self) -> str | None:
        return iso(self.pull.merged_at)

    @property
    def merged_by(self) -> ActorView | None:
        return actor(self.ctx, self.pull.merged_by)

    @property
    def is_draft(self) -> bool:
        return self.pull.draft

    @property
    def maintainer_can_modify(self) -> bool:
        return self.pull.maintainer_can_modify

    @property
    def base_ref_name(self) -> str:
        return self.pull.base_ref

    @property
    def head_ref_name(self) -> str:
        return self.pull.head_ref

    @property
    def base_ref_oid(self) -> str:
        return self.pull.base_sha

    @property
    def head_ref_oid(self) -> str:
        return self.pull.head_sha

    def _ref(self, name: str) -> RefView | None:
        branch = self.ctx.backend.repos.branch(self.ctx.session, self.row.repo, name)
        return None if branch is None else RefView(self.ctx, self.row.repo, branch)

    @property
    def base_ref(self) -> RefView | None:
        return self._ref(self.pull.base_ref)

    @property
    def head_ref(self) -> RefView | None:
        return self._ref(self.pull.head_ref)

    @property
    def base_repository(self) -> RepositoryView:
        return RepositoryView(self.ctx, self.row.repo)

    head_repository = base_repository
    is_cross_repository = False
    is_in_merge_queue = False
    is_merge_queue_enabled = False
    auto_merge_request: None = None
    potential_merge_commit: None = None  # the fake computes no test merge commits

    @property
    def head_repository_owner(self) -> Any:
        return RepositoryView(self.ctx, self.row.repo).owner

    @property
    def merge_commit(self) -> CommitView | None:
        return commit_or_none(self.ctx, self.row.repo, self.pull.merge_commit_sha)

    @property
    def permalink(self) -> str:
        return self.url

    @property
    def checks_resource_path(self) -> str:
        return self.resource_path + "/checks"

    @property
    def checks_url(self) -> str:
        return WEB + self.checks_resource_path

    viewer_can_delete = False

    # ------------------------------------------------------------------ git-derived

    def _changes(self) -> list[FileChange]:
        changes: list[FileChange] = self.ctx.memo(
            ("changes", self.row.id),
            lambda: self.ctx.backend.pulls.files(self.ctx.session, self.row.repo, self.row.number),
        )
        return changes

    @property
    def additions(self) -> int:
        return sum(c.additions for c in self._changes())

    @property
    def deletions(self) -> int:
        return sum(c.deletions for c in self._changes())

    @property
    def changed_files(self) -> int:
        return len(self._changes())

    def files(self, **page: Any) -> Connection:
        return connection(
            "PullRequestChangedFileConnection",
            "files",
            lambda: [ChangedFileView(self.ctx, c) for c in self._changes()],
            **page,
        )

    def _commit_shas(self) -> list[str]:
        def make() -> list[str]:
            repo = self.row.repo
            if not repo.has_git:
                return []
            try:
                return self.ctx.backend.git.commits_between(
                    repo.full_name, self.pull.base_sha, self.pull.head_sha
                )
            except GitFailed:
                return []

        shas: list[str] = self.ctx.memo(("commits", self.row.id), make)
        return shas

    def commits(self, **page: Any) -> Connection:
        return connection(
            "PullRequestCommitConnection",
            "commits",
            lambda: [PullRequestCommitView(self.ctx, self.row, sha) for sha in self._commit_shas()],
            **page,
        )

    @property
    def mergeable(self) -> str:
        if self.row.state != "open":
            return "UNKNOWN"
        repo = self.row.repo
        if not repo.has_git:
            return "UNKNOWN"
        tree = self.ctx.memo(
            ("merge", self.row.id),
            lambda: self.ctx.backend.git.merge_tree(
                repo.full_name, self.pull.base_sha, self.pull.head_sha
            ),
        )
        return "MERGEABLE" if tree is not None else "CONFLICTING"

    @property
    def merge_state_status(self) -> str:
        if self.row.state != "open":
            return "UNKNOWN"
        if self.pull.draft:
            return "DRAFT"
        mergeable = self.mergeable
        if mergeable == "CONFLICTING":
            return "DIRTY"
        if mergeable == "UNKNOWN":
            return "UNKNOWN"
        checks = self.status_check_rollup
        if checks is not None and checks.state in ("FAILURE", "ERROR"):
            return "UNSTABLE"
        return "CLEAN"

    @property
    def status_check_rollup(self) -> StatusCheckRollupView | None:
        return rollup(self.ctx, self.row.repo, self.pull.head_sha)

    # ------------------------------------------------------------------ reviews

    def _review_rows(self, query: Select[Review]) -> Rows[ReviewView]:
        """Reviews paged and counted in SQL, by id (issue 19: a page of a pull request's
        reviews costs the same however many it has)."""
        return Rows(
            self.ctx.session,
            query,
            [Review.id.asc()],
            lambda r: ReviewView(self.ctx, r),
            options=[joinedload(Review.author)],
        )

    def reviews(
        self, states: Sequence[str] | None = None, author: str | None = None, **page: Any
    ) -> Connection:
        def make() -> Rows[ReviewView]:
            query = self.ctx.backend.pulls.reviews_query(self.pull, self.ctx.viewer.login)
            if states:
                query = query.where(Review.state.in_(states))
            if author:
                query = query.join(User, User.id == Review.author_id).where(
                    func.lower(User.login) == author.lower()
                )
            return self._review_rows(query)

        return connection("PullRequestReviewConnection", "reviews", make, **page)

    def _latest(self) -> Select[Review]:
        """Each author's latest review: their last one that approves or requests changes,
        else their first (a pending or commenting review never replaces an earlier one)."""
        decisive = case((Review.state.not_in(("PENDING", "COMMENTED")), Review.id))
        hidden = self.ctx.backend.pulls.others_pending(self.ctx.viewer.login)
        chosen = (
            select(func.coalesce(func.max(decisive), func.min(Review.id)))
            .where(Review.pull_id == self.pull.id, Review.id.not_in(hidden))
            .group_by(Review.author_id)
        )
        return select(Review).where(Review.id.in_(chosen))

    def latest_reviews(self, **page: Any) -> Connection:
        return connection(
            "PullRequestReviewConnection",
            "latestReviews",
            lambda: self._review_rows(self._latest()),
            **page,
        )

    @property
    def review_decision(self) -> str | None:
        # No branch protection in the world, so no review is ever *required*.
        latest = self._latest().subquery()
        states = set(self.ctx.session.scalars(select(latest.c.state).distinct()))
        if "CHANGES_REQUESTED" in states:
            return "CHANGES_REQUESTED"
        if "APPROVED" in states:
            return "APPROVED"
        return None

    def review_requests(self, **page: Any) -> Connection:
        # The world records no review requests.
        return connection("ReviewRequestConnection", "reviewRequests", list, **page)

    @property
    def total_comments_count(self) -> int:
        seen = self.ctx.backend.pulls.review_comment_count(self.pull, self.ctx.viewer.login)
        return self.row.comment_count + seen


def comment_rows(
    ctx: Context, row: Issue, order_by: dict[str, str] | None = None
) -> Rows[CommentView]:
    """A thread's comments in SQL: by id, or by ``updatedAt`` then id; ``DESC`` reverses."""
    keys: list[Any] = [Comment.id]
    if order_by and order_by.get("field") == "UPDATED_AT":
        keys = [Comment.updated_at, Comment.id]
    if order_by and order_by.get("direction") == "DESC":
        keys = [k.desc() for k in keys]
    query = select(Comment).where(Comment.issue_id == row.id)
    return Rows(
        ctx.session,
        query,
        keys,
        lambda c: CommentView(ctx, c),
        options=[joinedload(Comment.author)],
    )


def thread(ctx: Context, row: Issue) -> IssueView | PullRequestView:
    return PullRequestView(ctx, row) if row.is_pull else IssueView(ctx, row)


def thread_by_number(
    ctx: Context, repo: Repo, number: int, kind: str | None
) -> IssueView | PullRequestView:
    row = ctx.session.scalar(select(Issue).where(Issue.repo_id == repo.id, Issue.number == number))
    if kind == "Issue" and (row is None or row.is_pull):
        raise not_found(f"an Issue with the number of {number}")
    if kind == "PullRequest" and (row is None or not row.is_pull):
        raise not_found(f"a PullRequest with the number of {number}")
    if row is None:
        raise not_found(f"an issue or pull request with the number of {number}")
    return thread(ctx, row)


def _order(order_by: dict[str, str] | None) -> list[Any]:
    """``ORDER BY`` for a list's ``orderBy`` (ascending unless ``DESC``), the id last."""
    field = (order_by or {}).get("field", "CREATED_AT")
    desc = (order_by or {}).get("direction", "ASC") == "DESC"
    keys: dict[str, Any] = {
        "CREATED_AT": Issue.created_at,
        "UPDATED_AT": Issue.updated_at,
        "COMMENTS": Issue.comment_count,
    }
    key = keys[field]
    return [key.desc(), Issue.id.desc()] if desc else [key.asc(), Issue.id.asc()]


def _any_label(labels: Sequence[str] | None) -> ColumnElement[bool]:
    # GitHub's ``labels`` argument matches issues carrying *any* of the names.
    return labelled(labels) if labels else true()


def _mentions(login: str) -> ColumnElement[bool]:
    """``@login`` (case folded) in the body or in a comment."""
    handle = "@" + login.lower()
    in_comment = (
        exists()
        .where(Comment.issue_id == Issue.id, func.instr(lower(Comment.body), handle) > 0)
        .correlate_except(Comment)
    )
    return or_(func.instr(lower(func.coalesce(Issue.body, "")), handle) > 0, in_comment)


def _thread_rows(ctx: Context, query: Select[Any], order_by: dict[str, str] | None) -> Rows[Any]:
    return Rows(ctx.session, query, _order(order_by), lambda r: thread(ctx, r))


def issue_connection(
    ctx: Context,
    repo: Repo,
    *,
    states: Sequence[str] | None = None,
    labels: Sequence[str] | None = None,
    filter_by: dict[str, Any] | None = None,
    order_by: dict[str, str] | None = None,
    **page: Any,
) -> Connection:
    """A repository's issues, matched, ordered, counted and paged in SQL (issue 19)."""

    def make() -> Rows[Any]:
        register_lower(ctx.session)
        q = select(Issue).where(Issue.repo_id == repo.id, ~Issue.is_pull)
        wanted = list(states or [])
        f = filter_by or {}
        if f.get("states"):
            wanted += f["states"]
        if wanted:
            q = q.where(func.upper(Issue.state).in_(wanted))
        q = q.where(_any_label(labels), _any_label(f.get("labels")))
        if f.get("assignee"):
            who = str(f["assignee"])
            q = q.where(assigned(None if who == "*" else [who]))
        if f.get("createdBy"):
            q = q.where(authored([str(f["createdBy"])]))
        if f.get("mentioned"):
            q = q.where(_mentions(str(f["mentioned"])))
        if f.get("since"):
            since = datetime.fromisoformat(str(f["since"]).replace("Z", "+00:00"))
            q = q.where(Issue.updated_at >= since)
        return _thread_rows(ctx, q, order_by)

    return connection("IssueConnection", "issues", make, **page)


def pull_connection(
    ctx: Context,
    repo: Repo,
    *,
    states: Sequence[str] | None = None,
    labels: Sequence[str] | None = None,
    head_ref_name: str | None = None,
    base_ref_name: str | None = None,
    order_by: dict[str, str] | None = None,
    **page: Any,
) -> Connection:
    """A repository's pull requests, matched, ordered, counted and paged in SQL."""

    def make() -> Rows[Any]:
        register_lower(ctx.session)
        q = select(Issue).join(Pull, Pull.id == Issue.id).where(Issue.repo_id == repo.id)
        if head_ref_name is not None:
            q = q.where(Pull.head_ref == head_ref_name)
        if base_ref_name is not None:
            q = q.where(Pull.base_ref == base_ref_name)
        if states:
            state = case((Pull.merged_at.is_not(None), "MERGED"), else_=func.upper(Issue.state))
            q = q.where(state.in_(list(states)))
        q = q.where(_any_label(labels))
        return _thread_rows(ctx, q, order_by)

    return connection("PullRequestConnection", "pullRequests", make, **page)


class SearchConnection(Connection):
    @property
    def issue_count(self) -> int:
        return self.total_count


def search(ctx: Context, query: str, type_: str, **page: Any) -> SearchConnection:
    if type_ != "ISSUE":  # the schema's SearchType holds ISSUE only
        raise Fault("INVALID_ARGUMENT", f"search type {type_} is not supported")
    found = ctx.backend.issues.search(ctx.session, query)
    rows = Rows(ctx.session, found.query, found.order_by, lambda r: thread(ctx, r))
    return SearchConnection(
        "SearchResultItemConnection",
        rows,
        connection="search",
        first=page.get("first"),
        after=page.get("after"),
        last=page.get("last"),
        before=page.get("before"),
    )


def viewer(ctx: Context) -> ActorView:
    return ActorView(ctx, ctx.viewer)
