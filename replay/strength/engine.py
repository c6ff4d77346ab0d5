"""Measuring a case's strength: make the wrong fixes, grade each one as a run's diff is graded.

Grading goes through the runner's own path, :class:`replay.grade.hidden_tests.GradingBox`:
a fresh container of the case's environment image for each wrong fix (as each run gets one),
the diff applied, the case's test infrastructure put back, the hidden tests and the grader's
plugin run, the reports judged. A wrong fix is *rejected* when the hidden tests are not
resolved, which is exactly when a run with that diff fails its tests (:func:`judge`). The
next wrong fix's container is made ready while one is graded, as the runner readies a run's
while its harness works (the same :meth:`GradingBox.prepare_in_background`).

The gold patch is graded first: a case whose real fix does not pass here says nothing about
wrong ones (calibrate it first).
"""

from __future__ import annotations

import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from replay.base.case import Case, LoadedCase, case_digest
from replay.base.errors import ReplayError
from replay.grade.hidden_tests import Grading, GradingBox, last_lines
from replay.grade.outcome import tests_in_words
from replay.images.base import ensure_case_base_image
from replay.images.env import build_env_image, cached_env_image
from replay.runtime import get_runtime
from replay.runtime.base import Runtime
from replay.snapshot import load_snapshot
from replay.strength.generate import Candidate, generate
from replay.strength.model import (
    NOT_PASSED_KEPT,
    CaseStrength,
    Verdict,
    WrongFixResult,
    tally,
)
from replay.strength.tree import GoldTree, StrengthError
from replay.world import World

MIN_TIMEOUT = 120.0
"""The least time a wrong fix's hidden tests get, in seconds."""
TIMEOUT_FACTOR = 10
"""A wrong fix's hidden tests get this many times the gold grading's time (at least
:data:`MIN_TIMEOUT`): a mutant that loops forever is stopped, and rejected, in minutes
rather than after a run's half hour."""

Progress = Callable[[str, int, int, str], None]
"""Told as each step starts: (case id, the grading's number from 1, how many gradings, what
is done: the environment image, then the gold patch, then each wrong fix)."""


@dataclass(frozen=True)
class StrengthOptions:
    """How a case's strength is measured."""

    max_mutants: int = 20
    """At most this many mutants graded per case (drawn with :attr:`seed` when there are
    more); at most as many proven equivalent are listed, and as many overfits made."""
    seed: int = 0
    """The seed mutants are drawn with: the same seed, the same mutants."""
    threshold: float = 0.9
    """A strong case rejects at least this fraction of the wrong fixes it could tell."""
    runtime: str = "docker"
    """The container runtime."""
    timeout: float | None = None
    """Seconds each wrong fix's hidden tests may take; None: from the gold grading's time."""
    progress: Progress | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Ready:
    """What grading a diff for a case needs, ready: the runtime and the environment image."""

    runtime: Runtime
    case: Case
    image: str
    """The environment image's ID."""
    timeout: float = 1800.0
    """Seconds the hidden tests may take for one diff (a run's grading default)."""

    def box(self) -> GradingBox:
        """A grading container of its own for one diff, as a run gets one."""
        run_id = f"strength-{uuid.uuid4().hex[:10]}"
        return GradingBox(self.runtime, self.image, self.case, run_id, timeout=self.timeout)


@dataclass(frozen=True)
class Graded:
    """What grading one diff gave."""

    verdict: Verdict
    reason: str
    seconds: float
    applied: str | None = None
    not_passed: dict[str, str] = field(default_factory=dict)
    """The first listed tests that did not pass (:data:`NOT_PASSED_KEPT`), with status."""
    not_passed_count: int = 0
    restored: list[str] = field(default_factory=list)
    """Paths the grading put back as the case has them."""


def ready_image(case: Case, runtime: Runtime) -> str:
    """The case's environment image (its ID), built first if it is missing or stale, as a
    run gets it: through a world of its own when it has to be built."""
    ensure_case_base_image(runtime, case.environment)
    cached = cached_env_image(case, runtime)
    if cached is not None:
        return cached.id
    with (
        tempfile.TemporaryDirectory(prefix="replay-env-world-") as tmp,
        World(case.snapshot, Path(tmp)) as world,
    ):
        return build_env_image(case, runtime, world.state).id


def grade_diff(ready: Ready, diff: str, box: GradingBox | None = None) -> Graded:
    """Grade ``diff`` as a run's final diff is graded: in ``box`` (being prepared in the
    background) or in a fresh grading container."""
    started = time.monotonic()
    try:
        if box is None:
            box = ready.box().prepare()
        with box:
            grading = box.grade(diff)
    except ReplayError as exc:
        return Graded("error", f"grading: {exc}", round(time.monotonic() - started, 3))
    verdict, reason = judge(grading)
    statuses = {**grading.verdict.fail_to_pass, **grading.verdict.pass_to_pass}
    failing = [(test, status) for test, status in statuses.items() if status != "passed"]
    return Graded(
        verdict,
        reason,
        round(time.monotonic() - started, 3),
        grading.applied,
        dict(failing[:NOT_PASSED_KEPT]),
        len(failing),
        [r.path for r in grading.restored],
    )


