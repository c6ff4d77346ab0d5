"""The GitHub fake: REST (root and ``/api/v3``), GraphQL, raw files and git over smart HTTP."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fakes.core.server import ASGIApp
    from fakes.core.world import World

HOSTS = (
    "api.github.com",
    "github.com",
    "raw.githubusercontent.com",
    "uploads.github.com",
    "codeload.github.com",
)
"""The real host names this fake answers for."""


def install(world: World) -> ASGIApp:
    """Seed GitHub's state into ``world`` and return the ASGI app serving every GitHub host."""
    # Imported here so that the models and backend load without the web layer.
    from fakes.core.net import Net
    from fakes.github.app import make_app
    from fakes.github.backend import GitHubBackend
    from fakes.github.errors import failure_response, not_found_response

    backend = GitHubBackend(world)
    world.add(backend)
    return Net(make_app(backend), "github", not_found_response, failure_response)


__all__ = ["HOSTS", "install"]
