"""Slack's state as SQLAlchemy rows: users, channels, members, messages, reactions.

A message's identity is its channel and its ``ts``; ``ts_us`` is the same instant as an integer
(microseconds since the epoch) so that ordering and range filters are exact.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    ForeignKey,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


class SlackBase(DeclarativeBase):
    pass


class UserRow(SlackBase):
    __tablename__ = "slack_users"

    id: Mapped[str] = mapped_column(String(20), primary_key=True)
    position: Mapped[int] = mapped_column(Integer)
    """Order in the snapshot, which is the order ``users.list`` pages through."""
    name: Mapped[str] = mapped_column(String(100))
    real_name: Mapped[str] = mapped_column(String(200))
    is_bot: Mapped[bool] = mapped_column(Boolean, default=False)
    deleted: Mapped[bool] = mapped_column(Boolean, default=False)
    tz: Mapped[str] = mapped_column(String(64), default="UTC")


class ChannelRow(SlackBase):
    __tablename__ = "slack_channels"

    id: Mapped[str] = mapped_column(String(20), primary_key=True)
    position: Mapped[int] = mapped_column(Integer)
    name: Mapped[str] = mapped_column(String(100), unique=True)
    is_private: Mapped[bool] = mapped_column(Boolean, default=False)
    is_archived: Mapped[bool] = mapped_column(Boolean, default=False)
    created: Mapped[int] = mapped_column(Integer)
    creator: Mapped[str] = mapped_column(String(20))
    topic: Mapped[str] = mapped_column(Text, default="")
    purpose: Mapped[str] = mapped_column(Text, default="")


class MemberRow(SlackBase):
    __tablename__ = "slack_members"

    channel_id: Mapped[str] = mapped_column(ForeignKey("slack_channels.id"), primary_key=True)
    user_id: Mapped[str] = mapped_column(ForeignKey("slack_users.id"), primary_key=True)


class MessageRow(SlackBase):
    __tablename__ = "slack_messages"
    __table_args__ = (UniqueConstraint("channel_id", "ts"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    channel_id: Mapped[str] = mapped_column(ForeignKey("slack_channels.id"), index=True)
    ts: Mapped[str] = mapped_column(String(20))
    ts_us: Mapped[int] = mapped_column(BigInteger, index=True)
    user: Mapped[str] = mapped_column(String(20))
    text: Mapped[str] = mapped_column(Text)
    thread_ts: Mapped[str | None] = mapped_column(String(20), index=True)
    """The parent's ``ts`` for a reply; None for a top-level message (also for a parent)."""
    broadcast: Mapped[bool] = mapped_column(Boolean, default=False)
    """A reply also shown in the channel (``reply_broadcast``, subtype ``thread_broadcast``)."""
    blocks: Mapped[list[dict[str, Any]] | None] = mapped_column(JSON)
    edited_by: Mapped[str | None] = mapped_column(String(20))
    edited_ts: Mapped[str | None] = mapped_column(String(20))
    deleted: Mapped[bool] = mapped_column(Boolean, default=False)
    """Deleted while it had replies: shown as Slack's tombstone until the replies are gone."""


class ReactionRow(SlackBase):
    __tablename__ = "slack_reactions"
    __table_args__ = (UniqueConstraint("message_id", "name", "user_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    """Insertion order, which is the order Slack lists reactions and their users in."""
    message_id: Mapped[int] = mapped_column(
        ForeignKey("slack_messages.id", ondelete="CASCADE"), index=True
    )
    name: Mapped[str] = mapped_column(String(100))
    user_id: Mapped[str] = mapped_column(String(20))


class HumanReplyRow(SlackBase):
    """A scripted person's reply the world has already posted (each is posted at most once)."""

    __tablename__ = "slack_human_replies"

    index: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    """Position of the reply in the world's list of scripted people."""
    channel_id: Mapped[str] = mapped_column(String(20))
    ts: Mapped[str] = mapped_column(String(20))
