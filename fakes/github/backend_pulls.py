"""Pull requests: lookups, lists, create, update, merge, reviews, review comments, and the
git-backed reads (files, commits, diff)."""

from __future__ import annotations

import re
from typing import Any

from sqlalchemy import ColumnElement, Select, false, func, or_, select
from sqlalchemy.orm import Session, joinedload, object_session

from fakes.core.relay import Rows
from fakes.github.backend_issues import Issues
from fakes.github.backend_refs import Refs
from fakes.github.backend_repos import Repos
from fakes.github.backend_state import GitHubState, noreply
from fakes.github.errors import (
    Conflict,
    MethodNotAllowed,
    NotFound,
    Unprocessable,
    ValidationFailed,
)
from fakes.github.gitstore import GitFailed, Person
from fakes.github.models import (
    Issue,
    Pull,
    Repo,
    Review,
    ReviewComment,
    User,
)

CLOSING = re.compile(
    r"(?i)\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\s*:?\s+([\w.-]+/[\w.-]+)?#(\d+)\b"
)
"""GitHub's closing keywords followed by an issue reference (``Fixes #7``, ``closes a/b#7``)."""

REVIEW_EVENTS = {
    "APPROVE": "APPROVED",
    "REQUEST_CHANGES": "CHANGES_REQUESTED",
    "COMMENT": "COMMENTED",
}
MERGE_METHODS = ("merge", "squash", "rebase")


