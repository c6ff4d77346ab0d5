"""GraphQL execution as the GraphQL fakes (GitHub, Linear) do it: parse, validate, execute.

The steps and their order are the same for both; the words are each service's own (GitHub
answers in graphql-ruby's shapes, always with 200; Linear in graphql-js's words plus its
``extensions``, with 400 for a document that does not parse or validate). So this module
says *what* went wrong (:class:`Unparsable`, :class:`Invalid`, the result's errors) and each
service's GraphQL ``routes.py`` shapes the answer: its request body, its status codes, its
error entries.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from graphql import (
    DocumentNode,
    ExecutionResult,
    GraphQLError,
    GraphQLSchema,
    execute,
    parse,
    validate,
)

Validate = Callable[[GraphQLSchema, DocumentNode], list[GraphQLError]]


class Unparsable(Exception):
    """The query is not GraphQL: ``error`` is the parser's."""

    def __init__(self, error: GraphQLError) -> None:
        super().__init__(error.message)
        self.error = error


class Invalid(Exception):
    """The document does not fit the schema: ``errors`` are the validation's, in order."""

    def __init__(self, document: DocumentNode, errors: list[GraphQLError]) -> None:
        super().__init__("; ".join(e.message for e in errors))
        self.document = document
        self.errors = errors


def _spec_rules(schema: GraphQLSchema, document: DocumentNode) -> list[GraphQLError]:
    return validate(schema, document)


def document(schema: GraphQLSchema, query: str, check: Validate = _spec_rules) -> DocumentNode:
    """``query`` parsed and validated (``check``: the specification's rules unless the
    service differs), or :class:`Unparsable` / :class:`Invalid`."""
    try:
        parsed = parse(query)
    except GraphQLError as exc:
        raise Unparsable(exc) from exc
    problems = check(schema, parsed)
    if problems:
        raise Invalid(parsed, problems)
    return parsed


def run(
    schema: GraphQLSchema,
    document: DocumentNode,
    *,
    context: Any,
    root: Any = None,
    variables: dict[str, Any] | None = None,
    operation_name: str | None = None,
) -> ExecutionResult:
    """Execute a valid document; every resolver of the fakes is synchronous."""
    result = execute(
        schema,
        document,
        root_value=root,
        context_value=context,
        variable_values=variables,
        operation_name=operation_name,
    )
    if not isinstance(result, ExecutionResult):  # pragma: no cover - a resolver went async
        raise TypeError("a fake's GraphQL schema must execute synchronously")
    return result


def locations(error: GraphQLError) -> list[dict[str, int]]:
    """Where in the document an error is, as every GraphQL service writes it."""
    return [{"line": loc.line, "column": loc.column} for loc in error.locations or []]
