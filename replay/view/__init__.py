"""The run viewer (``replay view``): the results store and the run directories as web pages,
served live or exported as a folder that needs no server."""

from __future__ import annotations

from replay.view.app import make_app
from replay.view.export import Exported, export_site
from replay.view.filters import RunFilters
from replay.view.source import Source

__all__ = ["Exported", "RunFilters", "Source", "export_site", "make_app"]
