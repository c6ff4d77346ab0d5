"""Linear's GraphQL roots (``Query``, ``Mutation``) over the backend, and the executable schema.

Each root field is one backend call; the objects it returns answer their fields as
:mod:`fakes.linear.graphql.render` binds them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ariadne import MutationType, QueryType, make_executable_schema
from ariadne.utils import convert_camel_case_to_snake
from graphql import GraphQLObjectType, GraphQLSchema

from fakes.linear.errors import EntityNotFound, InvalidInput
from fakes.linear.graphql.connections import Connection
from fakes.linear.graphql.context import Info, ctx
from fakes.linear.graphql.render import comment_list, connect, org, types, user_list
from fakes.linear.graphql.scalars import scalars
from fakes.linear.models import (
    Comment,
    Issue,
    Label,
    Organization,
    Team,
    User,
    WorkflowState,
)

SCHEMA_FILE = Path(__file__).with_name("schema.graphql")

# ----------------------------------------------------------------------------- Query

query = QueryType()


@query.field("viewer")
def _viewer(_: Any, info: Info) -> User:
    c = ctx(info)
    return c.backend.user(c.session, c.viewer)


@query.field("organization")
def _organization(_: Any, info: Info) -> Organization:
    return org(info)


@query.field("issue")
def _issue(_: Any, info: Info, id: str) -> Issue:
    c = ctx(info)
    return c.backend.issue(c.session, id)


@query.field("issues")
def _issues(_: Any, info: Info, **kwargs: Any) -> Any:
    c = ctx(info)
    rows = c.backend.issues(
        c.session,
        c.viewer,
        kwargs.get("filter"),
        include_archived=bool(kwargs.get("includeArchived")),
        order_by=kwargs.get("orderBy") or "createdAt",
        sort=kwargs.get("sort") or (),
    )
    return connect(rows, **kwargs)


def _search(info: Info, term: str, kwargs: dict[str, Any]) -> Connection[Any]:
    c = ctx(info)
    f = kwargs.get("filter")
    # ``teamId`` only boosts that team's results on Linear; here results are newest first.
    rows = c.backend.search_issues(
        c.session,
        c.viewer,
        term,
        f,
        include_comments=bool(kwargs.get("includeComments")),
        include_archived=bool(kwargs.get("includeArchived")),
    )
    return connect(rows, **kwargs)


@query.field("searchIssues")
def _search_issues(_: Any, info: Info, term: str, **kwargs: Any) -> Any:
    return _search(info, term, kwargs)


@query.field("issueSearch")
def _issue_search(_: Any, info: Info, **kwargs: Any) -> Any:
    return _search(info, kwargs.get("query") or "", kwargs)


@query.field("team")
def _team(_: Any, info: Info, id: str) -> Team:
    c = ctx(info)
    return c.backend.team(c.session, id)


@query.field("teams")
def _teams(_: Any, info: Info, **kwargs: Any) -> Any:
    c = ctx(info)
    return connect(c.backend.teams(c.session, c.viewer, kwargs.get("filter")), **kwargs)


@query.field("workflowState")
def _workflow_state(_: Any, info: Info, id: str) -> WorkflowState:
    c = ctx(info)
    return c.backend.workflow_state(c.session, id)


@query.field("workflowStates")
def _workflow_states(_: Any, info: Info, **kwargs: Any) -> Any:
    c = ctx(info)
    return connect(c.backend.workflow_states(c.session, c.viewer, kwargs.get("filter")), **kwargs)


@query.field("user")
def _user(_: Any, info: Info, id: str) -> User:
    c = ctx(info)
    return c.backend.user(c.session, id)


@query.field("users")
def _users(_: Any, info: Info, **kwargs: Any) -> Any:
    return user_list(info, kwargs)


@query.field("issueLabel")
def _issue_label(_: Any, info: Info, id: str) -> Label:
    c = ctx(info)
    return c.backend.label(c.session, id)


@query.field("issueLabels")
def _issue_labels(_: Any, info: Info, **kwargs: Any) -> Any:
    c = ctx(info)
    return connect(c.backend.labels(c.session, c.viewer, kwargs.get("filter")), **kwargs)


@query.field("comment")
def _comment(_: Any, info: Info, id: str | None = None, **_k: Any) -> Comment:
    c = ctx(info)
    if id is None:
        raise EntityNotFound("Comment")
    return c.backend.comment(c.session, id)


@query.field("comments")
def _comments(_: Any, info: Info, **kwargs: Any) -> Any:
    return comment_list(info, {}, kwargs)


# ----------------------------------------------------------------------------- Mutation

mutation = MutationType()


@mutation.field("issueCreate")
def _issue_create(_: Any, info: Info, input: dict[str, Any]) -> dict[str, Any]:
    c = ctx(info)
    issue = c.backend.create_issue(c.session, c.viewer, input)
    return {"success": True, "issue": issue, "last_sync_id": float(c.backend.sync(c.session))}


@mutation.field("issueUpdate")
def _issue_update(_: Any, info: Info, id: str, input: dict[str, Any]) -> dict[str, Any]:
    return _updated(info, id, input)


def _updated(info: Info, id: str, input: dict[str, Any]) -> dict[str, Any]:
    """The issue updated by ``input`` (``IssueUpdateInput``), as an ``IssuePayload``."""
    c = ctx(info)
    issue = c.backend.update_issue(c.session, c.viewer, id, input)
    return {"success": True, "issue": issue, "last_sync_id": float(c.backend.sync(c.session))}


BATCH_MAX = 50
"""Linear's bound on ``issueBatchUpdate``'s ids ("Can't be more than 50 at a time")."""


@mutation.field("issueBatchUpdate")
def _issue_batch_update(
    _: Any, info: Info, ids: list[str], input: dict[str, Any]
) -> dict[str, Any]:
    """``input`` applied to each issue of ``ids`` as ``issueUpdate`` applies it (the same
    checks, history entry and ``linear.issue.updated`` event each), all or none: one refused
    leaves every issue as it was."""
    c = ctx(info)
    if len(ids) > BATCH_MAX:
        raise InvalidInput(f"Can't update more than {BATCH_MAX} issues at a time.")
    with c.session.begin_nested():
        issues = [c.backend.update_issue(c.session, c.viewer, i, input) for i in ids]
    return {"success": True, "issues": issues, "last_sync_id": float(c.backend.sync(c.session))}


@mutation.field("commentCreate")
def _comment_create(_: Any, info: Info, input: dict[str, Any]) -> dict[str, Any]:
    c = ctx(info)
    comment = c.backend.create_comment(c.session, c.viewer, input)
    return {"success": True, "comment": comment, "last_sync_id": float(c.backend.sync(c.session))}


@mutation.field("issueAddLabel")
def _issue_add_label(_: Any, info: Info, id: str, labelId: str) -> dict[str, Any]:
    """Linear's one-label shortcut: the same change as ``issueUpdate`` with
    ``addedLabelIds: [labelId]`` (same checks, history entry and event)."""
    return _updated(info, id, {"addedLabelIds": [labelId]})


@mutation.field("issueRemoveLabel")
def _issue_remove_label(_: Any, info: Info, id: str, labelId: str) -> dict[str, Any]:
    """``issueUpdate`` with ``removedLabelIds: [labelId]``."""
    return _updated(info, id, {"removedLabelIds": [labelId]})


# ----------------------------------------------------------------------------- schema


def build_schema() -> GraphQLSchema:
    """Linear's schema subset, executable."""
    return make_executable_schema(
        SCHEMA_FILE.read_text(),
        *scalars(),
        query,
        mutation,
        *types(),
        convert_names_case=_object_fields_only,
    )


def _object_fields_only(name: str, schema: GraphQLSchema, path: tuple[str, ...]) -> str:
    """Output fields fall back to the snake_case attribute (``createdAt`` -> ``created_at``);
    arguments and input fields keep Linear's names, which the backend reads as they are."""
    is_field = len(path) == 2 and isinstance(schema.type_map.get(path[0]), GraphQLObjectType)
    return convert_camel_case_to_snake(name) if is_field else name
