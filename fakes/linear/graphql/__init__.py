"""Linear's GraphQL API: the SDL schema (schema-first), its roots (``resolvers.py``), how rows
answer each type (``render.py``), Linear's pagination (``connections.py``) and scalars."""

from __future__ import annotations

from fakes.linear.graphql.context import Context
from fakes.linear.graphql.resolvers import build_schema

__all__ = ["Context", "build_schema"]
