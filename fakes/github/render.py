"""From rows to GitHub's wire objects (:mod:`fakes.github.schemas`).

URLs point where GitHub's do (``https://api.github.com/...``, ``https://github.com/...``):
the gateway routes those hosts to the fake. Only ``Link`` pagination headers, which clients
follow blindly, use the address the request came in on (see :mod:`fakes.github.routes`).
"""

from __future__ import annotations

import base64
import hashlib
from urllib.parse import quote

from fakes.github import schemas as w
from fakes.github.backend import GitHubBackend
from fakes.github.gitstore import CommitInfo, FileChange, TreeEntry
from fakes.github.models import (
    CheckRun,
    Comment,
    CommitStatus,
    Issue,
    IssueEvent,
    Label,
    Repo,
    Review,
    ReviewComment,
    User,
    node_id,
)

API = "https://api.github.com"
WEB = "https://github.com"
RAW = "https://raw.githubusercontent.com"


def avatar(user_id: int) -> str:
    return f"https://avatars.githubusercontent.com/u/{user_id}?v=4"


def simple_user(u: User) -> w.SimpleUser:
    base = f"{API}/users/{u.login}"
    return w.SimpleUser(
        login=u.login,
        id=u.id,
        node_id=node_id("Bot" if u.type == "Bot" else u.type, u.id),
        avatar_url=avatar(u.id),
        gravatar_id="",
        url=base,
        html_url=f"{WEB}/{u.login}",
        followers_url=f"{base}/followers",
        following_url=f"{base}/following{{/other_user}}",
        gists_url=f"{base}/gists{{/gist_id}}",
        starred_url=f"{base}/starred{{/owner}}{{/repo}}",
        subscriptions_url=f"{base}/subscriptions",
        organizations_url=f"{base}/orgs",
        repos_url=f"{base}/repos",
        events_url=f"{base}/events{{/privacy}}",
        received_events_url=f"{base}/received_events",
        type=u.type,
    )


def public_user(u: User, repos: int) -> w.PublicUser:
    return w.PublicUser(
        **simple_user(u).model_dump(),
        name=u.name,
        email=u.email,
        public_repos=repos,
        created_at=u.created_at,
        updated_at=u.created_at,
    )


def organization(u: User, repos: int) -> w.Organization:
    """An organisation's profile, as anyone who is not its owner reads it."""
    base = f"{API}/orgs/{u.login}"
    return w.Organization(
        login=u.login,
        id=u.id,
        node_id=node_id("Organization", u.id),
        url=base,
        repos_url=f"{base}/repos",
        events_url=f"{base}/events",
        hooks_url=f"{base}/hooks",
        issues_url=f"{base}/issues",
        members_url=f"{base}/members{{/member}}",
        public_members_url=f"{base}/public_members{{/member}}",
        avatar_url=avatar(u.id),
        **({"name": u.name} if u.name else {}),
        public_repos=repos,
        html_url=f"{WEB}/{u.login}",
        created_at=u.created_at,
        updated_at=u.created_at,
    )


def private_user(u: User, repos: int, private_repos: int) -> w.PrivateUser:
    return w.PrivateUser(
        **public_user(u, repos).model_dump(),
        total_private_repos=private_repos,
        owned_private_repos=private_repos,
    )


def owner_user(r: Repo) -> w.SimpleUser:
    if r.owner_user is not None:
        return simple_user(r.owner_user)
    # An organization that is not among the world's users: a stable id derived from its name.
    org_id = int(hashlib.sha256(r.owner.encode()).hexdigest()[:7], 16)
    fake = User(id=org_id, login=r.owner, type="Organization", created_at=r.created_at)
    return simple_user(fake)


