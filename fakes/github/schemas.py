"""What goes on the wire: GitHub's JSON objects as pydantic models, with GitHub's field names,
and (at the end) the request bodies clients send, parsed as GitHub does (unknown fields ignored).

Rows never go on the wire directly; :mod:`fakes.github.render` builds these from them.
Timestamps are ISO 8601 in UTC with a ``Z``, to the second as GitHub sends them, rounded *up*
so that anything made during a run is dated strictly after T.
"""

from __future__ import annotations

import math
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Annotated, Any, ClassVar, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PlainSerializer,
    SerializerFunctionWrapHandler,
    model_serializer,
)

OLD_VERSION = "2022-11-28"
NEW_VERSION = "2026-03-10"
API_VERSION: ContextVar[str] = ContextVar("github_api_version", default=OLD_VERSION)
"""The REST API version of the request being answered (``X-GitHub-Api-Version``).

Version 2026-03-10 dropped some long-deprecated fields (``assignee`` on issues and pull
requests, ``merge_commit_sha`` on pull requests, ``has_downloads`` on repositories); a
request that asks for it gets objects without them, as GitHub's description of that version
says, and a request without the header gets 2022-11-28 objects."""


def iso(value: datetime) -> str:
    """GitHub's timestamp format; a fraction of a second rounds up to the next second."""
    value = value.astimezone(UTC)
    seconds = math.ceil(value.timestamp())
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


Timestamp = Annotated[datetime, PlainSerializer(iso, return_type=str)]


