"""The fake GitHub's backend: every read and write REST, GraphQL and git make, on one state.

:class:`GitHubBackend` owns one object per resource area, each holding the shared
:class:`~fakes.github.backend_state.GitHubState`: ``repos`` (users, repositories and their
lookups, :mod:`fakes.github.backend_repos`), ``refs`` (contents, pushes, the refs API,
:mod:`fakes.github.backend_refs`), ``issues`` (:mod:`fakes.github.backend_issues`) and
``pulls`` (:mod:`fakes.github.backend_pulls`). It seeds the world's GitHub tables, dumps them,
and tells who a request's token belongs to.

Mutations take the open session first, record their event in that same session (so an event
lands with its change) and date everything on the world's frozen clock. Problems raise the
exceptions of :mod:`fakes.github.errors`, which carry GitHub's status and body.
"""

from __future__ import annotations

import base64
import binascii
import threading
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import DeclarativeBase, Session

from fakes.core.world import World
from fakes.github.backend_issues import Issues
from fakes.github.backend_labels import Labels
from fakes.github.backend_pulls import Pulls
from fakes.github.backend_refs import Refs
from fakes.github.backend_repos import Repos
from fakes.github.backend_state import GitHubState
from fakes.github.gitstore import GitStore
from fakes.github.models import (
    Branch,
    Comment,
    GitHubBase,
    Issue,
    IssueEvent,
    Label,
    Pull,
    Repo,
    Review,
    User,
)


class GitHubBackend:
    """GitHub's state and operations for one world, one object per resource area."""

    service: str = "github"
    base: type[DeclarativeBase] = GitHubBase

    def __init__(self, world: World) -> None:
        self.state = GitHubState(world)
        self.repos = Repos(self.state)
        self.refs = Refs(self.state, self.repos)
        self.issues = Issues(self.state, self.repos)
        self.labels = Labels(self.state, self.repos)
        self.pulls = Pulls(self.state, self.repos, self.issues, self.refs)

    @property
    def world(self) -> World:
        return self.state.world

    @property
    def git(self) -> GitStore:
        return self.state.git

    @property
    def push_lock(self) -> threading.Lock:
        return self.state.push_lock

    def close(self) -> None:
        """Delete the git repositories now rather than when the backend is collected."""
        self.state.close()

    def viewer_login(self) -> str:
        return self.state.viewer_login()

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
                    self.world.snapshot.bundle(r.full_name),
                    part.base_commit,
                    part.default_branch,
                    part.tags,
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
            for e in t.events:
                known = labels.get((repo.id, e.label)) if e.label is not None else None
                s.add(
                    IssueEvent(
                        id=e.id,
                        issue=issue,
                        event=e.event,
                        actor=users[e.actor],
                        created_at=e.created_at,
                        label_name=e.label,
                        # A label since deleted keeps GitHub's default colour.
                        label_color=(known.color if known else "ededed") if e.label else None,
                        assignee=users[e.assignee] if e.assignee is not None else None,
                        rename_from=e.rename_from,
                        rename_to=e.rename_to,
                        commit_id=e.commit_id,
                        state_reason=e.state_reason,
                    )
                )
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
            self.refs.pull_ref(repos[p.repo], p.number, p.head_sha)
            if p.state == "open":
                self._seed_head_branch(s, repos[p.repo], p.head_ref, p.head_sha)
        s.flush()

    def _seed_head_branch(self, s: Session, repo: Repo, name: str, sha: str) -> None:
        """The branch of a pull request open at T, when its head is in the cut history.

        A head commit that is not in the repository (made on a branch the bundle does not
        carry) is left out rather than invented; that pull request then has no branch.
        """
        if not repo.has_git or self.git.resolve(repo.full_name, sha) != sha:
            return
        if self.repos.branch(s, repo, name) is not None:
            return
        self.git.update_ref(repo.full_name, f"refs/heads/{name}", sha, None)
        s.add(Branch(repo=repo, name=name, sha=sha))
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
                "events": [_dump_event(e) for e in i.events],
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


def _dump_event(e: IssueEvent) -> dict[str, Any]:
    """An issue event in the snapshot's terms (:class:`replay.base.worldstate.GitHubIssueEvent`)."""
    return {
        "id": e.id,
        "event": e.event,
        "actor": e.actor.login,
        "created_at": e.created_at.isoformat(),
        "label": e.label_name,
        "assignee": e.assignee.login if e.assignee is not None else None,
        "rename_from": e.rename_from,
        "rename_to": e.rename_to,
        "commit_id": e.commit_id,
        "state_reason": e.state_reason,
    }


__all__ = ["GitHubBackend"]