def repository(
    r: Repo, open_issues: int, *, full: bool = False, minimal: bool = False, simple: bool = False
) -> w.Repository:
    """A repository: ``full`` as read alone, ``minimal`` as search embeds it, ``simple`` as
    a combined status embeds it, else as lists and pull requests embed it."""
    api = f"{API}/repos/{r.full_name}"
    templates = {
        "archive_url": f"{api}/{{archive_format}}{{/ref}}",
        "assignees_url": f"{api}/assignees{{/user}}",
        "blobs_url": f"{api}/git/blobs{{/sha}}",
        "branches_url": f"{api}/branches{{/branch}}",
        "collaborators_url": f"{api}/collaborators{{/collaborator}}",
        "comments_url": f"{api}/comments{{/number}}",
        "commits_url": f"{api}/commits{{/sha}}",
        "compare_url": f"{api}/compare/{{base}}...{{head}}",
        "contents_url": f"{api}/contents/{{+path}}",
        "contributors_url": f"{api}/contributors",
        "deployments_url": f"{api}/deployments",
        "downloads_url": f"{api}/downloads",
        "events_url": f"{api}/events",
        "forks_url": f"{api}/forks",
        "git_commits_url": f"{api}/git/commits{{/sha}}",
        "git_refs_url": f"{api}/git/refs{{/sha}}",
        "git_tags_url": f"{api}/git/tags{{/sha}}",
        "git_url": f"git://github.com/{r.full_name}.git",
        "issue_comment_url": f"{api}/issues/comments{{/number}}",
        "issue_events_url": f"{api}/issues/events{{/number}}",
        "issues_url": f"{api}/issues{{/number}}",
        "keys_url": f"{api}/keys{{/key_id}}",
        "labels_url": f"{api}/labels{{/name}}",
        "languages_url": f"{api}/languages",
        "merges_url": f"{api}/merges",
        "milestones_url": f"{api}/milestones{{/number}}",
        "notifications_url": f"{api}/notifications{{?since,all,participating}}",
        "pulls_url": f"{api}/pulls{{/number}}",
        "releases_url": f"{api}/releases{{/id}}",
        "ssh_url": f"git@github.com:{r.full_name}.git",
        "stargazers_url": f"{api}/stargazers",
        "statuses_url": f"{api}/statuses/{{sha}}",
        "subscribers_url": f"{api}/subscribers",
        "subscription_url": f"{api}/subscription",
        "tags_url": f"{api}/tags",
        "teams_url": f"{api}/teams",
        "trees_url": f"{api}/git/trees{{/sha}}",
        "clone_url": f"{WEB}/{r.full_name}.git",
        "hooks_url": f"{api}/hooks",
        "svn_url": f"{WEB}/{r.full_name}",
    }
    model: type[w.Repository] = w.Repository
    if full or minimal or simple:
        model = w.FullRepository if full else w.MinimalRepository if minimal else w.SimpleRepository
    org = r.owner_user if r.owner_user is not None and r.owner_user.type == "Organization" else None
    extra = {"organization": simple_user(org)} if full and org is not None else {}
    return model(
        **extra,
        id=r.id,
        node_id=node_id("Repository", r.id),
        name=r.name,
        full_name=r.full_name,
        private=r.private,
        owner=owner_user(r),
        html_url=f"{WEB}/{r.full_name}",
        description=r.description,
        url=api,
        **templates,
        default_branch=r.default_branch,
        open_issues_count=open_issues,
        open_issues=open_issues,
        visibility="private" if r.private else "public",
        pushed_at=r.pushed_at,
        created_at=r.created_at,
        updated_at=r.updated_at,
    )


def label(lb: Label) -> w.Label:
    return w.Label(**issue_label(lb).model_dump())


def issue_label(lb: Label) -> w.IssueLabel:
    return w.IssueLabel(
        id=lb.id,
        node_id=node_id("Label", lb.id),
        url=f"{API}/repos/{lb.repo.full_name}/labels/{quote(lb.name)}",
        name=lb.name,
        color=lb.color,
        description=lb.description,
    )


def association(user: User, r: Repo) -> w.AuthorAssociation:
    return "OWNER" if user.login.lower() == r.owner.lower() else "NONE"


def reactions(url: str) -> w.Reactions:
    return w.Reactions(url=f"{url}/reactions")