class Wire(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    REMOVED_IN_NEW: ClassVar[frozenset[str]] = frozenset()
    """Fields that API version 2026-03-10 no longer sends."""
    LEFT_OUT: ClassVar[frozenset[str]] = frozenset()
    """Fields of the parent model that this smaller variant never sends."""
    ONLY_IF_SET: ClassVar[frozenset[str]] = frozenset()
    """Fields sent only when given (even as None), absent otherwise: the per-kind fields of
    an issue event."""

    @model_serializer(mode="wrap")
    def _versioned(self, handler: SerializerFunctionWrapHandler) -> Any:
        data = handler(self)
        if isinstance(data, dict):
            drop = set(self.LEFT_OUT) | (self.ONLY_IF_SET - self.model_fields_set)
            if API_VERSION.get() >= NEW_VERSION:
                drop |= self.REMOVED_IN_NEW
            for key in drop:
                data.pop(key, None)
        return data

    def wire(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True)


class Href(Wire):
    href: str


class SimpleUser(Wire):
    login: str
    id: int
    node_id: str
    avatar_url: str
    gravatar_id: str
    url: str
    html_url: str
    followers_url: str
    following_url: str
    gists_url: str
    starred_url: str
    subscriptions_url: str
    organizations_url: str
    repos_url: str
    events_url: str
    received_events_url: str
    type: str
    user_view_type: str = "public"
    site_admin: bool = False


class PublicUser(SimpleUser):
    name: str | None
    company: str | None = None
    blog: str = ""
    location: str | None = None
    email: str | None
    hireable: bool | None = None
    bio: str | None = None
    twitter_username: str | None = None
    public_repos: int
    public_gists: int = 0
    followers: int = 0
    following: int = 0
    created_at: Timestamp
    updated_at: Timestamp


class Organization(Wire):
    """An organisation as ``GET /orgs/{org}`` shows it to a non-owner (GitHub's
    ``organization-full`` less the owner-only plan, billing and member settings); ``name``
    only when it has one, as GitHub leaves unset profile fields out (octokit's recording)."""

    ONLY_IF_SET = frozenset({"name"})

    login: str
    id: int
    node_id: str
    url: str
    repos_url: str
    events_url: str
    hooks_url: str
    issues_url: str
    members_url: str
    public_members_url: str
    avatar_url: str
    description: str | None = None
    name: str | None = None
    is_verified: bool = False
    has_organization_projects: bool = True
    has_repository_projects: bool = True
    public_repos: int
    public_gists: int = 0
    followers: int = 0
    following: int = 0
    html_url: str
    created_at: Timestamp
    updated_at: Timestamp
    archived_at: Timestamp | None = None
    type: str = "Organization"


class Plan(Wire):
    name: str = "free"
    space: int = 976562499
    collaborators: int = 0
    private_repos: int = 10000


class PrivateUser(PublicUser):
    private_gists: int = 0
    total_private_repos: int
    owned_private_repos: int
    disk_usage: int = 0
    collaborators: int = 0
    two_factor_authentication: bool = True
    plan: Plan = Field(default_factory=Plan)


class IssueLabel(Wire):
    """A label as issues and pull requests embed it."""

    id: int
    node_id: str
    url: str
    name: str
    color: str
    default: bool = False
    description: str | None
    archived_by: SimpleUser | None = None


class Label(IssueLabel):
    """A label as the label endpoints answer it."""

    archived_at: Timestamp | None = None


class Reactions(Wire):
    url: str
    total_count: int = 0
    plus_one: int = Field(default=0, alias="+1")
    minus_one: int = Field(default=0, alias="-1")
    laugh: int = 0
    hooray: int = 0
    confused: int = 0
    heart: int = 0
    rocket: int = 0
    eyes: int = 0


class IssuePullRequestLinks(Wire):
    url: str
    html_url: str
    diff_url: str
    patch_url: str
    merged_at: Timestamp | None


AuthorAssociation = Literal["OWNER", "MEMBER", "COLLABORATOR", "CONTRIBUTOR", "NONE"]


class Issue(Wire):
    REMOVED_IN_NEW = frozenset({"assignee"})
    ONLY_IF_SET = frozenset({"draft", "pull_request", "closed_by"})
    """A plain issue has neither ``draft`` nor ``pull_request``: GitHub leaves both keys out
    rather than sending null; and only one issue read alone (or just written) carries
    ``closed_by``, never an issue in a list (octokit's recordings of api.github.com)."""

    url: str
    repository_url: str
    labels_url: str
    comments_url: str
    events_url: str
    html_url: str
    id: int
    node_id: str
    number: int
    title: str
    user: SimpleUser
    labels: list[IssueLabel]
    state: str
    locked: bool
    assignee: SimpleUser | None
    assignees: list[SimpleUser]
    milestone: None = None
    comments: int
    created_at: Timestamp
    updated_at: Timestamp
    closed_at: Timestamp | None
    author_association: AuthorAssociation
    active_lock_reason: str | None = None
    draft: bool | None = None
    pull_request: IssuePullRequestLinks | None = None
    body: str | None
    closed_by: SimpleUser | None = None
    reactions: Reactions
    timeline_url: str
    performed_via_github_app: None = None
    state_reason: str | None


class IssueEventLabel(Wire):
    name: str
    color: str


class IssueEventRename(Wire):
    from_: str = Field(alias="from")
    to: str


class IssueEvent(Wire):
    """An issue event (GitHub's ``issue-event``; docs: rest/using-the-rest-api/issue-event-types).

    The common properties always; per kind only its own: ``label`` ({name, color}) for
    ``labeled``/``unlabeled``, ``assignee`` and ``assigner`` for ``assigned``/``unassigned``,
    ``rename`` ({from, to}) for ``renamed``, ``state_reason`` for ``closed``/``reopened``;
    ``issue`` only where the event is read without its issue (the repository's list, one
    event by id).
    """

    ONLY_IF_SET = frozenset({"label", "assignee", "assigner", "rename", "state_reason", "issue"})

    id: int
    node_id: str
    url: str
    actor: SimpleUser | None
    event: str
    commit_id: str | None
    commit_url: str | None
    created_at: Timestamp
    label: IssueEventLabel | None = None
    assignee: SimpleUser | None = None
    assigner: SimpleUser | None = None
    rename: IssueEventRename | None = None
    state_reason: str | None = None
    issue: Issue | None = None
    performed_via_github_app: None = None


class SearchIssue(Issue):
    LEFT_OUT = frozenset({"closed_by"})

    score: float = 1.0


class SearchIssues(Wire):
    total_count: int
    incomplete_results: bool = False
    items: list[SearchIssue]
    search_type: str = "lexical"


class IssueComment(Wire):
    url: str
    html_url: str
    issue_url: str
    id: int
    node_id: str
    user: SimpleUser
    created_at: Timestamp
    updated_at: Timestamp
    author_association: AuthorAssociation
    body: str
    reactions: Reactions
    performed_via_github_app: None = None


class Permissions(Wire):
    admin: bool = True
    maintain: bool = True
    push: bool = True
    triage: bool = True
    pull: bool = True


class Repository(Wire):
    REMOVED_IN_NEW = frozenset({"has_downloads"})

    id: int
    node_id: str
    name: str
    full_name: str
    private: bool
    owner: SimpleUser
    html_url: str
    description: str | None
    fork: bool = False
    url: str
    archive_url: str
    assignees_url: str
    blobs_url: str
    branches_url: str
    collaborators_url: str
    comments_url: str
    commits_url: str
    compare_url: str
    contents_url: str
    contributors_url: str
    deployments_url: str
    downloads_url: str
    events_url: str
    forks_url: str
    git_commits_url: str
    git_refs_url: str
    git_tags_url: str
    git_url: str
    issue_comment_url: str
    issue_events_url: str
    issues_url: str
    keys_url: str
    labels_url: str
    languages_url: str
    merges_url: str
    milestones_url: str
    notifications_url: str
    pulls_url: str
    releases_url: str
    ssh_url: str
    stargazers_url: str
    statuses_url: str
    subscribers_url: str
    subscription_url: str
    tags_url: str
    teams_url: str
    trees_url: str
    clone_url: str
    hooks_url: str
    svn_url: str
    mirror_url: str | None = None
    homepage: str | None = None
    language: str | None = None
    forks_count: int = 0
    stargazers_count: int = 0
    watchers_count: int = 0
    size: int = 0
    default_branch: str
    open_issues_count: int
    is_template: bool = False
    topics: list[str] = Field(default_factory=list)
    has_issues: bool = True
    has_projects: bool = True
    has_wiki: bool = True
    has_pages: bool = False
    has_downloads: bool = True
    has_discussions: bool = False
    archived: bool = False
    disabled: bool = False
    visibility: str
    pushed_at: Timestamp | None
    created_at: Timestamp
    updated_at: Timestamp
    permissions: Permissions = Field(default_factory=Permissions)
    allow_rebase_merge: bool = True
    allow_squash_merge: bool = True
    allow_merge_commit: bool = True
    allow_auto_merge: bool = False
    delete_branch_on_merge: bool = False
    allow_update_branch: bool = False
    allow_forking: bool = True
    web_commit_signoff_required: bool = False
    license: None = None
    forks: int = 0
    open_issues: int
    watchers: int = 0


class MinimalRepository(Repository):
    """The repository as embedded in combined statuses and similar places."""

    LEFT_OUT = frozenset(
        {
            "allow_auto_merge",
            "allow_merge_commit",
            "allow_rebase_merge",
            "allow_squash_merge",
            "allow_update_branch",
        }
    )


class SimpleRepository(Repository):
    """The short repository a combined status embeds: ids, names, owner and the API URL
    templates only (octokit's recording of api.github.com; GitHub's ``simple-repository``)."""

    LEFT_OUT = frozenset(
        {
            "allow_auto_merge", "allow_forking", "allow_merge_commit", "allow_rebase_merge",
            "allow_squash_merge", "allow_update_branch", "archived", "clone_url", "created_at",
            "default_branch", "delete_branch_on_merge", "disabled", "forks", "forks_count",
            "git_url", "has_discussions", "has_downloads", "has_issues", "has_pages",
            "has_projects", "has_wiki", "homepage", "is_template", "language", "license",
            "mirror_url", "open_issues", "open_issues_count", "permissions", "pushed_at", "size",
            "ssh_url", "stargazers_count", "svn_url", "topics", "updated_at", "visibility",
            "watchers", "watchers_count", "web_commit_signoff_required",
        }
    )  # fmt: skip


class FullRepository(Repository):
    ONLY_IF_SET = frozenset({"organization"})
    """An organisation's repository names it; a user's has no such key."""

    network_count: int = 0
    subscribers_count: int = 0
    organization: SimpleUser | None = None
    temp_clone_token: str | None = ""
    """octokit's recording of a public repository read with admin rights (get-repository) has
    ``""``; what GitHub sends for a private one is not recorded anywhere vendored."""


class PullRef(Wire):
    label: str
    ref: str
    sha: str
    user: SimpleUser
    repo: Repository


class PullLinks(Wire):
    self_: Href = Field(alias="self")
    html: Href
    issue: Href
    comments: Href
    review_comments: Href
    review_comment: Href
    commits: Href
    statuses: Href


class PullRequest(Wire):
    REMOVED_IN_NEW = frozenset({"assignee", "merge_commit_sha"})

    url: str
    id: int
    node_id: str
    html_url: str
    diff_url: str
    patch_url: str
    issue_url: str
    commits_url: str
    review_comments_url: str
    review_comment_url: str
    comments_url: str
    statuses_url: str
    number: int
    state: str
    locked: bool
    title: str
    user: SimpleUser
    body: str | None
    labels: list[IssueLabel]
    milestone: None = None
    active_lock_reason: str | None = None
    created_at: Timestamp
    updated_at: Timestamp
    closed_at: Timestamp | None
    merged_at: Timestamp | None
    merge_commit_sha: str | None
    assignee: SimpleUser | None
    assignees: list[SimpleUser]
    requested_reviewers: list[SimpleUser] = Field(default_factory=list)
    requested_teams: list[Any] = Field(default_factory=list)
    head: PullRef
    base: PullRef
    links: PullLinks = Field(alias="_links")
    author_association: AuthorAssociation
    auto_merge: None = None
    draft: bool


class FullPullRequest(PullRequest):
    merged: bool
    mergeable: bool | None
    rebaseable: bool | None
    mergeable_state: str
    merged_by: SimpleUser | None
    comments: int
    review_comments: int
    maintainer_can_modify: bool
    commits: int
    additions: int
    deletions: int
    changed_files: int


class MergeResult(Wire):
    sha: str
    merged: bool
    message: str


class ReviewLinks(Wire):
    html: Href
    pull_request: Href


class Review(Wire):
    id: int
    node_id: str
    user: SimpleUser
    body: str
    state: str
    html_url: str
    pull_request_url: str
    links: ReviewLinks = Field(alias="_links")
    submitted_at: Timestamp | None = None
    commit_id: str
    author_association: AuthorAssociation


class TimelineComment(IssueComment):
    """A comment as the timeline lists it: the comment plus ``event`` and ``actor``."""

    event: Literal["commented"] = "commented"
    actor: SimpleUser


class TimelineReview(Review):
    """A submitted review as the timeline lists it (``state`` in lower case)."""

    event: Literal["reviewed"] = "reviewed"


class ReviewCommentLinks(Wire):
    self_: Href = Field(alias="self")
    html: Href
    pull_request: Href


class ReviewComment(Wire):
    url: str
    pull_request_review_id: int | None
    id: int
    node_id: str
    diff_hunk: str
    path: str
    commit_id: str
    original_commit_id: str
    in_reply_to_id: int | None = None
    user: SimpleUser
    body: str
    created_at: Timestamp
    updated_at: Timestamp
    html_url: str
    pull_request_url: str
    author_association: AuthorAssociation
    links: ReviewCommentLinks = Field(alias="_links")
    line: int | None
    original_line: int | None
    side: str
    subject_type: str = "line"
    reactions: Reactions


class GitActor(Wire):
    name: str
    email: str
    date: Timestamp


class ShaUrl(Wire):
    sha: str
    url: str


class ParentRef(Wire):
    sha: str
    url: str
    html_url: str


class Verification(Wire):
    verified: bool = False
    reason: str = "unsigned"
    signature: str | None = None
    payload: str | None = None
    verified_at: str | None = None


class CommitDetail(Wire):
    url: str
    author: GitActor
    committer: GitActor
    message: str
    tree: ShaUrl
    comment_count: int = 0
    verification: Verification = Field(default_factory=Verification)


class DiffEntry(Wire):
    sha: str
    filename: str
    status: str
    additions: int
    deletions: int
    changes: int
    blob_url: str
    raw_url: str
    contents_url: str
    patch: str | None = None
    previous_filename: str | None = None


class CommitStats(Wire):
    total: int
    additions: int
    deletions: int


class Commit(Wire):
    url: str
    sha: str
    node_id: str
    html_url: str
    comments_url: str
    commit: CommitDetail
    author: SimpleUser | None
    committer: SimpleUser | None
    parents: list[ParentRef]
    stats: CommitStats | None = None
    files: list[DiffEntry] | None = None


class BranchCommit(Wire):
    sha: str
    url: str


class ShortBranch(Wire):
    name: str
    commit: BranchCommit
    protected: bool = False


class BranchLinks(Wire):
    html: str
    self_: str = Field(alias="self")


class BranchProtection(Wire):
    enabled: bool = False
    required_status_checks: dict[str, Any] = Field(
        default_factory=lambda: {"enforcement_level": "off", "contexts": [], "checks": []}
    )


class Branch(Wire):
    name: str
    commit: Commit
    links: BranchLinks = Field(alias="_links")
    protected: bool = False
    protection: BranchProtection = Field(default_factory=BranchProtection)
    protection_url: str


class GitRefObject(Wire):
    type: str
    sha: str
    url: str


class GitRef(Wire):
    ref: str
    node_id: str
    url: str
    object: GitRefObject


class ContentLinks(Wire):
    self_: str = Field(alias="self")
    git: str | None
    html: str | None


class ContentItem(Wire):
    type: str
    size: int
    name: str
    path: str
    sha: str
    url: str
    git_url: str | None
    html_url: str | None
    download_url: str | None
    links: ContentLinks = Field(alias="_links")


class ContentFile(ContentItem):
    encoding: str = "base64"
    content: str


class FileCommitCommit(Wire):
    sha: str
    node_id: str
    url: str
    html_url: str
    author: GitActor
    committer: GitActor
    message: str
    tree: ShaUrl
    parents: list[ParentRef]
    verification: Verification = Field(default_factory=Verification)


class FileCommit(Wire):
    content: ContentItem | None
    """The file written; null when the write deleted it."""
    commit: FileCommitCommit


class Status(Wire):
    url: str
    avatar_url: str | None
    id: int
    node_id: str
    state: str
    description: str | None
    target_url: str | None
    context: str
    created_at: Timestamp
    updated_at: Timestamp
    creator: SimpleUser | None


class SimpleStatus(Status):
    """A status as the combined status lists it."""

    LEFT_OUT = frozenset({"creator"})


class CombinedStatus(Wire):
    state: str
    statuses: list[SimpleStatus]
    sha: str
    total_count: int
    repository: SimpleRepository
    commit_url: str
    url: str


class CheckOutput(Wire):
    title: str | None = None
    summary: str | None = None
    text: str | None = None
    annotations_count: int = 0
    annotations_url: str


class CheckSuiteRef(Wire):
    id: int


class CheckRun(Wire):
    id: int
    head_sha: str
    node_id: str
    external_id: str | None = ""
    url: str
    html_url: str | None
    details_url: str | None
    status: str
    conclusion: str | None
    started_at: Timestamp | None
    completed_at: Timestamp | None
    output: CheckOutput
    name: str
    check_suite: CheckSuiteRef | None
    app: None = None
    pull_requests: list[Any] = Field(default_factory=list)


class CheckRuns(Wire):
    total_count: int
    check_runs: list[CheckRun]


class CodeSearchItem(Wire):
    name: str
    path: str
    sha: str
    url: str
    git_url: str
    html_url: str
    repository: MinimalRepository
    score: float = 1.0
    file_size: int | None = None


class SearchCode(Wire):
    total_count: int
    incomplete_results: bool = False
    items: list[CodeSearchItem]


# --------------------------------------------------------------------------- request bodies


class Body(BaseModel):
    """A request body: unknown fields are ignored, as GitHub ignores them."""

    model_config = ConfigDict(extra="ignore")


class IssueCreate(Body):
    title: str | int
    body: str | None = None
    labels: list[str | dict[str, Any]] = Field(default_factory=list)
    assignees: list[str] = Field(default_factory=list)
    assignee: str | None = None


class IssueUpdate(Body):
    title: str | int | None = None
    body: str | None = None
    state: str | None = None
    state_reason: str | None = None
    labels: list[str | dict[str, Any]] | None = None
    assignees: list[str] | None = None
    assignee: str | None = None


class CommentCreate(Body):
    body: str


class LabelsBody(Body):
    labels: list[str | dict[str, Any]]


class LabelCreate(Body):
    name: str | None = None
    color: str | None = None
    description: str | None = None


class LabelUpdate(Body):
    new_name: str | None = None
    color: str | None = None
    description: str | None = None


class StatusCreate(Body):
    state: str | None = None
    target_url: str | None = None
    description: str | None = None
    context: str | None = None


class LockBody(Body):
    lock_reason: str | None = None


class PullCreate(Body):
    title: str | None = None
    body: str | None = None
    head: str
    base: str
    draft: bool = False
    maintainer_can_modify: bool = True
    issue: int | None = None


class PullUpdate(Body):
    title: str | None = None
    body: str | None = None
    state: str | None = None
    base: str | None = None
    maintainer_can_modify: bool | None = None


class MergeBody(Body):
    commit_title: str | None = None
    commit_message: str | None = None
    sha: str | None = None
    merge_method: str = "merge"


class ReviewCreate(Body):
    commit_id: str | None = None
    body: str | None = None
    event: str | None = None
    comments: list[dict[str, Any]] = Field(default_factory=list)


class ReviewCommentCreate(Body):
    body: str
    commit_id: str | None = None
    path: str | None = None
    line: int | None = None
    side: str | None = None
    position: int | None = None
    in_reply_to: int | None = None


class ContentsPut(Body):
    message: str
    content: str
    sha: str | None = None
    branch: str | None = None


class ContentsDelete(Body):
    message: str
    sha: str | None = None
    branch: str | None = None


class RefCreate(Body):
    ref: str
    sha: str


class RefPatch(Body):
    sha: str
    force: bool = False
