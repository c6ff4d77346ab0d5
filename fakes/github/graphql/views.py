"""GraphQL objects over the fake's rows: actors, repositories and labels.

Each view class answers one GraphQL type (``typename``); a field ``fooBar`` is the attribute
or method ``foo_bar`` (methods get the field's arguments in snake case). A field without one
is an error, never a silent null (see :mod:`fakes.github.graphql.resolvers`).
"""

from __future__ import annotations

import html
import zlib
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import select

from fakes.github.errors import NotFound
from fakes.github.graphql.connections import Connection, connection
from fakes.github.graphql.context import WEB, Context, iso
from fakes.github.models import Label, Repo, User, node_id

if TYPE_CHECKING:
    from fakes.github.graphql.commits import RefView


def avatar(login: str, size: int | None = None) -> str:
    url = f"https://avatars.githubusercontent.com/{login}"
    return f"{url}?s={size}" if size else url


class View:
    typename = ""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx


# ---------------------------------------------------------------------------- actors


class ActorView(View):
    """A user, bot or organization of the world (``User`` rows with a ``type``)."""

    def __init__(self, ctx: Context, row: User) -> None:
        super().__init__(ctx)
        self.row = row
        self.typename = row.type if row.type in ("User", "Bot", "Organization") else "User"

    @property
    def id(self) -> str:
        return node_id(self.typename, self.row.id)

    @property
    def database_id(self) -> int:
        return self.row.id

    @property
    def login(self) -> str:
        # Bots are logged in as ``name[bot]`` on GitHub; the world names them as it saw them.
        return self.row.login

    @property
    def name(self) -> str | None:
        return self.row.name

    @property
    def email(self) -> str:
        return self.row.email or ""

    def avatar_url(self, size: int | None = None) -> str:
        return avatar(self.row.login, size)

    @property
    def resource_path(self) -> str:
        prefix = "/apps" if self.typename == "Bot" else ""
        return f"{prefix}/{self.row.login}"

    @property
    def url(self) -> str:
        return WEB + self.resource_path

    @property
    def created_at(self) -> str | None:
        return iso(self.row.created_at)

    @property
    def updated_at(self) -> str | None:
        return iso(self.row.created_at)

    @property
    def is_viewer(self) -> bool:
        return self.row.id == self.ctx.viewer.id

    is_site_admin = False
    bio: str | None = None
    company: str | None = None
    location: str | None = None
    website_url: str | None = None
    twitter_username: str | None = None
    description: str | None = None

    def repository(self, name: str, follow_renames: bool = True) -> RepositoryView | None:
        return find_repository(self.ctx, self.row.login, name)


class OwnerView(View):
    """A repository owner the world knows only by login (an organization)."""

    typename = "Organization"

    def __init__(self, ctx: Context, login: str, created: datetime) -> None:
        super().__init__(ctx)
        self.login = login
        self._created = created

    @property
    def database_id(self) -> int:
        # Stable across runs and resets: the world has no row, so derive one from the login.
        return zlib.crc32(self.login.lower().encode()) & 0x7FFFFFFF

    @property
    def id(self) -> str:
        return node_id("Organization", self.database_id)

    def avatar_url(self, size: int | None = None) -> str:
        return avatar(self.login, size)

    @property
    def resource_path(self) -> str:
        return f"/{self.login}"

    @property
    def url(self) -> str:
        return WEB + self.resource_path

    @property
    def created_at(self) -> str | None:
        return iso(self._created)

    updated_at = created_at
    name: str | None = None
    email: str | None = None
    description: str | None = None
    location: str | None = None
    website_url: str | None = None

    def repository(self, name: str, follow_renames: bool = True) -> RepositoryView | None:
        return find_repository(self.ctx, self.login, name)


def actor(ctx: Context, row: User | None) -> ActorView | None:
    return None if row is None else ActorView(ctx, row)


def owner_by_login(ctx: Context, login: str) -> ActorView | OwnerView | None:
    try:
        return ActorView(ctx, ctx.backend.user(ctx.session, login))
    except NotFound:
        pass
    repos = list(ctx.session.scalars(select(Repo).where(Repo.owner == login)))
    if not repos:
        return None
    return OwnerView(ctx, repos[0].owner, min(r.created_at for r in repos))


