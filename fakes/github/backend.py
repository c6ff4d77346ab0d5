"""The fake GitHub's operations: every read and write REST and GraphQL make, on one state.

Mutations take the open session first, record their event in that same session (so an event
lands with its change) and date everything on the world's frozen clock. Problems raise the
exceptions of :mod:`fakes.github.errors`, which carry GitHub's status and body.
"""

from __future__ import annotations

import base64
import binascii
import shutil
import tempfile
import threading
import weakref
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import DeclarativeBase, Session

from fakes.core.world import World
from fakes.github.errors import (
    Conflict,
    GitHubError,
    MethodNotAllowed,
    NotFound,
    Unprocessable,
    ValidationFailed,
)
from fakes.github.gitstore import ZERO, GitFailed, GitStore, Person
from fakes.github.models import (
    Branch,
    CheckRun,
    Comment,
    CommitStatus,
    GitHubBase,
    Issue,
    Label,
    Pull,
    Repo,
    Review,
    ReviewComment,
    User,
)

REVIEW_EVENTS = {
    "APPROVE": "APPROVED",
    "REQUEST_CHANGES": "CHANGES_REQUESTED",
    "COMMENT": "COMMENTED",
}
MERGE_METHODS = ("merge", "squash", "rebase")


@dataclass(frozen=True)
class RefUpdate:
    """One ref a push changed (``before``/``after`` are the zero SHA when absent)."""

    ref: str
    before: str
    after: str


