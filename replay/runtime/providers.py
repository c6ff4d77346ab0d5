"""Choosing a runtime provider by name; the bundled providers are registered here.

Above :mod:`replay.runtime.base` (the interface and the registry) and the providers that
implement it, so that neither imports the other in a circle.
"""

from __future__ import annotations

from typing import Any

from replay.runtime.base import PROVIDERS, Runtime, UnknownProviderError


def get_runtime(name: str = "docker", **options: Any) -> Runtime:
    """An instance of the provider registered as ``name``."""
    # Importing the bundled providers registers them.
    import replay.runtime.docker  # noqa: F401

    try:
        cls = PROVIDERS[name]
    except KeyError:
        known = ", ".join(sorted(PROVIDERS)) or "none"
        raise UnknownProviderError(f"unknown runtime provider {name!r} (known: {known})") from None
    return cls(**options)
