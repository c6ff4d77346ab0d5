"""The results store: SQLite in the working directory by default, any SQLAlchemy URL by choice."""

from __future__ import annotations

import os
import re
import socket
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import Engine, create_engine, event, inspect, select, text
from sqlalchemy.exc import ArgumentError, SQLAlchemyError
from sqlalchemy.orm import Session, selectinload, sessionmaker

from replay.base.errors import InputError, ReplayError
from replay.base.outcomes import Outcome
from replay.results.models import Base, CalibrationRow, ComparisonRow, GradeRow, RunRow

DEFAULT_DB = Path(".replay") / "results.db"


class StoreError(ReplayError):
    """The results store cannot be opened or written."""


def resolve_url(db: str | None = None) -> str:
    """``--db`` wins, then ``REPLAY_DB``, then ``.replay/results.db`` in the working directory.

    A bare path is taken as a SQLite file.
    """
    value = db or os.environ.get("REPLAY_DB") or str(DEFAULT_DB)
    return value if "://" in value else f"sqlite:///{Path(value).resolve()}"


class Store:
    """Runs and grades, behind one engine."""

    def __init__(self, url: str) -> None:
        self.url = url
        try:
            if url.startswith("sqlite:///"):
                Path(url.removeprefix("sqlite:///")).parent.mkdir(parents=True, exist_ok=True)
            self.engine: Engine = create_engine(url)
        except (ArgumentError, SQLAlchemyError, ModuleNotFoundError) as exc:
            raise StoreError(f"cannot open the results store {url!r}: {exc}") from exc
        if self.engine.dialect.name == "sqlite":
            event.listen(self.engine, "connect", _sqlite_pragmas)
        try:
            Base.metadata.create_all(self.engine)
            _add_missing_columns(self.engine)
        except SQLAlchemyError as exc:
            raise StoreError(f"cannot open the results store {url!r}: {exc}") from exc
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)

    @classmethod
    def open(cls, db: str | None = None) -> Store:
        return cls(resolve_url(db))

    @contextmanager
    def session(self) -> Iterator[Session]:
        with self._sessions() as session, session.begin():
            yield session

    def add_run(self, run: RunRow) -> RunRow:
        with self.session() as s:
            s.add(run)
        return run

    def record_grade(self, grade: GradeRow, outcome: Outcome, *, replace: bool = False) -> None:
        """Record a run's grade and outcome; with ``replace``, over a grade it already has
        (a run that crashed the runner after it was graded: its crash is what counts)."""
        with self.session() as s:
            run = s.get(RunRow, grade.run_id)
            if run is None:
                raise StoreError(f"no run {grade.run_id!r} to grade")
            run.outcome = Outcome(outcome).value
            if replace:
                s.merge(grade)
            else:
                s.add(grade)

    def finish_run(
        self,
        run_id: str,
        *,
        wall_time_s: float,
        stopped_by: str | None,
        input_tokens: int,
        output_tokens: int,
        model_calls: int,
        cost_usd: float | None = None,
    ) -> None:
        with self.session() as s:
            run = s.get(RunRow, run_id)
            if run is None:
                raise StoreError(f"no run {run_id!r} to finish")
            run.finished_at = datetime.now(UTC)
            run.status = "stopped" if stopped_by else "finished"
            run.stop_reason = stopped_by
            run.wall_time_s = wall_time_s
            run.input_tokens = input_tokens
            run.output_tokens = output_tokens
            run.model_calls = model_calls
            run.cost_usd = cost_usd

    def abandon_dead(self, reason: str, owners: Collection[str] | None = None) -> list[str]:
        """Mark the runs still ``running`` whose owner process is gone (among ``owners``,
        ``pid@host``, if given) as ``abandoned`` with ``reason``; which ones it marked. Only
        this host's processes can be checked: a run owned on another host is left alone."""
        from replay.runtime.base import Owner

        marked: list[str] = []
        with self.session() as s:
            rows = s.scalars(
                select(RunRow).where(RunRow.status == "running", RunRow.owner.is_not(None))
            ).all()
            for run in rows:
                pid_host, _, start = (run.owner or "").partition("#")
                pid, _, host = pid_host.partition("@")
                if not pid.isdigit() or (owners is not None and pid_host not in owners):
                    continue
                owner = Owner(int(pid), host, start)
                if owner.host != socket.gethostname() or owner.alive():
                    continue
                run.status = "abandoned"
                run.stop_reason = reason[:200]
                run.finished_at = datetime.now(UTC)
                marked.append(run.id)
        return marked

    def record_calibration(self, row: CalibrationRow) -> None:
        with self.session() as s:
            s.add(row)

    def calibrations(self) -> dict[str, CalibrationRow]:
        """The latest calibration of each case version, by case digest.

        Keyed by the digest, not the case id: a case edited after its calibration has a new
        digest, and no calibration, until it is calibrated again.
        """
        with self.session() as s:
            rows = s.scalars(select(CalibrationRow).order_by(CalibrationRow.id)).all()
        return {row.case_digest: row for row in rows}

    def comparison(self, name: str) -> ComparisonRow | None:
        with self.session() as s:
            return s.get(ComparisonRow, name)

    def fix_comparison(self, row: ComparisonRow) -> ComparisonRow:
        """Record a comparison and its rule, or return the one already recorded by that name
        (the caller checks that it is the same)."""
        with self.session() as s:
            existing = s.get(ComparisonRow, row.name)
            if existing is not None:
                return existing
            s.add(row)
        return row

    def comparisons(self) -> Sequence[ComparisonRow]:
        with self.session() as s:
            return s.scalars(select(ComparisonRow).order_by(ComparisonRow.fixed_at)).all()

    def drop_comparison(self, name: str) -> None:
        """Forget the comparison ``name`` (its arms and rule); the runs stay, under their
        candidates, for any comparison of the same candidates to use."""
        with self.session() as s:
            row = s.get(ComparisonRow, name)
            if row is None:
                raise InputError(name, "no comparison of this name (results comparisons)")
            s.delete(row)

    def rename_comparison(self, name: str, new: str) -> None:
        with self.session() as s:
            row = s.get(ComparisonRow, name)
            if row is None:
                raise InputError(name, "no comparison of this name (results comparisons)")
            if s.get(ComparisonRow, new) is not None:
                raise InputError(new, "a comparison of this name exists already")
            s.add(
                ComparisonRow(
                    name=new,
                    arm_a=row.arm_a,
                    arm_b=row.arm_b,
                    rule=row.rule,
                    rule_digest=row.rule_digest,
                    fixed_at=row.fixed_at,
                )
            )
            s.delete(row)

    def runs(self, case_id: str | None = None, *, candidate: str | None = None) -> Sequence[RunRow]:
        query = select(RunRow).options(selectinload(RunRow.grade)).order_by(RunRow.started_at)
        if case_id is not None:
            query = query.where(RunRow.case_id == case_id)
        if candidate is not None:
            query = query.where(RunRow.candidate == candidate)
        with self.session() as s:
            return s.scalars(query).all()

    def find_run(self, prefix: str) -> RunRow:
        """The run whose id starts with ``prefix`` (the 8 characters ``results list`` shows);
        :class:`InputError` when none does or several do."""
        if not re.fullmatch(r"[0-9a-f-]{4,36}", prefix):
            raise InputError(prefix, "a run id is 4 to 36 hexadecimal characters (results list)")
        query = (
            select(RunRow)
            .options(selectinload(RunRow.grade))
            .where(RunRow.id.startswith(prefix, autoescape=True))
            .limit(2)
        )
        with self.session() as s:
            found = s.scalars(query).all()
        if not found:
            raise InputError(prefix, "no run of the results store has this id (results list)")
        if len(found) > 1:
            raise InputError(prefix, "several runs have ids that start so: give more of it")
        return found[0]

    def close(self) -> None:
        self.engine.dispose()


_ADDED_COLUMNS = {
    "runs": {"case_digest": "VARCHAR(64)", "candidate": "VARCHAR(200)", "owner": "VARCHAR(200)"},
    "batch_runs": {"crashes": "INTEGER"},
}
"""Columns added after a table was first released: ``create_all`` does not add them to a
store that already has the table, so they are added here (nullable; old rows keep NULL)."""


def _add_missing_columns(engine: Engine) -> None:
    inspector = inspect(engine)
    for table, columns in _ADDED_COLUMNS.items():
        have = {c["name"] for c in inspector.get_columns(table)}
        for name, sql_type in columns.items():
            if name not in have:
                with engine.begin() as conn:
                    conn.execute(text(f"ALTER TABLE {table} ADD COLUMN {name} {sql_type}"))


def _sqlite_pragmas(dbapi_conn: object, _record: object) -> None:
    # WAL with synchronous=NORMAL measured fastest here for many writers (field notes, 13).
    cursor = dbapi_conn.cursor()  # type: ignore[attr-defined]
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()
