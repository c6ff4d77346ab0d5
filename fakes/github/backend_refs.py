"""Refs: contents updates (a real commit) and pushes, which move branches and the heads of
the pull requests on them, and ``refs/pull/N/head``.

Every route that moves a branch ends in :meth:`Refs.branch_moved`, which records the one
``github.branch.moved`` event a rule about the branch names, whatever the route; the route's
own event (``git.push``, ``github.contents.updated``...) is recorded beside it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from sqlalchemy import select
from sqlalchemy.orm import Session

from fakes.github.backend_repos import Repos
from fakes.github.backend_state import GitHubState, noreply
from fakes.github.errors import (
    Conflict,
    NotFound,
    StaleData,
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

Via = Literal["push", "contents", "merge", "refs", "commit"]
"""The route that moved a branch (``github.branch.moved``'s ``via``): a git push, the contents
API, a pull request merged, the refs API (REST or GraphQL), GraphQL ``createCommitOnBranch``."""


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
        before = row.sha
        with self.state.push_lock:
            commit, blob = self.state.git.put_file(
                r.full_name, name, before, path, content, message, author
            )
        r.pushed_at = now
        r.updated_at = now
        self.state.record(
            s,
            actor,
            "github.contents.updated",
            ("contents", f"{r.full_name}:{path}"),
            {"repo": r.full_name, "path": path, "branch": name, "sha": commit},
        )
        self.branch_moved(s, actor, r, name, before, commit, "contents", forced=False)
        return commit, blob

    def delete_contents(
        self,
        s: Session,
        actor: str,
        repo: Repo | str,
        path: str,
        message: str,
        sha: str | None,
        branch: str | None = None,
    ) -> str:
        """Delete one file with a real commit (``DELETE .../contents/{path}``); returns the
        commit's sha. ``sha`` must be the file's blob, as for an update."""
        r = self.repos.get(s, repo)
        user = self.repos.actor(s, actor)
        path = path.strip("/")
        if not message:
            raise ValidationFailed("Commit", "message", "missing_field")
        if sha is None:
            raise Unprocessable(message='Invalid request.\n\n"sha" wasn\'t supplied.')
        if not r.has_git:
            raise NotFound("Git Repository is empty.")
        name = branch or r.default_branch
        row = self.repos.branch(s, r, name)
        if row is None:
            raise NotFound(f"Branch {name} not found")
        current = self.state.git.entry(r.full_name, row.sha, path) if path else None
        if current is None or current.type != "blob":
            raise NotFound()
        if sha != current.sha:
            raise Conflict(f"{path} does not match {sha}")
        now = self.state.now()
        author = Person(user.name or user.login, noreply(user), now)
        before = row.sha
        with self.state.push_lock:
            commit = self.state.git.commit_files(
                r.full_name, name, before, {}, [path], message, author, committer=author
            )
        r.pushed_at = now
        r.updated_at = now
        self.state.record(
            s,
            actor,
            "github.contents.deleted",
            ("contents", f"{r.full_name}:{path}"),
            {"repo": r.full_name, "path": path, "branch": name, "sha": commit},
        )
        self.branch_moved(s, actor, r, name, before, commit, "contents", forced=False)
        return commit

    def commit_on_branch(
        self,
        s: Session,
        actor: str,
        r: Repo,
        name: str,
        expected_head: str,
        added: dict[str, bytes],
        deleted: list[str],
        headline: str,
        body: str | None = None,
    ) -> str:
        """GraphQL ``createCommitOnBranch``: one commit of ``added`` (path: content) and
        ``deleted`` on the branch ``name``, which must still be at ``expected_head``; returns
        the commit. Authored by the token's user, committed by GitHub (GitHub signs it)."""
        user = self.repos.actor(s, actor)
        row = self.repos.branch(s, r, name)
        if row is None or not r.has_git:
            raise NotFound(f"Could not resolve to a Ref with the name 'refs/heads/{name}'.")
        message = headline if not body else f"{headline}\n\n{body}"
        now = self.state.now()
        author = Person(user.name or user.login, noreply(user), now)
        with self.state.push_lock:
            before = row.sha
            if expected_head != before:
                raise StaleData(
                    f'Expected branch to point to "{expected_head}" but it did not.  '
                    "Pull and try again."
                )
            for path in deleted:
                entry = self.state.git.entry(r.full_name, before, path.strip("/"))
                if entry is None or entry.type != "blob":
                    raise Unprocessable(
                        message="A path was requested for deletion which does not exist as of "
                        f"commit oid `{before}`."
                    )
            blobs = {
                path.strip("/"): self.state.git.write_blob(r.full_name, data)
                for path, data in added.items()
            }
            commit = self.state.git.commit_files(
                r.full_name,
                name,
                before,
                blobs,
                [p.strip("/") for p in deleted],
                message + "\n",
                author,
            )
        r.pushed_at = now
        r.updated_at = now
        self.state.record(
            s,
            actor,
            "github.commit.created",
            ("commit", f"{r.full_name}@{commit}"),
            {
                "repo": r.full_name,
                "branch": name,
                "sha": commit,
                "headline": headline,
                "added": sorted(blobs),
                "deleted": sorted(p.strip("/") for p in deleted),
            },
        )
        self.branch_moved(s, actor, r, name, before, commit, "commit", forced=False)
        return commit

    def branch_moved(
        self,
        s: Session,
        actor: str | None,
        r: Repo,
        name: str,
        before: str,
        after: str,
        via: Via,
        *,
        forced: bool | None = None,
    ) -> None:
        """A branch moved from ``before`` to ``after`` (the zero SHA for absent), its git ref
        already written: keep the tables in step (:meth:`move_branch`) and record
        ``github.branch.moved``. ``forced`` None: whether ``after`` does not descend from
        ``before``, asked of git."""
        created, deleted = before == ZERO, after == ZERO
        if forced is None:
            forced = (
                not created
                and not deleted
                and not self.state.git.is_ancestor(r.full_name, before, after)
            )
        self.move_branch(s, r, name, None if deleted else after)
        self.state.record(
            s,
            actor,
            "github.branch.moved",
            ("branch", f"{r.full_name}:{name}"),
            {
                "repo": r.full_name,
                "branch": name,
                "from": before,
                "to": after,
                "forced": forced,
                "created": created,
                "deleted": deleted,
                "default": name == r.default_branch,
                "via": via,
            },
        )

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
        self,
        s: Session,
        actor: str | None,
        repo: Repo | str,
        updates: Iterable[RefUpdate],
        via: Via = "push",
    ) -> None:
        """Record what a ``git push`` (or the refs API, ``via="refs"``) changed: branches,
        pull request heads, events."""
        r = self.repos.get(s, repo)
        now = self.state.now()
        for u in updates:
            created, deleted = u.before == ZERO, u.after == ZERO
            forced = (
                not created
                and not deleted
                and not self.state.git.is_ancestor(r.full_name, u.before, u.after)
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
            if u.ref.startswith("refs/heads/"):
                name = u.ref.removeprefix("refs/heads/")
                self.branch_moved(s, actor, r, name, u.before, u.after, via, forced=forced)

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
        self.apply_push(s, actor, r, [RefUpdate(ref, before or ZERO, sha or ZERO)], via="refs")
        return before

    def pull_ref(self, r: Repo, number: int, sha: str) -> None:
        """Keep ``refs/pull/N/head`` (fetchable, never pushable) on a pull request's head."""
        if r.has_git and self.state.git.resolve(r.full_name, sha) == sha:
            with self.state.push_lock:
                self.state.git.set_ref(r.full_name, f"refs/pull/{number}/head", sha)
