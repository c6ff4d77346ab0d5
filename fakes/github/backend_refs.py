"""Refs: contents updates (a real commit) and pushes, which move branches and the heads of
the pull requests on them, and ``refs/pull/N/head``."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from fakes.github.backend_repos import Repos
from fakes.github.backend_state import GitHubState, noreply
from fakes.github.errors import (
    Conflict,
    NotFound,
    Unprocessable,
    ValidationFailed,
)
from fakes.github.gitstore import ZERO, Person
from fakes.github.models import (
    Branch,
    Issue,
    Pull,
    Repo,
)


@dataclass(frozen=True)
class RefUpdate:
    """One ref a push changed (``before``/``after`` are the zero SHA when absent)."""

    ref: str
    before: str
    after: str


class Refs:
    """Every way a ref moves: the contents API, a push, the git refs API."""

    def __init__(self, state: GitHubState, repos: Repos) -> None:
        self.state = state
        self.repos = repos

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
        r = self.repos.get(s, repo)
        user = self.repos.actor(s, actor)
        path = path.strip("/")
        if not message:
            raise ValidationFailed("Commit", "message", "missing_field")
        if not path:
            raise ValidationFailed("Commit", "path", "missing_field")
        if not r.has_git:
            raise NotFound("Git Repository is empty.")
        name = branch or r.default_branch
        row = self.repos.branch(s, r, name)
        if row is None:
            raise NotFound(f"Branch {name} not found")
        current = self.state.git.entry(r.full_name, row.sha, path)
        if current is not None and current.type != "blob":
            raise ValidationFailed("Commit", "path", "invalid")
        if current is not None and sha is None:
            raise Unprocessable(message='Invalid request.\n\n"sha" wasn\'t supplied.')
        if current is not None and sha != current.sha:
            raise Conflict(f"{path} does not match {sha}")
        now = self.state.now()
        author = Person(user.name or user.login, noreply(user), now)
        with self.state.push_lock:
            commit, blob = self.state.git.put_file(
                r.full_name, name, row.sha, path, content, message, author
            )
        self.move_branch(s, r, name, commit)
        r.pushed_at = now
        r.updated_at = now
        self.state.record(
            s,
            actor,
            "github.contents.updated",
            ("contents", f"{r.full_name}:{path}"),
            {"repo": r.full_name, "path": path, "branch": name, "sha": commit},
        )
        return commit, blob

    def move_branch(self, s: Session, r: Repo, name: str, sha: str | None) -> None:
        """Keep the branch table and the heads of open pull requests on this branch in step."""
        row = self.repos.branch(s, r, name)
        if sha is None:
            if row is not None:
                s.delete(row)
        elif row is None:
            s.add(Branch(repo=r, name=name, sha=sha))
        else:
            row.sha = sha
        if sha is not None:
            # Open pull requests follow their branches: the head to the new tip (GitHub's
            # "synchronize"), the base too, so mergeability and diffs are against today's base.
            q = (
                select(Pull)
                .join(Issue, Issue.id == Pull.id)
                .where(Issue.repo_id == r.id, Issue.state == "open")
                .where((Pull.head_ref == name) | (Pull.base_ref == name))
            )
            for pull in s.scalars(q):
                if pull.head_ref == name:
                    pull.head_sha = sha
                    self.pull_ref(r, pull.issue.number, sha)
                if pull.base_ref == name:
                    pull.base_sha = sha
        s.flush()

    def apply_push(
        self, s: Session, actor: str | None, repo: Repo | str, updates: Iterable[RefUpdate]
    ) -> None:
        """Record what a ``git push`` changed: branches, pull request heads, events."""
        r = self.repos.get(s, repo)
        now = self.state.now()
        for u in updates:
            created, deleted = u.before == ZERO, u.after == ZERO
            forced = (
                not created
                and not deleted
                and not self.state.git.is_ancestor(r.full_name, u.before, u.after)
            )
            if u.ref.startswith("refs/heads/"):
                self.move_branch(
                    s, r, u.ref.removeprefix("refs/heads/"), None if deleted else u.after
                )
            r.pushed_at = now
            self.state.record(
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

    def write(
        self,
        s: Session,
        actor: str,
        repo: Repo | str,
        ref: str,
        sha: str | None,
        *,
        create: bool = False,
        force: bool = False,
    ) -> str | None:
        """Create, move or (``sha`` None) delete a branch or tag through the API.

        It changes refs exactly as a push would, so it is recorded as one: a ``git.push``
        event with the actor, and branches and pull request heads follow. Returns the SHA
        the ref had before.
        """
        r = self.repos.get(s, repo)
        self.repos.actor(s, actor)
        if not r.has_git:
            raise NotFound("Git Repository is empty.")
        if not ref.startswith(("refs/heads/", "refs/tags/")) or ref.count("/") < 2:
            raise Unprocessable(message="Reference name is invalid")
        if sha is not None and self.state.git.resolve(r.full_name, sha) != sha:
            raise Unprocessable(message="Object does not exist")
        with self.state.push_lock:
            before = self.state.git.heads(r.full_name).get(ref)
            if create and before is not None:
                raise Unprocessable(message="Reference already exists")
            if not create and before is None:
                raise Unprocessable(message="Reference does not exist")
            if sha is None:
                if ref == f"refs/heads/{r.default_branch}":
                    raise Unprocessable(message="Cannot delete the default branch")
                self.state.git.git(r.full_name, "update-ref", "-d", ref, before or ZERO)
            else:
                behind = before is not None and not self.state.git.is_ancestor(
                    r.full_name, before, sha
                )
                if behind and not force:
                    raise Unprocessable(message="Update is not a fast forward")
                self.state.git.update_ref(r.full_name, ref, sha, before)
        self.apply_push(s, actor, r, [RefUpdate(ref, before or ZERO, sha or ZERO)])
        return before

    def pull_ref(self, r: Repo, number: int, sha: str) -> None:
        """Keep ``refs/pull/N/head`` (fetchable, never pushable) on a pull request's head."""
        if r.has_git and self.state.git.resolve(r.full_name, sha) == sha:
            with self.state.push_lock:
                self.state.git.set_ref(r.full_name, f"refs/pull/{number}/head", sha)
