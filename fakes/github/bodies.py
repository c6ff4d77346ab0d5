"""What clients send: request bodies, parsed as GitHub does (unknown fields ignored)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class Body(BaseModel):
    """A request body: unknown fields are ignored, as GitHub ignores them."""

    model_config = ConfigDict(extra="ignore")


class IssueCreate(Body):
    title: str | int
    body: str | None = None
    labels: list[str | dict[str, Any]] = Field(default_factory=list)
    assignees: list[str] = Field(default_factory=list)
    assignee: str | None = None


class IssueUpdate(Body):
    title: str | int | None = None
    body: str | None = None
    state: str | None = None
    state_reason: str | None = None
    labels: list[str | dict[str, Any]] | None = None
    assignees: list[str] | None = None
    assignee: str | None = None


class CommentCreate(Body):
    body: str


class LabelsBody(Body):
    labels: list[str | dict[str, Any]]


class PullCreate(Body):
    title: str | None = None
    body: str | None = None
    head: str
    base: str
    draft: bool = False
    maintainer_can_modify: bool = True
    issue: int | None = None


class PullUpdate(Body):
    title: str | None = None
    body: str | None = None
    state: str | None = None
    base: str | None = None
    maintainer_can_modify: bool | None = None


class MergeBody(Body):
    commit_title: str | None = None
    commit_message: str | None = None
    sha: str | None = None
    merge_method: str = "merge"


class ReviewCreate(Body):
    commit_id: str | None = None
    body: str | None = None
    event: str | None = None
    comments: list[dict[str, Any]] = Field(default_factory=list)


class ReviewCommentCreate(Body):
    body: str
    commit_id: str | None = None
    path: str | None = None
    line: int | None = None
    side: str | None = None
    position: int | None = None
    in_reply_to: int | None = None


class ContentsPut(Body):
    message: str
    content: str
    sha: str | None = None
    branch: str | None = None


class RefCreate(Body):
    ref: str
    sha: str


class RefPatch(Body):
    sha: str
    force: bool = False