class GitHubBackend:
    """GitHub's state and operations for one world."""

    service: str = "github"
    base: type[DeclarativeBase] = GitHubBase

    def __init__(self, world: World) -> None:
        self.world = world
        root = Path(tempfile.mkdtemp(prefix="replay-github-"))
        self._cleanup = weakref.finalize(self, shutil.rmtree, root, True)
        self.git = GitStore(root)
        self.push_lock = threading.Lock()
        """Held around a receive-pack and around every ref the API moves, so that the refs
        before and after a push differ by exactly that push."""

    def close(self) -> None:
        """Delete the git repositories now rather than when the backend is collected."""
        self._cleanup()

    # ------------------------------------------------------------------ world plumbing

    def viewer_login(self) -> str:
        return self.world.snapshot.github.viewer

    def authenticate(self, authorization: str | None) -> str | None:
        """The login a request's ``Authorization`` header belongs to, or None without one.

        ``token X``, ``Bearer X`` and Basic with the token as password (or as user, with an
        empty password, as git sometimes sends) all belong to the snapshot's viewer.
        """
        if not authorization:
            return None
        scheme, _, value = authorization.strip().partition(" ")
        value = value.strip()
        scheme = scheme.lower()
        if scheme in ("token", "bearer"):
            return self.viewer_login() if value else None
        if scheme == "basic":
            try:
                user, _, password = base64.b64decode(value).decode().partition(":")
            except (binascii.Error, UnicodeDecodeError):
                return None
            return self.viewer_login() if (password or user) else None
        return None

    def now(self) -> datetime:
        return self.world.clock.now()

    def _event(
        self, s: Session, actor: str | None, kind: str, obj: tuple[str, str], data: dict[str, Any]
    ) -> None:
        service = kind.split(".", 1)[0]
        self.world.events.record(
            s,
            service=service,
            kind=kind,
            actor=actor,
            object_type=obj[0],
            object_id=obj[1],
            data=data,
        )

    # ------------------------------------------------------------------ seed and dump

    def seed(self, session: Session) -> None:
        """The snapshot's users, repositories, threads and git repositories, as at T."""
        s = session
        state = self.world.snapshot.github
        users: dict[str, User] = {}
        for u in state.users:
            users[u.login] = User(
                id=u.id,
                login=u.login,
                name=u.name,
                email=u.email,
                type=u.type,
                created_at=u.created_at,
            )
            s.add(users[u.login])
        s.flush()
        bundles = {r.name: r for r in self.world.snapshot.manifest.repositories}
        repos: dict[str, Repo] = {}
        for r in state.repos:
            owner = users.get(r.owner)
            repo = Repo(
                id=r.id,
                owner=r.owner,
                name=r.name,
                owner_id=owner.id if owner else None,
                description=r.description,
                private=r.private,
                default_branch=r.default_branch,
                created_at=r.created_at,
                updated_at=r.pushed_at or r.created_at,
                pushed_at=r.pushed_at,
                has_git=False,
            )
            s.add(repo)
            for label in r.labels:
                s.add(
                    Label(
                        repo=repo, name=label.name, color=label.color, description=label.description
                    )
                )
            repos[r.full_name] = repo
            part = bundles.get(r.full_name)
            if part is not None:
                self.git.create(
                    r.full_name,
                    self.world.snapshot.part(part.bundle),
                    part.base_commit,
                    part.default_branch,
                )
                repo.has_git = True
                if repo.pushed_at is None:
                    # The cut forgot a push made after T; the history up to T was pushed then.
                    tip = self.git.commit(r.full_name, part.base_commit)
                    repo.pushed_at = tip.committer.date
                    repo.updated_at = max(repo.updated_at, tip.committer.date)
                for ref, sha in self.git.heads(r.full_name).items():
                    if ref.startswith("refs/heads/"):
                        s.add(Branch(repo=repo, name=ref.removeprefix("refs/heads/"), sha=sha))
        s.flush()
        labels = {(lb.repo_id, lb.name): lb for lb in s.scalars(select(Label))}
        for t in [*state.issues, *state.pulls]:
            repo = repos[t.repo]
            issue = Issue(
                id=t.id,
                repo=repo,
                number=t.number,
                is_pull=hasattr(t, "head_ref"),
                title=t.title,
                body=t.body,
                state=t.state,
                state_reason=getattr(t, "state_reason", None),
                author=users[t.author],
                created_at=t.created_at,
                updated_at=t.updated_at,
                closed_at=t.closed_at,
                labels=[labels[(repo.id, name)] for name in t.labels],
                assignees=[users[a] for a in t.assignees],
            )
            s.add(issue)
            for c in t.comments:
                s.add(
                    Comment(
                        id=c.id,
                        issue=issue,
                        author=users[c.author],
                        body=c.body,
                        created_at=c.created_at,
                        updated_at=c.updated_at,
                    )
                )
        s.flush()
        for p in state.pulls:
            pull = Pull(
                id=p.id,
                head_ref=p.head_ref,
                base_ref=p.base_ref,
                head_sha=p.head_sha,
                base_sha=p.base_sha,
                draft=p.draft,
                merged_at=p.merged_at,
                merge_commit_sha=p.merge_commit_sha,
                merged_by_id=users[p.merged_by].id if p.merged_by in users else None,
            )
            s.add(pull)
            for rv in p.reviews:
                s.add(
                    Review(
                        id=rv.id,
                        pull=pull,
                        author=users[rv.author],
                        state=rv.state,
                        body=rv.body,
                        commit_id=rv.commit_id,
                        submitted_at=rv.submitted_at,
                    )
                )
        s.flush()

    def dump(self, session: Session) -> dict[str, Any]:
        s = session
        out: dict[str, Any] = {"viewer": self.viewer_login(), "repos": [], "issues": []}
        for repo in s.scalars(select(Repo).order_by(Repo.id)):
            branches = s.scalars(select(Branch).where(Branch.repo_id == repo.id))
            out["repos"].append(
                {
                    "full_name": repo.full_name,
                    "default_branch": repo.default_branch,
                    "branches": {b.name: b.sha for b in branches},
                    "labels": [lb.name for lb in repo.labels],
                }
            )
        for i in s.scalars(select(Issue).order_by(Issue.repo_id, Issue.number)):
            item: dict[str, Any] = {
                "repo": i.repo.full_name,
                "number": i.number,
                "pull": i.is_pull,
                "title": i.title,
                "body": i.body,
                "state": i.state,
                "author": i.author.login,
                "labels": [lb.name for lb in i.labels],
                "assignees": [u.login for u in i.assignees],
                "comments": [
                    {"id": c.id, "author": c.author.login, "body": c.body} for c in i.comments
                ],
                "created_at": i.created_at.isoformat(),
                "updated_at": i.updated_at.isoformat(),
            }
            if i.pull is not None:
                p = i.pull
                item.update(
                    head=p.head_ref,
                    base=p.base_ref,
                    head_sha=p.head_sha,
                    draft=p.draft,
                    merged=p.merged_at is not None,
                    merge_commit_sha=p.merge_commit_sha,
                    reviews=[{"author": r.author.login, "state": r.state} for r in p.reviews],
                )
            out["issues"].append(item)
        return out

    # ------------------------------------------------------------------ lookups

    def user(self, s: Session, login: str) -> User:
        row = s.scalar(select(User).where(func.lower(User.login) == login.lower()))
        if row is None:
            raise NotFound()
        return row

    def repo(self, s: Session, repo: Repo | str, name: str | None = None) -> Repo:
        """A repository by row, ``owner/name``, or (owner, name); 404 when unknown."""
        if isinstance(repo, Repo):
            return repo
        owner, _, rest = repo.partition("/")
        name = name if name is not None else rest
        row = s.scalar(
            select(Repo).where(
                func.lower(Repo.owner) == owner.lower(), func.lower(Repo.name) == name.lower()
            )
        )
        if row is None:
            raise NotFound()
        return row

    def repo_by_id(self, s: Session, repo_id: int) -> Repo:
        row = s.get(Repo, repo_id)
        if row is None:
            raise NotFound()
        return row

    def issue(self, s: Session, repo: Repo | str, number: int) -> Issue:
        """An issue *or* pull request by number (as ``/issues/N`` answers both)."""
        r = self.repo(s, repo)
        row = s.scalar(select(Issue).where(Issue.repo_id == r.id, Issue.number == number))
        if row is None:
            raise NotFound()
        return row

    def pull(self, s: Session, repo: Repo | str, number: int) -> Issue:
        """A pull request by number; 404 for an issue's number."""
        row = self.issue(s, repo, number)
        if row.pull is None:
            raise NotFound()
        return row

    def comment(self, s: Session, repo: Repo | str, comment_id: int) -> Comment:
        r = self.repo(s, repo)
        row = s.get(Comment, comment_id)
        if row is None or row.issue.repo_id != r.id:
            raise NotFound()
        return row

    def branches(self, s: Session, repo: Repo | str) -> list[Branch]:
        r = self.repo(s, repo)
        return list(s.scalars(select(Branch).where(Branch.repo_id == r.id).order_by(Branch.name)))

    def branch(self, s: Session, repo: Repo | str, name: str) -> Branch | None:
        r = self.repo(s, repo)
        return s.scalar(select(Branch).where(Branch.repo_id == r.id, Branch.name == name))

    def labels(self, s: Session, repo: Repo | str) -> list[Label]:
        return list(self.repo(s, repo).labels)

    def label(self, s: Session, repo: Repo | str, name: str) -> Label:
        r = self.repo(s, repo)
        row = s.scalar(
            select(Label).where(Label.repo_id == r.id, func.lower(Label.name) == name.lower())
        )
        if row is None:
            raise NotFound()
        return row

    def statuses(self, s: Session, repo: Repo | str, sha: str) -> list[CommitStatus]:
        r = self.repo(s, repo)
        q = select(CommitStatus).where(CommitStatus.repo_id == r.id, CommitStatus.sha == sha)
        return list(s.scalars(q.order_by(CommitStatus.id.desc())))

    def check_runs(self, s: Session, repo: Repo | str, sha: str) -> list[CheckRun]:
        r = self.repo(s, repo)
        q = select(CheckRun).where(CheckRun.repo_id == r.id, CheckRun.head_sha == sha)
        return list(s.scalars(q.order_by(CheckRun.id)))

    def resolve(self, s: Session, repo: Repo | str, rev: str | None) -> str:
        """The commit a branch name, tag or SHA names in the repository; 404 otherwise."""
        r = self.repo(s, repo)
        if not r.has_git:
            raise NotFound("Git Repository is empty.")
        sha = self.git.resolve(r.full_name, rev or r.default_branch)
        if sha is None:
            raise NotFound(f"No commit found for the ref {rev}")
        return sha

    def list_issues(
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
    ) -> list[Issue]:
        """Issues (and, when ``pulls`` is None, pull requests too, as REST lists them)."""
        r = self.repo(s, repo)
        q = select(Issue).where(Issue.repo_id == r.id)
        if pulls is not None:
            q = q.where(Issue.is_pull == pulls)
        if state in ("open", "closed"):
            q = q.where(Issue.state == state)
        if since is not None:
            q = q.where(Issue.updated_at >= since)
        rows = list(s.scalars(q))
        wanted = {name.lower() for name in labels}
        if wanted:
            rows = [i for i in rows if wanted <= {lb.name.lower() for lb in i.labels}]
        if assignee == "none":
            rows = [i for i in rows if not i.assignees]
        elif assignee == "*":
            rows = [i for i in rows if i.assignees]
        elif assignee:
            rows = [i for i in rows if assignee.lower() in {u.login.lower() for u in i.assignees}]
        if creator:
            rows = [i for i in rows if i.author.login.lower() == creator.lower()]
        keys = {
            "created": lambda i: (i.created_at, i.id),
            "updated": lambda i: (i.updated_at, i.id),
            "comments": lambda i: (len(i.comments), i.id),
        }
        rows.sort(key=keys.get(sort, keys["created"]), reverse=direction != "asc")
        return rows

    def list_pulls(
        self,
        s: Session,
        repo: Repo | str,
        *,
        state: str = "open",
        head: str | None = None,
        base: str | None = None,
        sort: str = "created",
        direction: str = "desc",
    ) -> list[Issue]:
        r = self.repo(s, repo)
        rows = self.list_issues(s, r, state=state, pulls=True, sort=sort, direction=direction)
        if head:
            owner, _, ref = head.rpartition(":")
            if owner and owner.lower() != r.owner.lower():
                return []
            rows = [i for i in rows if i.pull is not None and i.pull.head_ref == ref]
        if base:
            rows = [i for i in rows if i.pull is not None and i.pull.base_ref == base]
        return rows

    def search_issues(self, s: Session, query: str) -> list[Issue]:
        """GitHub's issue search over the qualifiers agents use, plus free text."""
        q = select(Issue)
        terms: list[str] = []
        labels: list[str] = []
        authors: list[str] = []
        assignees: list[str] = []
        for token in _split_query(query):
            key, sep, value = token.partition(":")
            key = key.lower()
            value = value.strip('"')
            if not sep:
                terms.append(token.strip('"').lower())
            elif key == "repo":
                owner, _, name = value.partition("/")
                try:
                    r = self.repo(s, owner, name)
                except NotFound:
                    return []
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
            elif key == "label":
                labels.append(value.lower())
            elif key == "author":
                authors.append(value.lower())
            elif key == "assignee":
                assignees.append(value.lower())
            elif key == "in":
                continue
            else:
                terms.append(token.lower())
        rows = list(s.scalars(q.order_by(Issue.created_at.desc(), Issue.id.desc())))
        out = []
        for i in rows:
            names = {lb.name.lower() for lb in i.labels}
            if any(label not in names for label in labels):
                continue
            if authors and i.author.login.lower() not in authors:
                continue
            if assignees and not {u.login.lower() for u in i.assignees} & set(assignees):
                continue
            text = f"{i.title}\n{i.body or ''}".lower()
            if any(t not in text for t in terms):
                continue
            out.append(i)
        return out

    # ------------------------------------------------------------------ issues

    def _actor(self, s: Session, actor: str) -> User:
        try:
            return self.user(s, actor)
        except NotFound as exc:
            raise GitHubError("Bad credentials") from exc

    def _labels(self, s: Session, repo: Repo, names: Iterable[str]) -> list[Label]:
        """Labels by name, created with GitHub's default colour when new (as GitHub does)."""
        out: list[Label] = []
        for name in names:
            name = str(name).strip()
            if not name:
                raise ValidationFailed("Label", "name", "missing_field")
            try:
                row = self.label(s, repo, name)
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
                row = self.user(s, str(login))
            except NotFound as exc:
                raise ValidationFailed(resource, "assignees", "invalid") from exc
            if row not in out:
                out.append(row)
        return out

    def _next_number(self, s: Session, repo: Repo) -> int:
        top = s.scalar(select(func.max(Issue.number)).where(Issue.repo_id == repo.id))
        return (top or 0) + 1

    def create_issue(
        self,
        s: Session,
        actor: str,
        repo: Repo | str,
        title: str,
        body: str | None = None,
        labels: Iterable[str] = (),
        assignees: Iterable[str] = (),
    ) -> Issue:
        r = self.repo(s, repo)
        if not title or not str(title).strip():
            raise ValidationFailed("Issue", "title", "missing_field")
        author = self._actor(s, actor)
        now = self.now()
        issue = Issue(
            repo=r,
            number=self._next_number(s, r),
            is_pull=False,
            title=str(title),
            body=body,
            state="open",
            author=author,
            created_at=now,
            updated_at=now,
            labels=self._labels(s, r, labels),
            assignees=self._assignees(s, assignees, "Issue"),
        )
        s.add(issue)
        s.flush()
        self._event(
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

    def update_issue(
        self, s: Session, actor: str, repo: Repo | str, number: int, **changes: Any
    ) -> Issue:
        """Change title, body, state, state_reason, labels or assignees (issue or PR)."""
        issue = self.issue(s, repo, number)
        resource = "PullRequest" if issue.is_pull else "Issue"
        user = self._actor(s, actor)
        now = self.now()
        diff: dict[str, dict[str, Any]] = {}

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
                else:
                    issue.closed_at = None
                    issue.closed_by = None
                    if not issue.is_pull:
                        note("state_reason", issue.state_reason, "reopened")
                        issue.state_reason = "reopened"
        if reason is not None and state is None and not issue.is_pull and issue.state == "closed":
            note("state_reason", issue.state_reason, reason)
            issue.state_reason = reason
        if changes.get("labels") is not None:
            new_labels = self._labels(s, issue.repo, changes["labels"])
            note("labels", [lb.name for lb in issue.labels], [lb.name for lb in new_labels])
            issue.labels = new_labels
        if changes.get("assignees") is not None:
            new_people = self._assignees(s, changes["assignees"], resource)
            note("assignees", [u.login for u in issue.assignees], [u.login for u in new_people])
            issue.assignees = new_people
        if diff:
            issue.updated_at = now
            kind = "github.pull_request.updated" if issue.is_pull else "github.issue.updated"
            obj = "pull_request" if issue.is_pull else "issue"
            self._event(
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
        issue = self.issue(s, repo, number)
        self._actor(s, actor)
        for label in self._labels(s, issue.repo, names):
            if label not in issue.labels:
                issue.labels.append(label)
                self._event(
                    s,
                    actor,
                    "github.label.added",
                    ("issue", issue.key),
                    {"repo": issue.repo.full_name, "number": issue.number, "label": label.name},
                )
                issue.updated_at = self.now()
        s.flush()
        return issue

    def remove_label(
        self, s: Session, actor: str, repo: Repo | str, number: int, name: str
    ) -> Issue:
        issue = self.issue(s, repo, number)
        self._actor(s, actor)
        match = [lb for lb in issue.labels if lb.name.lower() == name.lower()]
        if not match:
            raise NotFound("Label does not exist")
        issue.labels.remove(match[0])
        issue.updated_at = self.now()
        self._event(
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
        issue = self.issue(s, repo, number)
        if not body or not str(body).strip():
            raise ValidationFailed("IssueComment", "body", "missing_field")
        now = self.now()
        comment = Comment(
            issue=issue,
            author=self._actor(s, actor),
            body=str(body),
            created_at=now,
            updated_at=now,
        )
        s.add(comment)
        issue.updated_at = now
        s.flush()
        self._event(
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
        return comment

    # ------------------------------------------------------------------ pull requests

    def create_pull(
        self,
        s: Session,
        actor: str,
        repo: Repo | str,
        title: str,
        body: str | None,
        head: str,
        base: str,
        draft: bool = False,
        maintainer_can_modify: bool = False,
    ) -> Issue:
        r = self.repo(s, repo)
        author = self._actor(s, actor)
        if not title or not str(title).strip():
            raise ValidationFailed("PullRequest", "title", "missing_field")
        if not base:
            raise ValidationFailed("PullRequest", "base", "missing_field")
        if not head:
            raise ValidationFailed("PullRequest", "head", "missing_field")
        owner, _, head_ref = head.rpartition(":")
        if owner and owner.lower() != r.owner.lower():
            raise ValidationFailed("PullRequest", "head", "invalid")
        base_branch = self.branch(s, r, base)
        if base_branch is None:
            raise ValidationFailed("PullRequest", "base", "invalid")
        head_branch = self.branch(s, r, head_ref)
        if head_branch is None:
            raise ValidationFailed("PullRequest", "head", "invalid")
        if self.list_pulls(s, r, state="open", head=head_ref, base=base):
            raise ValidationFailed(
                "PullRequest",
                None,
                "custom",
                f"A pull request already exists for {r.owner}:{head_ref}.",
            )
        if not self.git.commits_between(r.full_name, base_branch.sha, head_branch.sha):
            raise ValidationFailed(
                "PullRequest", None, "custom", f"No commits between {base} and {head_ref}"
            )
        now = self.now()
        issue = Issue(
            repo=r,
            number=self._next_number(s, r),
            is_pull=True,
            title=str(title),
            body=body,
            state="open",
            author=author,
            created_at=now,
            updated_at=now,
        )
        s.add(issue)
        s.flush()
        s.add(
            Pull(
                id=issue.id,
                head_ref=head_ref,
                base_ref=base,
                head_sha=head_branch.sha,
                base_sha=base_branch.sha,
                draft=bool(draft),
                maintainer_can_modify=bool(maintainer_can_modify),
            )
        )
        s.flush()
        s.refresh(issue)
        self._event(
            s,
            actor,
            "github.pull_request.opened",
            ("pull_request", issue.key),
            {
                "repo": r.full_name,
                "number": issue.number,
                "title": issue.title,
                "body": issue.body,
                "head": head_ref,
                "base": base,
                "draft": bool(draft),
            },
        )
        return issue

    def update_pull(
        self, s: Session, actor: str, repo: Repo | str, number: int, **changes: Any
    ) -> Issue:
        """Change title, body, state, base, draft or maintainer_can_modify."""
        issue = self.pull(s, repo, number)
        pull = issue.pull
        assert pull is not None
        extra: dict[str, dict[str, Any]] = {}
        if changes.get("base") is not None and changes["base"] != pull.base_ref:
            branch = self.branch(s, issue.repo, changes["base"])
            if branch is None:
                raise ValidationFailed("PullRequest", "base", "invalid")
            extra["base"] = {"from": pull.base_ref, "to": branch.name}
            pull.base_ref, pull.base_sha = branch.name, branch.sha
        for key in ("draft", "maintainer_can_modify"):
            if changes.get(key) is not None and bool(changes[key]) != getattr(pull, key):
                extra[key] = {"from": getattr(pull, key), "to": bool(changes[key])}
                setattr(pull, key, bool(changes[key]))
        plain: dict[str, Any] = {k: changes[k] for k in ("title", "body", "state") if k in changes}
        if "labels" in changes or "assignees" in changes:
            plain.update({k: changes[k] for k in ("labels", "assignees") if k in changes})
        if extra:
            # Recorded together with any plain changes, as one update event.
            issue.updated_at = self.now()
            self._event(
                s,
                actor,
                "github.pull_request.updated",
                ("pull_request", issue.key),
                {"repo": issue.repo.full_name, "number": issue.number, "changes": extra},
            )
        if plain:
            self.update_issue(s, actor, issue.repo, number, **plain)
        s.flush()
        return issue

    def merge_pull(
        self,
        s: Session,
        actor: str,
        repo: Repo | str,
        number: int,
        method: str = "merge",
        commit_title: str | None = None,
        commit_message: str | None = None,
        sha: str | None = None,
    ) -> Issue:
        issue = self.pull(s, repo, number)
        pull = issue.pull
        assert pull is not None
        r = issue.repo
        user = self._actor(s, actor)
        if method not in MERGE_METHODS:
            raise ValidationFailed("PullRequest", "merge_method", "invalid")
        if pull.merged_at is not None or issue.state != "open":
            raise MethodNotAllowed("Pull Request is not mergeable")
        if pull.draft:
            raise MethodNotAllowed("Pull Request is still a draft")
        if sha is not None and sha != pull.head_sha:
            raise Conflict("Head branch was modified. Review and try the merge again.")
        base = self.branch(s, r, pull.base_ref)
        if base is None or not r.has_git:
            raise MethodNotAllowed("Pull Request is not mergeable")
        now = self.now()
        who = Person(user.name or user.login, _noreply(user), now)
        new_sha = self._merge_commits(
            r, base.sha, pull, issue, method, commit_title, commit_message, who
        )
        with self.push_lock:
            self.git.update_ref(r.full_name, f"refs/heads/{base.name}", new_sha, base.sha)
        self._move_branch(s, r, base.name, new_sha)
        pull.merged_at = now
        pull.merged_by = user
        pull.merge_commit_sha = new_sha
        issue.state = "closed"
        issue.closed_at = now
        issue.closed_by = user
        issue.updated_at = now
        r.pushed_at = now
        s.flush()
        self._event(
            s,
            actor,
            "github.pull_request.merged",
            ("pull_request", issue.key),
            {
                "repo": r.full_name,
                "number": issue.number,
                "merge_commit_sha": new_sha,
                "method": method,
            },
        )
        return issue

    def _merge_commits(
        self,
        r: Repo,
        base_sha: str,
        pull: Pull,
        issue: Issue,
        method: str,
        title: str | None,
        message: str | None,
        who: Person,
    ) -> str:
        name = r.full_name
        not_mergeable = MethodNotAllowed("Pull Request is not mergeable")
        if method == "rebase":
            tip = base_sha
            for commit in self.git.commits_between(name, base_sha, pull.head_sha):
                tree = self.git.pick_tree(name, tip, commit)
                if tree is None:
                    raise not_mergeable
                info = self.git.commit(name, commit)
                tip = self.git.commit_tree(name, tree, [tip], info.message + "\n", who)
            return tip
        tree = self.git.merge_tree(name, base_sha, pull.head_sha)
        if tree is None:
            raise not_mergeable
        if method == "squash":
            head = title or f"{issue.title} (#{issue.number})"
            text = f"{head}\n\n{message}" if message else head
            return self.git.commit_tree(name, tree, [base_sha], text + "\n", who)
        head = title or f"Merge pull request #{issue.number} from {r.owner}/{pull.head_ref}"
        text = f"{head}\n\n{message if message is not None else issue.title}"
        return self.git.commit_tree(name, tree, [base_sha, pull.head_sha], text + "\n", who)

    def submit_review(
        self,
        s: Session,
        actor: str,
        repo: Repo | str,
        number: int,
        event: str | None,
        body: str | None,
        commit_id: str | None = None,
    ) -> Review:
        """A review: APPROVE, REQUEST_CHANGES, COMMENT, or None for a pending one."""
        issue = self.pull(s, repo, number)
        pull = issue.pull
        assert pull is not None
        user = self._actor(s, actor)
        if event is not None and event not in REVIEW_EVENTS:
            raise Unprocessable(f"Unexpected event {event!r}")
        state = REVIEW_EVENTS[event] if event else "PENDING"
        if state in ("CHANGES_REQUESTED", "COMMENTED") and not (body or "").strip():
            verb = "request changes on" if state == "CHANGES_REQUESTED" else "comment on"
            raise Unprocessable(f"Review Can not {verb} a pull request without a body")
        if state in ("APPROVED", "CHANGES_REQUESTED") and issue.author_id == user.id:
            verb = "approve" if state == "APPROVED" else "request changes on"
            raise Unprocessable(f"Review Can not {verb} your own pull request")
        now = self.now()
        review = Review(
            pull=pull,
            author=user,
            state=state,
            body=body or "",
            commit_id=commit_id or pull.head_sha,
            submitted_at=None if state == "PENDING" else now,
        )
        s.add(review)
        issue.updated_at = now
        s.flush()
        self._event(
            s,
            actor,
            "github.pull_request_review.submitted",
            ("review", f"{issue.key}/{review.id}"),
            {
                "repo": issue.repo.full_name,
                "number": issue.number,
                "state": state,
                "body": review.body,
            },
        )
        return review

    def add_review_comment(
        self,
        s: Session,
        actor: str,
        repo: Repo | str,
        number: int,
        body: str,
        path: str | None = None,
        line: int | None = None,
        side: str = "RIGHT",
        commit_id: str | None = None,
        in_reply_to: int | None = None,
    ) -> ReviewComment:
        issue = self.pull(s, repo, number)
        pull = issue.pull
        assert pull is not None
        user = self._actor(s, actor)
        if not body or not body.strip():
            raise ValidationFailed("PullRequestReviewComment", "body", "missing_field")
        hunk = ""
        if in_reply_to is not None:
            parent = s.get(ReviewComment, in_reply_to)
            if parent is None or parent.pull_id != pull.id:
                raise NotFound()
            path, line, side, hunk = parent.path, parent.line, parent.side, parent.diff_hunk
        else:
            if not path:
                raise ValidationFailed("PullRequestReviewComment", "path", "missing_field")
            changes = {c.path: c for c in self._changes(issue)}
            if path not in changes:
                raise ValidationFailed(
                    "PullRequestReviewComment",
                    "pull_request_review_thread.path",
                    "custom",
                    "could not be resolved",
                )
            hunk = changes[path].patch
        now = self.now()
        row = ReviewComment(
            pull=pull,
            author=user,
            path=path,
            line=line,
            side=side or "RIGHT",
            commit_id=commit_id or pull.head_sha,
            diff_hunk=hunk,
            in_reply_to_id=in_reply_to,
            body=body,
            created_at=now,
            updated_at=now,
        )
        s.add(row)
        issue.updated_at = now
        s.flush()
        self._event(
            s,
            actor,
            "github.review_comment.created",
            ("review_comment", f"{issue.key}/{row.id}"),
            {
                "repo": issue.repo.full_name,
                "number": issue.number,
                "path": path,
                "line": line,
                "body": body,
            },
        )
        return row

    # ------------------------------------------------------------------ git-backed reads

    def _changes(self, issue: Issue) -> list[Any]:
        pull = issue.pull
        if pull is None or not issue.repo.has_git:
            return []
        try:
            return self.git.changes(issue.repo.full_name, pull.base_sha, pull.head_sha)
        except GitFailed:
            return []

    def pull_files(self, s: Session, repo: Repo | str, number: int) -> list[Any]:
        return self._changes(self.pull(s, repo, number))

    def pull_commits(self, s: Session, repo: Repo | str, number: int) -> list[str]:
        issue = self.pull(s, repo, number)
        pull = issue.pull
        assert pull is not None
        if not issue.repo.has_git:
            return []
        try:
            return self.git.commits_between(issue.repo.full_name, pull.base_sha, pull.head_sha)
        except GitFailed:
            return []

    def pull_diff(self, s: Session, repo: Repo | str, number: int, patch: bool = False) -> str:
        issue = self.pull(s, repo, number)
        pull = issue.pull
        assert pull is not None
        if not issue.repo.has_git:
            return ""
        try:
            if patch:
                return self.git.patch(issue.repo.full_name, pull.base_sha, pull.head_sha)
            return self.git.diff(issue.repo.full_name, pull.base_sha, pull.head_sha)
        except GitFailed:
            return ""

    # ------------------------------------------------------------------ contents and pushes

    def put_contents(
        self,
        s: Session,
        actor: str,
        repo: Repo | str,
        path: str,
        content: bytes,
        message: str,
        branch: str | None = None,
        sha: str | None = None,
    ) -> tuple[str, str]:
        """Create or update one file with a real commit; returns (commit sha, blob sha)."""
        r = self.repo(s, repo)
        user = self._actor(s, actor)
        path = path.strip("/")
        if not message:
            raise ValidationFailed("Commit", "message", "missing_field")
        if not path:
            raise ValidationFailed("Commit", "path", "missing_field")
        if not r.has_git:
            raise NotFound("Git Repository is empty.")
        name = branch or r.default_branch
        row = self.branch(s, r, name)
        if row is None:
            raise NotFound(f"Branch {name} not found")
        current = self.git.entry(r.full_name, row.sha, path)
        if current is not None and current.type != "blob":
            raise ValidationFailed("Commit", "path", "invalid")
        if current is not None and sha is None:
            raise Unprocessable(message='Invalid request.\n\n"sha" wasn\'t supplied.')
        if current is not None and sha != current.sha:
            raise Conflict(f"{path} does not match {sha}")
        now = self.now()
        author = Person(user.name or user.login, _noreply(user), now)
        with self.push_lock:
            commit, blob = self.git.put_file(
                r.full_name, name, row.sha, path, content, message, author
            )
        self._move_branch(s, r, name, commit)
        r.pushed_at = now
        r.updated_at = now
        self._event(
            s,
            actor,
            "github.contents.updated",
            ("contents", f"{r.full_name}:{path}"),
            {"repo": r.full_name, "path": path, "branch": name, "sha": commit},
        )
        return commit, blob

    def _move_branch(self, s: Session, r: Repo, name: str, sha: str | None) -> None:
        """Keep the branch table and the heads of open pull requests on this branch in step."""
        row = self.branch(s, r, name)
        if sha is None:
            if row is not None:
                s.delete(row)
        elif row is None:
            s.add(Branch(repo=r, name=name, sha=sha))
        else:
            row.sha = sha
        if sha is not None:
            q = (
                select(Pull)
                .join(Issue, Issue.id == Pull.id)
                .where(Issue.repo_id == r.id, Issue.state == "open", Pull.head_ref == name)
            )
            for pull in s.scalars(q):
                pull.head_sha = sha
        s.flush()

    def apply_push(
        self, s: Session, actor: str | None, repo: Repo | str, updates: Iterable[RefUpdate]
    ) -> None:
        """Record what a ``git push`` changed: branches, pull request heads, events."""
        r = self.repo(s, repo)
        now = self.now()
        for u in updates:
            created, deleted = u.before == ZERO, u.after == ZERO
            forced = (
                not created
                and not deleted
                and not self.git.is_ancestor(r.full_name, u.before, u.after)
            )
            if u.ref.startswith("refs/heads/"):
                self._move_branch(
                    s, r, u.ref.removeprefix("refs/heads/"), None if deleted else u.after
                )
            r.pushed_at = now
            self._event(
                s,
                actor,
                "git.push",
                ("ref", f"{r.full_name}:{u.ref}"),
                {
                    "repo": r.full_name,
                    "ref": u.ref,
                    "before": u.before,
                    "after": u.after,
                    "forced": forced,
                    "created": created,
                    "deleted": deleted,
                },
            )


def _noreply(user: User) -> str:
    return user.email or f"{user.id}+{user.login}@users.noreply.github.com"


def _split_query(query: str) -> list[str]:
    """Whitespace-separated tokens, keeping ``"quoted phrases"`` (and ``key:"a b"``) whole."""
    tokens: list[str] = []
    current = ""
    quoted = False
    for ch in query:
        if ch == '"':
            quoted = not quoted
            current += ch
        elif ch.isspace() and not quoted:
            if current:
                tokens.append(current)
            current = ""
        else:
            current += ch
    if current:
        tokens.append(current)
    return tokens
