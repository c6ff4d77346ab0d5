"""The vocabulary of the event log: every kind of event the world records, and its fields.

Event kinds are strings, and a string nobody emits is a rule that can never fire: a misspelt
kind in an ``at_most: 0`` rule passes every run. So the kinds are closed here. The event log
(:class:`fakes.core.events.EventLog`) refuses to record a kind, a service or a ``data`` key
that is not in :data:`KINDS`, so this list cannot drift from what the fakes and the gateway
emit; case files are checked against it (:func:`kind_problem`, :func:`field_problem`), so a
rule names only what can happen.

This is the base layer: it imports nothing from ``fakes/`` or the orchestrator, only the
standard library and :mod:`replay.base.errors`, so the fakes, the gateway (in its own venv) and the
case format can all read it.
"""

from __future__ import annotations

import difflib
import fnmatch
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from replay.base.errors import ReplayError

EVENT_FIELDS: Mapping[str, str] = {
    "schema": "The event format's version.",
    "seq": "Position in the run's log, from 1.",
    "at": "When it happened on the world's frozen clock (ISO 8601).",
    "recorded_at": "When it happened on the real clock (ISO 8601).",
    "service": "The service that recorded it (the kind's first part).",
    "kind": "The kind (a key of KINDS).",
    "actor": "Who did it: login, user id or token owner; null when unauthenticated.",
    "object.type": "What was touched (the kind's object type).",
    "object.id": "Its identity in the service: ``acme/semverkit#7``, ``ENG-12``...",
    "data": "The kind's fields, as a whole.",
}
"""The fields of an event as the log exports it (``events.jsonl``, ``/_replay/events``), by the
dotted path a side-effect condition names them with; ``data.<key>`` is per kind."""


class EventVocabularyError(ReplayError, ValueError):
    """Code tried to record an event the vocabulary does not have: a programming error."""


@dataclass(frozen=True)
class EventKind:
    """One kind of event: who records it, what it is about, and the keys of its ``data``."""

    name: str
    """Dotted, service first: ``github.pull_request.opened``."""
    object_type: str
    """The ``object.type`` its events carry."""
    doc: str
    """When it is recorded."""
    data: Mapping[str, str]
    """Every key its ``data`` may hold, with what the value is. A recorder may leave keys out
    (some emitters know less than others); it may not add one."""
    nested: frozenset[str] = field(default_factory=frozenset)
    """The keys whose value is a mapping, so a condition may go deeper (``data.changes.state``)."""
    semantic: bool = False
    """Recorded for a change whatever route made it, beside the route's own event for the same
    change (``github.branch.moved`` beside ``git.push``, ``github.contents.updated``...): what a
    rule about the change's meaning names. Not a change of its own, so never counted again as
    one (:data:`SEMANTIC`)."""

    @property
    def service(self) -> str:
        return self.name.split(".", 1)[0]


def _k(
    name: str,
    object_type: str,
    doc: str,
    data: Mapping[str, str],
    *nested: str,
    semantic: bool = False,
) -> EventKind:
    return EventKind(name, object_type, doc, dict(data), frozenset(nested), semantic)


# Fields several kinds share, said once.
_REPO = {"repo": "``owner/name``.", "number": "The issue or pull request number."}
_SLACK = {"channel": "The channel id (``C...``).", "ts": "The message's timestamp."}
_CHANGES = "Each field changed: ``{field: {from, to}}``."
_HUMAN = {
    "person": "The scripted person's user id.",
    "thread": "Where they answered (the case's ``humans[].thread``).",
    "text": "The reply posted.",
    "trigger": "``asks_in_thread`` or ``mentions_person``.",
}
_MODEL_CALL = {
    # replay.gateway.modelcalls.ModelCall, dumped whole; tests/test_eventkinds.py keeps these equal.
    name: f"``ModelCall.{name}``."
    for name in (
        "schema_version",
        "request_id",
        "request_id_from_provider",
        "method",
        "host",
        "path",
        "provider",
        "model",
        "streamed",
        "retry_count",
        "logical_key",
        "t_request_end",
        "status",
        "ttfb_ms",
        "total_ms",
        "request_bytes",
        "response_bytes",
        "error_class",
        "error_detail",
        "usage",
        "stop_reason",
        "verdict",
        "request",
    )
}

