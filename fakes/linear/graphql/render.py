"""How Linear's rows answer each object type of its schema (``Issue``, ``Team``, ``User``...).

Fields named like a row attribute (``createdAt`` -> ``created_at``) resolve by ariadne's
snake-case fallback; what Linear derives (``identifier``, ``url``, ``priorityLabel``) or what
this fake does not model (reactions, shared access) is resolved here. The lists a type shares
with the roots (``issues``, ``comments``, ``users``) are built by the helpers at the top.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ariadne import ObjectType, SchemaBindable, UnionType

from fakes.linear.backend import slug
from fakes.linear.graphql.connections import Connection, paginate
from fakes.linear.graphql.context import Info, Resolver, ctx
from fakes.linear.models import Issue, IssueHistory, Label, Organization
from fakes.linear.models import aware as _aware

PRIORITY_LABELS = {0: "No priority", 1: "Urgent", 2: "High", 3: "Medium", 4: "Low"}

# ----------------------------------------------------------------------------- lists


def connect(items: Sequence[Any], **kwargs: Any) -> Connection[Any]:
    return paginate(
        items,
        first=kwargs.get("first"),
        after=kwargs.get("after"),
        last=kwargs.get("last"),
        before=kwargs.get("before"),
    )


def issue_list(info: Info, base: dict[str, Any], kwargs: dict[str, Any]) -> Any:
    """Issues under ``base`` (a filter) narrowed by the caller's own ``filter``."""
    c = ctx(info)
    extra = kwargs.get("filter")
    f = {"and": [base, extra]} if extra else base
    rows = c.backend.issues(
        c.session,
        c.viewer,
        f,
        include_archived=bool(kwargs.get("includeArchived")),
        order_by=kwargs.get("orderBy") or "createdAt",
    )
    return connect(rows, **kwargs)


def comment_list(info: Info, base: dict[str, Any], kwargs: dict[str, Any]) -> Any:
    """Comments under ``base`` narrowed by the caller's ``filter``; newest first."""
    c = ctx(info)
    extra = kwargs.get("filter")
    f = {"and": [base, extra]} if extra else base
    rows = c.backend.comments(c.session, c.viewer, f, kwargs.get("orderBy") or "createdAt")
    return connect(rows, **kwargs)


def _lower(attr: str) -> Callable[[Any], str]:
    return lambda row: str(getattr(row, attr)).lower()


def user_list(info: Info, kwargs: dict[str, Any]) -> Any:
    c = ctx(info)
    rows = c.backend.users(c.session, c.viewer, kwargs.get("filter"))
    if not kwargs.get("includeDisabled"):
        rows = [u for u in rows if u.active]
    for sort in kwargs.get("sort") or []:
        for field, attr in (("displayName", "display_name"), ("name", "name")):
            if sort.get(field):
                desc = sort[field].get("order") == "Descending"
                rows = sorted(rows, key=_lower(attr), reverse=desc)
    return connect(rows, **kwargs)


def select(rows: Sequence[Any], f: dict[str, Any] | None, match: Resolver) -> list[Any]:
    return [r for r in rows if f is None or match(r, f)]


def org(info: Info) -> Organization:
    c = ctx(info)
    return c.backend.organization(c.session)


def constants(obj: ObjectType, values: dict[str, Any]) -> None:
    """Fields of features not modelled here: always this value."""
    for name, value in values.items():
        obj.set_field(name, lambda *_a, _v=value, **_k: _v() if callable(_v) else _v)


# ----------------------------------------------------------------------------- Issue


def _issue_url(info: Info, issue: Issue) -> str:
    return f"https://linear.app/{org(info).url_key}/issue/{issue.identifier}/{slug(issue.title)}"


def _bind_issue(obj: ObjectType) -> None:
    obj.set_field("identifier", lambda i, *_: i.identifier)
    obj.set_field("number", lambda i, *_: float(i.number))
    obj.set_field("priority", lambda i, *_: float(i.priority))
    obj.set_field("priorityLabel", lambda i, *_: PRIORITY_LABELS[i.priority])
    obj.set_field("prioritySortOrder", lambda i, *_: float(i.priority or 5))
    obj.set_field("sortOrder", lambda i, *_: i.sort_order)
    obj.set_field("boardOrder", lambda i, *_: i.sort_order)
    obj.set_field("url", lambda i, info: _issue_url(info, i))
    obj.set_field(
        "branchName",
        lambda i, info: (
            f"{ctx(info).backend.user(ctx(info).session, ctx(info).viewer).display_name}"
            f"/{i.identifier.lower()}-{slug(i.title, 40)}".lower()
        ),
    )
    obj.set_field("labelIds", lambda i, *_: [lb.id for lb in i.labels])
    obj.set_field(
        "labels",
        lambda i, info, **kw: connect(
            select(i.labels, kw.get("filter"), ctx(info).matcher.label), **kw
        ),
    )
    obj.set_field(
        "comments", lambda i, info, **kw: comment_list(info, {"issue": {"id": {"eq": i.id}}}, kw)
    )
    obj.set_field(
        "children", lambda i, info, **kw: issue_list(info, {"parent": {"id": {"eq": i.id}}}, kw)
    )
    obj.set_field("history", lambda i, _info, **kw: connect(_history(i), **kw))
    constants(
        obj,
        {
            "previousIdentifiers": list,
            "customerTicketCount": 0,
            "reactionData": dict,
            "reactions": list,
            "inheritsSharedAccess": False,
            "sharedAccess": lambda: {
                "is_shared": False,
                "viewer_has_only_shared_access": False,
                "shared_with_count": 0,
                "shared_with_users": [],
                "disallowed_issue_fields": [],
            },
            "syncedWith": list,
        },
    )


