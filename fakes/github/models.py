"""The fake GitHub's state: SQLAlchemy rows, never raw API JSON.

Issues and pull requests share one number space per repository, as on GitHub: every pull
request is an issue row with ``is_pull`` set plus a :class:`Pull` row holding what only pull
requests have. Every row GraphQL exposes has a stable integer id, from which
:func:`node_id` makes GitHub's legacy global ID.
"""

from __future__ import annotations

import base64
import binascii
from datetime import UTC, datetime

from sqlalchemy import (
    Boolean,
    Column,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    String,
    Table,
    Text,
    UniqueConstraint,
    func,
    select,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, column_property, mapped_column, relationship
from sqlalchemy.types import TypeDecorator


class UTCDateTime(TypeDecorator[datetime]):
    """Stored naive in SQLite, always handed back timezone-aware (UTC)."""

    impl = DateTime
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: object) -> datetime | None:
        if value is None:
            return None
        return value.astimezone(UTC).replace(tzinfo=None)

    def process_result_value(self, value: datetime | None, dialect: object) -> datetime | None:
        return None if value is None else value.replace(tzinfo=UTC)


class GitHubBase(DeclarativeBase):
    pass


def node_id(type_name: str, db_id: int) -> str:
    """GitHub's legacy global ID: base64 of ``0<len>:<Type><id>`` (``MDU6SXNzdWUx`` = Issue 1)."""
    raw = f"0{len(type_name)}:{type_name}{db_id}"
    return base64.b64encode(raw.encode()).decode()


def parse_node_id(value: str) -> tuple[str, int]:
    """The (type name, database id) a global ID names; ValueError if it is not one."""
    try:
        raw = base64.b64decode(value.encode(), validate=True).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError) as exc:
        raise ValueError(f"not a global id: {value!r}") from exc
    size, sep, rest = raw.partition(":")
    if not sep or not size.startswith("0") or not size[1:].isdigit():
        raise ValueError(f"not a global id: {value!r}")
    n = int(size[1:])
    type_name, digits = rest[:n], rest[n:]
    if len(type_name) != n or not type_name.isalpha() or not digits.isdigit():
        raise ValueError(f"not a global id: {value!r}")
    return type_name, int(digits)


issue_labels = Table(
    "github_issue_labels",
    GitHubBase.metadata,
    Column("issue_id", ForeignKey("github_issues.id", ondelete="CASCADE"), primary_key=True),
    Column("label_id", ForeignKey("github_labels.id", ondelete="CASCADE"), primary_key=True),
)

issue_assignees = Table(
    "github_issue_assignees",
    GitHubBase.metadata,
    Column("issue_id", ForeignKey("github_issues.id", ondelete="CASCADE"), primary_key=True),
    Column("user_id", ForeignKey("github_users.id", ondelete="CASCADE"), primary_key=True),
)


class User(GitHubBase):
    __tablename__ = "github_users"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    """GitHub's numeric user id, from the snapshot."""
    login: Mapped[str] = mapped_column(String(100), unique=True, index=True)
    """The handle, unique case-insensitively."""
    name: Mapped[str | None] = mapped_column(String(200))
    email: Mapped[str | None] = mapped_column(String(200))
    type: Mapped[str] = mapped_column(String(20), default="User")
    """``User``, ``Bot`` or ``Organization``."""
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    """When the account was made (before T, or it is not in the world)."""


class Repo(GitHubBase):
    __tablename__ = "github_repos"
    __table_args__ = (UniqueConstraint("owner", "name"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    """GitHub's numeric repository id, from the snapshot."""
    owner: Mapped[str] = mapped_column(String(100))
    """The owner's login (a user or an organization)."""
    name: Mapped[str] = mapped_column(String(100))
    owner_id: Mapped[int | None] = mapped_column(ForeignKey("github_users.id"))
    """The owning user's id, when the owner is one of the world's users."""
    description: Mapped[str | None] = mapped_column(Text)
    private: Mapped[bool] = mapped_column(Boolean, default=False)
    default_branch: Mapped[str] = mapped_column(String(200), default="main")
    has_git: Mapped[bool] = mapped_column(Boolean, default=False)
    """Whether the fake serves a git repository for it (the snapshot had a bundle)."""
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime)
    """Last change to the repository's settings or contents."""
    pushed_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    """Last push: from the snapshot (or the cut history's tip), then moved by pushes,
    contents updates and merges."""

    labels: Mapped[list[Label]] = relationship(back_populates="repo", order_by="Label.id")
    owner_user: Mapped[User | None] = relationship()

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.name}"


