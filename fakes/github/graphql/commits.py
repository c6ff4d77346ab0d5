"""GraphQL objects over git and checks: refs, commits, git actors, statuses and check runs."""

from __future__ import annotations

from functools import cached_property
from typing import Any

from sqlalchemy import select

from fakes.github.gitstore import CommitInfo, GitFailed, Person
from fakes.github.graphql import views
from fakes.github.graphql.connections import Connection, connection
from fakes.github.graphql.context import WEB, Context, iso, legacy_id
from fakes.github.graphql.views import ActorView, View, actor, avatar
from fakes.github.models import Branch, CheckRun, CommitStatus, Repo, User, node_id


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
    def repository(self) -> views.RepositoryView:
        return views.RepositoryView(self.ctx, self.repo)

    @property
    def target(self) -> CommitView:
        return CommitView(self.ctx, self.repo, self.branch.sha)

    def associated_pull_requests(self, **args: Any) -> Connection:
        from fakes.github.graphql.threads import pull_connection

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
    def repository(self) -> views.RepositoryView:
        return views.RepositoryView(self.ctx, self.repo)

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
        repo = self.ctx.backend.repo_by_id(self.ctx.session, self.row.repo_id)
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
    def repository(self) -> views.RepositoryView:
        return views.RepositoryView(
            self.ctx, self.ctx.backend.repo_by_id(self.ctx.session, self.row.repo_id)
        )

    @property
    def resource_path(self) -> str:
        repo = self.ctx.backend.repo_by_id(self.ctx.session, self.row.repo_id)
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
    for st in ctx.backend.statuses(ctx.session, repo, sha):  # newest first
        latest.setdefault(st.context, st)
    contexts: list[Any] = [StatusContextView(ctx, st) for st in latest.values()]
    contexts += [CheckRunView(ctx, run) for run in ctx.backend.check_runs(ctx.session, repo, sha)]
    if not contexts:
        return None
    return StatusCheckRollupView(ctx, repo, sha, contexts)
