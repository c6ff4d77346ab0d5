"""The floor the GitHub fake is measured against: a bare FastAPI + SQLAlchemy + SQLite app
doing the same reads and inserts, written the way such an app is usually written.

A file database in WAL mode with ``synchronous=NORMAL`` (SQLite's advice for WAL), one ORM
session per request, plain ``def`` routes on FastAPI's thread pool, dicts returned and
encoded by FastAPI. The issue it answers has GitHub's fields (so the JSON is as large as the
fake's), its author loaded with it and its comment count from one aggregate. No event log, no
rate-limit headers, no validation beyond FastAPI's: the floor of the stack, not a fake. Its
issues carry no labels or assignees; the benchmark reads a fake issue without any either.

``uvicorn --factory bench.floor:app`` (the database goes to ``$REPLAY_BENCH_FLOOR_DB`` or a
new temporary directory).
"""

from __future__ import annotations

import os
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Header, HTTPException
from sqlalchemy import (
    DateTime,
    ForeignKey,
    Integer,
    String,
    Text,
    create_engine,
    event,
    func,
    select,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column, relationship

API = "https://api.github.com"
WEB = "https://github.com"


class Base(DeclarativeBase):
    pass


class User(Base):
    __tablename__ = "users"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    login: Mapped[str] = mapped_column(String(100), unique=True)


class Issue(Base):
    __tablename__ = "issues"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    repo: Mapped[str] = mapped_column(String(200), index=True)
    number: Mapped[int] = mapped_column(Integer)
    title: Mapped[str] = mapped_column(Text)
    body: Mapped[str | None] = mapped_column(Text)
    state: Mapped[str] = mapped_column(String(10), default="open")
    author_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    created_at: Mapped[datetime] = mapped_column(DateTime)
    updated_at: Mapped[datetime] = mapped_column(DateTime)
    author: Mapped[User] = relationship(lazy="joined")


class Comment(Base):
    __tablename__ = "comments"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    issue_id: Mapped[int] = mapped_column(ForeignKey("issues.id"), index=True)
    author_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    body: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(DateTime)
    updated_at: Mapped[datetime] = mapped_column(DateTime)


def _wal(dbapi_conn: Any, _record: Any) -> None:
    cursor = dbapi_conn.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


def _user(u: User) -> dict[str, Any]:
    url = f"{API}/users/{u.login}"
    return {
        "login": u.login,
        "id": u.id,
        "node_id": f"U_{u.id}",
        "avatar_url": f"https://avatars.githubusercontent.com/u/{u.id}?v=4",
        "gravatar_id": "",
        "url": url,
        "html_url": f"{WEB}/{u.login}",
        "followers_url": f"{url}/followers",
        "following_url": f"{url}/following{{/other_user}}",
        "gists_url": f"{url}/gists{{/gist_id}}",
        "starred_url": f"{url}/starred{{/owner}}{{/repo}}",
        "subscriptions_url": f"{url}/subscriptions",
        "organizations_url": f"{url}/orgs",
        "repos_url": f"{url}/repos",
        "events_url": f"{url}/events{{/privacy}}",
        "received_events_url": f"{url}/received_events",
        "type": "User",
        "user_view_type": "public",
        "site_admin": False,
    }


def _reactions(url: str) -> dict[str, Any]:
    counts = dict.fromkeys(
        ("+1", "-1", "laugh", "hooray", "confused", "heart", "rocket", "eyes"), 0
    )
    return {"url": f"{url}/reactions", "total_count": 0, **counts}


def _issue(i: Issue, comments: int) -> dict[str, Any]:
    """The same keys as the fake's issue (GitHub's), so both encode as much JSON."""
    api = f"{API}/repos/{i.repo}/issues/{i.number}"
    return {
        "url": api,
        "repository_url": f"{API}/repos/{i.repo}",
        "labels_url": f"{api}/labels{{/name}}",
        "comments_url": f"{api}/comments",
        "events_url": f"{api}/events",
        "html_url": f"{WEB}/{i.repo}/issues/{i.number}",
        "id": i.id,
        "node_id": f"I_{i.id}",
        "number": i.number,
        "title": i.title,
        "user": _user(i.author),
        "labels": [],
        "state": i.state,
        "locked": False,
        "assignee": None,
        "assignees": [],
        "milestone": None,
        "comments": comments,
        "created_at": i.created_at,
        "updated_at": i.updated_at,
        "closed_at": None,
        "author_association": "OWNER",
        "active_lock_reason": None,
        "body": i.body,
        "closed_by": None,
        "reactions": _reactions(api),
        "timeline_url": f"{api}/timeline",
        "performed_via_github_app": None,
        "state_reason": None,
    }


def _comment(c: Comment, i: Issue, author: User) -> dict[str, Any]:
    url = f"{API}/repos/{i.repo}/issues/comments/{c.id}"
    return {
        "url": url,
        "html_url": f"{WEB}/{i.repo}/issues/{i.number}#issuecomment-{c.id}",
        "issue_url": f"{API}/repos/{i.repo}/issues/{i.number}",
        "id": c.id,
        "node_id": f"IC_{c.id}",
        "user": _user(author),
        "created_at": c.created_at,
        "updated_at": c.updated_at,
        "author_association": "OWNER",
        "body": c.body,
        "reactions": _reactions(url),
        "performed_via_github_app": None,
    }


def app() -> FastAPI:
    where = os.environ.get("REPLAY_BENCH_FLOOR_DB") or str(
        Path(tempfile.mkdtemp(prefix="replay-bench-floor-")) / "floor.db"
    )
    engine = create_engine(f"sqlite:///{where}")
    event.listen(engine, "connect", _wal)
    Base.metadata.create_all(engine)
    now = datetime.now(UTC).replace(tzinfo=None)
    with Session(engine) as s, s.begin():
        viewer = User(id=1, login="acme-agent")
        s.add(viewer)
        for number in range(1, 16):
            s.add(
                Issue(
                    repo="acme/semverkit",
                    number=number,
                    title=f"issue {number}",
                    body="seeded",
                    author=viewer,
                    created_at=now,
                    updated_at=now,
                )
            )
    api = FastAPI()

    def login(authorization: str | None) -> User:
        if not authorization:
            raise HTTPException(401)
        return User(id=1, login="acme-agent")

    def find(s: Session, repo: str, number: int) -> Issue:
        row = s.scalar(select(Issue).where(Issue.repo == repo, Issue.number == number))
        if row is None:
            raise HTTPException(404)
        return row

    @api.get("/repos/{owner}/{repo}/issues/{number}")
    def get_issue(
        owner: str, repo: str, number: int, authorization: str | None = Header(None)
    ) -> dict[str, Any]:
        login(authorization)
        with Session(engine) as s:
            issue = find(s, f"{owner}/{repo}", number)
            count = s.scalar(select(func.count()).where(Comment.issue_id == issue.id))
            return _issue(issue, int(count or 0))

    @api.post("/repos/{owner}/{repo}/issues", status_code=201)
    def create_issue(
        owner: str, repo: str, body: dict[str, Any], authorization: str | None = Header(None)
    ) -> dict[str, Any]:
        user = login(authorization)
        name = f"{owner}/{repo}"
        with Session(engine) as s, s.begin():
            top = s.scalar(select(func.max(Issue.number)).where(Issue.repo == name))
            when = datetime.now(UTC).replace(tzinfo=None)
            issue = Issue(
                repo=name,
                number=(top or 0) + 1,
                title=str(body.get("title")),
                body=body.get("body"),
                author_id=user.id,
                created_at=when,
                updated_at=when,
            )
            s.add(issue)
            s.flush()
            s.refresh(issue)
            return _issue(issue, 0)

    @api.post("/repos/{owner}/{repo}/issues/{number}/comments", status_code=201)
    def create_comment(
        owner: str,
        repo: str,
        number: int,
        body: dict[str, Any],
        authorization: str | None = Header(None),
    ) -> dict[str, Any]:
        user = login(authorization)
        with Session(engine) as s, s.begin():
            issue = find(s, f"{owner}/{repo}", number)
            when = datetime.now(UTC).replace(tzinfo=None)
            comment = Comment(
                issue_id=issue.id,
                author_id=user.id,
                body=str(body.get("body")),
                created_at=when,
                updated_at=when,
            )
            s.add(comment)
            issue.updated_at = when
            s.flush()
            return _comment(comment, issue, issue.author)

    return api
