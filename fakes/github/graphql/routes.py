"""The HTTP side of GitHub's GraphQL endpoint: auth, the request body, one transaction."""

from __future__ import annotations

import json
from typing import Any

from graphql import (
    DocumentNode,
    GraphQLError,
    GraphQLSchema,
    OverlappingFieldsCanBeMergedRule,
    specified_rules,
    validate,
)
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from fakes.core import graphql
from fakes.github.backend import GitHubBackend
from fakes.github.errors import NotFound
from fakes.github.graphql.context import Context
from fakes.github.graphql.errors import (
    execution_error,
    syntax_error,
    validation_error,
    variable_error,
)
from fakes.github.graphql.resolvers import MutationRoot, QueryRoot, schema

DOCS = "https://docs.github.com/graphql"

# graphql-ruby (GitHub) does not hold same-named fields of *different* object types to one
# response shape: gh asks for ``state`` under both ``... on Issue`` (IssueState) and
# ``... on PullRequest`` (PullRequestState). Every other overlap conflict still counts.
RULES = [r for r in specified_rules if r is not OverlappingFieldsCanBeMergedRule]
PATHS = ("/graphql", "/api/graphql")


class Root(QueryRoot, MutationRoot):
    """The root value: query and mutation fields never share a name."""


def _validate(schema: GraphQLSchema, document: DocumentNode) -> list[GraphQLError]:
    problems = validate(schema, document, RULES)
    return problems + [
        e
        for e in validate(schema, document, [OverlappingFieldsCanBeMergedRule])
        if "conflicting types" not in e.message
    ]


def _json(body: Any, status: int = 200) -> JSONResponse:
    return JSONResponse(body, status_code=status, media_type="application/json; charset=utf-8")


def run(backend: GitHubBackend, login: str, payload: dict[str, Any]) -> dict[str, Any]:
    """Parse, validate and execute one request inside one world session."""
    query = payload.get("query")
    if not isinstance(query, str) or not query.strip():
        return {
            "errors": [{"message": "A query attribute must be specified and must be a string."}]
        }
    try:
        document = graphql.document(schema(), query, _validate)
    except graphql.Unparsable as exc:
        return {"errors": [syntax_error(exc.error)]}
    except graphql.Invalid as exc:
        return {"errors": [validation_error(exc.document, e) for e in exc.errors]}
    variables = payload.get("variables") or {}
    if isinstance(variables, str):  # some clients send the variables JSON-encoded
        try:
            variables = json.loads(variables) if variables.strip() else {}
        except ValueError:
            variables = None
    if not isinstance(variables, dict):
        return {"errors": [{"message": "Variables are invalid JSON."}]}
    operation_name = payload.get("operationName") or None
    with backend.world.session() as s:
        try:
            viewer = backend.repos.user(s, login)
        except NotFound:
            return {"errors": [{"type": "FORBIDDEN", "message": "Resource not accessible"}]}
        ctx = Context(session=s, backend=backend, viewer=viewer)
        result = graphql.run(
            schema(),
            document,
            root=Root(ctx),
            context=ctx,
            variables=variables,
            operation_name=operation_name,
        )
    out: dict[str, Any] = {}
    if result.data is not None or result.errors is None:
        out["data"] = result.data
    if result.errors:
        out["errors"] = [_format(document, e, variables) for e in result.errors]
    return out


def _format(document: DocumentNode, error: GraphQLError, variables: dict[str, Any]) -> Any:
    if error.path is None:
        bad_variable = variable_error(document, error, variables)
        if bad_variable is not None:
            return bad_variable
    return execution_error(error)


def make_graphql_app(backend: GitHubBackend) -> Starlette:
    """GitHub's GraphQL API over ``backend``, at ``/graphql`` and ``/api/graphql``."""

    async def endpoint(request: Request) -> Response:
        header = request.headers.get("authorization")
        login = backend.authenticate(header)
        if login is None:
            message = (
                "This endpoint requires you to be authenticated."
                if not header
                else "Bad credentials"
            )
            return _json({"message": message, "documentation_url": DOCS}, 401)
        try:
            payload = json.loads(await request.body() or b"null")
        except ValueError:
            payload = None
        if not isinstance(payload, dict):
            return _json({"message": "Problems parsing JSON", "documentation_url": DOCS}, 400)
        body = await run_in_threadpool(run, backend, login, payload)
        return _json(body)

    async def other(request: Request) -> Response:
        return _json({"message": "Not Found", "documentation_url": DOCS}, 404)

    # Mounted at /graphql and /api/graphql, or served whole: every POST is the endpoint.
    return Starlette(
        routes=[
            Route("/{path:path}", endpoint, methods=["POST"]),
            Route("/{path:path}", other, methods=["GET", "HEAD", "PUT", "PATCH", "DELETE"]),
        ]
    )
