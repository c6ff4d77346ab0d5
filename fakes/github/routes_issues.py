"""Issue endpoints (which answer for pull requests too, as GitHub's do), comments, labels on
issues, and issue search."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from fastapi import APIRouter
from fastapi.responses import Response
from sqlalchemy.orm import Session

from fakes.core.paging import Paged
from fakes.github import render
from fakes.github import schemas as w
from fakes.github.errors import ValidationFailed
from fakes.github.routes_common import (
    Auth,
    Id,
    open_issue_count,
    wire,
)


def label_names(labels: list[str | dict[str, Any]]) -> list[str]:
    """GitHub takes labels as names or as ``{"name": ...}`` objects."""
    out = []
    for item in labels:
        name = item.get("name") if isinstance(item, dict) else item
        if not isinstance(name, str):
            raise ValidationFailed("Label", "name", "invalid")
        out.append(name)
    return out


def parse_since(value: str | None) -> datetime | None:
    if value is None:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError as exc:
        raise ValidationFailed("Issue", "since", "invalid") from exc


router = APIRouter()


@router.get("/repos/{owner}/{repo}/issues")
def list_issues(
    owner: str,
    repo: str,
    ctx: Auth,
    paging: Paged,
    state: str = "open",
    labels: str | None = None,
    assignee: str | None = None,
    creator: str | None = None,
    since: str | None = None,
    sort: str = "created",
    direction: str = "desc",
) -> Response:
    if state not in ("open", "closed", "all"):
        raise ValidationFailed("Issue", "state", "invalid")

    def go(s: Session) -> tuple[list[w.Issue], dict[str, str]]:
        rows = ctx.backend.issues.find(
            s,
            f"{owner}/{repo}",
            state=state,
            labels=[x.strip() for x in (labels or "").split(",") if x.strip()],
            assignee=assignee,
            creator=creator,
            since=parse_since(since),
            sort=sort,
            direction=direction,
        )
        chunk, headers = paging.slice(rows)
        return [render.issue(i, listed=True) for i in chunk], headers

    items, headers = ctx.run(go)
    return wire(items, headers=headers)


@router.post("/repos/{owner}/{repo}/issues")
def create_issue(owner: str, repo: str, body: w.IssueCreate, ctx: Auth) -> Response:
    assignees = list(body.assignees)
    if body.assignee and body.assignee not in assignees:
        assignees.insert(0, body.assignee)

    def go(s: Session) -> w.Wire:
        issue = ctx.backend.issues.create(
            s,
            ctx.login,
            f"{owner}/{repo}",
            str(body.title),
            body.body,
            labels=label_names(body.labels),
            assignees=assignees,
        )
        return render.issue(issue)

    out = ctx.run(go)
    assert isinstance(out, w.Issue)
    return wire(out, status=201, headers={"Location": out.url})


@router.get("/repos/{owner}/{repo}/issues/comments/{comment_id}")
def get_comment(owner: str, repo: str, comment_id: Id, ctx: Auth) -> Response:
    return wire(
        ctx.run(
            lambda s: render.comment(ctx.backend.issues.comment(s, f"{owner}/{repo}", comment_id))
        )
    )


@router.patch("/repos/{owner}/{repo}/issues/comments/{comment_id}")
def edit_comment(
    owner: str, repo: str, comment_id: Id, body: w.CommentCreate, ctx: Auth
) -> Response:
    def go(s: Session) -> w.IssueComment:
        c = ctx.backend.issues.edit_comment(s, ctx.login, f"{owner}/{repo}", comment_id, body.body)
        return render.comment(c)

    return wire(ctx.run(go))


@router.delete("/repos/{owner}/{repo}/issues/comments/{comment_id}")
def delete_comment(owner: str, repo: str, comment_id: Id, ctx: Auth) -> Response:
    ctx.run(
        lambda s: ctx.backend.issues.delete_comment(s, ctx.login, f"{owner}/{repo}", comment_id)
    )
    return Response(status_code=204)


@router.get("/repos/{owner}/{repo}/issues/{number}")
def get_issue(owner: str, repo: str, number: Id, ctx: Auth) -> Response:
    return wire(
        ctx.run(lambda s: render.issue(ctx.backend.issues.get(s, f"{owner}/{repo}", number)))
    )


@router.patch("/repos/{owner}/{repo}/issues/{number}")
def update_issue(owner: str, repo: str, number: Id, body: w.IssueUpdate, ctx: Auth) -> Response:
    changes: dict[str, Any] = {}
    sent = body.model_fields_set
    for key in ("title", "body", "state", "state_reason"):
        if key in sent:
            value = getattr(body, key)
            changes[key] = str(value) if key == "title" and value is not None else value
    if "labels" in sent and body.labels is not None:
        changes["labels"] = label_names(body.labels)
    if "assignees" in sent and body.assignees is not None:
        changes["assignees"] = body.assignees
    elif "assignee" in sent:
        changes["assignees"] = [body.assignee] if body.assignee else []

    def go(s: Session) -> w.Wire:
        return render.issue(
            ctx.backend.issues.update(s, ctx.login, f"{owner}/{repo}", number, **changes)
        )

    return wire(ctx.run(go))


@router.get("/repos/{owner}/{repo}/issues/{number}/comments")
def list_comments(
    owner: str,
    repo: str,
    number: Id,
    ctx: Auth,
    paging: Paged,
    since: str | None = None,
) -> Response:
    when = parse_since(since)

    def go(s: Session) -> tuple[list[w.IssueComment], dict[str, str]]:
        issue = ctx.backend.issues.get(s, f"{owner}/{repo}", number)
        rows, total = ctx.backend.issues.comments_page(
            s, issue, when, paging.offset, paging.per_page
        )
        return [render.comment(c) for c in rows], paging.window(total)

    items, headers = ctx.run(go)
    return wire(items, headers=headers)


@router.post("/repos/{owner}/{repo}/issues/{number}/comments")
def create_comment(owner: str, repo: str, number: Id, body: w.CommentCreate, ctx: Auth) -> Response:
    def go(s: Session) -> w.IssueComment:
        c = ctx.backend.issues.add_comment(s, ctx.login, f"{owner}/{repo}", number, body.body)
        return render.comment(c)

    out = ctx.run(go)
    return wire(out, status=201, headers={"Location": out.url})


@router.put("/repos/{owner}/{repo}/issues/{number}/lock")
def lock_issue(
    owner: str, repo: str, number: Id, ctx: Auth, body: w.LockBody | None = None
) -> Response:
    reason = body.lock_reason if body is not None else None
    ctx.run(
        lambda s: ctx.backend.issues.set_locked(
            s, ctx.login, f"{owner}/{repo}", number, True, reason
        )
    )
    return Response(status_code=204)


@router.delete("/repos/{owner}/{repo}/issues/{number}/lock")
def unlock_issue(owner: str, repo: str, number: Id, ctx: Auth) -> Response:
    ctx.run(lambda s: ctx.backend.issues.set_locked(s, ctx.login, f"{owner}/{repo}", number, False))
    return Response(status_code=204)


@router.get("/repos/{owner}/{repo}/issues/{number}/labels")
def issue_labels(owner: str, repo: str, number: Id, ctx: Auth, paging: Paged) -> Response:
    rows = ctx.run(
        lambda s: [
            render.label(lb) for lb in ctx.backend.issues.get(s, f"{owner}/{repo}", number).labels
        ]
    )
    chunk, headers = paging.slice(rows)
    return wire(chunk, headers=headers)


@router.post("/repos/{owner}/{repo}/issues/{number}/labels")
def add_labels(owner: str, repo: str, number: Id, body: w.LabelsBody, ctx: Auth) -> Response:
    def go(s: Session) -> list[w.Label]:
        issue = ctx.backend.issues.add_labels(
            s, ctx.login, f"{owner}/{repo}", number, label_names(body.labels)
        )
        return [render.label(lb) for lb in issue.labels]

    return wire(ctx.run(go))


@router.put("/repos/{owner}/{repo}/issues/{number}/labels")
def set_labels(owner: str, repo: str, number: Id, body: w.LabelsBody, ctx: Auth) -> Response:
    def go(s: Session) -> list[w.Label]:
        issue = ctx.backend.issues.update(
            s, ctx.login, f"{owner}/{repo}", number, labels=label_names(body.labels)
        )
        return [render.label(lb) for lb in issue.labels]

    return wire(ctx.run(go))


@router.delete("/repos/{owner}/{repo}/issues/{number}/labels/{name}")
def remove_label(owner: str, repo: str, number: Id, name: str, ctx: Auth) -> Response:
    def go(s: Session) -> list[w.Label]:
        issue = ctx.backend.issues.remove_label(s, ctx.login, f"{owner}/{repo}", number, name)
        return [render.label(lb) for lb in issue.labels]

    return wire(ctx.run(go))


@router.get("/search/issues")
def search_issues(
    ctx: Auth,
    paging: Paged,
    q: str | None = None,
) -> Response:
    if not q:
        raise ValidationFailed("Search", "q", "missing")

    def go(s: Session) -> tuple[w.SearchIssues, dict[str, str]]:
        found = ctx.backend.issues.search(s, q)
        page, headers = paging.slice(found)  # one COUNT and one LIMIT query
        items = [render.search_issue(i) for i in page]
        return w.SearchIssues(total_count=len(found), items=items), headers

    out, headers = ctx.run(go)
    return wire(out, headers=headers)


@router.get("/search/code")
def search_code(ctx: Auth, paging: Paged, q: str | None = None) -> Response:
    if not q:
        raise ValidationFailed("Search", "q", "missing")

    def go(s: Session) -> tuple[list[w.CodeSearchItem], int, dict[str, str]]:
        found = ctx.backend.repos.search_code(s, q)
        chunk, headers = paging.slice(found)
        items = []
        for r, entry in chunk:
            api = f"{render.API}/repos/{r.full_name}"
            items.append(
                w.CodeSearchItem(
                    name=entry.path.rsplit("/", 1)[-1],
                    path=entry.path,
                    sha=entry.sha,
                    url=f"{api}/contents/{entry.path}?ref={r.default_branch}",
                    git_url=f"{api}/git/blobs/{entry.sha}",
                    html_url=f"{render.WEB}/{r.full_name}/blob/{r.default_branch}/{entry.path}",
                    repository=render.repository(r, open_issue_count(s, r), minimal=True),
                    file_size=entry.size,
                )
            )
        return items, len(found), headers

    items, total, headers = ctx.run(go)
    return wire(w.SearchCode(total_count=total, items=items), headers=headers)
