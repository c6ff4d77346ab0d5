"""A repository's own labels and its commit statuses: the writes GitHub serves on them
(create, rename, recolour and delete a label; create a commit status), with GitHub's
validation and an event for each change."""

from __future__ import annotations

import re

from sqlalchemy.orm import Session

from fakes.github.backend_repos import Repos
from fakes.github.backend_state import GitHubState
from fakes.github.errors import GitHubError, NotFound, ValidationFailed
from fakes.github.models import CommitStatus, Issue, Label, Repo

HEX_COLOR = re.compile(r"[0-9a-fA-F]{6}")
"""A label's colour as GitHub takes it: six hex digits, no ``#``."""
DEFAULT_COLOR = "ededed"
"""The colour GitHub gives a label created without one."""
STATES = ("error", "failure", "pending", "success")
"""The states a commit status may have."""
LABEL_DOCS = "https://docs.github.com/rest/issues/labels"
STATUS_DOCS = "https://docs.github.com/rest/commits/statuses#create-a-commit-status"


class UnknownCommit(GitHubError):
    """422 for a status on a commit the repository does not have, worded as GitHub words it."""

    status = 422
    graphql_type = "UNPROCESSABLE"

    def __init__(self, sha: str) -> None:
        super().__init__(f"No commit found for SHA: {sha}", documentation_url=STATUS_DOCS)


def _color(value: str | None, docs: str) -> str | None:
    """A colour as given, or the 422 GitHub answers for anything but six hex digits."""
    if value is None:
        return None
    if not isinstance(value, str) or not HEX_COLOR.fullmatch(value):
        raise ValidationFailed("Label", "color", "invalid", documentation_url=docs)
    return value


class Labels:
    """Create, change and delete a repository's labels; create commit statuses."""

    def __init__(self, state: GitHubState, repos: Repos) -> None:
        self.state = state
        self.repos = repos

    def _taken(self, s: Session, repo: Repo, name: str, docs: str) -> None:
        """The 422 GitHub answers when another label already has the name (any case)."""
        try:
            self.repos.label(s, repo, name)
        except NotFound:
            return
        raise ValidationFailed("Label", "name", "already_exists", documentation_url=docs)

    def create(
        self,
        s: Session,
        actor: str,
        repo: Repo | str,
        name: str,
        color: str | None = None,
        description: str | None = None,
    ) -> Label:
        """A new label; 422 for a missing name, an invalid colour or a name in use."""
        docs = f"{LABEL_DOCS}#create-a-label"
        r = self.repos.get(s, repo)
        self.repos.actor(s, actor)
        name = str(name or "").strip()
        if not name:
            raise ValidationFailed("Label", "name", "missing_field", documentation_url=docs)
        hue = _color(color, docs) or DEFAULT_COLOR
        self._taken(s, r, name, docs)
        label = Label(repo=r, name=name, color=hue, description=description)
        s.add(label)
        s.flush()
        self.state.record(
            s,
            actor,
            "github.label.created",
            ("label", f"{r.full_name}:{label.name}"),
            {
                "repo": r.full_name,
                "name": label.name,
                "color": label.color,
                "description": label.description,
            },
        )
        return label

    def update(
        self,
        s: Session,
        actor: str,
        repo: Repo | str,
        name: str,
        *,
        new_name: str | None = None,
        color: str | None = None,
        description: str | None = None,
        set_description: bool = False,
    ) -> Label:
        """Rename, recolour or redescribe a label (``set_description``: the body named
        ``description``, even as null); 404 when unknown, 422 as :meth:`create`."""
        docs = f"{LABEL_DOCS}#update-a-label"
        r = self.repos.get(s, repo)
        self.repos.actor(s, actor)
        label = self.repos.label(s, r, name)
        changes: dict[str, dict[str, str | None]] = {}
        if new_name is not None:
            new_name = str(new_name).strip()
            if not new_name:
                raise ValidationFailed("Label", "name", "missing_field", documentation_url=docs)
            if new_name.lower() != label.name.lower():
                self._taken(s, r, new_name, docs)
            if new_name != label.name:
                changes["name"] = {"from": label.name, "to": new_name}
        hue = _color(color, docs)
        if hue is not None and hue != label.color:
            changes["color"] = {"from": label.color, "to": hue}
        if set_description and description != label.description:
            changes["description"] = {"from": label.description, "to": description}
        if "name" in changes:
            label.name = str(changes["name"]["to"])
        if "color" in changes:
            label.color = str(changes["color"]["to"])
        if "description" in changes:
            label.description = changes["description"]["to"]
        s.flush()
        if changes:
            self.state.record(
                s,
                actor,
                "github.label.updated",
                ("label", f"{r.full_name}:{label.name}"),
                {"repo": r.full_name, "name": label.name, "changes": changes},
            )
        return label

    def delete(self, s: Session, actor: str, repo: Repo | str, name: str) -> None:
        """Delete a label, taking it off every issue and pull request that carried it."""
        r = self.repos.get(s, repo)
        self.repos.actor(s, actor)
        label = self.repos.label(s, r, name)
        carriers = [i for i in s.query(Issue).filter(Issue.repo_id == r.id) if label in i.labels]
        for issue in carriers:
            issue.labels.remove(label)
        self.state.record(
            s,
            actor,
            "github.label.deleted",
            ("label", f"{r.full_name}:{label.name}"),
            {
                "repo": r.full_name,
                "name": label.name,
                "issues": sorted(i.number for i in carriers),
            },
        )
        s.delete(label)
        s.flush()

    def create_status(
        self,
        s: Session,
        actor: str,
        repo: Repo | str,
        sha: str,
        state: str,
        *,
        context: str | None = None,
        description: str | None = None,
        target_url: str | None = None,
    ) -> CommitStatus:
        """A new commit status on ``sha`` (a commit of the repository, or 422 as GitHub
        answers); a state other than error, failure, pending or success is a 422."""
        r = self.repos.get(s, repo)
        creator = self.repos.actor(s, actor)
        if state not in STATES:
            raise ValidationFailed(
                "Status",
                "state",
                "custom",
                message="state is not included in the list",
                documentation_url=STATUS_DOCS,
            )
        try:
            commit = self.repos.resolve(s, r, sha)
        except NotFound as exc:
            raise UnknownCommit(sha) from exc
        now = self.state.now()
        row = CommitStatus(
            repo_id=r.id,
            sha=commit,
            state=state,
            context=context or "default",
            description=description,
            target_url=target_url,
            creator=creator,
            created_at=now,
            updated_at=now,
        )
        s.add(row)
        s.flush()
        self.state.record(
            s,
            actor,
            "github.status.created",
            ("status", f"{r.full_name}@{commit}/{row.context}"),
            {
                "repo": r.full_name,
                "sha": commit,
                "state": state,
                "context": row.context,
                "description": description,
                "target_url": target_url,
            },
        )
        return row
