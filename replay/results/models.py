"""Tables of the results store: one row per run, one grade per graded run.

Column docstrings are the format's documentation: these rows are read long after the run.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, ClassVar

from sqlalchemy import JSON, Boolean, DateTime, Float, ForeignKey, Integer, String, Text
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

from replay.grade.model import Grade, parse_grade


class Base(DeclarativeBase):
    type_annotation_map: ClassVar[dict[Any, Any]] = {
        dict[str, Any]: JSON,
        datetime: DateTime(timezone=True),
    }


class RunRow(Base):
    """One attempt of one harness on one case."""

    __tablename__ = "runs"

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    """A UUID; also the name of the run's directory."""
    case_id: Mapped[str] = mapped_column(String(100), index=True)
    case_digest: Mapped[str | None] = mapped_column(String(64), default=None)
    """The case version the run replayed (:func:`replay.base.case.case_digest`); None in
    stores written before it was recorded. Reports never pool runs of different versions."""
    harness: Mapped[str] = mapped_column(String(200))
    """The harness spec's name."""
    candidate: Mapped[str | None] = mapped_column(String(200), default=None, index=True)
    """The candidate of ``replay compare`` the run was made for (its name and settings
    digest, :attr:`replay.compare.candidate.Candidate.key`); None for other runs
    (``replay run``, calibration), which no comparison reads."""
    model: Mapped[str] = mapped_column(String(200))
    """The model the harness was pointed at, as the harness spec names it."""
    attempt: Mapped[int] = mapped_column(Integer, default=1)
    """1-based index of this run among the runs of the same case and configuration."""
    started_at: Mapped[datetime]
    finished_at: Mapped[datetime | None] = mapped_column(default=None)
    status: Mapped[str] = mapped_column(String(20), default="running")
    """running, finished, stopped (a budget or limit was hit; see ``stop_reason``), or
    abandoned (its runner died mid-run and ``replay gc`` or a resuming batch collected what it
    left; never graded)."""
    stop_reason: Mapped[str | None] = mapped_column(String(200), default=None)
    owner: Mapped[str | None] = mapped_column(String(200), default=None)
    """The process that ran it, ``pid@host#start`` (:class:`replay.runtime.base.Owner`): a
    run still ``running`` whose owner is gone is marked abandoned by ``replay gc`` or a
    resuming batch. None in stores written before it was recorded."""
    outcome: Mapped[str | None] = mapped_column(String(20), default=None, index=True)
    """An :class:`~replay.base.outcomes.Outcome`'s value; None until graded."""
    run_dir: Mapped[str | None] = mapped_column(Text, default=None)
    image_digest: Mapped[str | None] = mapped_column(String(100), default=None)
    """The environment image the run used, pinned by digest."""
    wall_time_s: Mapped[float | None] = mapped_column(Float, default=None)
    input_tokens: Mapped[int] = mapped_column(Integer, default=0)
    output_tokens: Mapped[int] = mapped_column(Integer, default=0)
    cost_usd: Mapped[float | None] = mapped_column(Float, default=None)
    model_calls: Mapped[int] = mapped_column(Integer, default=0)
    """Logical model calls (SDK retries of one call count once)."""

    grade: Mapped[GradeRow | None] = relationship(back_populates="run", uselist=False)


class GradeRow(Base):
    """The verdict on one run: hidden tests, side effects, and the outcome they give."""

    __tablename__ = "grades"

    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id"), primary_key=True)
    tests_resolved: Mapped[bool]
    """All FAIL_TO_PASS and all PASS_TO_PASS passed (by JUnit XML and exit status together)."""
    fail_to_pass_passed: Mapped[int]
    fail_to_pass_total: Mapped[int]
    pass_to_pass_passed: Mapped[int]
    pass_to_pass_total: Mapped[int]
    side_effects_ok: Mapped[bool]
    """Every side-effect rule's count was within its bounds."""
    interventions: Mapped[int] = mapped_column(Integer, default=0)
    """Scripted human replies the agent received."""
    detail: Mapped[dict[str, Any]] = mapped_column(default=dict)
    """The full ``grade.json`` of the run (read it with :meth:`to_grade`)."""

    run: Mapped[RunRow] = relationship(back_populates="grade")

    @classmethod
    def from_grade(
        cls, grade: Grade, *, fail_to_pass_total: int, pass_to_pass_total: int
    ) -> GradeRow:
        """The row of a run's grade; the totals are the case's (a grade without tests has
        none)."""
        tests = grade.tests
        return cls(
            run_id=grade.run_id,
            tests_resolved=grade.tests_resolved,
            fail_to_pass_passed=tests.f2p_passed if tests else 0,
            fail_to_pass_total=fail_to_pass_total,
            pass_to_pass_passed=tests.p2p_passed if tests else 0,
            pass_to_pass_total=pass_to_pass_total,
            side_effects_ok=grade.side_effects.ok,
            interventions=grade.interventions,
            detail=grade.dump(),
        )

    def to_grade(self) -> Grade:
        """The run's grade, typed (an unknown format version is an ``InputError``)."""
        return parse_grade(self.detail, f"results store: grade of run {self.run_id}")