_ALL = [
    # ---------------------------------------------------------------- GitHub (fakes/github)
    _k(
        "github.issue.opened",
        "issue",
        "An issue is created.",
        _REPO
        | {
            "title": "Its title.",
            "body": "Its body.",
            "labels": "Label names.",
            "assignees": "Assignee logins.",
        },
    ),
    _k(
        "github.issue.updated",
        "issue",
        "An issue's title, body, state, labels or assignees change (also when a merged pull "
        "request closes it).",
        _REPO
        | {
            "changes": _CHANGES,
            "closed_by_pull_request": "The number of the merged pull request that closed it.",
        },
        "changes",
    ),
    _k(
        "github.pull_request.opened",
        "pull_request",
        "A pull request is opened.",
        _REPO
        | {
            "title": "Its title.",
            "body": "Its body.",
            "head": "The head branch.",
            "base": "The base branch.",
            "draft": "Whether it is a draft.",
        },
    ),
    _k(
        "github.pull_request.updated",
        "pull_request",
        "A pull request's title, body, state, labels or assignees change (also when it is "
        "merged: ``changes.state`` from open to closed, beside ``github.pull_request.merged``).",
        _REPO | {"changes": _CHANGES},
        "changes",
    ),
    _k(
        "github.pull_request.merged",
        "pull_request",
        "A pull request is merged.",
        _REPO
        | {"merge_commit_sha": "The commit the merge made.", "method": "merge/squash/rebase."},
    ),
    _k(
        "github.pull_request_review.submitted",
        "review",
        "A review is submitted on a pull request.",
        _REPO | {"state": "APPROVED, CHANGES_REQUESTED, COMMENTED...", "body": "Its body."},
    ),
    _k(
        "github.review_comment.created",
        "review_comment",
        "A comment on a line of a pull request's diff.",
        _REPO | {"path": "The file.", "line": "The line.", "body": "Its body."},
    ),
    _k(
        "github.issue_comment.created",
        "comment",
        "A comment on an issue or pull request.",
        _REPO | {"comment_id": "The comment's id.", "body": "Its body."},
    ),
    _k(
        "github.issue_comment.updated",
        "comment",
        "A comment is edited.",
        _REPO
        | {"comment_id": "The comment's id.", "body": "The new body.", "previous_body": "The old."},
    ),
    _k(
        "github.issue_comment.deleted",
        "comment",
        "A comment is deleted.",
        _REPO | {"comment_id": "The comment's id.", "body": "Its body when deleted."},
    ),
    _k(
        "github.label.added",
        "issue",
        "A label is put on an issue or pull request.",
        _REPO | {"label": "The label's name."},
    ),
    _k(
        "github.label.removed",
        "issue",
        "A label is taken off an issue or pull request.",
        _REPO | {"label": "The label's name."},
    ),
    _k(
        "github.label.created",
        "label",
        "A repository's label is created (``POST /repos/{o}/{r}/labels``).",
        {
            "repo": "``owner/name``.",
            "name": "The label's name.",
            "color": "Its colour: six hex digits, no ``#``.",
            "description": "Its description, or null.",
        },
    ),
    _k(
        "github.label.updated",
        "label",
        "A repository's label is renamed, recoloured or redescribed (``PATCH``).",
        {
            "repo": "``owner/name``.",
            "name": "The label's name after the change.",
            "changes": _CHANGES,
        },
        "changes",
    ),
    _k(
        "github.label.deleted",
        "label",
        "A repository's label is deleted (and so taken off every issue and pull request).",
        {
            "repo": "``owner/name``.",
            "name": "The label's name.",
            "issues": "The numbers of the issues and pull requests that carried it.",
        },
    ),
    _k(
        "github.status.created",
        "status",
        "A commit status is created (``POST /repos/{o}/{r}/statuses/{sha}``).",
        {
            "repo": "``owner/name``.",
            "sha": "The commit.",
            "state": "``error``, ``failure``, ``pending`` or ``success``.",
            "context": "The status's context (``default`` when not given).",
            "description": "Its description, or null.",
            "target_url": "Its link, or null.",
        },
    ),
    _k(
        "github.contents.updated",
        "contents",
        "A file is written through the contents API (a commit on a branch).",
        {
            "repo": "``owner/name``.",
            "path": "The file.",
            "branch": "The branch committed to.",
            "sha": "The new commit.",
        },
    ),
    _k(
        "github.contents.deleted",
        "contents",
        "A file is deleted through the contents API (``DELETE .../contents/{path}``: a commit "
        "on a branch).",
        {
            "repo": "``owner/name``.",
            "path": "The file.",
            "branch": "The branch committed to.",
            "sha": "The new commit.",
        },
    ),
    _k(
        "github.commit.created",
        "commit",
        "A commit is made on a branch by GraphQL ``createCommitOnBranch``.",
        {
            "repo": "``owner/name``.",
            "branch": "The branch committed to.",
            "sha": "The new commit.",
            "headline": "The commit message's headline.",
            "added": "The paths added or changed.",
            "deleted": "The paths deleted.",
        },
    ),
    _k(
        "github.branch.moved",
        "branch",
        "A branch is created, moved or deleted, by any route: a push, the contents API, a "
        "pull request merged (REST or GraphQL), the refs API (REST or GraphQL), GraphQL "
        "``createCommitOnBranch``. Recorded beside that route's own event.",
        {
            "repo": "``owner/name``.",
            "branch": "The branch's name, without ``refs/heads/``: ``main``.",
            "from": "The commit it pointed at before (zeros when created).",
            "to": "The commit it points at after (zeros when deleted).",
            "forced": "Whether the move was not a fast-forward.",
            "created": "Whether the branch is new.",
            "deleted": "Whether the branch was deleted.",
            "default": "Whether it is the repository's default branch.",
            "via": "The route: ``push``, ``contents``, ``merge``, ``refs`` or ``commit`` "
            "(``createCommitOnBranch``).",
        },
        semantic=True,
    ),
    _k(
        "github.comment.posted",
        "comment",
        "A comment is posted on an issue or pull request, by any route: an issue comment "
        "(REST or GraphQL ``addComment``), a review with a body, a comment on a line of a "
        "diff. Recorded beside that route's own event.",
        _REPO
        | {
            "body": "Its body.",
            "pull_request": "Whether the thread is a pull request.",
            "via": "``issue_comment``, ``review`` or ``review_comment``.",
        },
        semantic=True,
    ),
    _k(
        "git.push",
        "ref",
        "A ref is created, moved or deleted by a push, or by the refs API (REST or GraphQL), "
        "which moves refs as a push does (one event per ref).",
        {
            "repo": "``owner/name``.",
            "ref": "The full ref name: ``refs/heads/main``.",
            "before": "The old sha (zeros when created).",
            "after": "The new sha (zeros when deleted).",
            "forced": "Whether it was not a fast-forward.",
            "created": "Whether the ref is new.",
            "deleted": "Whether the ref was deleted.",
        },
    ),
    # ---------------------------------------------------------------- Linear (fakes/linear)
    _k(
        "linear.issue.created",
        "issue",
        "An issue is created.",
        {
            "identifier": "``ENG-12``.",
            "title": "Its title.",
            "team": "The team's key.",
            "state": "Its workflow state's name.",
        },
    ),
    _k(
        "linear.issue.updated",
        "issue",
        "An issue changes (state, assignee, labels, title...).",
        {
            "identifier": "``ENG-12``.",
            "changes": _CHANGES,
            "from_state": "The state's name before a move; null when the state did not change.",
            "to_state": "The state's name after a move; null when the state did not change.",
        },
        "changes",
    ),
    _k(
        "linear.comment.created",
        "comment",
        "A comment on an issue.",
        {
            "identifier": "The issue's ``ENG-12``.",
            "comment_id": "The comment's id.",
            "body": "Its body.",
            "parent": "The id of the comment it answers; null at the top of a thread.",
        },
    ),
    _k("linear.human.replied", "comment", "A scripted person answered on an issue.", _HUMAN),
    # ---------------------------------------------------------------- Slack (fakes/slack)
    _k(
        "slack.message.posted",
        "message",
        "A message is posted (in a channel or a thread).",
        _SLACK
        | {
            "channel_name": "The channel's name, without ``#``.",
            "thread_ts": "The thread's parent ts; null outside a thread.",
            "text": "Its text.",
        },
    ),
    _k(
        "slack.message.updated",
        "message",
        "A message is edited.",
        _SLACK | {"text": "The new text.", "previous_text": "The old."},
    ),
    _k("slack.message.deleted", "message", "A message is deleted.", _SLACK),
    _k(
        "slack.reaction.added",
        "message",
        "A reaction is put on a message.",
        _SLACK | {"name": "The emoji's name."},
    ),
    _k(
        "slack.reaction.removed",
        "message",
        "A reaction is taken off a message.",
        _SLACK | {"name": "The emoji's name."},
    ),
    _k(
        "slack.channel.joined",
        "channel",
        "The caller joins a channel.",
        {"channel": "The channel id."},
    ),
    _k("slack.human.replied", "message", "A scripted person answered in a thread.", _HUMAN),
    # ---------------------------------------------------------------- the gateway (replay/gateway)
    _k(
        "egress.denied",
        "host",
        "A request, connection or protocol that leaves the world is refused.",
        {
            "host": "Where it was going.",
            "port": "The port.",
            "method": "The HTTP method (CONNECT for a tunnel).",
            "scheme": "http or https.",
            "path": "The request's path; null for a CONNECT.",
            "protocol": "What was refused when it is not HTTP: raw TCP, UDP, DNS, WebSocket.",
            "reason": "Why it was refused.",
        },
    ),
    _k(
        "gateway.addon_failed",
        "addon",
        "A gateway addon raised: its flow was killed and the run is invalid.",
        {"error": "The addon, hook and exception.", "url": "The request's URL, if any."},
    ),
    _k(
        "gateway.world_error",
        "request",
        "A fake raised on a request: the agent got a 500, the run stands.",
        {
            "url": "The request's URL.",
            "method": "Its method.",
            "host": "Its host.",
            "error": "The exception.",
        },
    ),
    _k(
        "docs.miss",
        "page",
        "A documentation page the snapshot does not hold was asked for.",
        {"url": "The page's URL.", "host": "Its host."},
    ),
    _k("model.call", "model_call", "One HTTP call on the live model route.", _MODEL_CALL, "usage"),
]