def _history(issue: Issue) -> list[IssueHistory]:
    """Newest first, as Linear's connections list by ``createdAt`` (public clients reverse
    ``history`` nodes to read them oldest first, and ``history(first: 1)`` for the latest
    change). A node is never edited, so ``orderBy: updatedAt`` gives the same order; nothing
    is archived, so ``includeArchived`` changes nothing."""
    return sorted(issue.history, key=lambda h: (_aware(h.created_at), h.position), reverse=True)


issue_type = ObjectType("Issue")
_bind_issue(issue_type)
search_result_type = ObjectType("IssueSearchResult")
_bind_issue(search_result_type)
search_result_type.set_field("metadata", lambda *_: {})

search_payload = ObjectType("IssueSearchPayload")
search_payload.set_field("totalCount", lambda conn, *_: float(conn.total_count))
search_payload.set_field(
    "archivePayload",
    lambda *_: {
        "archive": "",
        "total_count": 0.0,
        "database_version": 0.0,
        "includes_dependencies": [],
    },
)

# ----------------------------------------------------------------------------- the rest

team_type = ObjectType("Team")
team_type.set_field("displayName", lambda t, *_: t.name)
team_type.set_field("updatedAt", lambda t, *_: t.created_at)
team_type.set_field("organization", lambda _t, info: org(info))
team_type.set_field("triageEnabled", lambda t, *_: any(s.type == "triage" for s in t.states))
team_type.set_field(
    "defaultIssueState",
    lambda t, *_: min(
        (s for s in t.states if s.type in ("backlog", "unstarted")),
        key=lambda s: (s.type != "backlog", s.position),
        default=None,
    ),
)
team_type.set_field(
    "issueCount",
    lambda t, info, includeArchived=False: len(
        ctx(info).backend.issues(
            ctx(info).session, ctx(info).viewer, {"team": {"id": {"eq": t.id}}}, includeArchived
        )
    ),
)
team_type.set_field(
    "issues", lambda t, info, **kw: issue_list(info, {"team": {"id": {"eq": t.id}}}, kw)
)
team_type.set_field(
    "states",
    lambda t, info, **kw: connect(
        select(t.states, kw.get("filter"), ctx(info).matcher.state), **kw
    ),
)
team_type.set_field(
    "labels",
    lambda t, info, **kw: connect(
        [
            lb
            for lb in ctx(info).backend.labels(
                ctx(info).session, ctx(info).viewer, kw.get("filter")
            )
            if lb.team_id in (None, t.id)
        ],
        **kw,
    ),
)
team_type.set_field("members", lambda _t, info, **kw: user_list(info, kw))
team_type.set_field(
    "triageIssueState", lambda t, *_: next((s for s in t.states if s.type == "triage"), None)
)
constants(
    team_type,
    {
        "timezone": "UTC",
        "private": False,
        "visibility": "public",
        "inviteHash": "",
        "autoArchivePeriod": 6.0,
        "requirePriorityToLeaveTriage": False,
        "cyclesEnabled": False,
        "cycleDuration": 2.0,
        "cycleCooldownTime": 0.0,
        "cycleStartDay": 1.0,
        "cycleCalenderUrl": "",
        "cycleLockToActive": False,
        "cycleIssueAutoAssignStarted": False,
        "cycleIssueAutoAssignCompleted": False,
        "upcomingCycleCount": 2.0,
        "issueEstimationType": "notUsed",
        "issueEstimationExtended": False,
        "issueEstimationAllowZero": False,
        "inheritIssueEstimation": False,
        "inheritWorkflowStatuses": False,
        "defaultIssueEstimate": 1.0,
        "setIssueSortOrderOnStateChange": "default",
        "issueOrderingNoPriorityFirst": False,
        "issueSortOrderDefaultToBottom": False,
        "groupIssueHistory": True,
        "scimManaged": False,
        "securitySettings": dict,
        "aiDiscussionSummariesEnabled": False,
        "aiThreadSummariesEnabled": False,
        "slackIssueComments": False,
        "slackNewIssue": False,
        "slackIssueStatuses": False,
        "ledInitiativeCount": 0,
    },
)

state_type = ObjectType("WorkflowState")
state_type.set_field("updatedAt", lambda s, *_: s.created_at)
state_type.set_field(
    "issues", lambda s, info, **kw: issue_list(info, {"state": {"id": {"eq": s.id}}}, kw)
)

