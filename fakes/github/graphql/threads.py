"""GraphQL objects over issues and pull requests, their connections, and issue search."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import select

from fakes.github.gitstore import FileChange, GitFailed
from fakes.github.graphql.comments import (
    ChangedFileView,
    CommentLike,
    CommentView,
    PullRequestCommitView,
    ReviewView,
)
from fakes.github.graphql.commits import (
    CommitView,
    RefView,
    StatusCheckRollupView,
    commit_or_none,
    rollup,
)
from fakes.github.graphql.connections import Connection, connection
from fakes.github.graphql.context import WEB, Context, iso
from fakes.github.graphql.faults import Fault, not_found
from fakes.github.graphql.views import (
    ActorView,
    LabelView,
    RepositoryView,
    actor,
    html_text,
    sort_labels,
)
from fakes.github.models import Issue, Pull, Repo, Review, node_id

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

    active_lock_reason: str | None = None
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
        involved = self.row.author_id == me or any(c.author_id == me for c in self.row.comments)
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
        def make() -> list[CommentView]:
            rows = list(self.row.comments)
            if order_by and order_by.get("field") == "UPDATED_AT":
                rows.sort(key=lambda c: (c.updated_at, c.id))
            if order_by and order_by.get("direction") == "DESC":
                rows.reverse()
            return [CommentView(self.ctx, c) for c in rows]

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
        branch = self.ctx.backend.branch(self.ctx.session, self.row.repo, name)
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
            lambda: self.ctx.backend.pull_files(self.ctx.session, self.row.repo, self.row.number),
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

    def _reviews(self) -> list[Review]:
        return list(self.pull.reviews)

    def reviews(
        self, states: Sequence[str] | None = None, author: str | None = None, **page: Any
    ) -> Connection:
        def make() -> list[ReviewView]:
            rows = self._reviews()
            if states:
                rows = [r for r in rows if r.state in states]
            if author:
                rows = [r for r in rows if r.author.login.lower() == author.lower()]
            return [ReviewView(self.ctx, r) for r in rows]

        return connection("PullRequestReviewConnection", "reviews", make, **page)

    def _latest(self) -> list[Review]:
        latest: dict[int, Review] = {}
        for r in self._reviews():
            if r.state in ("PENDING", "COMMENTED"):
                if r.author_id not in latest:
                    latest[r.author_id] = r
                continue
            latest[r.author_id] = r
        return sorted(latest.values(), key=lambda r: r.id)

    def latest_reviews(self, **page: Any) -> Connection:
        return connection(
            "PullRequestReviewConnection",
            "latestReviews",
            lambda: [ReviewView(self.ctx, r) for r in self._latest()],
            **page,
        )

    @property
    def review_decision(self) -> str | None:
        # No branch protection in the world, so no review is ever *required*.
        states = {r.state for r in self._latest()}
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
        return len(self.row.comments) + len(self.pull.review_comments)


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


def _order(rows: list[Issue], order_by: dict[str, str] | None) -> list[Issue]:
    field = (order_by or {}).get("field", "CREATED_AT")
    desc = (order_by or {}).get("direction", "ASC") == "DESC"
    keys: dict[str, Any] = {
        "CREATED_AT": lambda i: (i.created_at, i.id),
        "UPDATED_AT": lambda i: (i.updated_at, i.id),
        "COMMENTS": lambda i: (len(i.comments), i.id),
    }
    return sorted(rows, key=keys[field], reverse=desc)


def _has_labels(row: Issue, labels: Sequence[str] | None) -> bool:
    # GitHub's ``labels`` argument matches issues carrying *any* of the names.
    if not labels:
        return True
    names = {lb.name.lower() for lb in row.labels}
    return any(name.lower() in names for name in labels)


def _mentions(row: Issue, login: str) -> bool:
    handle = "@" + login.lower()
    texts = [row.body or "", *(c.body for c in row.comments)]
    return any(handle in t.lower() for t in texts)


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
    def make() -> list[IssueView | PullRequestView]:
        rows = list(
            ctx.session.scalars(select(Issue).where(Issue.repo_id == repo.id, ~Issue.is_pull))
        )
        wanted = list(states or [])
        f = filter_by or {}
        if f.get("states"):
            wanted += f["states"]
        if wanted:
            rows = [r for r in rows if r.state.upper() in wanted]
        rows = [r for r in rows if _has_labels(r, labels) and _has_labels(r, f.get("labels"))]
        if f.get("assignee"):
            who = str(f["assignee"]).lower()
            if who == "*":
                rows = [r for r in rows if r.assignees]
            else:
                rows = [r for r in rows if who in {u.login.lower() for u in r.assignees}]
        if f.get("createdBy"):
            rows = [r for r in rows if r.author.login.lower() == str(f["createdBy"]).lower()]
        if f.get("mentioned"):
            rows = [r for r in rows if _mentions(r, str(f["mentioned"]))]
        if f.get("since"):
            since = datetime.fromisoformat(str(f["since"]).replace("Z", "+00:00"))
            rows = [r for r in rows if r.updated_at >= since]
        return [thread(ctx, r) for r in _order(rows, order_by)]

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
    def make() -> list[IssueView | PullRequestView]:
        q = select(Issue).join(Pull, Pull.id == Issue.id).where(Issue.repo_id == repo.id)
        if head_ref_name is not None:
            q = q.where(Pull.head_ref == head_ref_name)
        if base_ref_name is not None:
            q = q.where(Pull.base_ref == base_ref_name)
        rows = list(ctx.session.scalars(q))
        if states:
            rows = [r for r in rows if PullRequestView(ctx, r).state in states]
        rows = [r for r in rows if _has_labels(r, labels)]
        return [thread(ctx, r) for r in _order(rows, order_by)]

    return connection("PullRequestConnection", "pullRequests", make, **page)


class SearchConnection(Connection):
    @property
    def issue_count(self) -> int:
        return self.total_count


def search(ctx: Context, query: str, type_: str, **page: Any) -> SearchConnection:
    if type_ != "ISSUE":  # the schema's SearchType holds ISSUE only
        raise Fault("INVALID_ARGUMENT", f"search type {type_} is not supported")
    rows = ctx.backend.search_issues(ctx.session, query)
    return SearchConnection(
        "SearchResultItemConnection",
        [thread(ctx, r) for r in rows],
        connection="search",
        first=page.get("first"),
        after=page.get("after"),
        last=page.get("last"),
        before=page.get("before"),
    )


def viewer(ctx: Context) -> ActorView:
    return ActorView(ctx, ctx.viewer)