def issue(i: Issue, *, listed: bool = False) -> w.Issue:
    """An issue (or a pull request as an issue); ``listed`` for one in a list or search
    result, which GitHub sends without ``closed_by``."""
    r = i.repo
    api = f"{API}/repos/{r.full_name}/issues/{i.number}"
    web_kind = "pull" if i.is_pull else "issues"
    links = None
    if i.pull is not None:
        pulls = f"{WEB}/{r.full_name}/pull/{i.number}"
        links = w.IssuePullRequestLinks(
            url=f"{API}/repos/{r.full_name}/pulls/{i.number}",
            html_url=pulls,
            diff_url=f"{pulls}.diff",
            patch_url=f"{pulls}.patch",
            merged_at=i.pull.merged_at,
        )
    return w.Issue(
        url=api,
        repository_url=f"{API}/repos/{r.full_name}",
        labels_url=f"{api}/labels{{/name}}",
        comments_url=f"{api}/comments",
        events_url=f"{api}/events",
        html_url=f"{WEB}/{r.full_name}/{web_kind}/{i.number}",
        id=i.id,
        node_id=node_id("PullRequest" if i.is_pull else "Issue", i.id),
        number=i.number,
        title=i.title,
        user=simple_user(i.author),
        labels=[issue_label(lb) for lb in i.labels],
        state=i.state,
        locked=i.locked,
        active_lock_reason=i.lock_reason,
        assignee=simple_user(i.assignees[0]) if i.assignees else None,
        assignees=[simple_user(u) for u in i.assignees],
        comments=i.comment_count,
        created_at=i.created_at,
        updated_at=i.updated_at,
        closed_at=i.closed_at,
        author_association=association(i.author, r),
        **({"draft": i.pull.draft, "pull_request": links} if i.pull is not None else {}),
        body=i.body,
        **(
            {}
            if listed
            else {"closed_by": simple_user(i.closed_by) if i.closed_by is not None else None}
        ),
        reactions=reactions(api),
        timeline_url=f"{api}/timeline",
        state_reason=None if i.is_pull else i.state_reason,
    )


EVENT_NODE_TYPES = {
    "closed": "ClosedEvent",
    "reopened": "ReopenedEvent",
    "merged": "MergedEvent",
    "labeled": "LabeledEvent",
    "unlabeled": "UnlabeledEvent",
    "renamed": "RenamedTitleEvent",
    "assigned": "AssignedEvent",
    "unassigned": "UnassignedEvent",
    "convert_to_draft": "ConvertToDraftEvent",
    "ready_for_review": "ReadyForReviewEvent",
}
"""The GraphQL type behind each event's global id (``MergedEvent`` as GitHub's own say)."""


def issue_event(e: IssueEvent, *, with_issue: bool = False, timeline: bool = False) -> w.IssueEvent:
    """An issue event; ``with_issue`` for the repository's list and the single event, and
    ``timeline`` drops ``assigner``, which the timeline does not carry (GitHub's docs)."""
    r = e.issue.repo
    api = f"{API}/repos/{r.full_name}"
    fields: dict[str, object] = {
        "id": e.id,
        "node_id": node_id(EVENT_NODE_TYPES.get(e.event, "IssueEvent"), e.id),
        "url": f"{api}/issues/events/{e.id}",
        "actor": simple_user(e.actor),
        "event": e.event,
        "commit_id": e.commit_id,
        "commit_url": f"{api}/commits/{e.commit_id}" if e.commit_id else None,
        "created_at": e.created_at,
    }
    if e.event in ("labeled", "unlabeled"):
        fields["label"] = w.IssueEventLabel(name=e.label_name or "", color=e.label_color or "")
    if e.event in ("assigned", "unassigned"):
        fields["assignee"] = simple_user(e.assignee) if e.assignee is not None else None
        if not timeline:
            fields["assigner"] = simple_user(e.actor)
    if e.event == "renamed":
        fields["rename"] = w.IssueEventRename.model_validate(
            {"from": e.rename_from or "", "to": e.rename_to or ""}
        )
    if e.event in ("closed", "reopened"):
        fields["state_reason"] = e.state_reason
    if with_issue:
        fields["issue"] = issue(e.issue)
    return w.IssueEvent.model_validate(fields)


