"""Operations on issues (and on the issue side of pull requests): create, update, labels,
comments."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from fakes.github.errors import (
    NotFound,
    ValidationFailed,
)
from fakes.github.models import (
    Comment,
    Issue,
    Label,
    Repo,
    User,
)
from fakes.github.ops_refs import RefOps


class IssueOps(RefOps):
    # ------------------------------------------------------------------ issues

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
        return self._update_thread(s, actor, self.issue(s, repo, number), changes, {})

    def _update_thread(
        self,
        s: Session,
        actor: str,
        issue: Issue,
        changes: dict[str, Any],
        diff: dict[str, dict[str, Any]],
    ) -> Issue:
        """Apply ``changes``; record one update event with them and what ``diff`` holds."""
        resource = "PullRequest" if issue.is_pull else "Issue"
        user = self._actor(s, actor)
        now = self.now()

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

    def edit_comment(
        self, s: Session, actor: str, repo: Repo | str, comment_id: int, body: str
    ) -> Comment:
        """Change a comment's text. The viewer has admin rights (as the repository says), so
        it may edit anyone's comment, as on GitHub; the event keeps the text it replaced."""
        comment = self.comment(s, repo, comment_id)
        self._actor(s, actor)
        if not body or not body.strip():
            raise ValidationFailed("IssueComment", "body", "missing_field")
        previous = comment.body
        comment.body = body
        comment.updated_at = self.now()
        issue = comment.issue
        self._event(
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
        self._actor(s, actor)
        issue = comment.issue
        self._event(
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
