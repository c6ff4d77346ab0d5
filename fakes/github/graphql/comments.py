"""GraphQL objects over comments, reviews, review comments, PR commits and changed files."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from fakes.github.gitstore import FileChange
from fakes.github.graphql.commits import CommitView, commit_or_none
from fakes.github.graphql.connections import Connection, connection
from fakes.github.graphql.context import WEB, Context, iso, legacy_id
from fakes.github.graphql.views import ActorView, RepositoryView, View, actor
from fakes.github.models import Comment, Issue, Repo, Review, ReviewComment, node_id

if TYPE_CHECKING:
    from fakes.github.graphql.threads import IssueView, PullRequestView

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
        from fakes.github.graphql.threads import thread

        return thread(self.ctx, self.row.issue)

    @property
    def pull_request(self) -> PullRequestView | None:
        from fakes.github.graphql.threads import PullRequestView

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
        from fakes.github.graphql.threads import PullRequestView

        return PullRequestView(self.ctx, self.row.pull.issue)

    def comments(self, **page: Any) -> Connection:
        def make() -> list[ReviewCommentView]:
            rows = [c for c in self.row.pull.review_comments if c.review_id == self.row.id]
            return [ReviewCommentView(self.ctx, c) for c in rows]

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
        from fakes.github.graphql.threads import PullRequestView

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
