"""The results store: runs and their grades."""

from __future__ import annotations

from replay.results.models import CalibrationRow, GradeRow, RunRow
from replay.results.store import Store, StoreError, resolve_url

__all__ = ["CalibrationRow", "GradeRow", "RunRow", "Store", "StoreError", "resolve_url"]