KINDS: Mapping[str, EventKind] = {k.name: k for k in _ALL}
"""Every kind of event the world records, by name."""

SERVICES: frozenset[str] = frozenset(k.service for k in _ALL)
"""The services that record events."""

SEMANTIC: frozenset[str] = frozenset(k.name for k in _ALL if k.semantic)
"""The kinds recorded beside a route's own event for the same change
(:attr:`EventKind.semantic`)."""


def record_problem(service: str, kind: str, data_keys: Iterable[str]) -> str | None:
    """Why an event may not be recorded as given, or None when it may."""
    known = KINDS.get(kind)
    if known is None:
        return f"unknown event kind {kind!r}{_did_you_mean(kind, KINDS)}; add it to {__name__}"
    if known.service != service:
        return f"event kind {kind!r} must start with its service {service!r}"
    extra = sorted(set(data_keys) - set(known.data))
    if extra:
        return f"{kind} has no data key {extra[0]!r} (it has: {', '.join(known.data)})"
    return None


def check_record(service: str, kind: str, data_keys: Iterable[str]) -> None:
    """Raise :class:`EventVocabularyError` unless :func:`record_problem` finds nothing."""
    problem = record_problem(service, kind, data_keys)
    if problem is not None:
        raise EventVocabularyError(problem)


