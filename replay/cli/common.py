"""What the command groups of ``replay`` share: the console, the root options, stand-ins."""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable
from typing import Any

from rich.console import Console

from replay.base.errors import ReplayError

out = Console(highlight=False, soft_wrap=True)

# A stand-in accepts whatever it is given: it only says what is missing.
LOOSE: dict[str, Any] = {"allow_extra_args": True, "ignore_unknown_options": True}


class Settings:
    """Options given before the subcommand, passed down through click's context."""

    def __init__(self, db: str | None) -> None:
        self.db = db


CLIENTS = ("httpx", "githubkit", "hishel", "slack_sdk", "gql")
"""The modules of the ``clients`` extra (pyproject's ``[project.optional-dependencies]``)."""


def clients_missing() -> str | None:
    """The first module of the clients extra that is not installed, or None.

    Commands that drive the services' real clients (httpx, githubkit, slack_sdk, gql) need an
    extra that an environment such as the gateway's cannot have (see pyproject); there they
    are mounted as :func:`needs_clients` stand-ins. Asked of the installed modules, not by
    importing the feature's package: that would load the fakes, FastAPI and the clients
    whenever the command line is assembled, seconds before ``--help`` could print.
    """
    for name in CLIENTS:
        if importlib.util.find_spec(name) is None:
            return name
    return None


def needs_clients(missing: str | None) -> Callable[[], None]:
    """A stand-in command for a feature whose clients (an extra) are not installed."""

    def unavailable() -> None:
        raise ReplayError(
            f"this command drives the services' real clients ({missing} is not installed): "
            "pip install 'replay[clients]'"
        )

    return unavailable
