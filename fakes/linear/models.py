"""Linear's state as SQLAlchemy rows: organization, teams, users, workflow states, labels,
issues, their history and comments. Ids are Linear's (UUID strings); teams are referenced by
id here even though the snapshot names them by key."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import (
    JSON,
    Boolean,
    Column,
    DateTime,
    Float,
    ForeignKey,
    Integer,
    String,
    Table,
    Text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship


class LinearBase(DeclarativeBase):
    pass


def aware(value: datetime) -> datetime:
    """SQLite hands back naive datetimes; everything stored here is UTC."""
    return value if value.tzinfo else value.replace(tzinfo=UTC)


class Organization(LinearBase):
    __tablename__ = "linear_organization"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    url_key: Mapped[str] = mapped_column(String(100))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    last_sync_id: Mapped[int] = mapped_column(Integer, default=0)
    """Linear's sync counter: every mutation bumps it and answers it as ``lastSyncId``."""
    minted: Mapped[int] = mapped_column(Integer, default=0)
    """How many ids this run has minted (new ids are deterministic: uuid5 of this count)."""


class Team(LinearBase):
    __tablename__ = "linear_teams"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    key: Mapped[str] = mapped_column(String(20), unique=True)
    name: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))

    states: Mapped[list[WorkflowState]] = relationship(
        back_populates="team", order_by="WorkflowState.position"
    )


class User(LinearBase):
    __tablename__ = "linear_users"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    display_name: Mapped[str] = mapped_column(String(100))
    email: Mapped[str] = mapped_column(String(200))
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    admin: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class WorkflowState(LinearBase):
    __tablename__ = "linear_workflow_states"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    team_id: Mapped[str] = mapped_column(ForeignKey("linear_teams.id"))
    name: Mapped[str] = mapped_column(String(100))
    type: Mapped[str] = mapped_column(String(20))
    """triage, backlog, unstarted, started, completed or canceled."""
    position: Mapped[float] = mapped_column(Float)
    color: Mapped[str] = mapped_column(String(20))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))

    team: Mapped[Team] = relationship(back_populates="states")


issue_labels = Table(
    "linear_issue_labels",
    LinearBase.metadata,
    Column("issue_id", ForeignKey("linear_issues.id"), primary_key=True),
    Column("label_id", ForeignKey("linear_labels.id"), primary_key=True),
)


class Label(LinearBase):
    __tablename__ = "linear_labels"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    color: Mapped[str] = mapped_column(String(20))
    team_id: Mapped[str | None] = mapped_column(ForeignKey("linear_teams.id"))
    """None for a workspace label."""
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))

    team: Mapped[Team | None] = relationship()


class Issue(LinearBase):
    __tablename__ = "linear_issues"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    team_id: Mapped[str] = mapped_column(ForeignKey("linear_teams.id"))
    number: Mapped[int] = mapped_column(Integer)
    title: Mapped[str] = mapped_column(Text)
    description: Mapped[str | None] = mapped_column(Text)
    state_id: Mapped[str] = mapped_column(ForeignKey("linear_workflow_states.id"))
    priority: Mapped[int] = mapped_column(Integer, default=0)
    estimate: Mapped[float | None] = mapped_column(Float)
    assignee_id: Mapped[str | None] = mapped_column(ForeignKey("linear_users.id"))
    creator_id: Mapped[str | None] = mapped_column(ForeignKey("linear_users.id"))
    parent_id: Mapped[str | None] = mapped_column(ForeignKey("linear_issues.id"))
    sort_order: Mapped[float] = mapped_column(Float, default=0.0)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    started_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    completed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    canceled_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    archived_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))

    team: Mapped[Team] = relationship()
    state: Mapped[WorkflowState] = relationship()
    assignee: Mapped[User | None] = relationship(foreign_keys=[assignee_id])
    creator: Mapped[User | None] = relationship(foreign_keys=[creator_id])
    parent: Mapped[Issue | None] = relationship(remote_side=[id], back_populates="children")
    children: Mapped[list[Issue]] = relationship(back_populates="parent")
    labels: Mapped[list[Label]] = relationship(secondary=issue_labels, order_by=Label.name)
    comments: Mapped[list[Comment]] = relationship(
        back_populates="issue", order_by="Comment.created_at"
    )
    history: Mapped[list[IssueHistory]] = relationship(
        back_populates="issue",
        order_by="IssueHistory.position",
        foreign_keys="IssueHistory.issue_id",
    )

    @property
    def identifier(self) -> str:
        return f"{self.team.key}-{self.number}"


