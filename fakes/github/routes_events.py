"""Issue events and the timeline: a thread's history, as GitHub serves it.

``GET /repos/{o}/{r}/issues/{n}/events`` lists one thread's events oldest first,
``GET /repos/{o}/{r}/issues/events`` every thread's newest first (each with its ``issue``),
``GET /repos/{o}/{r}/issues/events/{id}`` one event with its ``issue`` (docs.github.com
rest/issues/events). ``GET /repos/{o}/{r}/issues/{n}/timeline`` merges the events with the
thread's comments (``commented``) and submitted reviews (``reviewed``), oldest first; it
leaves out what the fake does not model (``committed``, ``cross-referenced``...).

Included before :mod:`fakes.github.routes_issues` (see ``ROUTERS`` in
:mod:`fakes.github.routes`), whose ``/issues/{number}`` would otherwise claim
``/issues/events``.
"""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import Response
from sqlalchemy.orm import Session

from fakes.core.paging import Paged
from fakes.github import render
from fakes.github import schemas as w
from fakes.github.models import Comment, IssueEvent, Review
from fakes.github.routes_common import (
    Auth,
    Id,
    wire,
)


def _timeline_entry(row: IssueEvent | Comment | Review) -> w.Wire:
    if isinstance(row, IssueEvent):
        return render.issue_event(row, timeline=True)
    if isinstance(row, Comment):
        return render.timeline_comment(row)
    return render.timeline_review(row)


router = APIRouter()


@router.get("/repos/{owner}/{repo}/issues/events")
def list_repo_events(owner: str, repo: str, ctx: Auth, paging: Paged) -> Response:
    def go(s: Session) -> tuple[list[w.IssueEvent], dict[str, str]]:
        rows = ctx.backend.issues.repo_events(s, f"{owner}/{repo}")
        chunk, headers = paging.slice(rows)
        return [render.issue_event(e, with_issue=True) for e in chunk], headers

    items, headers = ctx.run(go)
    return wire(items, headers=headers)


@router.get("/repos/{owner}/{repo}/issues/events/{event_id}")
def get_event(owner: str, repo: str, event_id: Id, ctx: Auth) -> Response:
    def go(s: Session) -> w.IssueEvent:
        e = ctx.backend.issues.event(s, f"{owner}/{repo}", event_id)
        return render.issue_event(e, with_issue=True)

    return wire(ctx.run(go))


@router.get("/repos/{owner}/{repo}/issues/{number}/events")
def list_events(
    owner: str,
    repo: str,
    number: Id,
    ctx: Auth,
    paging: Paged,
) -> Response:
    def go(s: Session) -> tuple[list[w.IssueEvent], dict[str, str]]:
        chunk, total = ctx.backend.issues.events_page(
            s, f"{owner}/{repo}", number, paging.offset, paging.per_page
        )
        return [render.issue_event(e) for e in chunk], paging.window(total)

    items, headers = ctx.run(go)
    return wire(items, headers=headers)


@router.get("/repos/{owner}/{repo}/issues/{number}/timeline")
def timeline(
    owner: str,
    repo: str,
    number: Id,
    ctx: Auth,
    paging: Paged,
) -> Response:
    def go(s: Session) -> tuple[list[w.Wire], dict[str, str]]:
        issue = ctx.backend.issues.get(s, f"{owner}/{repo}", number)
        chunk, total = ctx.backend.issues.timeline_page(s, issue, paging.offset, paging.per_page)
        return [_timeline_entry(row) for row in chunk], paging.window(total)

    items, headers = ctx.run(go)
    return wire(items, headers=headers)