# ---------------------------------------------------------------------------- repositories


def find_repository(ctx: Context, owner: str, name: str) -> RepositoryView | None:
    try:
        row = ctx.backend.repo(ctx.session, owner, name)
    except NotFound:
        return None
    # The token is the viewer's, and the snapshot holds only what the viewer could see at T.
    return RepositoryView(ctx, row)


class RepositoryView(View):
    typename = "Repository"

    def __init__(self, ctx: Context, row: Repo) -> None:
        super().__init__(ctx)
        self.row = row

    @property
    def id(self) -> str:
        return node_id("Repository", self.row.id)

    @property
    def database_id(self) -> int:
        return self.row.id

    @property
    def name(self) -> str:
        return self.row.name

    @property
    def name_with_owner(self) -> str:
        return self.row.full_name

    @property
    def owner(self) -> ActorView | OwnerView:
        if self.row.owner_user is not None:
            return ActorView(self.ctx, self.row.owner_user)
        return OwnerView(self.ctx, self.row.owner, self.row.created_at)

    @property
    def description(self) -> str | None:
        return self.row.description

    @property
    def resource_path(self) -> str:
        return f"/{self.row.full_name}"

    @property
    def url(self) -> str:
        return WEB + self.resource_path

    @property
    def ssh_url(self) -> str:
        return f"git@github.com:{self.row.full_name}.git"

    homepage_url: str | None = None
    mirror_url: str | None = None
    security_policy_url: str | None = None
    archived_at: str | None = None

    @property
    def created_at(self) -> str | None:
        return iso(self.row.created_at)

    @property
    def updated_at(self) -> str | None:
        return iso(self.row.updated_at)

    @property
    def pushed_at(self) -> str | None:
        return iso(self.row.pushed_at)

    @property
    def is_private(self) -> bool:
        return self.row.private

    @property
    def visibility(self) -> str:
        return "PRIVATE" if self.row.private else "PUBLIC"

    @property
    def is_empty(self) -> bool:
        return not self.row.has_git

    @property
    def is_in_organization(self) -> bool:
        return self.row.owner_user is None or self.row.owner_user.type == "Organization"

    # What the fake's world is: no forks, mirrors, templates, archives, locks, stars, wikis,
    # projects or discussions; issues on; every merge method allowed (the backend merges
    # with each); the viewer may push (the git server accepts their pushes).
    is_archived = False
    is_disabled = False
    is_fork = False
    is_locked = False
    is_mirror = False
    is_template = False
    is_user_configuration_repository = False
    is_blank_issues_enabled = True
    is_security_policy_enabled = False
    has_issues_enabled = True
    has_wiki_enabled = False
    has_projects_enabled = False
    has_discussions_enabled = False
    merge_commit_allowed = True
    squash_merge_allowed = True
    rebase_merge_allowed = True
    auto_merge_allowed = False
    allow_update_branch = False
    delete_branch_on_merge = False
    forking_allowed = True
    web_commit_signoff_required = False
    uses_custom_open_graph_image = False
    fork_count = 0
    stargazer_count = 0
    viewer_has_starred = False
    viewer_subscription = "UNSUBSCRIBED"
    viewer_default_merge_method = "MERGE"
    parent: RepositoryView | None = None
    template_repository: RepositoryView | None = None

    @property
    def viewer_permission(self) -> str:
        return "ADMIN" if self.row.owner.lower() == self.ctx.viewer.login.lower() else "WRITE"

    @property
    def viewer_can_administer(self) -> bool:
        return self.viewer_permission == "ADMIN"

    @property
    def viewer_default_commit_email(self) -> str | None:
        return self.ctx.viewer.email

    @property
    def viewer_possible_commit_emails(self) -> list[str]:
        return [self.ctx.viewer.email] if self.ctx.viewer.email else []

    def watchers(self, **page: Any) -> Connection:
        return connection("UserConnection", "watchers", list, **page)

    @property
    def default_branch_ref(self) -> RefView | None:
        from fakes.github.graphql.commits import RefView

        branch = self.ctx.backend.branch(self.ctx.session, self.row, self.row.default_branch)
        return None if branch is None else RefView(self.ctx, self.row, branch)

    def ref(self, qualified_name: str) -> RefView | None:
        from fakes.github.graphql.commits import RefView

        name = qualified_name.removeprefix("refs/heads/")
        branch = self.ctx.backend.branch(self.ctx.session, self.row, name)
        return None if branch is None else RefView(self.ctx, self.row, branch)

    def _users(self, query: str | None) -> list[ActorView]:
        rows = self.ctx.session.scalars(select(User).where(User.type != "Organization"))
        views = [ActorView(self.ctx, u) for u in sorted(rows, key=lambda u: u.login.lower())]
        if query:
            q = query.lower()
            views = [v for v in views if q in v.login.lower() or q in (v.name or "").lower()]
        return views

    def assignable_users(self, query: str | None = None, **page: Any) -> Connection:
        return connection("UserConnection", "assignableUsers", lambda: self._users(query), **page)

    def mentionable_users(self, query: str | None = None, **page: Any) -> Connection:
        return connection("UserConnection", "mentionableUsers", lambda: self._users(query), **page)

    def label(self, name: str) -> LabelView | None:
        try:
            return LabelView(self.ctx, self.ctx.backend.label(self.ctx.session, self.row, name))
        except NotFound:
            return None

    def labels(
        self, order_by: dict[str, str] | None = None, query: str | None = None, **page: Any
    ) -> Connection:
        def make() -> list[LabelView]:
            rows = list(self.row.labels)
            if query:
                rows = [r for r in rows if query.lower() in r.name.lower()]
            return [LabelView(self.ctx, r) for r in sort_labels(rows, order_by)]

        return connection("LabelConnection", "labels", make, **page)

    def milestone(self, number: int) -> None:
        # The world holds no milestones.
        return None

    # Issues and pull requests live in threads.py; these delegate to it.
    def issue(self, number: int) -> Any:
        from fakes.github.graphql.threads import thread_by_number

        return thread_by_number(self.ctx, self.row, number, "Issue")

    def pull_request(self, number: int) -> Any:
        from fakes.github.graphql.threads import thread_by_number

        return thread_by_number(self.ctx, self.row, number, "PullRequest")

    def issue_or_pull_request(self, number: int) -> Any:
        from fakes.github.graphql.threads import thread_by_number

        return thread_by_number(self.ctx, self.row, number, None)

    def issues(self, **args: Any) -> Connection:
        from fakes.github.graphql.threads import issue_connection

        return issue_connection(self.ctx, self.row, **args)

    def pull_requests(self, **args: Any) -> Connection:
        from fakes.github.graphql.threads import pull_connection

        return pull_connection(self.ctx, self.row, **args)