def timeline_comment(c: Comment) -> w.TimelineComment:
    return w.TimelineComment(**dict(comment(c)), actor=simple_user(c.author))


def timeline_review(rv: Review) -> w.TimelineReview:
    data = dict(review(rv))
    data["state"] = rv.state.lower()
    return w.TimelineReview(**data)


def search_issue(i: Issue) -> w.SearchIssue:
    found = issue(i, listed=True)
    return w.SearchIssue.model_validate({k: getattr(found, k) for k in found.model_fields_set})


def comment(c: Comment) -> w.IssueComment:
    i = c.issue
    r = i.repo
    url = f"{API}/repos/{r.full_name}/issues/comments/{c.id}"
    kind = "pull" if i.is_pull else "issues"
    return w.IssueComment(
        url=url,
        html_url=f"{WEB}/{r.full_name}/{kind}/{i.number}#issuecomment-{c.id}",
        issue_url=f"{API}/repos/{r.full_name}/issues/{i.number}",
        id=c.id,
        node_id=node_id("IssueComment", c.id),
        user=simple_user(c.author),
        created_at=c.created_at,
        updated_at=c.updated_at,
        author_association=association(c.author, r),
        body=c.body,
        reactions=reactions(url),
    )


def _href(url: str) -> w.Href:
    return w.Href(href=url)


def pull(
    backend: GitHubBackend, i: Issue, open_issues: int, *, viewer: str, full: bool = False
) -> w.PullRequest:
    """A pull request as ``viewer`` (a login) sees it: its counts leave out what another's
    pending review drafted."""
    p = i.pull
    assert p is not None
    r = i.repo
    api = f"{API}/repos/{r.full_name}"
    url = f"{api}/pulls/{i.number}"
    html = f"{WEB}/{r.full_name}/pull/{i.number}"
    repo = repository(r, open_issues)
    owner = owner_user(r)
    fields = {
        "url": url,
        "id": i.id,
        "node_id": node_id("PullRequest", i.id),
        "html_url": html,
        "diff_url": f"{html}.diff",
        "patch_url": f"{html}.patch",
        "issue_url": f"{api}/issues/{i.number}",
        "commits_url": f"{url}/commits",
        "review_comments_url": f"{url}/comments",
        "review_comment_url": f"{api}/pulls/comments{{/number}}",
        "comments_url": f"{api}/issues/{i.number}/comments",
        "statuses_url": f"{api}/statuses/{p.head_sha}",
        "number": i.number,
        "state": i.state,
        "locked": i.locked,
        "active_lock_reason": i.lock_reason,
        "title": i.title,
        "user": simple_user(i.author),
        "body": i.body,
        "labels": [issue_label(lb) for lb in i.labels],
        "created_at": i.created_at,
        "updated_at": i.updated_at,
        "closed_at": i.closed_at,
        "merged_at": p.merged_at,
        "merge_commit_sha": p.merge_commit_sha,
        "assignee": simple_user(i.assignees[0]) if i.assignees else None,
        "assignees": [simple_user(u) for u in i.assignees],
        "head": w.PullRef(
            label=f"{r.owner}:{p.head_ref}", ref=p.head_ref, sha=p.head_sha, user=owner, repo=repo
        ),
        "base": w.PullRef(
            label=f"{r.owner}:{p.base_ref}", ref=p.base_ref, sha=p.base_sha, user=owner, repo=repo
        ),
        "_links": w.PullLinks.model_validate(
            {
                "self": _href(url),
                "html": _href(html),
                "issue": _href(f"{api}/issues/{i.number}"),
                "comments": _href(f"{api}/issues/{i.number}/comments"),
                "review_comments": _href(f"{url}/comments"),
                "review_comment": _href(f"{api}/pulls/comments{{/number}}"),
                "commits": _href(f"{url}/commits"),
                "statuses": _href(f"{api}/statuses/{p.head_sha}"),
            }
        ),
        "author_association": association(i.author, r),
        "draft": p.draft,
    }
    if not full:
        return w.PullRequest.model_validate(fields)
    files = backend.pulls.changes(i)
    # A pull request from the snapshot may name commits the cut history does not hold.
    known = r.has_git and all(
        backend.git.resolve(r.full_name, sha) == sha for sha in (p.base_sha, p.head_sha)
    )
    commits = len(backend.git.commits_between(r.full_name, p.base_sha, p.head_sha)) if known else 0
    merged = p.merged_at is not None
    mergeable: bool | None = None
    if i.state == "open" and known:
        mergeable = backend.git.merge_tree(r.full_name, p.base_sha, p.head_sha) is not None
    state = "unknown"
    if mergeable is True:
        state = "draft" if p.draft else "clean"
    elif mergeable is False:
        state = "dirty"
    return w.FullPullRequest.model_validate(
        {
            **fields,
            "merged": merged,
            "mergeable": mergeable,
            "rebaseable": mergeable,
            "mergeable_state": state,
            "merged_by": simple_user(p.merged_by) if p.merged_by is not None else None,
            "comments": i.comment_count,
            "review_comments": backend.pulls.review_comment_count(p, viewer),
            "maintainer_can_modify": p.maintainer_can_modify,
            "commits": commits,
            "additions": sum(f.additions for f in files),
            "deletions": sum(f.deletions for f in files),
            "changed_files": len(files),
        }
    )


