"""Issues (and the issue side of pull requests): lookups, lists, search, create, update,
labels, comments, and the issue events each change records."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    ColumnElement,
    bindparam,
    exists,
    false,
    func,
    insert,
    literal,
    not_,
    select,
    union_all,
    update,
)
from sqlalchemy.orm import Session, contains_eager, defer, joinedload, make_transient_to_detached
from sqlalchemy.orm.attributes import set_committed_value

from fakes.core.relay import Rows
from fakes.core.sqltext import every_word, lower, register_lower
from fakes.github.backend_repos import Repos
from fakes.github.backend_state import GitHubState, split_query
from fakes.github.errors import (
    NotFound,
    ValidationFailed,
)
from fakes.github.models import (
    Comment,
    Issue,
    IssueEvent,
    Label,
    Pull,
    Repo,
    Review,
    User,
    issue_assignees,
    issue_labels,
)

_THREAD = select(Issue).options(
    joinedload(Issue.author),
    joinedload(Issue.closed_by),
    joinedload(Issue.pull),
    joinedload(Issue.labels),
    joinedload(Issue.assignees),
)
# One query for a thread and what every answer about it shows (repository, author, closer,
# the pull request's own row, labels, assignees, the comment count); built once, so that each
# request only binds its values.
_BY_NAME = (
    _THREAD.join(Issue.repo)
    .options(contains_eager(Issue.repo))
    .where(
        func.lower(Repo.owner) == bindparam("owner"),
        func.lower(Repo.name) == bindparam("name"),
        Issue.number == bindparam("number"),
    )
)
_BY_NAME_BARE = (
    select(Issue)
    .join(Issue.repo)
    .options(contains_eager(Issue.repo), defer(Issue.comment_count))
    .where(
        func.lower(Repo.owner) == bindparam("owner"),
        func.lower(Repo.name) == bindparam("name"),
        Issue.number == bindparam("number"),
    )
)
"""A thread and its repository only, for a change that shows nothing else of it."""
_INSERT_COMMENT = insert(Comment)
_INSERT_ISSUE = insert(Issue)
_INSERT_ISSUE_LABEL = insert(issue_labels)
_INSERT_ISSUE_ASSIGNEE = insert(issue_assignees)
_TOUCH_ISSUE = (
    update(Issue).where(Issue.id == bindparam("issue_id")).values(updated_at=bindparam("now"))
)
_BY_REPO_ID = _THREAD.where(
    Issue.repo_id == bindparam("repo_id"), Issue.number == bindparam("number")
)


def labelled(names: Iterable[str]) -> ColumnElement[bool]:
    """The issue carries a label of one of ``names`` (case folded; ``register_lower``)."""
    return (
        exists()
        .where(
            issue_labels.c.issue_id == Issue.id,
            issue_labels.c.label_id == Label.id,
            lower(Label.name).in_([name.lower() for name in names]),
        )
        .correlate_except(issue_labels, Label)
    )


def assigned(logins: Iterable[str] | None = None) -> ColumnElement[bool]:
    """The issue is assigned to one of ``logins`` (case folded), or to anyone when None."""
    if logins is None:
        return exists().where(issue_assignees.c.issue_id == Issue.id)
    return (
        exists()
        .where(
            issue_assignees.c.issue_id == Issue.id,
            issue_assignees.c.user_id == User.id,
            lower(User.login).in_([login.lower() for login in logins]),
        )
        .correlate_except(issue_assignees, User)
    )


def authored(logins: Iterable[str]) -> ColumnElement[bool]:
    """The issue was opened by one of ``logins`` (case folded)."""
    by = select(User.id).where(lower(User.login).in_([login.lower() for login in logins]))
    return Issue.author_id.in_(by)


class Issues:
    """Every thread by its number, and what changes one (an issue or a pull request)."""

    def __init__(self, state: GitHubState, repos: Repos) -> None:
        self.state = state
        self.repos = repos

    # ------------------------------------------------------------------ lookups

    def get(self, s: Session, repo: Repo | str, number: int) -> Issue:
        """An issue *or* pull request by number (as ``/issues/N`` answers both); 404 when
        the repository or the number is unknown."""
        if isinstance(repo, Repo):
            found = s.execute(_BY_REPO_ID, {"repo_id": repo.id, "number": number})
        else:
            owner, _, name = repo.partition("/")
            params = {"owner": owner.lower(), "name": name.lower(), "number": number}
            found = s.execute(_BY_NAME, params)
        row = found.unique().scalar_one_or_none()
        if row is None:
            raise NotFound()
        return row

    def bare(self, s: Session, repo: str, number: int) -> Issue:
        """:meth:`get` without what only an answer about the thread itself shows (its other
        relationships load when used): for adding to a thread."""
        owner, _, name = repo.partition("/")
        params = {"owner": owner.lower(), "name": name.lower(), "number": number}
        row = s.scalar(_BY_NAME_BARE, params)
        if row is None:
            raise NotFound()
        return row

    def comment(self, s: Session, repo: Repo | str, comment_id: int) -> Comment:
        r = self.repos.get(s, repo)
        row = s.get(Comment, comment_id)
        if row is None or row.issue.repo_id != r.id:
            raise NotFound()
        return row

    def comments_page(
        self, s: Session, issue: Issue, since: datetime | None, offset: int, limit: int
    ) -> tuple[list[Comment], int]:
        """One page of a thread's comments, oldest first, and how many there are in all
        (those updated at or after ``since``): paged in SQL, never the whole list."""
        where = [Comment.issue_id == issue.id]
        if since is not None:
            where.append(Comment.updated_at >= since)
        total = s.scalar(select(func.count(Comment.id)).where(*where)) or 0
        q = select(Comment).where(*where).order_by(Comment.id).offset(offset).limit(limit)
        return list(s.scalars(q.options(joinedload(Comment.author)))), int(total)

    def find(
        self,
        s: Session,
        repo: Repo | str,
        *,
        state: str = "open",
        labels: Sequence[str] = (),
        assignee: str | None = None,
        creator: str | None = None,
        since: datetime | None = None,
        sort: str = "created",
        direction: str = "desc",
        pulls: bool | None = None,
    ) -> Rows[Issue]:
        """Issues (and, when ``pulls`` is None, pull requests too, as REST lists them).
        Matched, ordered, counted and paged in SQL (issue 19): a page of a repository's
        issues costs the same however many it has."""
        r = self.repos.get(s, repo)
        q = select(Issue).where(Issue.repo_id == r.id)
        if pulls is not None:
            q = q.where(Issue.is_pull == pulls)
        if state in ("open", "closed"):
            q = q.where(Issue.state == state)
        if since is not None:
            q = q.where(Issue.updated_at >= since)
        register_lower(s)
        for name in sorted({name.lower() for name in labels}):  # every one of them
            q = q.where(labelled([name]))
        if assignee == "none":
            q = q.where(not_(assigned()))
        elif assignee == "*":
            q = q.where(assigned())
        elif assignee:
            q = q.where(assigned([assignee]))
        if creator:
            q = q.where(authored([creator]))
        keys: dict[str, Any] = {"updated": Issue.updated_at, "comments": Issue.comment_count}
        key = keys.get(sort, Issue.created_at)
        order = [key.asc(), Issue.id.asc()] if direction == "asc" else [key.desc(), Issue.id.desc()]
        return Rows(s, q, order, lambda i: i)

    def search(self, s: Session, query: str) -> Rows[Issue]:
        """GitHub's issue search over the qualifiers agents use, plus free text (each word in
        the title or body), newest first. Matched, counted and paged in SQL (issue 19): a
        page of results costs the same however many issues match."""
        register_lower(s)
        q = select(Issue)
        terms: list[str] = []
        authors: list[str] = []
        assignees: list[str] = []
        for token in split_query(query):
            key, sep, value = token.partition(":")
            key = key.lower()
            value = value.strip('"')
            if not sep:
                terms.append(token.strip('"').lower())
            elif key == "repo":
                owner, _, name = value.partition("/")
                try:
                    r = self.repos.get(s, owner, name)
                except NotFound:
                    q = q.where(false())
                    continue
                q = q.where(Issue.repo_id == r.id)
            elif key in ("user", "org", "owner"):
                ids = select(Repo.id).where(func.lower(Repo.owner) == value.lower())
                q = q.where(Issue.repo_id.in_(ids))
            elif key in ("is", "type"):
                v = value.lower()
                if v in ("issue", "pr", "pull-request"):
                    q = q.where(Issue.is_pull == (v != "issue"))
                elif v in ("open", "closed"):
                    q = q.where(Issue.state == v)
                elif v == "merged":
                    q = q.where(Issue.id.in_(select(Pull.id).where(Pull.merged_at.is_not(None))))
                elif v == "unmerged":
                    q = q.where(Issue.id.in_(select(Pull.id).where(Pull.merged_at.is_(None))))
            elif key == "state":
                q = q.where(Issue.state == value.lower())
            elif key == "label":  # every label asked for is on the issue
                q = q.where(labelled([value]))
            elif key == "author":
                authors.append(value.lower())
            elif key == "assignee":
                assignees.append(value.lower())
            elif key == "in":
                continue
            else:
                terms.append(token.lower())
        if authors:  # by any of them
            q = q.where(authored(authors))
        if assignees:  # assigned to any of them
            q = q.where(assigned(assignees))
        if terms:
            text = lower(Issue.title + "\n" + func.coalesce(Issue.body, ""))
            q = q.where(every_word(terms, lambda word: func.instr(text, word) > 0))
        return Rows(s, q, [Issue.created_at.desc(), Issue.id.desc()], lambda i: i)

    # ------------------------------------------------------------------ issue events

    def add_event(
        self,
        s: Session,
        issue: Issue,
        actor: User,
        event: str,
        *,
        label: Label | None = None,
        assignee: User | None = None,
        rename: tuple[str, str] | None = None,
        commit_id: str | None = None,
        state_reason: str | None = None,
    ) -> IssueEvent:
        """Append one issue event, dated now, with an id past every other (seeded ones too)."""
        top = s.scalar(select(func.max(IssueEvent.id)))
        row = IssueEvent(
            id=(top or 0) + 1,
            issue=issue,
            event=event,
            actor=actor,
            created_at=self.state.now(),
            label_name=label.name if label is not None else None,
            label_color=label.color if label is not None else None,
            assignee=assignee,
            rename_from=rename[0] if rename else None,
            rename_to=rename[1] if rename else None,
            commit_id=commit_id,
            state_reason=state_reason,
        )
        s.add(row)
        s.flush()
        return row

    def _label_events(
        self, s: Session, issue: Issue, actor: User, old: list[Label], new: list[Label]
    ) -> None:
        for lb in new:
            if lb not in old:
                self.add_event(s, issue, actor, "labeled", label=lb)
        for lb in old:
            if lb not in new:
                self.add_event(s, issue, actor, "unlabeled", label=lb)

    def _assignee_events(
        self, s: Session, issue: Issue, actor: User, old: list[User], new: list[User]
    ) -> None:
        for u in new:
            if u not in old:
                self.add_event(s, issue, actor, "assigned", assignee=u)
        for u in old:
            if u not in new:
                self.add_event(s, issue, actor, "unassigned", assignee=u)

    def events(self, s: Session, repo: Repo | str, number: int) -> list[IssueEvent]:
        """One thread's events, oldest first (``GET .../issues/{n}/events``)."""
        return list(self.get(s, repo, number).events)

    def events_page(
        self, s: Session, repo: Repo | str, number: int, offset: int, limit: int
    ) -> tuple[list[IssueEvent], int]:
        """One page of a thread's events, oldest first, and how many it has: in SQL."""
        issue = self.bare(s, repo, number) if isinstance(repo, str) else self.get(s, repo, number)
        where = IssueEvent.issue_id == issue.id
        total = s.scalar(select(func.count(IssueEvent.id)).where(where)) or 0
        q = select(IssueEvent).where(where).order_by(IssueEvent.created_at, IssueEvent.id)
        return list(s.scalars(q.offset(offset).limit(limit))), int(total)

    def timeline_page(
        self, s: Session, issue: Issue, offset: int, limit: int
    ) -> tuple[list[IssueEvent | Comment | Review], int]:
        """One page of a thread's timeline and its length, in SQL: its events, comments and
        submitted reviews, oldest first (a tie goes to events, then comments, then reviews,
        each by id). Only the page's rows are loaded."""
        # Each kind gives at most the rows up to this page's end, taken in date order from
        # its index; only those are merged and sorted, so page one costs the same whatever
        # the thread's length (a later page grows with its offset, as OFFSET does).
        end = offset + limit
        kinds = (
            (IssueEvent.created_at, IssueEvent.id, IssueEvent.issue_id == issue.id),
            (Comment.created_at, Comment.id, Comment.issue_id == issue.id),
            (
                Review.submitted_at,
                Review.id,
                (Review.pull_id == issue.id) & Review.submitted_at.is_not(None),
            ),
        )
        firsts = []
        for kind, (at, id_, where) in enumerate(kinds):
            first = (
                select(at.label("at"), literal(kind).label("kind"), id_.label("id"))
                .where(where)
                .order_by(at, id_)
                .limit(end)
                .subquery()
            )
            firsts.append(select(first.c.at, first.c.kind, first.c.id))
        parts = union_all(*firsts).subquery()
        counts = [select(func.count(id_)).where(where).scalar_subquery() for _, id_, where in kinds]
        total = s.scalar(select(counts[0] + counts[1] + counts[2])) or 0
        keys = s.execute(
            select(parts.c.kind, parts.c.id)
            .order_by(parts.c.at, parts.c.kind, parts.c.id)
            .offset(offset)
            .limit(limit)
        ).all()
        found: dict[tuple[int, int], IssueEvent | Comment | Review] = {}
        models: tuple[Any, ...] = (IssueEvent, Comment, Review)
        for kind, model in enumerate(models):
            ids = [i for k, i in keys if k == kind]
            if ids:
                rows: Sequence[Any] = s.scalars(select(model).where(model.id.in_(ids))).all()
                found.update(((kind, row.id), row) for row in rows)
        return [found[(k, i)] for k, i in keys], int(total)

    def repo_events(self, s: Session, repo: Repo | str) -> list[IssueEvent]:
        """Every thread's events in a repository, newest first (``GET .../issues/events``)."""
        r = self.repos.get(s, repo)
        q = (
            select(IssueEvent)
            .join(Issue, IssueEvent.issue_id == Issue.id)
            .where(Issue.repo_id == r.id)
            .order_by(IssueEvent.created_at.desc(), IssueEvent.id.desc())
        )
        return list(s.scalars(q))

    def event(self, s: Session, repo: Repo | str, event_id: int) -> IssueEvent:
        r = self.repos.get(s, repo)
        row = s.get(IssueEvent, event_id)
        if row is None or row.issue.repo_id != r.id:
            raise NotFound()
        return row

    # ------------------------------------------------------------------ issues

    def _labels(self, s: Session, repo: Repo, names: Iterable[str]) -> list[Label]:
        """Labels by name, created with GitHub's default colour when new (as GitHub does)."""
        out: list[Label] = []
        for name in names:
            name = str(name).strip()
            if not name:
                raise ValidationFailed("Label", "name", "missing_field")
            try:
                row = self.repos.label(s, repo, name)
            except NotFound:
                row = Label(repo=repo, name=name, color="ededed")
                s.add(row)
                s.flush()
            if row not in out:
                out.append(row)
        return out

    def _assignees(self, s: Session, logins: Iterable[str], resource: str) -> list[User]:
        out: list[User] = []
        for login in logins:
            try:
                row = self.repos.user(s, str(login))
            except NotFound as exc:
                raise ValidationFailed(resource, "assignees", "invalid") from exc
            if row not in out:
                out.append(row)
        return out

    def next_number(self, s: Session, repo: Repo) -> int:
        """The number a new thread gets: issues and pull requests share one sequence."""
        top = s.scalar(select(func.max(Issue.number)).where(Issue.repo_id == repo.id))
        return (top or 0) + 1

    def create(
        self,
        s: Session,
        actor: str,
        repo: Repo | str,
        title: str,
        body: str | None = None,
        labels: Iterable[str] = (),
        assignees: Iterable[str] = (),
    ) -> Issue:
        r = self.repos.get(s, repo)
        if not title or not str(title).strip():
            raise ValidationFailed("Issue", "title", "missing_field")
        author = self.repos.actor(s, actor)
        now = self.state.now().astimezone(UTC)  # as the row would load
        chosen_labels = self._labels(s, r, labels)
        chosen_assignees = self._assignees(s, assignees, "Issue")
        values = {
            "repo_id": r.id,
            "number": self.next_number(s, r),
            "is_pull": False,
            "title": str(title),
            "body": body,
            "state": "open",
            "state_reason": None,
            "locked": False,
            "author_id": author.id,
            "closed_by_id": None,
            "created_at": now,
            "updated_at": now,
            "closed_at": None,
        }
        # Statements on the session's connection rather than a flush of the ORM's unit of work
        # (a fifth of an issue create's time in issue 19's profile), as for a comment: the row
        # is then put in the session as loaded, with what a new issue is known to have.
        db = s.connection()
        inserted = db.execute(_INSERT_ISSUE, values).inserted_primary_key
        assert inserted is not None
        issue = Issue(id=int(inserted[0]), **values)
        if chosen_labels:
            rows = [{"issue_id": issue.id, "label_id": lb.id} for lb in chosen_labels]
            db.execute(_INSERT_ISSUE_LABEL, rows)
        if chosen_assignees:
            rows = [{"issue_id": issue.id, "user_id": u.id} for u in chosen_assignees]
            db.execute(_INSERT_ISSUE_ASSIGNEE, rows)
        make_transient_to_detached(issue)
        s.add(issue)
        for name, value in (
            ("repo", r),
            ("author", author),
            ("closed_by", None),
            ("pull", None),
            ("labels", chosen_labels),
            ("assignees", chosen_assignees),
            ("comments", []),
            ("events", []),
            ("comment_count", 0),
        ):
            set_committed_value(issue, name, value)
        # GitHub records labels and assignees given at creation as events of their own.
        self._label_events(s, issue, author, [], list(issue.labels))
        self._assignee_events(s, issue, author, [], list(issue.assignees))
        self.state.record(
            s,
            actor,
            "github.issue.opened",
            ("issue", issue.key),
            {
                "repo": r.full_name,
                "number": issue.number,
                "title": issue.title,
                "body": issue.body,
                "labels": [lb.name for lb in issue.labels],
                "assignees": [u.login for u in issue.assignees],
            },
        )
        return issue

    def update(
        self, s: Session, actor: str, repo: Repo | str, number: int, **changes: Any
    ) -> Issue:
        """Change title, body, state, state_reason, labels or assignees (issue or PR)."""
        return self.update_thread(s, actor, self.get(s, repo, number), changes, {})

    def update_thread(
        self,
        s: Session,
        actor: str,
        issue: Issue,
        changes: dict[str, Any],
        diff: dict[str, dict[str, Any]],
    ) -> Issue:
        """Apply ``changes``; record one update event with them and what ``diff`` holds."""
        resource = "PullRequest" if issue.is_pull else "Issue"
        user = self.repos.actor(s, actor)
        now = self.state.now()

        def note(field: str, old: Any, new: Any) -> None:
            if old != new:
                diff[field] = {"from": old, "to": new}

        unknown = set(changes) - {"title", "body", "state", "state_reason", "labels", "assignees"}
        if unknown:
            raise ValidationFailed(resource, sorted(unknown)[0], "invalid")
        if "title" in changes and changes["title"] is not None:
            title = str(changes["title"])
            if not title.strip():
                raise ValidationFailed(resource, "title", "missing_field")
            note("title", issue.title, title)
            if title != issue.title:
                self.add_event(s, issue, user, "renamed", rename=(issue.title, title))
            issue.title = title
        if "body" in changes:
            note("body", issue.body, changes["body"])
            issue.body = changes["body"]
        reason = changes.get("state_reason")
        if reason is not None and reason not in ("completed", "not_planned", "reopened"):
            raise ValidationFailed(resource, "state_reason", "invalid")
        state = changes.get("state")
        if state is not None:
            if state not in ("open", "closed"):
                raise ValidationFailed(resource, "state", "invalid")
            if issue.pull is not None and issue.pull.merged_at is not None and state == "open":
                raise ValidationFailed(
                    resource,
                    "state",
                    "custom",
                    "state cannot be changed. The pull request "
                    "cannot be reopened because it has been merged.",
                )
            if state != issue.state:
                note("state", issue.state, state)
                issue.state = state
                if state == "closed":
                    issue.closed_at = now
                    issue.closed_by = user
                    if not issue.is_pull:
                        new_reason = reason or "completed"
                        note("state_reason", issue.state_reason, new_reason)
                        issue.state_reason = new_reason
                    self.add_event(s, issue, user, "closed", state_reason=issue.state_reason)
                else:
                    issue.closed_at = None
                    issue.closed_by = None
                    if not issue.is_pull:
                        note("state_reason", issue.state_reason, "reopened")
                        issue.state_reason = "reopened"
                    self.add_event(s, issue, user, "reopened")
        if reason is not None and state is None and not issue.is_pull and issue.state == "closed":
            note("state_reason", issue.state_reason, reason)
            issue.state_reason = reason
        if changes.get("labels") is not None:
            new_labels = self._labels(s, issue.repo, changes["labels"])
            note("labels", [lb.name for lb in issue.labels], [lb.name for lb in new_labels])
            self._label_events(s, issue, user, list(issue.labels), new_labels)
            issue.labels = new_labels
        if changes.get("assignees") is not None:
            new_people = self._assignees(s, changes["assignees"], resource)
            note("assignees", [u.login for u in issue.assignees], [u.login for u in new_people])
            self._assignee_events(s, issue, user, list(issue.assignees), new_people)
            issue.assignees = new_people
        if diff:
            issue.updated_at = now
            kind = "github.pull_request.updated" if issue.is_pull else "github.issue.updated"
            obj = "pull_request" if issue.is_pull else "issue"
            self.state.record(
                s,
                actor,
                kind,
                (obj, issue.key),
                {"repo": issue.repo.full_name, "number": issue.number, "changes": diff},
            )
        s.flush()
        return issue

    LOCK_REASONS = ("off-topic", "too heated", "resolved", "spam")

    def set_locked(
        self,
        s: Session,
        actor: str,
        repo: Repo | str,
        number: int,
        locked: bool,
        reason: str | None = None,
    ) -> Issue:
        """Lock or unlock an issue's conversation (``PUT``/``DELETE .../lock``); locking a
        locked one, or unlocking an unlocked one, changes nothing, as on GitHub."""
        issue = self.get(s, repo, number)
        resource = "PullRequest" if issue.is_pull else "Issue"
        if reason is not None and reason not in self.LOCK_REASONS:
            raise ValidationFailed(resource, "lock_reason", "invalid")
        self.repos.actor(s, actor)
        if issue.locked != locked:
            diff = {"locked": {"from": issue.locked, "to": locked}}
            issue.locked = locked
            issue.lock_reason = reason if locked else None
            issue.updated_at = self.state.now()
            kind = "github.pull_request.updated" if issue.is_pull else "github.issue.updated"
            obj = "pull_request" if issue.is_pull else "issue"
            self.state.record(
                s,
                actor,
                kind,
                (obj, issue.key),
                {"repo": issue.repo.full_name, "number": issue.number, "changes": diff},
            )
        s.flush()
        return issue

    def add_labels(
        self, s: Session, actor: str, repo: Repo | str, number: int, names: Iterable[str]
    ) -> Issue:
        issue = self.get(s, repo, number)
        user = self.repos.actor(s, actor)
        for label in self._labels(s, issue.repo, names):
            if label not in issue.labels:
                issue.labels.append(label)
                self.add_event(s, issue, user, "labeled", label=label)
                self.state.record(
                    s,
                    actor,
                    "github.label.added",
                    ("issue", issue.key),
                    {"repo": issue.repo.full_name, "number": issue.number, "label": label.name},
                )
                issue.updated_at = self.state.now()
        s.flush()
        return issue

    def remove_label(
        self, s: Session, actor: str, repo: Repo | str, number: int, name: str
    ) -> Issue:
        issue = self.get(s, repo, number)
        user = self.repos.actor(s, actor)
        match = [lb for lb in issue.labels if lb.name.lower() == name.lower()]
        if not match:
            raise NotFound("Label does not exist")
        issue.labels.remove(match[0])
        self.add_event(s, issue, user, "unlabeled", label=match[0])
        issue.updated_at = self.state.now()
        self.state.record(
            s,
            actor,
            "github.label.removed",
            ("issue", issue.key),
            {"repo": issue.repo.full_name, "number": issue.number, "label": match[0].name},
        )
        s.flush()
        return issue

    def add_comment(
        self, s: Session, actor: str, repo: Repo | str, number: int, body: str
    ) -> Comment:
        issue = self.get(s, repo, number) if isinstance(repo, Repo) else self.bare(s, repo, number)
        if not body or not str(body).strip():
            raise ValidationFailed("IssueComment", "body", "missing_field")
        now = self.state.now().astimezone(UTC)  # as the row would load
        author = self.repos.actor(s, actor)
        values = {
            "issue_id": issue.id,
            "author_id": author.id,
            "body": str(body),
            "created_at": now,
            "updated_at": now,
        }
        # Two statements on the session's connection rather than a flush of the ORM's unit of
        # work (half a comment create's time in issue 19's profile): the row is then put in
        # the session as loaded, so nothing reads it back.
        db = s.connection()
        inserted = db.execute(_INSERT_COMMENT, values).inserted_primary_key
        assert inserted is not None
        comment_id = int(inserted[0])
        db.execute(_TOUCH_ISSUE, {"issue_id": issue.id, "now": now})
        set_committed_value(issue, "updated_at", now)
        comment = Comment(id=comment_id, **values)
        make_transient_to_detached(comment)
        s.add(comment)
        set_committed_value(comment, "issue", issue)
        set_committed_value(comment, "author", author)
        # Its count, and its list if this session had loaded it, read again when next used.
        s.expire(issue, ["comment_count", "comments"])
        self.state.record(
            s,
            actor,
            "github.issue_comment.created",
            ("comment", f"{issue.key}/{comment.id}"),
            {
                "repo": issue.repo.full_name,
                "number": issue.number,
                "comment_id": comment.id,
                "body": comment.body,
            },
        )
        key = f"{issue.key}/{comment.id}"
        self.state.comment_posted(s, actor, issue, comment.body, "issue_comment", key)
        return comment

    def edit_comment(
        self, s: Session, actor: str, repo: Repo | str, comment_id: int, body: str
    ) -> Comment:
        """Change a comment's text. The viewer has admin rights (as the repository says), so
        it may edit anyone's comment, as on GitHub; the event keeps the text it replaced."""
        comment = self.comment(s, repo, comment_id)
        self.repos.actor(s, actor)
        if not body or not body.strip():
            raise ValidationFailed("IssueComment", "body", "missing_field")
        previous = comment.body
        comment.body = body
        comment.updated_at = self.state.now()
        issue = comment.issue
        self.state.record(
            s,
            actor,
            "github.issue_comment.updated",
            ("comment", f"{issue.key}/{comment.id}"),
            {
                "repo": issue.repo.full_name,
                "number": issue.number,
                "comment_id": comment.id,
                "body": body,
                "previous_body": previous,
            },
        )
        s.flush()
        return comment

    def delete_comment(self, s: Session, actor: str, repo: Repo | str, comment_id: int) -> None:
        comment = self.comment(s, repo, comment_id)
        self.repos.actor(s, actor)
        issue = comment.issue
        self.state.record(
            s,
            actor,
            "github.issue_comment.deleted",
            ("comment", f"{issue.key}/{comment.id}"),
            {
                "repo": issue.repo.full_name,
                "number": issue.number,
                "comment_id": comment.id,
                "body": comment.body,
            },
        )
        s.delete(comment)
        s.flush()
        s.expire(issue, ["comment_count"])
