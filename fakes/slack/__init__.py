"""The Slack Web API as the workspace stood at T: ``https://slack.com/api/<method>``."""

from __future__ import annotations

from fakes.core.net import Net
from fakes.core.world import World
from fakes.slack import humans
from fakes.slack.access import Access, Caller
from fakes.slack.backend import SlackBackend
from fakes.slack.errors import SlackError, failure_response, not_found_response
from fakes.slack.humans import ScriptError
from fakes.slack.models import SlackBase
from fakes.slack.routes import METHODS, router

HOSTS = ("slack.com", "api.slack.com")

__all__ = [
    "HOSTS",
    "METHODS",
    "Access",
    "Caller",
    "ScriptError",
    "SlackBackend",
    "SlackBase",
    "SlackError",
    "install",
]


def install(world: World) -> Net:
    """Seed the Slack backend into ``world`` and return the app that serves it."""
    backend = SlackBackend(world)
    backend.heard = humans.Humans(backend, [h for h in world.humans if h.service == "slack"]).heard
    world.add(backend)
    return Net(router(backend), "slack", not_found_response, failure_response)