def kinds_matching(pattern: str, service: str | None = None) -> list[EventKind]:
    """The kinds a rule's ``kind`` (shell-style wildcards allowed) matches, in one service."""
    return [
        k
        for k in _ALL
        if fnmatch.fnmatchcase(k.name, pattern) and (service is None or k.service == service)
    ]


def kind_problem(pattern: str) -> str | None:
    """Why a rule's ``kind`` (shell-style wildcards allowed) can never match an event, or None."""
    if kinds_matching(pattern):
        return None
    if _is_pattern(pattern):
        choices = [*(f"{service}.*" for service in sorted(SERVICES)), *KINDS]
        return f"the pattern {pattern!r} matches no event kind{_did_you_mean(pattern, choices)}"
    return f"unknown event kind {pattern!r}{_did_you_mean(pattern, KINDS)}"


def service_problem(pattern: str, service: str) -> str | None:
    """Why no kind ``pattern`` matches is recorded by ``service``, or None when one is."""
    matching = kinds_matching(pattern)
    if not matching or kinds_matching(pattern, service):
        return None
    owners = " and ".join(sorted({k.service for k in matching}))
    if service not in SERVICES:
        return f"{service!r} records no events; {pattern!r} is recorded by {owners}"
    return f"{pattern!r} is recorded by {owners}, not by {service!r}"


def field_problem(path: str, kinds: Iterable[EventKind]) -> str | None:
    """Why a condition's ``field`` is never present on events of ``kinds``, or None."""
    kinds = list(kinds)
    head, _, rest = path.partition(".")
    if head == "data" and rest:
        key, _, deeper = rest.partition(".")
        having = [k for k in kinds if key in k.data]
        if not having:
            names = ", ".join(k.name for k in kinds)
            if len(kinds) > 3:
                names = f"any of the {len(kinds)} event kinds the rule matches"
            return f"{path!r} is not a field of {names}{_did_you_mean(path, _paths(kinds))}"
        if deeper and not any(key in k.nested for k in having):
            return f"{path!r} goes inside data.{key}, which holds no fields"
        return None
    if path in EVENT_FIELDS:
        return None
    return f"{path!r} is not a field of an event{_did_you_mean(path, _paths(kinds))}"


def _paths(kinds: Iterable[EventKind]) -> list[str]:
    keys = {f"data.{key}" for k in kinds for key in k.data}
    return [*EVENT_FIELDS, *sorted(keys)]


def _is_pattern(text: str) -> bool:
    return any(c in text for c in "*?[")


def _did_you_mean(word: str, choices: Iterable[str]) -> str:
    # ``object_type`` is how the log's database and its recorders spell it; events say
    # ``object.type``. Close enough for difflib, so no special case is needed.
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


__all__ = [
    "EVENT_FIELDS",
    "KINDS",
    "SEMANTIC",
    "SERVICES",
    "EventKind",
    "EventVocabularyError",
    "check_record",
    "field_problem",
    "kind_problem",
    "kinds_matching",
    "record_problem",
    "service_problem",
]
