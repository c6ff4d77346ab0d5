"""What a capture could not roll back: flags written into the snapshot's ``capture.json``."""

from __future__ import annotations

from typing import Literal

from pydantic import AwareDatetime, Field

from replay.base.formats import Strict

CAPTURE_REPORT = "capture.json"


class Flag(Strict):
    """One piece of state that may have changed after T in a way the API does not date."""

    service: Literal["github", "linear", "slack", "git"]
    item: str
    """What it is about: ``acme/tiny#2``, ``ENG-12``, ``#eng/1773187200.000100``."""
    problem: str
    """What could not be rolled back and why (which history API is missing)."""


class CaptureReport(Strict):
    """The capture's account of itself, kept beside the state it produced."""

    schema_: Literal[1] = Field(alias="schema")
    at: AwareDatetime
    origins: dict[str, str]
    """Each service's base URL as captured from."""
    dropped: dict[str, int] = Field(default_factory=dict)
    """How many items of each kind were dropped as created after T (or as the fix)."""
    rolled_back: list[str] = Field(default_factory=list)
    """Items whose state was rolled back to T from the API's own history."""
    flags: list[Flag] = Field(default_factory=list)

    model_config = Strict.model_config | {"populate_by_name": True}
