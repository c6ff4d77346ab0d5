"""GitHub's GraphQL API for the fake: GitHub's own schema (cut to what is implemented),
its error shapes, and every query and mutation the ``gh`` CLI sends for its common commands."""

from __future__ import annotations

from fakes.github.graphql.resolvers import schema
from fakes.github.graphql.routes import PATHS, make_graphql_app, run

__all__ = ["PATHS", "make_graphql_app", "run", "schema"]