def review(rv: Review) -> w.Review:
    i = rv.pull.issue
    r = i.repo
    html = f"{WEB}/{r.full_name}/pull/{i.number}#pullrequestreview-{rv.id}"
    pr_url = f"{API}/repos/{r.full_name}/pulls/{i.number}"
    return w.Review.model_validate(
        {
            "id": rv.id,
            "node_id": node_id("PullRequestReview", rv.id),
            "user": simple_user(rv.author),
            "body": rv.body,
            "state": rv.state,
            "html_url": html,
            "pull_request_url": pr_url,
            "_links": {"html": {"href": html}, "pull_request": {"href": pr_url}},
            "submitted_at": rv.submitted_at,
            "commit_id": rv.commit_id,
            "author_association": association(rv.author, r),
        }
    )


def review_comment(c: ReviewComment) -> w.ReviewComment:
    i = c.pull.issue
    r = i.repo
    url = f"{API}/repos/{r.full_name}/pulls/comments/{c.id}"
    html = f"{WEB}/{r.full_name}/pull/{i.number}#discussion_r{c.id}"
    pr_url = f"{API}/repos/{r.full_name}/pulls/{i.number}"
    return w.ReviewComment.model_validate(
        {
            "url": url,
            "pull_request_review_id": c.review_id,
            "id": c.id,
            "node_id": node_id("PullRequestReviewComment", c.id),
            "diff_hunk": c.diff_hunk,
            "path": c.path,
            "commit_id": c.commit_id,
            "original_commit_id": c.commit_id,
            "in_reply_to_id": c.in_reply_to_id,
            "user": simple_user(c.author),
            "body": c.body,
            "created_at": c.created_at,
            "updated_at": c.updated_at,
            "html_url": html,
            "pull_request_url": pr_url,
            "author_association": association(c.author, r),
            "_links": {
                "self": {"href": url},
                "html": {"href": html},
                "pull_request": {"href": pr_url},
            },
            "line": c.line,
            "original_line": c.line,
            "side": c.side,
            "reactions": reactions(url),
        }
    )


def git_actor(name: str, email: str, date: object) -> w.GitActor:
    return w.GitActor.model_validate({"name": name, "email": email, "date": date})


