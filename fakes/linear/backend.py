"""The Linear backend: seeded from the snapshot, one method per operation.

Every mutation records its event in the caller's session, so an event lands with its write.
Reads and writes take the session of the request (``with world.session() as s``): one
GraphQL request is one transaction.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, String, case, cast, exists, func, or_, select
from sqlalchemy.orm import DeclarativeBase, Session

from fakes.core.relay import Rows
from fakes.core.sqltext import every_word, lower, register_lower
from fakes.core.world import World
from fakes.linear.errors import AuthenticationError, EntityNotFound, InvalidInput
from fakes.linear.filters import Filter, Matcher
from fakes.linear.models import (
    Comment,
    Issue,
    IssueHistory,
    Label,
    LinearBase,
    Organization,
    Team,
    User,
    WorkflowState,
    aware,
)
from fakes.linear.sql_filters import SqlFilter

SERVICE = "linear"
IDS = uuid.UUID("4c1ea5e0-0000-4000-8000-000000000000")
"""Namespace of the ids minted during a run (uuid5 of a counter: same run, same ids)."""
IDENTIFIER = re.compile(r"^([A-Za-z][A-Za-z0-9]*)-(\d+)$")
STAMP_ON_ENTRY = {"started": "started_at", "completed": "completed_at", "canceled": "canceled_at"}


def slug(text: str, limit: int = 60) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:limit].strip("-")


@dataclass(frozen=True)
class _Sides:
    """What an ``IssueHistory`` node records of an issue, taken before and after a change."""

    state_id: str
    assignee_id: str | None
    title: str
    priority: int
    estimate: float | None
    parent_id: str | None
    description: str | None
    labels: tuple[str, ...]

    @classmethod
    def of(cls, issue: Issue) -> _Sides:
        return cls(
            state_id=issue.state_id,
            assignee_id=issue.assignee_id,
            title=issue.title,
            priority=issue.priority,
            estimate=issue.estimate,
            parent_id=issue.parent_id,
            description=issue.description,
            labels=tuple(lb.id for lb in issue.labels),
        )


def _dump_history(h: IssueHistory) -> dict[str, Any]:
    """One history node in the snapshot's form (``LinearHistoryEntry``)."""
    return {
        "id": h.id,
        "actor": h.actor_id,
        "created_at": aware(h.created_at).isoformat(),
        "from_state": h.from_state_id,
        "to_state": h.to_state_id,
        "from_assignee": h.from_assignee_id,
        "to_assignee": h.to_assignee_id,
        "from_title": h.from_title,
        "to_title": h.to_title,
        "from_priority": h.from_priority,
        "to_priority": h.to_priority,
        "from_estimate": h.from_estimate,
        "to_estimate": h.to_estimate,
        "from_parent": h.from_parent_id,
        "to_parent": h.to_parent_id,
        "added_labels": list(h.added_labels),
        "removed_labels": list(h.removed_labels),
        "updated_description": bool(h.updated_description),
    }


