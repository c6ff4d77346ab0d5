"""What every Linear resolver sees: the backend, the request's transaction, the viewer."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from graphql import GraphQLResolveInfo
from sqlalchemy.orm import Session

from fakes.linear.backend import LinearBackend
from fakes.linear.filters import Matcher

Info = GraphQLResolveInfo[Any]


@dataclass
class Context:
    """One request: the backend, its transaction, and who is asking."""

    backend: LinearBackend
    session: Session
    viewer: str

    @property
    def matcher(self) -> Matcher:
        return self.backend.matcher(self.viewer)


def ctx(info: Info) -> Context:
    context: Context = info.context
    return context


Resolver = Callable[..., Any]