def sort_labels(rows: list[Label], order_by: dict[str, str] | None) -> list[Label]:
    field = (order_by or {}).get("field", "CREATED_AT")
    desc = (order_by or {}).get("direction", "ASC") == "DESC"
    if field == "NAME":
        return sorted(rows, key=lambda r: r.name.lower(), reverse=desc)
    return sorted(rows, key=lambda r: r.id, reverse=desc)


class LabelView(View):
    typename = "Label"

    def __init__(self, ctx: Context, row: Label) -> None:
        super().__init__(ctx)
        self.row = row

    @property
    def id(self) -> str:
        return node_id("Label", self.row.id)

    @property
    def name(self) -> str:
        return self.row.name

    @property
    def color(self) -> str:
        return self.row.color

    @property
    def description(self) -> str | None:
        return self.row.description

    @property
    def is_default(self) -> bool:
        return self.row.name in DEFAULT_LABELS

    created_at: str | None = None
    updated_at: str | None = None

    @property
    def repository(self) -> RepositoryView:
        return RepositoryView(self.ctx, self.row.repo)

    @property
    def resource_path(self) -> str:
        return f"/{self.row.repo.full_name}/labels/{self.row.name.replace(' ', '%20')}"

    @property
    def url(self) -> str:
        return WEB + self.resource_path


DEFAULT_LABELS = frozenset(
    {
        "bug",
        "documentation",
        "duplicate",
        "enhancement",
        "good first issue",
        "help wanted",
        "invalid",
        "question",
        "wontfix",
    }
)


def html_text(text: str) -> str:
    return html.escape(text, quote=False)