def judge(grading: Grading) -> tuple[Verdict, str]:
    """Rejected or survived, as a run with the same grading would have failed or passed its
    hidden tests, and why; an error when the diff did not go in at all."""
    verdict = grading.verdict
    words = tests_in_words(verdict.fail_to_pass, verdict.pass_to_pass)
    if grading.applied == "none":
        return "error", "the wrong fix's diff did not apply (a fault of its generator)"
    if verdict.resolved:
        return "survived", f"hidden tests resolved ({words})"
    if grading.stopped:
        return "rejected", f"hidden tests stopped: {grading.stopped}"
    if verdict.spoofed:
        return "rejected", "spoofed: " + "; ".join(verdict.spoof_reasons[:2])
    if words:
        return "rejected", words
    if grading.unreported:
        return "rejected", grading.unreported
    ends = last_lines(grading.outputs[0]) if grading.outputs else "(no output)"
    return "rejected", f"no listed test ran; the test command's output ends: {ends}"


def measure_strength(loaded: LoadedCase, options: StrengthOptions) -> CaseStrength:
    """Make the case's wrong fixes, grade each, and say how many the hidden tests reject."""
    started = time.monotonic()
    case = loaded.case
    snapshot = load_snapshot(case.snapshot)
    with tempfile.TemporaryDirectory(prefix="replay-strength-") as tmp:
        tree = GoldTree.restore(case, snapshot, Path(tmp) / "repo")
        candidates, notes = generate(tree, case, snapshot, options.max_mutants, options.seed)
        gold_diff = tree.gold_diff
    todo = [c for c in candidates if c.fix.decided is None]
    total = len(todo) + 1
    runtime = get_runtime(options.runtime)
    try:
        _tell(options, case.id, 1, total, "the environment image (built if missing)")
        ready = Ready(runtime, case, ready_image(case, runtime))
        _tell(options, case.id, 1, total, "grading the gold patch")
        gold = grade_diff(ready, gold_diff)
        if gold.verdict == "error":
            raise StrengthError(f"{case.id}: grading the gold patch failed: {gold.reason}")
        if gold.verdict != "survived":
            raise StrengthError(
                f"{case.id}: the gold patch does not pass its hidden tests here: {gold.reason}; "
                "calibrate the case first (replay case calibrate)"
            )
        timeout = options.timeout or max(MIN_TIMEOUT, TIMEOUT_FACTOR * gold.seconds)
        ready = Ready(runtime, case, ready.image, timeout)
        graded = _grade_all(ready, todo, options, total)
    finally:
        runtime.close()
    results = [_result(c, graded.get(c.name)) for c in candidates]
    counts, strength, weak = tally(results, options.threshold)
    return CaseStrength(
        case_id=case.id,
        case_digest=case_digest(loaded),
        image=ready.image,
        seed=options.seed,
        max_mutants=options.max_mutants,
        threshold=options.threshold,
        generated=len(results),
        rejected=counts["rejected"],
        survivors=counts["survived"],
        equivalent=counts["equivalent"],
        possibly_equivalent=counts["possibly_equivalent"],
        errors=counts["error"],
        strength=strength,
        strong=not weak,
        weak_because=weak,
        seconds=round(time.monotonic() - started, 3),
        gold_seconds=gold.seconds,
        timeout=timeout,
        notes=notes,
        results=results,
    )


def _grade_all(
    ready: Ready, todo: list[Candidate], options: StrengthOptions, total: int
) -> dict[str, Graded]:
    """Grade every candidate in turn, each in a container of its own; the next one's is
    prepared while the current one is graded."""
    graded: dict[str, Graded] = {}
    upcoming = ready.box().prepare_in_background() if todo else None
    try:
        for n, candidate in enumerate(todo):
            box, upcoming = upcoming, None
            if n + 1 < len(todo):
                upcoming = ready.box().prepare_in_background()
            what = f"grading {candidate.name}: {candidate.fix.description}"
            _tell(options, ready.case.id, n + 2, total, what)
            graded[candidate.name] = grade_diff(ready, candidate.diff, box)
    finally:
        if upcoming is not None:
            upcoming.close()
    return graded


def _result(candidate: Candidate, graded: Graded | None) -> WrongFixResult:
    fix = candidate.fix
    if graded is None:
        assert fix.decided is not None, "only decided wrong fixes go ungraded"
        graded = Graded(fix.decided[0], fix.decided[1], 0.0)
    return WrongFixResult(
        kind=fix.kind,
        name=candidate.name,
        description=fix.description,
        path=fix.path,
        line=fix.line,
        diff=candidate.diff,
        from_gold=candidate.from_gold,
        verdict=graded.verdict,
        reason=graded.reason,
        seconds=graded.seconds,
        applied=graded.applied,
        not_passed=graded.not_passed,
        not_passed_count=graded.not_passed_count,
        restored=graded.restored,
    )


def _tell(options: StrengthOptions, case_id: str, n: int, total: int, what: str) -> None:
    if options.progress is not None:
        options.progress(case_id, n, total, what)
