"""The backend's core: the world it belongs to, authentication, events and every lookup.

The operations build on it, one concern per module (:mod:`fakes.github.ops_refs`,
:mod:`fakes.github.ops_issues`, :mod:`fakes.github.ops_pulls`);
:class:`fakes.github.backend.GitHubBackend` puts them together.
"""

from __future__ import annotations

import base64
import binascii
import shutil
import tempfile
import threading
import weakref
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from fakes.core.world import World
from fakes.github.errors import GitHubError, NotFound, ValidationFailed
from fakes.github.gitstore import GitStore, TreeEntry
from fakes.github.models import (
    Branch,
    CheckRun,
    Comment,
    CommitStatus,
    Issue,
    Label,
    Pull,
    Repo,
    User,
)


class BackendCore:
    """What every operation needs: the world, the git repositories, lookups, events."""

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
        for token in split_query(query):
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

    def search_code(self, s: Session, query: str) -> list[tuple[Repo, TreeEntry]]:
        """GitHub's code search over the default branches: ``repo:``, ``user:``/``org:``,
        ``path:``, ``filename:``, ``extension:`` and words that must all appear."""
        terms: list[str] = []
        repos = select(Repo).where(Repo.has_git.is_(True))
        paths: list[str] = []
        names: list[str] = []
        extensions: list[str] = []
        for token in split_query(query):
            key, sep, value = token.partition(":")
            key, value = key.lower(), value.strip('"')
            if not sep:
                terms.append(token.strip('"'))
            elif key == "repo":
                owner, _, name = value.partition("/")
                repos = repos.where(
                    func.lower(Repo.owner) == owner.lower(), func.lower(Repo.name) == name.lower()
                )
            elif key in ("user", "org", "owner"):
                repos = repos.where(func.lower(Repo.owner) == value.lower())
            elif key == "path":
                paths.append(value.strip("/"))
            elif key == "filename":
                names.append(value)
            elif key == "extension":
                extensions.append(value.lstrip("."))
            elif key in ("in", "language", "lang", "size", "fork"):
                continue
            else:
                terms.append(token)
        if not terms:
            raise ValidationFailed("Search", "q", "invalid")
        found: list[tuple[Repo, TreeEntry]] = []
        for r in s.scalars(repos.order_by(Repo.id)):
            tip = self.git.resolve(r.full_name, r.default_branch)
            if tip is None:
                continue
            for path in self.git.grep(r.full_name, tip, terms):
                name = path.rsplit("/", 1)[-1]
                if paths and not any(path == p or path.startswith(p + "/") for p in paths):
                    continue
                if names and name not in names:
                    continue
                if extensions and name.rsplit(".", 1)[-1] not in extensions:
                    continue
                entry = self.git.entry(r.full_name, tip, path)
                if entry is not None:
                    found.append((r, entry))
        return found

    def _actor(self, s: Session, actor: str) -> User:
        try:
            return self.user(s, actor)
        except NotFound as exc:
            raise GitHubError("Bad credentials") from exc


def noreply(user: User) -> str:
    return user.email or f"{user.id}+{user.login}@users.noreply.github.com"


def split_query(query: str) -> list[str]:
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