def commit(
    r: Repo, info: CommitInfo, users: dict[str, User], files: list[FileChange] | None = None
) -> w.Commit:
    api = f"{API}/repos/{r.full_name}"
    author = users.get(info.author.email.lower())
    committer = users.get(info.committer.email.lower())
    stats = None
    entries = None
    if files is not None:
        entries = [diff_entry(r, info.sha, f) for f in files]
        adds = sum(f.additions for f in files)
        dels = sum(f.deletions for f in files)
        stats = w.CommitStats(total=adds + dels, additions=adds, deletions=dels)
    return w.Commit(
        url=f"{api}/commits/{info.sha}",
        sha=info.sha,
        node_id=node_id("Commit", int(info.sha[:12], 16)),
        html_url=f"{WEB}/{r.full_name}/commit/{info.sha}",
        comments_url=f"{api}/commits/{info.sha}/comments",
        commit=w.CommitDetail(
            url=f"{api}/git/commits/{info.sha}",
            author=git_actor(info.author.name, info.author.email, info.author.date),
            committer=git_actor(info.committer.name, info.committer.email, info.committer.date),
            message=info.message,
            tree=w.ShaUrl(sha=info.tree, url=f"{api}/git/trees/{info.tree}"),
        ),
        author=simple_user(author) if author else None,
        committer=simple_user(committer) if committer else None,
        parents=[
            w.ParentRef(sha=p, url=f"{api}/commits/{p}", html_url=f"{WEB}/{r.full_name}/commit/{p}")
            for p in info.parents
        ],
        stats=stats,
        files=entries,
    )


def diff_entry(r: Repo, ref: str, f: FileChange) -> w.DiffEntry:
    api = f"{API}/repos/{r.full_name}"
    return w.DiffEntry(
        sha=f.blob_sha,
        filename=f.path,
        status=f.status,
        additions=f.additions,
        deletions=f.deletions,
        changes=f.additions + f.deletions,
        blob_url=f"{WEB}/{r.full_name}/blob/{ref}/{f.path}",
        raw_url=f"{WEB}/{r.full_name}/raw/{ref}/{f.path}",
        contents_url=f"{api}/contents/{f.path}?ref={ref}",
        patch=f.patch or None,
        previous_filename=f.previous_path,
    )


def content_item(r: Repo, ref: str, e: TreeEntry) -> w.ContentItem:
    kind = {"blob": "file", "tree": "dir", "commit": "submodule"}[e.type]
    if e.mode == "120000":
        kind = "symlink"
    api = f"{API}/repos/{r.full_name}/contents/{e.path}?ref={ref}"
    web_kind = "tree" if e.type == "tree" else "blob"
    git = f"{API}/repos/{r.full_name}/git/{'trees' if e.type == 'tree' else 'blobs'}/{e.sha}"
    html = f"{WEB}/{r.full_name}/{web_kind}/{ref}/{e.path}"
    return w.ContentItem.model_validate(
        {
            "type": kind,
            "size": e.size,
            "name": e.path.rsplit("/", 1)[-1],
            "path": e.path,
            "sha": e.sha,
            "url": api,
            "git_url": git,
            "html_url": html,
            "download_url": f"{RAW}/{r.full_name}/{ref}/{e.path}" if e.type == "blob" else None,
            "_links": {"self": api, "git": git, "html": html},
        }
    )


def content_file(r: Repo, ref: str, e: TreeEntry, data: bytes) -> w.ContentFile:
    encoded = base64.encodebytes(data).decode()
    return w.ContentFile.model_validate(
        {**content_item(r, ref, e).model_dump(by_alias=True), "content": encoded}
    )


def status(st: CommitStatus, r: Repo) -> w.Status:
    return w.Status(
        url=f"{API}/repos/{r.full_name}/statuses/{st.sha}",
        avatar_url=avatar(st.creator.id) if st.creator else None,
        id=st.id,
        node_id=node_id("StatusContext", st.id),
        state=st.state,
        description=st.description,
        target_url=st.target_url,
        context=st.context,
        created_at=st.created_at,
        updated_at=st.updated_at,
        creator=simple_user(st.creator) if st.creator else None,
    )


def check_run(c: CheckRun, r: Repo) -> w.CheckRun:
    url = f"{API}/repos/{r.full_name}/check-runs/{c.id}"
    return w.CheckRun(
        id=c.id,
        head_sha=c.head_sha,
        node_id=node_id("CheckRun", c.id),
        url=url,
        html_url=f"{WEB}/{r.full_name}/runs/{c.id}",
        details_url=c.details_url,
        status=c.status,
        conclusion=c.conclusion,
        started_at=c.started_at,
        completed_at=c.completed_at,
        output=w.CheckOutput(annotations_url=f"{url}/annotations"),
        name=c.name,
        check_suite=None,
    )
