"""Linear as it stood at T: the GraphQL API at ``https://api.linear.app/graphql``."""

from __future__ import annotations

from collections.abc import Iterable

from fakes.core.net import Net
from fakes.core.world import World
from fakes.linear.backend import LinearBackend
from fakes.linear.errors import failure_response, not_found_response
from fakes.linear.graphql import build_schema
from fakes.linear.humans import Humans
from fakes.linear.routes import router

HOSTS = ("api.linear.app",)


def install(world: World, api_keys: Iterable[str] | None = None) -> Net:
    """Add Linear to ``world`` and return its ASGI app (``POST /graphql``).

    ``api_keys`` limits the keys accepted; by default any well-formed personal key
    (``lin_api_...``, sent bare) or OAuth token (``lin_oauth_...``, after ``Bearer``) is the
    snapshot's viewer.
    """
    backend = LinearBackend(world, api_keys)
    backend.heard = Humans(backend).heard
    world.add(backend)
    app = router(backend, build_schema())
    return Net(app, "linear", not_found_response, failure_response)


__all__ = ["HOSTS", "LinearBackend", "install"]
