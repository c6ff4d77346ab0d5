"""Linear's state as SQLAlchemy rows: organization, teams, users, workflow states, labels,
issues and comments. Ids are Linear's (UUID strings); teams are referenced by id here even
though the snapshot names them by key."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import Boolean, Column, DateTime, Float, ForeignKey, Integer, String, Table, Text
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


class ScriptedReplyFired(LinearBase):
    """A scripted person's reply already posted in this run (each is posted once)."""

    __tablename__ = "linear_scripted_replies"

    index: Mapped[int] = mapped_column(Integer, primary_key=True)
    """Position of the reply in ``world.humans``."""
    comment_id: Mapped[str] = mapped_column(ForeignKey("linear_comments.id"))
