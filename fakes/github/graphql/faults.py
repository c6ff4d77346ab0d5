"""The errors resolvers raise: GitHub's GraphQL error ``type`` plus its message."""

from __future__ import annotations

from fakes.github.errors import GitHubError, ValidationFailed


class Fault(Exception):
    """An error GitHub reports inside ``errors`` with a ``type`` (``NOT_FOUND``...)."""

    def __init__(self, type_: str, message: str) -> None:
        super().__init__(message)
        self.type = type_
        self.message = message

    @classmethod
    def from_backend(cls, exc: GitHubError) -> Fault:
        if isinstance(exc, ValidationFailed):
            return cls(exc.graphql_type, exc.detail)
        texts = [e for e in exc.errors or [] if isinstance(e, str)]
        # REST's 422 "Unprocessable Entity" carries its reasons in ``errors``; GraphQL says them.
        return cls(exc.graphql_type, "; ".join(texts) if texts else exc.message)


def not_found(what: str) -> Fault:
    return Fault("NOT_FOUND", f"Could not resolve to {what}.")