class CalibrationRow(Base):
    """One calibration of a case: its gold run must pass and its idle run fail, K times each."""

    __tablename__ = "calibrations"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    case_id: Mapped[str] = mapped_column(String(100), index=True)
    case_digest: Mapped[str] = mapped_column(String(64))
    """sha256 of the case file, its snapshot's manifest, gold patch and hidden tests: a case
    that changed is not calibrated by an older calibration."""
    calibrated: Mapped[bool] = mapped_column(Boolean)
    runs: Mapped[int]
    """K: runs of each trajectory."""
    gold_passes: Mapped[int]
    idle_fails: Mapped[int]
    """Idle runs whose outcome was model_fail."""
    at: Mapped[datetime]


class ComparisonRow(Base):
    """A comparison of two candidates, fixed with its decision rule before its first run."""

    __tablename__ = "comparisons"

    name: Mapped[str] = mapped_column(String(200), primary_key=True)
    arm_a: Mapped[str] = mapped_column(String(200))
    """Candidate key of arm A (the incumbent)."""
    arm_b: Mapped[str] = mapped_column(String(200))
    """Candidate key of arm B (the challenger)."""
    rule: Mapped[str] = mapped_column(Text)
    """The decision rule's file, verbatim."""
    rule_digest: Mapped[str] = mapped_column(String(64))
    """sha256 of :attr:`rule`: a comparison's rule cannot change once recorded."""
    fixed_at: Mapped[datetime]
    """When the rule was recorded (before the comparison made any run)."""


class BatchRunRow(Base):
    """One planned run of a batch, by its stable key: claimed before it runs, completed once.

    The key is the case version, the candidate and the run's index; a batch that is run again
    after a crash or a kill finds here what is finished (never redone), what a dead process
    held (taken over) and what failed for the infrastructure (retried up to the plan's limit).
    Claiming inserts the row (its primary key makes two claims of one key impossible) or takes
    over an unfinished one in a single UPDATE guarded by its previous state.
    """

    __tablename__ = "batch_runs"

    run_key: Mapped[str] = mapped_column(String(200), primary_key=True)
    """``<case digest>:<candidate key>:<index>``."""
    batch: Mapped[str] = mapped_column(String(200), index=True)
    case_id: Mapped[str] = mapped_column(String(100))
    case_digest: Mapped[str] = mapped_column(String(64))
    candidate: Mapped[str] = mapped_column(String(200))
    index: Mapped[int] = mapped_column(Integer)
    """1-based index of the run among the candidate's runs of the case."""
    state: Mapped[str] = mapped_column(String(20))
    """running, done (a healthy outcome, or spoiled past the wire retries), infra_fail, or
    quarantined (its runs crashed the runner twice: never claimed again)."""
    owner: Mapped[str | None] = mapped_column(String(200), default=None)
    """Who holds a running key: ``host:pid:token``."""
    claimed_at: Mapped[datetime]
    tries: Mapped[int] = mapped_column(Integer, default=1)
    """How many times the key was claimed (a retry of an infra_fail, a takeover)."""
    run_id: Mapped[str | None] = mapped_column(String(36), default=None)
    """The results store's run that finished the key (its last run, wire retries included)."""
    outcome: Mapped[str | None] = mapped_column(String(20), default=None)
    tokens: Mapped[int] = mapped_column(Integer, default=0)
    """Tokens of every run the key took (wire retries included), for the batch's budget."""
    cost_usd: Mapped[float | None] = mapped_column(Float, default=None)
    error: Mapped[str | None] = mapped_column(Text, default=None)
    """Why the last try failed before it could be graded (an image that did not build...),
    or the traceback's end of the last crash of the runner."""
    crashes: Mapped[int | None] = mapped_column(Integer, default=0)
    """How many of the key's tries crashed the runner (an exception nothing expected, as
    opposed to an infrastructure failure the runner recognised); at two the key is
    quarantined. None in stores written before it was recorded (none counted)."""


class BatchRow(Base):
    """A batch's plan, fixed when it first runs: a rerun under its name must be the same plan."""

    __tablename__ = "batches"

    name: Mapped[str] = mapped_column(String(200), primary_key=True)
    plan: Mapped[str] = mapped_column(Text)
    plan_digest: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime]
