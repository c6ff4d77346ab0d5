"""Linear's GraphQL schema (SDL, schema-first) and its resolvers."""

from __future__ import annotations

from fakes.linear.graphql.resolvers import Context, build_schema

__all__ = ["Context", "build_schema"]