class Comment(LinearBase):
    __tablename__ = "linear_comments"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    issue_id: Mapped[str] = mapped_column(ForeignKey("linear_issues.id"))
    user_id: Mapped[str | None] = mapped_column(ForeignKey("linear_users.id"))
    body: Mapped[str] = mapped_column(Text)
    parent_id: Mapped[str | None] = mapped_column(ForeignKey("linear_comments.id"))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))

    issue: Mapped[Issue] = relationship(back_populates="comments")
    user: Mapped[User | None] = relationship()
    parent: Mapped[Comment | None] = relationship(remote_side=[id])


class IssueHistory(LinearBase):
    """One ``IssueHistory`` node: what one change did to an issue. A side that did not change
    is null; columns are named as the GraphQL fields in snake case, so most resolve as they
    are (``fromStateId`` -> ``from_state_id``)."""

    __tablename__ = "linear_issue_history"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    issue_id: Mapped[str] = mapped_column(ForeignKey("linear_issues.id"), index=True)
    position: Mapped[int] = mapped_column(Integer)
    """Place in the issue's history, oldest first: breaks ties between equal ``created_at``."""
    actor_id: Mapped[str | None] = mapped_column(ForeignKey("linear_users.id"))
    """The user who made the change; None for an automation or integration."""
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    from_state_id: Mapped[str | None] = mapped_column(ForeignKey("linear_workflow_states.id"))
    to_state_id: Mapped[str | None] = mapped_column(ForeignKey("linear_workflow_states.id"))
    from_assignee_id: Mapped[str | None] = mapped_column(ForeignKey("linear_users.id"))
    to_assignee_id: Mapped[str | None] = mapped_column(ForeignKey("linear_users.id"))
    from_title: Mapped[str | None] = mapped_column(Text)
    to_title: Mapped[str | None] = mapped_column(Text)
    from_priority: Mapped[int | None] = mapped_column(Integer)
    to_priority: Mapped[int | None] = mapped_column(Integer)
    from_estimate: Mapped[float | None] = mapped_column(Float)
    to_estimate: Mapped[float | None] = mapped_column(Float)
    from_parent_id: Mapped[str | None] = mapped_column(ForeignKey("linear_issues.id"))
    to_parent_id: Mapped[str | None] = mapped_column(ForeignKey("linear_issues.id"))
    added_labels: Mapped[list[str]] = mapped_column(JSON, default=list)
    """Label ids added by this change."""
    removed_labels: Mapped[list[str]] = mapped_column(JSON, default=list)
    """Label ids removed by this change."""
    updated_description: Mapped[bool | None] = mapped_column(Boolean)
    """True when the change edited the description (Linear records no texts for it)."""

    issue: Mapped[Issue] = relationship(back_populates="history", foreign_keys=[issue_id])
    actor: Mapped[User | None] = relationship(foreign_keys=[actor_id])
    from_state: Mapped[WorkflowState | None] = relationship(foreign_keys=[from_state_id])
    to_state: Mapped[WorkflowState | None] = relationship(foreign_keys=[to_state_id])
    from_assignee: Mapped[User | None] = relationship(foreign_keys=[from_assignee_id])
    to_assignee: Mapped[User | None] = relationship(foreign_keys=[to_assignee_id])
    from_parent: Mapped[Issue | None] = relationship(foreign_keys=[from_parent_id])
    to_parent: Mapped[Issue | None] = relationship(foreign_keys=[to_parent_id])


class ScriptedReplyFired(LinearBase):
    """A scripted person's reply already posted in this run (each is posted once)."""

    __tablename__ = "linear_scripted_replies"

    index: Mapped[int] = mapped_column(Integer, primary_key=True)
    """Position of the reply in ``world.humans``."""
    comment_id: Mapped[str] = mapped_column(ForeignKey("linear_comments.id"))