class Pulls:
    """The pull request side of a thread; its issue side is :class:`Issues`' to change."""

    def __init__(self, state: GitHubState, repos: Repos, issues: Issues, refs: Refs) -> None:
        self.state = state
        self.repos = repos
        self.issues = issues
        self.refs = refs

    # ------------------------------------------------------------------ lookups

    def get(self, s: Session, repo: Repo | str, number: int) -> Issue:
        """A pull request by number; 404 for an issue's number."""
        row = self.issues.get(s, repo, number)
        if row.pull is None:
            raise NotFound()
        return row

    def find(
        self,
        s: Session,
        repo: Repo | str,
        *,
        state: str = "open",
        head: str | None = None,
        base: str | None = None,
        sort: str = "created",
        direction: str = "desc",
    ) -> Rows[Issue]:
        """Pull requests as REST lists them (``head`` as ``owner:branch`` or a branch),
        matched, ordered, counted and paged in SQL as :meth:`Issues.find`'s."""
        r = self.repos.get(s, repo)
        rows = self.issues.find(s, r, state=state, pulls=True, sort=sort, direction=direction)
        q = rows.query
        if head:
            owner, _, ref = head.rpartition(":")
            if owner and owner.lower() != r.owner.lower():
                q = q.where(false())
            q = q.where(Issue.id.in_(select(Pull.id).where(Pull.head_ref == ref)))
        if base:
            q = q.where(Issue.id.in_(select(Pull.id).where(Pull.base_ref == base)))
        return Rows(s, q, rows.order_by, lambda i: i)

    # ------------------------------------------------------------------ reviews, read in SQL

    @staticmethod
    def others_pending(viewer: str) -> Select[Any]:
        """The ids of pending reviews by anyone but ``viewer`` (a login): GitHub shows a
        pending review, and the comments drafted in it, to its author alone."""
        return (
            select(Review.id)
            .join(User, User.id == Review.author_id)
            .where(Review.state == "PENDING", func.lower(User.login) != viewer.lower())
        )

    def reviews_query(self, pull: Pull, viewer: str) -> Select[Review]:
        """The reviews of ``pull`` that ``viewer`` (a login) may see: every submitted one and
        their own pending one. Paged and counted in SQL, so a page of a pull request's
        reviews costs the same however many it has (issue 19)."""
        return select(Review).where(
            Review.pull_id == pull.id, Review.id.not_in(self.others_pending(viewer))
        )

    def seen_by(self, viewer: str) -> ColumnElement[bool]:
        """The review comments ``viewer`` (a login) may see, as a condition: every one but
        those drafted in another's pending review."""
        return or_(
            ReviewComment.review_id.is_(None),
            ReviewComment.review_id.not_in(self.others_pending(viewer)),
        )

    def review_comment_visible(self, comment: ReviewComment, viewer: str) -> bool:
        """Whether ``viewer`` may see ``comment``, by :meth:`seen_by`."""
        s = object_session(comment)
        assert s is not None, "a review comment read outside a session"
        seen = select(ReviewComment.id).where(ReviewComment.id == comment.id, self.seen_by(viewer))
        return s.scalar(seen) is not None

    def reviews_page(
        self, s: Session, pull: Pull, viewer: str, offset: int, limit: int
    ) -> tuple[list[Review], int]:
        """One page of :meth:`reviews_query` by id, and how many there are in all."""
        query = self.reviews_query(pull, viewer)
        return self._page(s, query, Review.id, offset, limit, joinedload(Review.author))

    def review_index(self, s: Session, review: Review, viewer: str) -> int:
        """Where ``review`` stands among its pull request's reviews that ``viewer`` sees, by
        id (its edge's index in GraphQL's ``reviews``): how many come before it, from one
        aggregate."""
        before = select(func.count(Review.id)).where(
            Review.pull_id == review.pull_id,
            Review.id < review.id,
            Review.id.not_in(self.others_pending(viewer)),
        )
        return int(s.scalar(before) or 0)

    def review_comments_page(
        self, s: Session, pull: Pull, viewer: str, offset: int, limit: int
    ) -> tuple[list[ReviewComment], int]:
        """One page of ``pull``'s review comments that ``viewer`` may see, by id, and how
        many there are in all."""
        query = select(ReviewComment).where(ReviewComment.pull_id == pull.id, self.seen_by(viewer))
        return self._page(
            s, query, ReviewComment.id, offset, limit, joinedload(ReviewComment.author)
        )

    def review_comment_count(self, pull: Pull, viewer: str) -> int:
        """How many of ``pull``'s review comments ``viewer`` may see (not those drafted in
        another's pending review), from one aggregate, never its list."""
        s = object_session(pull)
        assert s is not None, "a pull request read outside a session"
        q = select(func.count(ReviewComment.id)).where(
            ReviewComment.pull_id == pull.id, self.seen_by(viewer)
        )
        return int(s.scalar(q) or 0)

    @staticmethod
    def _page(
        s: Session, query: Select[Any], order: Any, offset: int, limit: int, *options: Any
    ) -> tuple[list[Any], int]:
        total = s.scalar(select(func.count()).select_from(query.subquery())) or 0
        page = query.options(*options).order_by(order).offset(offset).limit(limit)
        return list(s.scalars(page)), int(total)

    # ------------------------------------------------------------------ pull requests

    def create(
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
        r = self.repos.get(s, repo)
        author = self.repos.actor(s, actor)
        if not title or not str(title).strip():
            raise ValidationFailed("PullRequest", "title", "missing_field")
        if not base:
            raise ValidationFailed("PullRequest", "base", "missing_field")
        if not head:
            raise ValidationFailed("PullRequest", "head", "missing_field")
        owner, _, head_ref = head.rpartition(":")
        if owner and owner.lower() != r.owner.lower():
            raise ValidationFailed("PullRequest", "head", "invalid")
        base_branch = self.repos.branch(s, r, base)
        if base_branch is None:
            raise ValidationFailed("PullRequest", "base", "invalid")
        head_branch = self.repos.branch(s, r, head_ref)
        if head_branch is None:
            raise ValidationFailed("PullRequest", "head", "invalid")
        if self.find(s, r, state="open", head=head_ref, base=base):
            raise ValidationFailed(
                "PullRequest",
                None,
                "custom",
                f"A pull request already exists for {r.owner}:{head_ref}.",
            )
        if not self.state.git.commits_between(r.full_name, base_branch.sha, head_branch.sha):
            raise ValidationFailed(
                "PullRequest", None, "custom", f"No commits between {base} and {head_ref}"
            )
        now = self.state.now()
        issue = Issue(
            repo=r,
            number=self.issues.next_number(s, r),
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
        self.refs.pull_ref(r, issue.number, head_branch.sha)
        self.state.record(
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

    def update(
        self, s: Session, actor: str, repo: Repo | str, number: int, **changes: Any
    ) -> Issue:
        """Change title, body, state, base, draft or maintainer_can_modify."""
        issue = self.get(s, repo, number)
        pull = issue.pull
        assert pull is not None
        extra: dict[str, dict[str, Any]] = {}
        if changes.get("base") is not None and changes["base"] != pull.base_ref:
            branch = self.repos.branch(s, issue.repo, changes["base"])
            if branch is None:
                raise ValidationFailed("PullRequest", "base", "invalid")
            extra["base"] = {"from": pull.base_ref, "to": branch.name}
            pull.base_ref, pull.base_sha = branch.name, branch.sha
        for key in ("draft", "maintainer_can_modify"):
            if changes.get(key) is not None and bool(changes[key]) != getattr(pull, key):
                extra[key] = {"from": getattr(pull, key), "to": bool(changes[key])}
                setattr(pull, key, bool(changes[key]))
        if "draft" in extra:
            kind = "convert_to_draft" if pull.draft else "ready_for_review"
            self.issues.add_event(s, issue, self.repos.actor(s, actor), kind)
        keys = ("title", "body", "state", "labels", "assignees")
        plain: dict[str, Any] = {k: changes[k] for k in keys if k in changes}
        # One update event for everything this call changed.
        self.issues.update_thread(s, actor, issue, plain, extra)
        s.flush()
        return issue

    def merge(
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
        issue = self.get(s, repo, number)
        pull = issue.pull
        assert pull is not None
        r = issue.repo
        user = self.repos.actor(s, actor)
        if method not in MERGE_METHODS:
            raise ValidationFailed("PullRequest", "merge_method", "invalid")
        if pull.merged_at is not None or issue.state != "open":
            raise MethodNotAllowed("Pull Request is not mergeable")
        if pull.draft:
            raise MethodNotAllowed("Pull Request is still a draft")
        if sha is not None and sha != pull.head_sha:
            raise Conflict("Head branch was modified. Review and try the merge again.")
        base = self.repos.branch(s, r, pull.base_ref)
        if base is None or not r.has_git:
            raise MethodNotAllowed("Pull Request is not mergeable")
        now = self.state.now()
        who = Person(user.name or user.login, noreply(user), now)
        # Read before the base moves: the texts whose closing keywords GitHub honours.
        closing = base.name == r.default_branch
        messages = [issue.body or ""] + (
            self._commit_messages(r, base.sha, pull) if closing else []
        )
        new_sha = self._merge_commits(
            r, base.sha, pull, issue, method, commit_title, commit_message, who
        )
        # Closed first, so that moving the base branch leaves this pull request's own base
        # (and so its files and commits) as they were when it merged.
        pull.base_sha = base.sha
        pull.merged_at = now
        pull.merged_by = user
        pull.merge_commit_sha = new_sha
        issue.state = "closed"
        issue.closed_at = now
        issue.closed_by = user
        issue.updated_at = now
        r.pushed_at = now
        s.flush()
        base_name, base_before = base.name, base.sha
        with self.state.push_lock:
            self.state.git.update_ref(r.full_name, f"refs/heads/{base_name}", new_sha, base_before)
        # GitHub lists a merge as two events: ``merged`` (with the merge commit), ``closed``.
        self.issues.add_event(s, issue, user, "merged", commit_id=new_sha)
        self.issues.add_event(s, issue, user, "closed")
        self.state.record(
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
        # A merge closes the pull request: the same change a close makes, said the same way,
        # so that a rule about pull requests closed (or open at the end) sees it.
        self.state.record(
            s,
            actor,
            "github.pull_request.updated",
            ("pull_request", issue.key),
            {
                "repo": r.full_name,
                "number": issue.number,
                "changes": {"state": {"from": "open", "to": "closed"}},
            },
        )
        self.refs.branch_moved(s, actor, r, base_name, base_before, new_sha, "merge", forced=False)
        if closing:
            self._close_referenced(s, actor, user, issue, messages, new_sha)
        return issue

    def _commit_messages(self, r: Repo, base_sha: str, pull: Pull) -> list[str]:
        """The messages of the pull request's commits, in one ``git log``."""
        try:
            out = self.state.git.text(
                r.full_name, "log", "--format=%B%x00", pull.head_sha, f"^{base_sha}"
            )
        except GitFailed:
            return []
        return [m.strip() for m in out.split("\x00") if m.strip()]

    def _close_referenced(
        self,
        s: Session,
        actor: str,
        user: User,
        pr: Issue,
        texts: list[str],
        sha: str,
    ) -> None:
        """Close the open issues a pull request merged into the default branch says it fixes.

        GitHub reads the closing keywords (close, fix, resolve and their forms, then ``#N``
        or ``owner/repo#N``) in the pull request's description and its commits' messages;
        each issue is closed as completed by whoever merged, with a ``closed`` event that
        names the merge commit. The title does not count.
        """
        wanted: list[tuple[str, int]] = []
        for text in texts:
            for m in CLOSING.finditer(text):
                ref = (m.group(1) or pr.repo.full_name, int(m.group(2)))
                if ref not in wanted:
                    wanted.append(ref)
        now = self.state.now()
        for full_name, number in wanted:
            try:
                target = self.issues.get(s, full_name, number)
            except NotFound:
                continue
            if target.is_pull or target.state != "open":
                continue
            changes = {
                "state": {"from": "open", "to": "closed"},
                "state_reason": {"from": target.state_reason, "to": "completed"},
            }
            target.state, target.state_reason = "closed", "completed"
            target.closed_at, target.closed_by, target.updated_at = now, user, now
            self.issues.add_event(
                s, target, user, "closed", commit_id=sha, state_reason="completed"
            )
            self.state.record(
                s,
                actor,
                "github.issue.updated",
                ("issue", target.key),
                {
                    "repo": target.repo.full_name,
                    "number": target.number,
                    "changes": changes,
                    "closed_by_pull_request": pr.number,
                },
            )

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
            for commit in self.state.git.commits_between(name, base_sha, pull.head_sha):
                tree = self.state.git.pick_tree(name, tip, commit)
                if tree is None:
                    raise not_mergeable
                info = self.state.git.commit(name, commit)
                tip = self.state.git.commit_tree(name, tree, [tip], info.message + "\n", who)
            return tip
        tree = self.state.git.merge_tree(name, base_sha, pull.head_sha)
        if tree is None:
            raise not_mergeable
        if method == "squash":
            head = title or f"{issue.title} (#{issue.number})"
            text = f"{head}\n\n{message}" if message else head
            return self.state.git.commit_tree(name, tree, [base_sha], text + "\n", who)
        head = title or f"Merge pull request #{issue.number} from {r.owner}/{pull.head_ref}"
        text = f"{head}\n\n{message if message is not None else issue.title}"
        return self.state.git.commit_tree(name, tree, [base_sha, pull.head_sha], text + "\n", who)

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
        issue = self.get(s, repo, number)
        pull = issue.pull
        assert pull is not None
        user = self.repos.actor(s, actor)
        if event is not None and event not in REVIEW_EVENTS:
            raise Unprocessable(f"Unexpected event {event!r}")
        state = REVIEW_EVENTS[event] if event else "PENDING"
        if state in ("CHANGES_REQUESTED", "COMMENTED") and not (body or "").strip():
            verb = "request changes on" if state == "CHANGES_REQUESTED" else "comment on"
            raise Unprocessable(f"Review Can not {verb} a pull request without a body")
        if state in ("APPROVED", "CHANGES_REQUESTED") and issue.author_id == user.id:
            verb = "approve" if state == "APPROVED" else "request changes on"
            raise Unprocessable(f"Review Can not {verb} your own pull request")
        now = self.state.now()
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
        self.state.record(
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
        if state != "PENDING" and review.body.strip():
            # A submitted review's body is a comment on the thread; a pending one is seen by
            # its author alone until submitted.
            key = f"{issue.key}/{review.id}"
            self.state.comment_posted(s, actor, issue, review.body, "review", key)
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
        issue = self.get(s, repo, number)
        pull = issue.pull
        assert pull is not None
        user = self.repos.actor(s, actor)
        if not body or not body.strip():
            raise ValidationFailed("PullRequestReviewComment", "body", "missing_field")
        hunk = ""
        if in_reply_to is not None:
            parent = s.get(ReviewComment, in_reply_to)
            if parent is None or parent.pull_id != pull.id:
                raise NotFound()
            if not self.review_comment_visible(parent, actor):
                raise NotFound()
            path, line, side, hunk = parent.path, parent.line, parent.side, parent.diff_hunk
        else:
            if not path:
                raise ValidationFailed("PullRequestReviewComment", "path", "missing_field")
            changes = {c.path: c for c in self.changes(issue)}
            if path not in changes:
                raise ValidationFailed(
                    "PullRequestReviewComment",
                    "pull_request_review_thread.path",
                    "custom",
                    "could not be resolved",
                )
            hunk = changes[path].patch
        now = self.state.now()
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
        self.state.record(
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
        key = f"{issue.key}/{row.id}"
        self.state.comment_posted(s, actor, issue, body, "review_comment", key)
        return row

    # ------------------------------------------------------------------ git-backed reads

    def changes(self, issue: Issue) -> list[Any]:
        """The files a pull request changes, base to head; none when git cannot tell."""
        pull = issue.pull
        if pull is None or not issue.repo.has_git:
            return []
        try:
            return self.state.git.changes(issue.repo.full_name, pull.base_sha, pull.head_sha)
        except GitFailed:
            return []

    def files(self, s: Session, repo: Repo | str, number: int) -> list[Any]:
        return self.changes(self.get(s, repo, number))

    def commits(self, s: Session, repo: Repo | str, number: int) -> list[str]:
        issue = self.get(s, repo, number)
        pull = issue.pull
        assert pull is not None
        if not issue.repo.has_git:
            return []
        try:
            return self.state.git.commits_between(
                issue.repo.full_name, pull.base_sha, pull.head_sha
            )
        except GitFailed:
            return []

    def diff(self, s: Session, repo: Repo | str, number: int, patch: bool = False) -> str:
        issue = self.get(s, repo, number)
        pull = issue.pull
        assert pull is not None
        if not issue.repo.has_git:
            return ""
        try:
            if patch:
                return self.state.git.patch(issue.repo.full_name, pull.base_sha, pull.head_sha)
            return self.state.git.diff(issue.repo.full_name, pull.base_sha, pull.head_sha)
        except GitFailed:
            return ""
