"""What the viewer reads: the results store, and the case files the runs replayed.

The store holds each run's row and grade; a run's directory (``RunRow.run_dir``) holds the
rest (:mod:`replay.view.rundir`); the case files, given to ``replay view`` like to ``replay
results report`` (default ``./cases``), hold each case's gold patch and what a comparison's
cases are. A case file is read once, when the viewer starts; a bad one stops it there. A
batch's plan and its planned runs are in the store too (:mod:`replay.view.batches`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy.orm import selectinload

from replay.base.case import LoadedCase, case_digest, read_case
from replay.base.errors import InputError
from replay.results import RunRow, Store
from replay.results.models import ComparisonRow
from replay.view.batches import BatchSummary, batch_names, batch_run_ids, summaries
from replay.view.filters import RunFilters, candidate_name


@dataclass(frozen=True)
class Choices:
    """What the runs page's filters offer: the values the store's runs have."""

    cases: list[str]
    candidates: list[str]
    """Candidate names (a name whose settings changed has several keys; the name takes all)."""
    harnesses: list[str]
    models: list[str]
    batches: list[str]


@dataclass
class Source:
    """The store and the case files, opened once for the viewer's life."""

    store: Store
    cases: list[LoadedCase]
    _digests: dict[Path, str] = field(default_factory=dict)
    _strengths: dict[Path, str] = field(default_factory=dict)

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
        """The runs that pass ``filters`` (checked: :meth:`RunFilters.check`), newest first."""
        filters = filters or RunFilters()
        found = [r for r in self.store.runs(filters.case or None) if filters.matches(r)]
        if filters.batch:
            ids = batch_run_ids(self.store, filters.batch)
            found = [r for r in found if r.id in ids]
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

    def choices(self) -> Choices:
        """The values each filter of the runs page can take in this store."""
        every = self.store.runs()
        return Choices(
            cases=sorted({r.case_id for r in every}),
            candidates=sorted({candidate_name(r.candidate) for r in every if r.candidate}),
            harnesses=sorted({r.harness for r in every}),
            models=sorted({r.model for r in every}),
            batches=sorted(batch_names(self.store)),
        )

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

    def strength_of(self, run: RunRow) -> str:
        """The strength of the case version the run replayed, as reports show it (``96%``,
        ``81% weak``, ``81% weak, accepted``, :func:`replay.strength.model.strength_label`):
        ``not measured`` when none is recorded for that version (``replay case strength
        --record`` keeps one per version), empty when no case file of it was given."""
        from replay.strength.record import recorded_strength

        same_id = [c for c in self.cases if c.id == run.case_id]
        if not same_id:
            return ""
        for loaded in same_id:
            if run.case_digest is not None and self.digest(loaded) != run.case_digest:
                continue
            if loaded.path not in self._strengths:  # read once, as the case files are
                try:
                    measured = recorded_strength(loaded)
                except InputError:  # a strength.json that is no measurement
                    self._strengths[loaded.path] = "unreadable strength.json"
                else:
                    self._strengths[loaded.path] = (
                        "not measured"
                        if measured is None or measured.strength is None
                        else measured.label()
                    )
            return self._strengths[loaded.path]
        return "not measured"

    def digest(self, loaded: LoadedCase) -> str:
        if loaded.path not in self._digests:
            self._digests[loaded.path] = case_digest(loaded)
        return self._digests[loaded.path]

    # ------------------------------------------------------------------ comparisons

    def comparisons(self) -> Sequence[ComparisonRow]:
        return self.store.comparisons()

    def comparison(self, name: str) -> ComparisonRow | None:
        return self.store.comparison(name)

    # ------------------------------------------------------------------ batches

    def batches(self) -> list[BatchSummary]:
        """Every batch of the store, the most recently fixed first."""
        return summaries(self.store)

    def has_batch(self, name: str) -> bool:
        """Whether the store has a batch ``name`` (its plan, or any of its planned runs)."""
        return name in batch_names(self.store)