user_type = ObjectType("User")
user_type.set_field("isMe", lambda u, info: u.id == ctx(info).viewer)
user_type.set_field("isAssignable", lambda u, *_: u.active)
user_type.set_field(
    "url", lambda u, info: f"https://linear.app/{org(info).url_key}/profiles/{u.display_name}"
)
user_type.set_field(
    "initials", lambda u, *_: "".join(w[0] for w in u.name.split()[:2]).upper() or "?"
)
user_type.set_field("updatedAt", lambda u, *_: u.created_at)
user_type.set_field("organization", lambda _u, info: org(info))
user_type.set_field(
    "createdIssueCount",
    lambda u, info: len(
        ctx(info).backend.issues(
            ctx(info).session, ctx(info).viewer, {"creator": {"id": {"eq": u.id}}}, True
        )
    ),
)
user_type.set_field(
    "assignedIssues",
    lambda u, info, **kw: issue_list(info, {"assignee": {"id": {"eq": u.id}}}, kw),
)
user_type.set_field(
    "createdIssues",
    lambda u, info, **kw: issue_list(info, {"creator": {"id": {"eq": u.id}}}, kw),
)
user_type.set_field("delegatedIssues", lambda _u, _info, **kw: connect([], **kw))
user_type.set_field(
    "teams",
    lambda _u, info, **kw: connect(
        ctx(info).backend.teams(ctx(info).session, ctx(info).viewer, kw.get("filter")), **kw
    ),
)
constants(
    user_type,
    {
        "owner": False,
        "guest": False,
        "app": False,
        "isMentionable": True,
        "supportsAgentSessions": False,
        "canAccessAnyPublicTeam": True,
        "avatarBackgroundColor": "#5e6ad2",
        "inviteHash": "",
    },
)

label_type = ObjectType("IssueLabel")
label_type.set_field("updatedAt", lambda lb, *_: lb.created_at)
label_type.set_field(
    "issues", lambda lb, info, **kw: issue_list(info, {"labels": {"id": {"eq": lb.id}}}, kw)
)
label_type.set_field("children", lambda _lb, _info, **kw: connect([], **kw))
constants(label_type, {"isGroup": False})

comment_type = ObjectType("Comment")
comment_type.set_field(
    "url",
    lambda c, info: f"{_issue_url(info, c.issue)}#comment-{c.id.split('-')[0]}",
)
comment_type.set_field(
    "children", lambda c, info, **kw: comment_list(info, {"parent": {"id": {"eq": c.id}}}, kw)
)
constants(comment_type, {"reactionData": dict, "reactions": list, "syncedWith": list})

org_type = ObjectType("Organization")
org_type.set_field("updatedAt", lambda o, *_: o.created_at)
org_type.set_field(
    "userCount", lambda _o, info: len(ctx(info).backend.users(ctx(info).session, ctx(info).viewer))
)
org_type.set_field(
    "createdIssueCount",
    lambda _o, info: len(ctx(info).backend.issues(ctx(info).session, ctx(info).viewer, None, True)),
)
org_type.set_field(
    "teams",
    lambda _o, info, **kw: connect(
        ctx(info).backend.teams(ctx(info).session, ctx(info).viewer, kw.get("filter")), **kw
    ),
)
org_type.set_field("users", lambda _o, info, **kw: user_list(info, kw))
org_type.set_field(
    "labels",
    lambda _o, info, **kw: connect(
        ctx(info).backend.labels(ctx(info).session, ctx(info).viewer, kw.get("filter")), **kw
    ),
)

history_type = ObjectType("IssueHistory")
history_type.set_field("updatedAt", lambda h, *_: h.created_at)


def _label_ids(side: str) -> Resolver:
    # Both lists when the change touched the labels (one may be empty), null when it did not,
    # as the fields' nullability suggests. Unverified against a live answer: clients read
    # them as ``addedLabelIds or []``.
    return lambda h, *_: list(getattr(h, side)) if h.added_labels or h.removed_labels else None


def _labels_of(side: str) -> Resolver:
    def resolve(h: IssueHistory, info: Info) -> list[Label] | None:
        ids = _label_ids(side)(h)
        if ids is None:
            return None
        found = (ctx(info).session.get(Label, x) for x in ids)
        return [lb for lb in found if lb is not None]

    return resolve


history_type.set_field("addedLabelIds", _label_ids("added_labels"))
history_type.set_field("removedLabelIds", _label_ids("removed_labels"))
history_type.set_field("addedLabels", _labels_of("added_labels"))
history_type.set_field("removedLabels", _labels_of("removed_labels"))
history_type.set_field("actors", lambda h, *_: [h.actor] if h.actor else [])
history_type.set_field(
    "descriptionUpdatedBy",
    lambda h, *_: [h.actor] if h.updated_description and h.actor else None,
)

metadata_union = UnionType("ExternalEntityInfoMetadata", lambda *_: None)


def types() -> list[SchemaBindable]:
    """The bindables of every object type and union here, for the executable schema."""
    return [
        issue_type,
        search_result_type,
        search_payload,
        team_type,
        state_type,
        user_type,
        label_type,
        comment_type,
        org_type,
        history_type,
        metadata_union,
    ]
