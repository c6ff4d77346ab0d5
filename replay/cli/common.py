"""What the command groups of ``replay`` share: the console, the root options, stand-ins."""

from __future__ import annotations

import importlib
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


def clients_missing(module: str) -> str | None:
    """The missing module if ``module`` cannot be imported for want of the clients extra.

    Commands that drive the services' real clients (httpx, githubkit, slack_sdk, gql) need an
    extra that an environment such as the gateway's cannot have (see pyproject); there they
    are mounted as :func:`needs_clients` stand-ins.
    """
    try:
        importlib.import_module(module)
    except ModuleNotFoundError as exc:
        return exc.name or module
    return None


def needs_clients(missing: str | None) -> Callable[[], None]:
    """A stand-in command for a feature whose clients (an extra) are not installed."""

    def unavailable() -> None:
        raise ReplayError(
            f"this command drives the services' real clients ({missing} is not installed): "
            "pip install 'replay[clients]'"
        )

    return unavailable
