"""The documentation cache: GET responses recorded once, served read-only as of T."""

from __future__ import annotations

from replay.docs.cache import DocsCache, docs_app, record_pages

__all__ = ["DocsCache", "docs_app", "record_pages"]