class Label(GitHubBase):
    __tablename__ = "github_labels"
    __table_args__ = (UniqueConstraint("repo_id", "name"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    repo_id: Mapped[int] = mapped_column(ForeignKey("github_repos.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(200))
    color: Mapped[str] = mapped_column(String(6), default="ededed")
    """Six hex digits, no ``#``."""
    description: Mapped[str | None] = mapped_column(Text)

    repo: Mapped[Repo] = relationship(back_populates="labels")


class Comment(GitHubBase):
    """A comment on an issue or on a pull request's conversation."""

    __tablename__ = "github_comments"
    __table_args__ = (Index("ix_github_comments_timeline", "issue_id", "created_at", "id"),)
    """A thread's timeline takes its first comments by date from this index, not a sort."""

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    issue_id: Mapped[int] = mapped_column(
        ForeignKey("github_issues.id", ondelete="CASCADE"), index=True
    )
    """Indexed: an issue's count and its pages of comments are read through it."""
    author_id: Mapped[int] = mapped_column(ForeignKey("github_users.id"))
    body: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime)

    issue: Mapped[Issue] = relationship(back_populates="comments")
    author: Mapped[User] = relationship()


class Issue(GitHubBase):
    """An issue or a pull request (``is_pull``); one number space per repository."""

    __tablename__ = "github_issues"
    __table_args__ = (UniqueConstraint("repo_id", "number"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    """Shared with the :class:`Pull` row of a pull request; the REST ``id`` of both."""
    repo_id: Mapped[int] = mapped_column(ForeignKey("github_repos.id", ondelete="CASCADE"))
    number: Mapped[int] = mapped_column(Integer)
    """Per repository, shared by issues and pull requests."""
    is_pull: Mapped[bool] = mapped_column(Boolean, default=False)
    title: Mapped[str] = mapped_column(Text)
    body: Mapped[str | None] = mapped_column(Text)
    state: Mapped[str] = mapped_column(String(10), default="open")
    """``open`` or ``closed``."""
    state_reason: Mapped[str | None] = mapped_column(String(20))
    """``completed``, ``not_planned``, ``reopened`` or None."""
    locked: Mapped[bool] = mapped_column(Boolean, default=False)
    lock_reason: Mapped[str | None] = mapped_column(String(20))
    """The reason given when it was locked (``off-topic``, ``too heated``, ``resolved``,
    ``spam``): GitHub's ``active_lock_reason``; None when unlocked or locked without one."""
    author_id: Mapped[int] = mapped_column(ForeignKey("github_users.id"))
    """Who opened it."""
    closed_by_id: Mapped[int | None] = mapped_column(ForeignKey("github_users.id"))
    """Who closed it, when closed during the run."""
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime)
    """Moved by every change and every comment, review or review comment."""
    closed_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    comment_count: Mapped[int] = column_property(
        select(func.count(Comment.id)).where(Comment.issue_id == id).scalar_subquery()
    )
    """How many comments it has: one aggregate (over the index on ``Comment.issue_id``)
    loaded with the row, so that reading an issue never loads its comments. Loaded once per
    session: whatever adds or deletes a comment expires it (see :class:`Issues`)."""

    repo: Mapped[Repo] = relationship()
    author: Mapped[User] = relationship(foreign_keys=[author_id])
    closed_by: Mapped[User | None] = relationship(foreign_keys=[closed_by_id])
    labels: Mapped[list[Label]] = relationship(secondary=issue_labels, order_by="Label.name")
    assignees: Mapped[list[User]] = relationship(secondary=issue_assignees, order_by="User.login")
    comments: Mapped[list[Comment]] = relationship(back_populates="issue", order_by="Comment.id")
    pull: Mapped[Pull | None] = relationship(back_populates="issue", uselist=False)
    events: Mapped[list[IssueEvent]] = relationship(
        back_populates="issue", order_by="[IssueEvent.created_at, IssueEvent.id]"
    )

    @property
    def key(self) -> str:
        """The event log's object id: ``owner/repo#7``."""
        return f"{self.repo.full_name}#{self.number}"


class IssueEvent(GitHubBase):
    """One entry of a thread's history, as ``GET /repos/{o}/{r}/issues/{n}/events`` lists it.

    Seeded from the snapshot's ``events`` (everything up to T) and appended by every change
    GitHub records as an issue event. ``event`` is GitHub's own name for it, as in the
    snapshot (:class:`replay.base.worldstate.GitHubIssueEvent`).
    """

    __tablename__ = "github_issue_events"
    __table_args__ = (Index("ix_github_issue_events_timeline", "issue_id", "created_at", "id"),)
    """Events page and join the timeline in date order from this index, not a sort."""

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    """GitHub's event id: the snapshot's, or one past the largest for events of the run."""
    issue_id: Mapped[int] = mapped_column(
        ForeignKey("github_issues.id", ondelete="CASCADE"), index=True
    )
    event: Mapped[str] = mapped_column(String(40))
    """``closed``, ``reopened``, ``merged``, ``labeled``, ``unlabeled``, ``renamed``,
    ``assigned``, ``unassigned``, ``convert_to_draft`` or ``ready_for_review``."""
    actor_id: Mapped[int] = mapped_column(ForeignKey("github_users.id"))
    """Who made the change (for ``assigned``/``unassigned``, the assigner)."""
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    label_name: Mapped[str | None] = mapped_column(String(200))
    """For ``labeled``/``unlabeled``: the label's name then (kept if the label goes)."""
    label_color: Mapped[str | None] = mapped_column(String(6))
    """For ``labeled``/``unlabeled``: the label's colour then."""
    assignee_id: Mapped[int | None] = mapped_column(ForeignKey("github_users.id"))
    """For ``assigned``/``unassigned``: who was (un)assigned."""
    rename_from: Mapped[str | None] = mapped_column(Text)
    rename_to: Mapped[str | None] = mapped_column(Text)
    commit_id: Mapped[str | None] = mapped_column(String(40))
    """For ``merged``: the commit the merge made on the base branch."""
    state_reason: Mapped[str | None] = mapped_column(String(20))
    """For ``closed``: ``completed`` or ``not_planned`` (issues; None for pull requests)."""

    issue: Mapped[Issue] = relationship(back_populates="events")
    actor: Mapped[User] = relationship(foreign_keys=[actor_id])
    assignee: Mapped[User | None] = relationship(foreign_keys=[assignee_id])


class Pull(GitHubBase):
    """What only a pull request has; shares its id with its issue row."""

    __tablename__ = "github_pulls"

    id: Mapped[int] = mapped_column(
        ForeignKey("github_issues.id", ondelete="CASCADE"), primary_key=True
    )
    head_ref: Mapped[str] = mapped_column(String(255))
    """The head branch's name (same repository; forks are not modelled)."""
    base_ref: Mapped[str] = mapped_column(String(255))
    """The base branch's name."""
    head_sha: Mapped[str] = mapped_column(String(40))
    """Follows pushes to the head branch."""
    base_sha: Mapped[str] = mapped_column(String(40))
    """The base branch's tip, followed while the pull request is open."""
    draft: Mapped[bool] = mapped_column(Boolean, default=False)
    maintainer_can_modify: Mapped[bool] = mapped_column(Boolean, default=False)
    merged_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    merge_commit_sha: Mapped[str | None] = mapped_column(String(40))
    """The commit the merge made on the base branch."""
    merged_by_id: Mapped[int | None] = mapped_column(ForeignKey("github_users.id"))

    issue: Mapped[Issue] = relationship(back_populates="pull")
    merged_by: Mapped[User | None] = relationship()
    reviews: Mapped[list[Review]] = relationship(back_populates="pull", order_by="Review.id")
    review_comments: Mapped[list[ReviewComment]] = relationship(
        back_populates="pull", order_by="ReviewComment.id"
    )


class Review(GitHubBase):
    __tablename__ = "github_reviews"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    pull_id: Mapped[int] = mapped_column(ForeignKey("github_pulls.id", ondelete="CASCADE"))
    author_id: Mapped[int] = mapped_column(ForeignKey("github_users.id"))
    state: Mapped[str] = mapped_column(String(20))
    """``APPROVED``, ``CHANGES_REQUESTED``, ``COMMENTED``, ``DISMISSED`` or ``PENDING``."""
    body: Mapped[str] = mapped_column(Text, default="")
    commit_id: Mapped[str] = mapped_column(String(40))
    """The head commit the review was made on."""
    submitted_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    """None while the review is pending."""

    pull: Mapped[Pull] = relationship(back_populates="reviews")
    author: Mapped[User] = relationship()


class ReviewComment(GitHubBase):
    """A comment on a line of a pull request's diff."""

    __tablename__ = "github_review_comments"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    pull_id: Mapped[int] = mapped_column(ForeignKey("github_pulls.id", ondelete="CASCADE"))
    review_id: Mapped[int | None] = mapped_column(ForeignKey("github_reviews.id"))
    author_id: Mapped[int] = mapped_column(ForeignKey("github_users.id"))
    path: Mapped[str] = mapped_column(Text)
    line: Mapped[int | None] = mapped_column(Integer)
    """The line in the file's new (RIGHT) or old (LEFT) version."""
    side: Mapped[str] = mapped_column(String(5), default="RIGHT")
    commit_id: Mapped[str] = mapped_column(String(40))
    diff_hunk: Mapped[str] = mapped_column(Text, default="")
    """The file's diff the comment sits on, as GitHub shows it."""
    in_reply_to_id: Mapped[int | None] = mapped_column(Integer)
    """The comment this one answers, for a thread."""
    body: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime)

    pull: Mapped[Pull] = relationship(back_populates="review_comments")
    author: Mapped[User] = relationship()


class Branch(GitHubBase):
    """A branch as the fake knows it: seeded from the git repository, moved by pushes."""

    __tablename__ = "github_branches"
    __table_args__ = (UniqueConstraint("repo_id", "name"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    repo_id: Mapped[int] = mapped_column(ForeignKey("github_repos.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(255))
    sha: Mapped[str] = mapped_column(String(40))
    """The branch's tip in the fake's git repository."""

    repo: Mapped[Repo] = relationship()


class CommitStatus(GitHubBase):
    """A commit status (read-only in the fake; a snapshot may hold none)."""

    __tablename__ = "github_statuses"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    repo_id: Mapped[int] = mapped_column(ForeignKey("github_repos.id", ondelete="CASCADE"))
    sha: Mapped[str] = mapped_column(String(40), index=True)
    state: Mapped[str] = mapped_column(String(10))
    """``error``, ``failure``, ``pending`` or ``success``."""
    context: Mapped[str] = mapped_column(String(255), default="default")
    description: Mapped[str | None] = mapped_column(Text)
    target_url: Mapped[str | None] = mapped_column(Text)
    creator_id: Mapped[int | None] = mapped_column(ForeignKey("github_users.id"))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime)

    creator: Mapped[User | None] = relationship()


class CheckRun(GitHubBase):
    """A check run (read-only in the fake; a snapshot may hold none)."""

    __tablename__ = "github_check_runs"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    repo_id: Mapped[int] = mapped_column(ForeignKey("github_repos.id", ondelete="CASCADE"))
    head_sha: Mapped[str] = mapped_column(String(40), index=True)
    name: Mapped[str] = mapped_column(String(255))
    status: Mapped[str] = mapped_column(String(20), default="completed")
    """``queued``, ``in_progress`` or ``completed``."""
    conclusion: Mapped[str | None] = mapped_column(String(20))
    details_url: Mapped[str | None] = mapped_column(Text)
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    completed_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
