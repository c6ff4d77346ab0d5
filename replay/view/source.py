"""What the viewer reads: the results store, and the case files the runs replayed.

The store holds each run's row and grade; a run's directory (``RunRow.run_dir``) holds the
rest (:mod:`replay.view.rundir`); the case files, given to ``replay view`` like to ``replay
results report`` (default ``./cases``), hold each case's gold patch and what a comparison's
cases are. A case file is read once, when the viewer starts; a bad one stops it there.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy.orm import selectinload

from replay.base.case import LoadedCase, case_digest, read_case
from replay.base.errors import InputError
from replay.base.outcomes import Outcome
from replay.results import RunRow, Store
from replay.results.models import ComparisonRow


@dataclass(frozen=True)
class RunFilters:
    """The runs page's filters (the query string of ``/``); empty means any."""

    case: str = ""
    outcome: str = ""
    comparison: str = ""

    def check(self) -> str | None:
        """What is wrong with the filters, in one line; None when nothing is."""
        if self.outcome and self.outcome not in {o.value for o in Outcome}:
            return f"outcome {self.outcome!r} is not one of {', '.join(o.value for o in Outcome)}"
        return None


@dataclass
class Source:
    """The store and the case files, opened once for the viewer's life."""

    store: Store
    cases: list[LoadedCase]
    _digests: dict[Path, str] = field(default_factory=dict)

    @classmethod
    def open(cls, db: str | None, case_files: Sequence[Path]) -> Source:
        """The store ``db`` (as ``--db`` takes it) and the case files (an unreadable one is
        an :class:`InputError` naming it)."""
        cases = [read_case(path) for path in case_files]
        return cls(Store.open(db), cases)

    def close(self) -> None:
        self.store.close()

    # ------------------------------------------------------------------ runs

    def runs(self, filters: RunFilters | None = None) -> list[RunRow]:
        """The runs that pass ``filters``, newest first."""
        filters = filters or RunFilters()
        found = list(self.store.runs(filters.case or None))
        if filters.outcome:
            found = [r for r in found if r.outcome == filters.outcome]
        if filters.comparison:
            row = self.comparison(filters.comparison)
            keys = {row.arm_a, row.arm_b} if row is not None else set()
            found = [r for r in found if r.candidate in keys]
        return sorted(found, key=lambda r: r.started_at, reverse=True)

    def run(self, ident: str) -> RunRow | None:
        """The run whose id is ``ident`` or starts with it; None when no one run does."""
        with self.store.session() as s:
            exact = s.get(RunRow, ident, options=[selectinload(RunRow.grade)])
        if exact is not None:
            return exact
        try:
            return self.store.find_run(ident)
        except InputError:
            return None

    def case_ids(self) -> list[str]:
        """Every case some run of the store replayed."""
        return sorted({r.case_id for r in self.store.runs()})

    # ------------------------------------------------------------------ cases

    def case_of(self, run: RunRow) -> tuple[LoadedCase | None, str | None]:
        """The case file of the run's case, and a note when it is not the version the run
        replayed (or there is none)."""
        same_id = [c for c in self.cases if c.id == run.case_id]
        if not same_id:
            return None, (
                f"no case file of {run.case_id} was given (replay view --cases PATH), so its "
                "gold patch cannot be shown"
            )
        for loaded in same_id:
            if run.case_digest is None or self.digest(loaded) == run.case_digest:
                return loaded, None
        return same_id[0], (
            f"{same_id[0].path} has changed since this run (the run replayed version "
            f"{str(run.case_digest)[:12]}): the gold patch shown is the file's as it is now"
        )

    def digest(self, loaded: LoadedCase) -> str:
        if loaded.path not in self._digests:
            self._digests[loaded.path] = case_digest(loaded)
        return self._digests[loaded.path]

    # ------------------------------------------------------------------ comparisons

    def comparisons(self) -> Sequence[ComparisonRow]:
        return self.store.comparisons()

    def comparison(self, name: str) -> ComparisonRow | None:
        return self.store.comparison(name)