class LinearBackend:
    """Linear as of T for one world."""

    service = SERVICE
    base: type[DeclarativeBase] = LinearBase

    def __init__(self, world: World, api_keys: Iterable[str] | None = None) -> None:
        self.world = world
        self.state = world.snapshot.linear
        self.api_keys = frozenset(api_keys) if api_keys is not None else None
        """Keys accepted; None accepts any well-formed ``lin_api_``/``lin_oauth_`` key."""
        self.heard: Callable[[Session, Issue, Comment], None] | None = None
        """Called after each comment the agent creates (``install`` gives the scripted people's)."""

    # ------------------------------------------------------------------ seed and dump

    def seed(self, session: Session) -> None:
        st = self.state
        teams = {t.key: t.id for t in st.teams}
        epoch = min([t.created_at for t in st.teams], default=self.world.snapshot.at)
        session.add(
            Organization(
                id=st.organization.id,
                name=st.organization.name,
                url_key=st.organization.url_key,
                created_at=epoch,
                last_sync_id=0,
                minted=0,
            )
        )
        for t in st.teams:
            session.add(Team(id=t.id, key=t.key, name=t.name, created_at=t.created_at))
        for u in st.users:
            session.add(
                User(
                    id=u.id,
                    name=u.name,
                    display_name=u.display_name,
                    email=u.email,
                    active=u.active,
                    admin=u.admin,
                    created_at=u.created_at,
                )
            )
        team_created = {t.key: t.created_at for t in st.teams}
        for s in st.workflow_states:
            session.add(
                WorkflowState(
                    id=s.id,
                    team_id=teams[s.team],
                    name=s.name,
                    type=s.type,
                    position=s.position,
                    color=s.color,
                    created_at=team_created[s.team],
                )
            )
        for lb in st.labels:
            session.add(
                Label(
                    id=lb.id,
                    name=lb.name,
                    color=lb.color,
                    team_id=teams[lb.team] if lb.team else None,
                    created_at=team_created[lb.team] if lb.team else epoch,
                )
            )
        session.flush()
        labels = {lb.id: lb for lb in session.scalars(select(Label))}
        for i in st.issues:
            session.add(
                Issue(
                    id=i.id,
                    team_id=teams[i.team],
                    number=i.number,
                    title=i.title,
                    description=i.description,
                    state_id=i.state,
                    priority=i.priority,
                    estimate=i.estimate,
                    assignee_id=i.assignee,
                    creator_id=i.creator,
                    sort_order=float(i.number),
                    created_at=i.created_at,
                    updated_at=i.updated_at,
                    started_at=i.started_at,
                    completed_at=i.completed_at,
                    canceled_at=i.canceled_at,
                    labels=[labels[x] for x in i.labels],
                )
            )
        session.flush()
        for i in st.issues:
            if i.parent is not None:
                session.get_one(Issue, i.id).parent_id = i.parent
            for n, h in enumerate(i.history):
                session.add(
                    IssueHistory(
                        id=h.id,
                        issue_id=i.id,
                        position=n,
                        actor_id=h.actor,
                        created_at=h.created_at,
                        from_state_id=h.from_state,
                        to_state_id=h.to_state,
                        from_assignee_id=h.from_assignee,
                        to_assignee_id=h.to_assignee,
                        from_title=h.from_title,
                        to_title=h.to_title,
                        from_priority=h.from_priority,
                        to_priority=h.to_priority,
                        from_estimate=h.from_estimate,
                        to_estimate=h.to_estimate,
                        from_parent_id=h.from_parent,
                        to_parent_id=h.to_parent,
                        added_labels=list(h.added_labels),
                        removed_labels=list(h.removed_labels),
                        updated_description=True if h.updated_description else None,
                    )
                )
            # Parents before replies: a reply is never older than what it answers.
            for c in sorted(i.comments, key=lambda c: (c.parent is not None, c.created_at)):
                session.add(
                    Comment(
                        id=c.id,
                        issue_id=i.id,
                        user_id=c.user,
                        body=c.body,
                        parent_id=c.parent,
                        created_at=c.created_at,
                        updated_at=c.updated_at,
                    )
                )
                session.flush()

    def dump(self, session: Session) -> dict[str, Any]:
        return {
            "issues": [
                {
                    "id": i.id,
                    "identifier": i.identifier,
                    "title": i.title,
                    "description": i.description,
                    "state": i.state.name,
                    "priority": i.priority,
                    "estimate": i.estimate,
                    "assignee": i.assignee_id,
                    "labels": [lb.name for lb in i.labels],
                    "parent": i.parent.identifier if i.parent else None,
                    "comments": [
                        {"id": c.id, "user": c.user_id, "body": c.body, "parent": c.parent_id}
                        for c in i.comments
                    ],
                    "updated_at": aware(i.updated_at).isoformat(),
                    "history": [_dump_history(h) for h in i.history],
                }
                for i in session.scalars(select(Issue).order_by(Issue.team_id, Issue.number))
            ]
        }

    # ------------------------------------------------------------------ auth

    def authenticate(self, authorization: str | None) -> str:
        """The user id behind an ``Authorization`` header, as Linear checks it: a personal
        key bare (``lin_api_...``), an OAuth token after ``Bearer``; anything else fails."""
        value = (authorization or "").strip()
        scheme, _, rest = value.partition(" ")
        if scheme.lower() == "bearer":
            key, wanted = rest.strip(), "lin_oauth_"
        else:
            key, wanted = value, "lin_api_"
        if not key.startswith(wanted) or len(key) <= len(wanted) or " " in key:
            raise AuthenticationError()
        if self.api_keys is not None and key not in self.api_keys:
            raise AuthenticationError()
        return self.state.viewer

    # ------------------------------------------------------------------ lookups

    def organization(self, s: Session) -> Organization:
        return s.scalars(select(Organization)).one()

    def issue(self, s: Session, ref: str) -> Issue:
        """By UUID or by identifier (``ENG-123``)."""
        found = s.get(Issue, ref)
        m = IDENTIFIER.match(ref)
        if found is None and m:
            found = s.scalars(
                select(Issue)
                .join(Team)
                .where(func.upper(Team.key) == m.group(1).upper(), Issue.number == int(m[2]))
            ).one_or_none()
        if found is None:
            raise EntityNotFound("Issue")
        return found

    def _get(self, s: Session, model: type[Any], key: str, entity: str) -> Any:
        found = s.get(model, key)
        if found is None:
            raise EntityNotFound(entity)
        return found

    def team(self, s: Session, ref: str) -> Team:
        team: Team = self._get(s, Team, ref, "Team")
        return team

    def user(self, s: Session, ref: str) -> User:
        user: User = self._get(s, User, ref, "User")
        return user

    def workflow_state(self, s: Session, ref: str) -> WorkflowState:
        state: WorkflowState = self._get(s, WorkflowState, ref, "WorkflowState")
        return state

    def label(self, s: Session, ref: str) -> Label:
        label: Label = self._get(s, Label, ref, "IssueLabel")
        return label

    def comment(self, s: Session, ref: str) -> Comment:
        comment: Comment = self._get(s, Comment, ref, "Comment")
        return comment

    # ------------------------------------------------------------------ lists

    def matcher(self, viewer: str) -> Matcher:
        return Matcher(viewer, self.world.clock.now())

    def issues(
        self,
        s: Session,
        viewer: str,
        filter: Filter | None = None,
        include_archived: bool = False,
        order_by: str = "createdAt",
        sort: Sequence[dict[str, Any]] = (),
    ) -> Rows[Issue]:
        """Issues matching ``filter`` newest first (by ``createdAt`` or ``updatedAt``; the id
        breaks ties so pages are stable), as Linear lists them, or in the order ``sort``
        gives (``IssueSortInput``s, the first the primary key, that order's ties newest
        first); kept in SQL (counted, ordered, paged and placed by cursor there), so a team's
        or a user's issues cost a page however many there are."""
        query = select(Issue)
        if not include_archived:
            query = query.where(Issue.archived_at.is_(None))
        if filter is not None:
            register_lower(s)
            query = query.where(SqlFilter(viewer, self.world.clock.now()).issue(filter))
        return Rows(s, query, self._issue_order(sort, order_by), lambda i: i)

    @staticmethod
    def _issue_order(sort: Sequence[dict[str, Any]], order_by: str) -> list[Any]:
        """``ORDER BY`` for ``sort`` then ``order_by``, newest first, and the id.

        ``createdAt``/``updatedAt`` sort by time (``Ascending`` oldest first); ``priority``
        ranks Urgent (1) to Low (4) when ascending (the default), "no priority" (0) after Low
        unless ``noPriorityFirst``; ``Descending`` reverses either."""
        keys: list[Any] = []
        for item in sort:
            for field, column in (("createdAt", Issue.created_at), ("updatedAt", Issue.updated_at)):
                if item.get(field) is not None:
                    asc = item[field].get("order") == "Ascending"
                    keys.append(column.asc() if asc else column.desc())
            if item.get("priority") is not None:
                spec = item["priority"]
                none = 0 if spec.get("noPriorityFirst") else 5
                rank = case((func.coalesce(Issue.priority, 0) == 0, none), else_=Issue.priority)
                keys.append(rank.desc() if spec.get("order") == "Descending" else rank.asc())
        key = Issue.updated_at if order_by == "updatedAt" else Issue.created_at
        return [*keys, key.desc(), Issue.id.desc()]

    def search_issues(
        self,
        s: Session,
        viewer: str,
        term: str,
        filter: Filter | None = None,
        include_comments: bool = False,
        include_archived: bool = False,
    ) -> Rows[Issue]:
        """Every word of ``term`` in the title or description (or a comment), case folded as
        Python's ``str.lower`` folds, or the term is the identifier. Linear ranks by
        relevance; here the newest come first. Matched, counted and paged in SQL.

        The words are matched by :func:`fakes.core.sqltext.every_word`: one condition however
        long the term."""
        rows = self.issues(s, viewer, filter, include_archived)
        register_lower(s)
        text = lower(Issue.title + " " + func.coalesce(Issue.description, ""))

        def found(word: ColumnElement[Any]) -> ColumnElement[bool]:
            here = func.instr(text, word) > 0
            if not include_comments:
                return here
            in_comment = (
                exists()
                .where(Comment.issue_id == Issue.id, func.instr(lower(Comment.body), word) > 0)
                .correlate_except(Comment)  # the issue and the word are the outer ones
            )
            return or_(here, in_comment)

        matched = every_word(term.lower().split(), found)
        identifier = Team.key + "-" + cast(Issue.number, String)
        named = exists().where(Team.id == Issue.team_id, identifier == term.strip().upper())
        matched = or_(named, matched)
        return Rows(s, rows.query.where(matched), rows.order_by, lambda i: i)

    def teams(self, s: Session, viewer: str, filter: Filter | None = None) -> list[Team]:
        m = self.matcher(viewer)
        rows = s.scalars(select(Team).order_by(Team.created_at, Team.key))
        return [t for t in rows if filter is None or m.team(t, filter)]

    def workflow_states(
        self, s: Session, viewer: str, filter: Filter | None = None
    ) -> list[WorkflowState]:
        m = self.matcher(viewer)
        rows = s.scalars(
            select(WorkflowState).order_by(WorkflowState.team_id, WorkflowState.position)
        )
        return [w for w in rows if filter is None or m.state(w, filter)]

    def users(self, s: Session, viewer: str, filter: Filter | None = None) -> list[User]:
        m = self.matcher(viewer)
        rows = s.scalars(select(User).order_by(User.created_at, User.id))
        return [u for u in rows if filter is None or m.user(u, filter)]

    def labels(self, s: Session, viewer: str, filter: Filter | None = None) -> list[Label]:
        m = self.matcher(viewer)
        rows = s.scalars(select(Label).order_by(Label.name))
        return [lb for lb in rows if filter is None or m.label(lb, filter)]

    def comments(
        self,
        s: Session,
        viewer: str,
        filter: Filter | None = None,
        order_by: str = "createdAt",
    ) -> Rows[Comment]:
        """Comments matching ``filter`` newest first (ties by id), kept in SQL as
        :meth:`issues` are."""
        query = select(Comment)
        if filter is not None:
            register_lower(s)
            query = query.where(SqlFilter(viewer, self.world.clock.now()).comment(filter))
        key = Comment.updated_at if order_by == "updatedAt" else Comment.created_at
        return Rows(s, query, [key.desc(), Comment.id.desc()], lambda c: c)

    # ------------------------------------------------------------------ mutations

    def _mint(self, s: Session) -> str:
        org = self.organization(s)
        org.minted += 1
        return str(uuid.uuid5(IDS, f"{org.id}/{org.minted}"))

    def _fresh_id(self, s: Session, model: type[Any], wanted: str | None) -> str:
        """A client may choose the id of what it creates (a UUID not yet in use)."""
        if wanted is None:
            return self._mint(s)
        try:
            uuid.UUID(wanted)
        except ValueError:
            raise InvalidInput("id must be a UUID.") from None
        if s.get(model, wanted) is not None:
            raise InvalidInput("An entity with this id already exists.")
        return wanted

    def sync(self, s: Session) -> int:
        """Bump and return ``lastSyncId``."""
        org = self.organization(s)
        org.last_sync_id += 1
        return org.last_sync_id

    def _record(
        self,
        s: Session,
        actor: str | None,
        kind: str,
        obj: str,
        data: dict[str, Any],
        object_type: str = "issue",
    ) -> None:
        self.world.events.record(
            s,
            service=SERVICE,
            kind=kind,
            actor=actor,
            object_type=object_type,
            object_id=obj,
            data=data,
        )

    def _labels(self, s: Session, issue_team: str, ids: list[str]) -> list[Label]:
        out = []
        for lid in ids:
            lb = self.label(s, lid)
            if lb.team_id not in (None, issue_team):
                raise InvalidInput("Labels must belong to the issue's team or the workspace.")
            out.append(lb)
        return sorted(out, key=lambda lb: lb.name)

    def _state_for(self, s: Session, team: Team, state_id: str) -> WorkflowState:
        state = self.workflow_state(s, state_id)
        if state.team_id != team.id:
            raise InvalidInput("The workflow state does not belong to the issue's team.")
        return state

    @staticmethod
    def _enter(issue: Issue, state: WorkflowState, now: datetime) -> None:
        """Moving into a started/completed/canceled state stamps it; leaving clears."""
        issue.state_id, issue.state = state.id, state
        if state.type in ("started", "completed", "canceled") and issue.started_at is None:
            issue.started_at = now
        issue.completed_at = now if state.type == "completed" else None
        issue.canceled_at = now if state.type == "canceled" else None
        if state.type in ("triage", "backlog", "unstarted"):
            issue.started_at = None

    def create_issue(self, s: Session, actor: str, data: dict[str, Any]) -> Issue:
        team = self.team(s, data["teamId"])
        now = self.world.clock.now()
        if data.get("stateId"):
            state = self._state_for(s, team, data["stateId"])
        else:
            order = {"backlog": 0, "unstarted": 1, "triage": 2}
            candidates = [w for w in team.states if w.type in order]
            if not candidates:
                raise InvalidInput("The team has no workflow state for new issues.")
            state = min(candidates, key=lambda w: (order[w.type], w.position))
        assignee = self.user(s, data["assigneeId"]) if data.get("assigneeId") else None
        parent = self.issue(s, data["parentId"]) if data.get("parentId") else None
        priority = data.get("priority") or 0
        if not 0 <= priority <= 4:
            raise InvalidInput("Priority must be between 0 and 4.")
        labels = self._labels(s, team.id, data.get("labelIds") or [])
        top = s.scalar(select(func.max(Issue.number)).where(Issue.team_id == team.id)) or 0
        issue = Issue(
            id=self._fresh_id(s, Issue, data.get("id")),
            team_id=team.id,
            team=team,
            number=top + 1,
            title=data.get("title") or "",
            description=data.get("description"),
            priority=priority,
            estimate=data.get("estimate"),
            assignee_id=assignee.id if assignee else None,
            creator_id=actor,
            parent_id=parent.id if parent else None,
            sort_order=float(top + 1),
            created_at=now,
            updated_at=now,
            labels=labels,
        )
        self._enter(issue, state, now)
        s.add(issue)
        s.flush()
        self._record(
            s,
            actor,
            "linear.issue.created",
            issue.identifier,
            {
                "identifier": issue.identifier,
                "title": issue.title,
                "team": team.key,
                "state": state.name,
            },
        )
        return issue

    def update_issue(self, s: Session, actor: str, ref: str, data: dict[str, Any]) -> Issue:
        issue = self.issue(s, ref)
        now = self.world.clock.now()
        # Resolve and check everything first, so a refused input changes nothing.
        state = self._state_for(s, issue.team, data["stateId"]) if data.get("stateId") else None
        assignee = issue.assignee_id
        if "assigneeId" in data:
            assignee = self.user(s, data["assigneeId"]).id if data["assigneeId"] else None
        parent = issue.parent
        if "parentId" in data:
            parent = self.issue(s, data["parentId"]) if data["parentId"] else None
        if data.get("priority") is not None and not 0 <= data["priority"] <= 4:
            raise InvalidInput("Priority must be between 0 and 4.")
        labels = list(issue.labels)
        if data.get("labelIds") is not None:
            labels = self._labels(s, issue.team_id, data["labelIds"])
        for lid in data.get("addedLabelIds") or []:
            if lid not in {lb.id for lb in labels}:
                labels += self._labels(s, issue.team_id, [lid])
        removed = set(data.get("removedLabelIds") or [])
        labels = sorted((lb for lb in labels if lb.id not in removed), key=lambda lb: lb.name)

        before = _Sides.of(issue)
        changes: dict[str, dict[str, Any]] = {}

        def change(field: str, before: Any, after: Any) -> None:
            if before != after:
                changes[field] = {"from": before, "to": after}

        for field in ("title", "description", "estimate", "priority"):
            nullable = field in ("description", "estimate")
            if field in data and (nullable or data[field] is not None):
                change(field, getattr(issue, field), data[field])
                setattr(issue, field, data[field])
        change("assignee", issue.assignee_id, assignee)
        issue.assignee_id = assignee
        change(
            "parent",
            issue.parent.identifier if issue.parent else None,
            parent.identifier if parent else None,
        )
        issue.parent_id = parent.id if parent else None
        change("labels", [lb.name for lb in issue.labels], [lb.name for lb in labels])
        issue.labels = labels
        from_state = to_state = None
        if state is not None and state.id != issue.state_id:
            from_state, to_state = issue.state.name, state.name
            change("state", from_state, to_state)
            self._enter(issue, state, now)
        if changes:
            issue.updated_at = now
            self._add_history(s, issue, actor, now, before)
            self._record(
                s,
                actor,
                "linear.issue.updated",
                issue.identifier,
                {
                    "identifier": issue.identifier,
                    "changes": changes,
                    "from_state": from_state,
                    "to_state": to_state,
                },
            )
        s.flush()
        s.expire(issue, ["parent", "assignee"])
        return issue

    def _add_history(
        self, s: Session, issue: Issue, actor: str, now: datetime, before: _Sides
    ) -> IssueHistory:
        """Append the ``IssueHistory`` node of one ``issueUpdate``: each field it changed,
        both sides; the rest null. Linear merges changes an actor makes within a short
        window into one node; here each update is its own node."""
        after = _Sides.of(issue)
        node = IssueHistory(
            id=self._mint(s),
            position=len(issue.history),
            actor_id=actor,
            created_at=now,
            added_labels=[x for x in after.labels if x not in before.labels],
            removed_labels=[x for x in before.labels if x not in after.labels],
        )
        for side in ("state_id", "assignee_id", "title", "priority", "estimate", "parent_id"):
            old, new = getattr(before, side), getattr(after, side)
            if old != new:
                setattr(node, f"from_{side}", old)
                setattr(node, f"to_{side}", new)
        if before.description != after.description:
            node.updated_description = True
        issue.history.append(node)
        s.flush()
        return node

    def create_comment(self, s: Session, actor: str, data: dict[str, Any]) -> Comment:
        if not data.get("issueId"):
            raise InvalidInput("A comment needs an issueId.")
        body = data.get("body")
        if not body or not body.strip():
            raise InvalidInput("Comment body cannot be empty.")
        issue = self.issue(s, data["issueId"])
        parent = self.comment(s, data["parentId"]) if data.get("parentId") else None
        if parent is not None and parent.issue_id != issue.id:
            raise InvalidInput("The parent comment belongs to another issue.")
        comment = self.add_comment(
            s, issue, actor, body, parent, self._fresh_id(s, Comment, data.get("id"))
        )
        self._record(
            s,
            actor,
            "linear.comment.created",
            issue.identifier,
            {
                "identifier": issue.identifier,
                "comment_id": comment.id,
                "body": body,
                "parent": parent.id if parent else None,
            },
            object_type="comment",
        )
        if self.heard is not None:
            self.heard(s, issue, comment)
        return comment

    def add_comment(
        self,
        s: Session,
        issue: Issue,
        user: str,
        body: str,
        parent: Comment | None,
        comment_id: str | None = None,
    ) -> Comment:
        now = self.world.clock.now()
        comment = Comment(
            id=comment_id or self._mint(s),
            issue_id=issue.id,
            issue=issue,
            user_id=user,
            body=body,
            parent_id=parent.id if parent else None,
            created_at=now,
            updated_at=now,
        )
        s.add(comment)
        s.flush()
        return comment
