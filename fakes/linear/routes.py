"""The one route Linear has: ``POST /graphql``. Thin: authenticate, run, render."""

from __future__ import annotations

import re
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from graphql import GraphQLError, GraphQLSchema
from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException

from fakes.core import graphql
from fakes.linear.backend import LinearBackend
from fakes.linear.errors import AuthenticationError, LinearError, graphql_error_extensions
from fakes.linear.graphql import Context
from fakes.linear.schemas import GraphQLRequest

_QUOTED = re.compile(r"'([_A-Za-z$][_0-9A-Za-z.$!\[\]]*)'")


def format_error(error: GraphQLError) -> dict[str, Any]:
    """Linear's error entry: message, path, locations, then Linear's ``extensions``."""
    original = error.original_error
    out: dict[str, Any] = {"message": error.message}
    if isinstance(original, LinearError):
        out = original.wire()
        out = {"message": out["message"], **_where(error), "extensions": out["extensions"]}
    elif original is None or isinstance(original, GraphQLError) or not error.path:
        # A document or variables that do not fit the schema (graphql-core keeps the scalar's
        # own exception as the cause of a bad variable): a GraphQL error, the caller's fault.
        # graphql-js, which Linear runs, quotes names with double quotes.
        out["message"] = _QUOTED.sub(r'"\1"', error.message)
        out.update(_where(error))
        out["extensions"] = graphql_error_extensions()
    else:
        out.update(_where(error))
        out["extensions"] = {
            "type": "internal error",
            "code": "INTERNAL_SERVER_ERROR",
            "statusCode": 500,
            "userPresentableMessage": "An internal error occurred.",
        }
    return out


def _where(error: GraphQLError) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if error.path:
        out["path"] = list(error.path)
    if error.locations:
        out["locations"] = graphql.locations(error)
    return out


def run(schema: GraphQLSchema, body: GraphQLRequest, context: Context) -> tuple[int, Any]:
    """Execute one request; the HTTP status follows Linear (400 for a bad document)."""
    try:
        document = graphql.document(schema, body.query)
    except graphql.Unparsable as exc:
        return 400, {"errors": [format_error(exc.error)]}
    except graphql.Invalid as exc:
        return 400, {"errors": [format_error(e) for e in exc.errors]}
    result = graphql.run(
        schema,
        document,
        context=context,
        variables=body.variables,
        operation_name=body.operation_name,
    )
    payload: dict[str, Any] = {}
    status = 200
    if result.errors:
        payload["errors"] = [format_error(e) for e in result.errors]
        if result.data is None and not any(e.path for e in result.errors):
            status = 400  # a request-level error: variables that do not fit their types
    payload["data"] = result.data
    return status, payload


def _execute(
    backend: LinearBackend, schema: GraphQLSchema, body: GraphQLRequest, viewer: str
) -> tuple[int, Any]:
    # One request, one transaction; the world's lock serialises it with every other fake.
    with backend.world.session() as session:
        return run(schema, body, Context(backend, session, viewer))


def router(backend: LinearBackend, schema: GraphQLSchema) -> FastAPI:
    app = FastAPI(title="Linear (replay fake)", docs_url=None, redoc_url=None, openapi_url=None)

    @app.exception_handler(StarletteHTTPException)
    async def no_route(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        # Only POST /graphql exists; anything else gets the error shape, not FastAPI's.
        message = "Not Found" if exc.status_code == 404 else str(exc.detail)
        extensions = graphql_error_extensions(exc.status_code)
        body = {"errors": [{"message": message, "extensions": extensions}]}
        return JSONResponse(body, status_code=exc.status_code)

    @app.post("/graphql")
    async def graphql(request: Request) -> JSONResponse:
        try:
            viewer = backend.authenticate(request.headers.get("authorization"))
        except AuthenticationError as exc:
            return JSONResponse({"errors": [exc.wire()]}, status_code=exc.http_status)
        try:
            parsed = GraphQLRequest.model_validate_json(await request.body())
        except ValidationError:
            error = GraphQLError("Must provide query string.")
            return JSONResponse({"errors": [format_error(error)]}, status_code=400)
        status, payload = await run_in_threadpool(_execute, backend, schema, parsed, viewer)
        return JSONResponse(payload, status_code=status)

    return app
