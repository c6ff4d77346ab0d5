"""Pull request endpoints: list, get (also as a diff or patch), create, update, merge, files,
commits, reviews and review comments."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response
from sqlalchemy.orm import Session

from fakes.core.paging import Paged
from fakes.github import render
from fakes.github import schemas as w
from fakes.github.errors import NotFound, ValidationFailed
from fakes.github.models import Review, ReviewComment
from fakes.github.routes_common import (
    Auth,
    Ctx,
    Id,
    open_issue_count,
    users_by_email,
    wire,
)

DIFF_TYPES = ("application/vnd.github.v3.diff", "application/vnd.github.diff")
PATCH_TYPES = ("application/vnd.github.v3.patch", "application/vnd.github.patch")

router = APIRouter()


def full(ctx: Ctx, s: Session, owner: str, repo: str, number: int) -> w.PullRequest:
    issue = ctx.backend.pulls.get(s, f"{owner}/{repo}", number)
    return render.pull(
        ctx.backend, issue, open_issue_count(s, issue.repo), viewer=ctx.login, full=True
    )


@router.get("/repos/{owner}/{repo}/pulls")
def list_pulls(
    owner: str,
    repo: str,
    ctx: Auth,
    paging: Paged,
    state: str = "open",
    head: str | None = None,
    base: str | None = None,
    sort: str = "created",
    direction: str = "desc",
) -> Response:
    if state not in ("open", "closed", "all"):
        raise ValidationFailed("PullRequest", "state", "invalid")

    def go(s: Session) -> tuple[list[w.PullRequest], dict[str, str]]:
        r = ctx.backend.repos.get(s, owner, repo)
        rows = ctx.backend.pulls.find(
            s, r, state=state, head=head, base=base, sort=sort, direction=direction
        )
        chunk, headers = paging.slice(rows)
        count = open_issue_count(s, r)
        return [render.pull(ctx.backend, i, count, viewer=ctx.login) for i in chunk], headers

    items, headers = ctx.run(go)
    return wire(items, headers=headers)


@router.post("/repos/{owner}/{repo}/pulls")
def create_pull(owner: str, repo: str, body: w.PullCreate, ctx: Auth) -> Response:
    def go(s: Session) -> w.PullRequest:
        if body.issue is not None:
            # Turning an issue into a pull request is not supported by the fake.
            raise ValidationFailed("PullRequest", "issue", "invalid")
        issue = ctx.backend.pulls.create(
            s,
            ctx.login,
            f"{owner}/{repo}",
            body.title or "",
            body.body,
            body.head,
            body.base,
            draft=body.draft,
            maintainer_can_modify=body.maintainer_can_modify,
        )
        return render.pull(
            ctx.backend, issue, open_issue_count(s, issue.repo), viewer=ctx.login, full=True
        )

    out = ctx.run(go)
    return wire(out, status=201, headers={"Location": out.url})


@router.get("/repos/{owner}/{repo}/pulls/comments/{comment_id}")
def get_review_comment(owner: str, repo: str, comment_id: Id, ctx: Auth) -> Response:
    def go(s: Session) -> w.Wire:
        r = ctx.backend.repos.get(s, owner, repo)
        row = s.get(ReviewComment, comment_id)
        if row is None or row.pull.issue.repo_id != r.id:
            raise NotFound()
        if not ctx.backend.pulls.review_comment_visible(row, ctx.login):
            raise NotFound()
        return render.review_comment(row)

    return wire(ctx.run(go))


@router.get("/repos/{owner}/{repo}/pulls/{number}")
def get_pull(request: Request, owner: str, repo: str, number: Id, ctx: Auth) -> Response:
    accept = request.headers.get("accept", "")
    if any(t in accept for t in DIFF_TYPES + PATCH_TYPES):
        patch = any(t in accept for t in PATCH_TYPES)
        text = ctx.run(lambda s: ctx.backend.pulls.diff(s, f"{owner}/{repo}", number, patch))
        kind = "patch" if patch else "diff"
        return Response(text, media_type=f"application/vnd.github.v3.{kind}; charset=utf-8")
    return wire(ctx.run(lambda s: full(ctx, s, owner, repo, number)))


@router.patch("/repos/{owner}/{repo}/pulls/{number}")
def update_pull(owner: str, repo: str, number: Id, body: w.PullUpdate, ctx: Auth) -> Response:
    changes: dict[str, Any] = {k: getattr(body, k) for k in body.model_fields_set}

    def go(s: Session) -> w.PullRequest:
        ctx.backend.pulls.update(s, ctx.login, f"{owner}/{repo}", number, **changes)
        return full(ctx, s, owner, repo, number)

    return wire(ctx.run(go))


@router.get("/repos/{owner}/{repo}/pulls/{number}/merge")
def is_merged(owner: str, repo: str, number: Id, ctx: Auth) -> Response:
    def go(s: Session) -> bool:
        pull = ctx.backend.pulls.get(s, f"{owner}/{repo}", number).pull
        return pull is not None and pull.merged_at is not None

    if not ctx.run(go):
        raise NotFound()
    return Response(status_code=204)


@router.put("/repos/{owner}/{repo}/pulls/{number}/merge")
def merge_pull(
    owner: str, repo: str, number: Id, ctx: Auth, body: w.MergeBody | None = None
) -> Response:
    args = body or w.MergeBody()

    def go(s: Session) -> w.MergeResult:
        issue = ctx.backend.pulls.merge(
            s,
            ctx.login,
            f"{owner}/{repo}",
            number,
            method=args.merge_method,
            commit_title=args.commit_title,
            commit_message=args.commit_message,
            sha=args.sha,
        )
        assert issue.pull is not None and issue.pull.merge_commit_sha is not None
        return w.MergeResult(
            sha=issue.pull.merge_commit_sha,
            merged=True,
            message="Pull Request successfully merged",
        )

    return wire(ctx.run(go))


@router.get("/repos/{owner}/{repo}/pulls/{number}/files")
def files(
    owner: str,
    repo: str,
    number: Id,
    ctx: Auth,
    paging: Paged,
) -> Response:
    def go(s: Session) -> list[w.DiffEntry]:
        issue = ctx.backend.pulls.get(s, f"{owner}/{repo}", number)
        assert issue.pull is not None
        head = issue.pull.head_sha
        return [
            render.diff_entry(issue.repo, head, f)
            for f in ctx.backend.pulls.files(s, issue.repo, number)
        ]

    items, headers = paging.slice(ctx.run(go))
    return wire(items, headers=headers)


@router.get("/repos/{owner}/{repo}/pulls/{number}/commits")
def commits(
    owner: str,
    repo: str,
    number: Id,
    ctx: Auth,
    paging: Paged,
) -> Response:
    def go(s: Session) -> list[w.Commit]:
        issue = ctx.backend.pulls.get(s, f"{owner}/{repo}", number)
        users = users_by_email(s)
        name = issue.repo.full_name
        return [
            render.commit(issue.repo, ctx.backend.git.commit(name, c), users)
            for c in ctx.backend.pulls.commits(s, issue.repo, number)
        ]

    items, headers = paging.slice(ctx.run(go))
    return wire(items, headers=headers)


@router.get("/repos/{owner}/{repo}/pulls/{number}/reviews")
def list_reviews(
    owner: str,
    repo: str,
    number: Id,
    ctx: Auth,
    paging: Paged,
) -> Response:
    def go(s: Session) -> tuple[list[w.Review], dict[str, str]]:
        issue = ctx.backend.pulls.get(s, f"{owner}/{repo}", number)
        assert issue.pull is not None
        rows, total = ctx.backend.pulls.reviews_page(
            s, issue.pull, ctx.login, paging.offset, paging.per_page
        )
        return [render.review(rv) for rv in rows], paging.window(total)

    items, headers = ctx.run(go)
    return wire(items, headers=headers)


@router.get("/repos/{owner}/{repo}/pulls/{number}/reviews/{review_id}")
def get_review(owner: str, repo: str, number: Id, review_id: Id, ctx: Auth) -> Response:
    def go(s: Session) -> w.Review:
        issue = ctx.backend.pulls.get(s, f"{owner}/{repo}", number)
        assert issue.pull is not None
        query = ctx.backend.pulls.reviews_query(issue.pull, ctx.login)
        rv = s.scalar(query.where(Review.id == review_id))
        if rv is None:
            raise NotFound()
        return render.review(rv)

    return wire(ctx.run(go))


@router.post("/repos/{owner}/{repo}/pulls/{number}/reviews")
def create_review(owner: str, repo: str, number: Id, body: w.ReviewCreate, ctx: Auth) -> Response:
    def go(s: Session) -> w.Review:
        review = ctx.backend.pulls.submit_review(
            s, ctx.login, f"{owner}/{repo}", number, body.event, body.body, body.commit_id
        )
        for c in body.comments:
            row = ctx.backend.pulls.add_review_comment(
                s,
                ctx.login,
                f"{owner}/{repo}",
                number,
                str(c.get("body", "")),
                path=c.get("path"),
                line=c.get("line") or c.get("position"),
                side=c.get("side") or "RIGHT",
                commit_id=review.commit_id,
            )
            row.review_id = review.id
        return render.review(review)

    return wire(ctx.run(go))


@router.get("/repos/{owner}/{repo}/pulls/{number}/comments")
def list_review_comments(
    owner: str,
    repo: str,
    number: Id,
    ctx: Auth,
    paging: Paged,
) -> Response:
    def go(s: Session) -> tuple[list[w.ReviewComment], dict[str, str]]:
        issue = ctx.backend.pulls.get(s, f"{owner}/{repo}", number)
        assert issue.pull is not None
        rows, total = ctx.backend.pulls.review_comments_page(
            s, issue.pull, ctx.login, paging.offset, paging.per_page
        )
        return [render.review_comment(c) for c in rows], paging.window(total)

    items, headers = ctx.run(go)
    return wire(items, headers=headers)


@router.post("/repos/{owner}/{repo}/pulls/{number}/comments/{comment_id}/replies")
def reply_to_review_comment(
    owner: str,
    repo: str,
    number: Id,
    comment_id: Id,
    body: w.CommentCreate,
    ctx: Auth,
) -> Response:
    def go(s: Session) -> w.ReviewComment:
        row = ctx.backend.pulls.add_review_comment(
            s, ctx.login, f"{owner}/{repo}", number, body.body, in_reply_to=comment_id
        )
        return render.review_comment(row)

    out = ctx.run(go)
    return wire(out, status=201, headers={"Location": out.url})


@router.post("/repos/{owner}/{repo}/pulls/{number}/comments")
def create_review_comment(
    owner: str, repo: str, number: Id, body: w.ReviewCommentCreate, ctx: Auth
) -> Response:
    def go(s: Session) -> w.ReviewComment:
        row = ctx.backend.pulls.add_review_comment(
            s,
            ctx.login,
            f"{owner}/{repo}",
            number,
            body.body,
            path=body.path,
            line=body.line if body.line is not None else body.position,
            side=body.side or "RIGHT",
            commit_id=body.commit_id,
            in_reply_to=body.in_reply_to,
        )
        return render.review_comment(row)

    out = ctx.run(go)
    return wire(out, status=201, headers={"Location": out.url})
