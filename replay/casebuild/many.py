"""``replay case create --from FILE``: many fixes at once, and how many became cases.

The list names fixes in local clones (a YAML or JSON file, below), or is a list ``replay case
mine --json`` printed (with ``--repo`` and ``--name``: the clone it was mined from). Each fix
goes through ``case create``'s code in a process of its own (its log in ``OUT/logs/<id>.log``),
then :func:`finish_case`: validated, its snapshot audited, calibrated with the stub model. A
calibrated case lands in ``OUT/<id>/``; one that stops at any step goes to
``OUT/rejected/<id>/`` with what was built before it stopped. ``OUT/yield.json`` and
``OUT/yield.md`` are the yield report: made, calibrated, stopped (the step and the cause, in the
first line of the stop's own message), and the time each took.

The list::

    schema: 1
    defaults:                 # optional: any field below, for every fix
      requires: ["-r requirements-test.txt"]
    fixes:
      - id: attrs-frozen-slots
        repo: clones/attrs    # a local clone, relative to the list's directory
        fix: 5c4b1c1          # the fix commit (a merge's or squash's, or the last one)
        name: python-attrs/attrs
        title: Frozen slotted classes cannot be pickled
        # optional: body, base, at, ticket_created, issue, requires, extra, python, setup,
        # command, upstream, license, ticket_source, registry_index (a recorded index, relative
        # to the list's directory, instead of requires/extra/python), extra_tests (a patch of
        # tests the team wrote against the fix, relative to the list's directory: as
        # `case create --extra-tests`)
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import difflib
import json
import logging
import multiprocessing
import os
import shutil
import statistics
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from replay.base import gitrepo
from replay.base.errors import InputError, ReplayError, ToolError
from replay.casebuild.create import FixSource
from replay.casebuild.environment import Wanted
from replay.strength.model import strength_label

if TYPE_CHECKING:
    from replay.run.calibrate import Calibration

log = logging.getLogger(__name__)

FIELDS = (
    "id", "repo", "fix", "name", "title", "body", "base", "at", "ticket_created", "issue",
    "requires", "extra", "python", "setup", "command", "upstream", "license", "ticket_source",
    "registry_index", "extra_tests",
)  # fmt: skip
REQUIRED = ("id", "repo", "fix", "name")

STATUSES = ("calibrated", "made", "stopped")
"""``made``: written and its test lists measured, but not calibrated (``--calibration-runs 0``)."""


@dataclass(frozen=True)
class Fix:
    """One fix of the list, as ``case create`` takes it."""

    id: str
    source: FixSource


@dataclass(frozen=True)
class Settings:
    out: Path
    runtime: str = "docker"
    repeats: int = 3
    calibration_runs: int = 1
    """Gold and idle runs each; 0 makes the cases without calibrating them."""
    db: str | None = None
    strength: bool = True
    """Measure each calibrated case's strength and record it beside the case
    (:mod:`replay.strength.record`); a measurement that fails is said, never a stop."""


@dataclass(frozen=True)
class Outcome:
    """What became of one fix."""

    id: str
    repository: str
    status: str
    seconds: float
    step: str | None = None
    """Where it stopped: ``create: <step>`` (one of :data:`replay.casebuild.create.STEPS`),
    ``validate``, ``audit``, ``calibrate``, or ``crash`` (an error of replay's own)."""
    cause: str | None = None
    """The first line of the stop's own message; the rest is in the log."""
    case: str | None = None
    fail_to_pass: int = 0
    log: str | None = None
    strength: float | None = None
    """The calibrated case's strength (the share of wrong fixes its hidden tests reject), when
    measured."""
    strong: bool | None = None

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def _at(value: object, where: Path, key: str) -> datetime | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        when = value
    else:
        try:
            when = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
        except ValueError:
            raise InputError(where, f"{key}: {value!r} is not an ISO 8601 time") from None
    if when.tzinfo is None:
        raise InputError(where, f"{key}: {value!r} needs a time zone (e.g. ...Z)")
    return when


def _strings(value: object, where: Path, key: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InputError(where, f"{key}: a list of strings")
    return tuple(value)


def _unknown(key: object, where: Path) -> InputError:
    near = difflib.get_close_matches(str(key), FIELDS, n=1)
    hint = f" (did you mean {near[0]!r}?)" if near else f" (one of: {', '.join(FIELDS)})"
    return InputError(where, f"unknown field {key!r}{hint}")


def _fix(raw: object, defaults: dict[str, Any], path: Path, n: int) -> Fix:
    where = Path(f"{path}: fixes[{n}]")
    if not isinstance(raw, dict):
        raise InputError(where, "each fix is a mapping (id, repo, fix, name, title...)")
    for key in raw:
        if key not in FIELDS:
            raise _unknown(key, where)
    data = {**defaults, **raw}
    missing = [k for k in REQUIRED if not data.get(k)]
    if missing:
        raise InputError(where, f"missing {', '.join(missing)}")
    case_id = str(data["id"])
    repo = Path(str(data["repo"]))
    repo = repo if repo.is_absolute() else (path.parent / repo)
    if not (repo / ".git").exists() and not (repo / "HEAD").is_file():
        raise InputError(where, f"repo: {repo} is not a git repository (clone it there)")
    name = str(data["name"])
    if name.count("/") != 1:
        raise InputError(where, f"name: {name!r} is owner/name")
    fix = str(data["fix"])
    title = str(data.get("title") or "")
    body = str(data.get("body") or "")
    if not title:  # the fix's own message stands in for a ticket the list does not give
        try:
            title, _, body = gitrepo.run(repo, "log", "-1", "--format=%B", fix).partition("\n")
        except ToolError:
            raise InputError(where, f"fix: {fix!r} is no commit of {repo}") from None
        body = body.strip()
    issue = data.get("issue", 1)
    if not isinstance(issue, int) or issue < 1:
        raise InputError(where, f"issue: {issue!r} is not an issue number")
    index = _beside(data.get("registry_index"), path)
    extra_tests = _beside(data.get("extra_tests"), path)
    if extra_tests is not None and not extra_tests.is_file():
        raise InputError(
            where,
            f"extra_tests: {extra_tests} is not a file (a patch of tests written against the "
            "fix, relative to the list's directory)",
        )
    source = FixSource(
        repo=repo,
        fix=fix,
        repo_name=name,
        ticket_title=title,
        ticket_body=body,
        issue_number=issue,
        ticket_created=_at(data.get("ticket_created"), where, "ticket_created"),
        base=str(data["base"]) if data.get("base") else None,
        at=_at(data.get("at"), where, "at"),
        setup=list(_strings(data.get("setup"), where, "setup")),
        command=str(data["command"]) if data.get("command") else None,
        registry_index=index,
        wanted=Wanted(
            _strings(data.get("requires"), where, "requires"),
            _strings(data.get("extra"), where, "extra"),
            str(data["python"]) if data.get("python") else None,
        ),
        upstream=str(data["upstream"]) if data.get("upstream") else None,
        license=str(data["license"]) if data.get("license") else None,
        ticket_source=str(data.get("ticket_source") or "the issue the fix closed"),
        extra_tests=extra_tests,
    )
    return Fix(case_id, source)


def _beside(value: object, path: Path) -> Path | None:
    """A file the list names, relative to the list's directory."""
    if not value:
        return None
    named = Path(str(value))
    return named if named.is_absolute() else path.parent / named


def _mined(raw: list[Any], path: Path, repo: Path | None, name: str | None) -> list[Fix]:
    """``case mine --json``'s candidates, from the clone they were mined from."""
    if repo is None or name is None:
        raise InputError(path, "a mined list (case mine --json) needs --repo and --name")
    fixes = []
    for n, c in enumerate(raw):
        if not isinstance(c, dict) or not {"id", "base", "fix"} <= set(c):
            raise InputError(Path(f"{path}: [{n}]"), "not a candidate of case mine --json")
        if c.get("reverted_by"):
            continue  # the team took the change back: mine sets it aside too
        ticket = str(c.get("ticket") or "")
        entry = {"id": c["id"], "repo": str(repo.resolve()), "fix": c["fix"], "base": c["base"],
                 "name": name}  # fmt: skip
        if ticket.startswith("#") and ticket[1:].isascii() and ticket[1:].isdigit():
            entry["issue"] = int(ticket[1:])
        fixes.append(_fix(entry, {}, path, n))
    return fixes


def read_fix_list(path: Path, repo: Path | None = None, name: str | None = None) -> list[Fix]:
    """The fixes of ``path``; :class:`InputError` naming the entry and field at the first
    problem, before anything is built."""
    try:
        data = yaml.safe_load(path.read_text())
    except OSError as exc:
        raise InputError(path, f"cannot read it: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        raise InputError(path, f"not YAML or JSON: {' '.join(str(exc).split())}") from None
    if isinstance(data, list):
        fixes = _mined(data, path, repo, name)
    elif isinstance(data, dict):
        if data.get("schema") != 1:
            raise InputError(path, "schema: must be 1")
        for key in data:
            if key not in ("schema", "defaults", "fixes"):
                raise InputError(path, f"unknown key {key!r} (schema, defaults, fixes)")
        defaults = data.get("defaults") or {}
        if not isinstance(defaults, dict):
            raise InputError(path, "defaults: a mapping of fields")
        for key in defaults:
            if key not in FIELDS or key == "id":
                raise _unknown(key, Path(f"{path}: defaults"))
        raw = data.get("fixes")
        if not isinstance(raw, list) or not raw:
            raise InputError(path, "fixes: a list of at least one fix")
        fixes = [_fix(r, defaults, path, n) for n, r in enumerate(raw)]
    else:
        raise InputError(path, "a mapping (schema, fixes) or a list from case mine --json")
    seen: set[str] = set()
    for f in fixes:
        if f.id in seen:
            raise InputError(path, f"id {f.id!r} is given twice")
        seen.add(f.id)
    return fixes


def default_jobs() -> int:
    """Fixes built at once: each measures its tests and calibrates in containers that keep a
    core busy, and an image build holds a few GiB, so half the cores, and one per 4 GiB."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    try:
        pages, size = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
        by_memory = max(1, pages * size // (4 << 30))
    except (ValueError, OSError):
        by_memory = 1
    return max(1, min((cores or 1) // 2, by_memory))


def finish_case(
    path: Path, runtime_db: str | None, runs_out: Path, calibration_runs: int
) -> tuple[str, str] | None:
    """Validate, audit and calibrate the case ``case create`` wrote: ``(step, reason)`` at
    the first that fails, None when it passes them all (or is not to be calibrated)."""
    from replay.base.case import load_case
    from replay.run.calibrate import CalibrationError, calibrate
    from replay.run.runner import RunOptions
    from replay.snapshot import load_snapshot
    from replay.snapshot.audit import audit
    from replay.validate import validate_case

    try:
        validate_case(path)
    except ReplayError as exc:
        return "validate", str(exc).strip()
    case = load_case(path)
    leaks = audit(load_snapshot(case.snapshot), case)
    if leaks:
        return "audit", "; ".join(f"{f.location}: {f.problem}" for f in leaks)
    if calibration_runs < 1:
        return None
    options = RunOptions(db=runtime_db, out=runs_out)
    try:
        result = calibrate(path, options, runs=calibration_runs)
        flaky = flaky_in_calibration(result)
        if flaky:
            drop_from_pass_to_pass(path, flaky)
            log.warning(
                "PASS_TO_PASS test(s) %s passed in every repeat of the measure and failed in "
                "a gold run of the calibration: flaky, left out of the lists; calibrating again",
                ", ".join(flaky),
            )
            result = calibrate(path, options, runs=calibration_runs)
    except CalibrationError as exc:
        return "calibrate", str(exc).strip()
    if not result.calibrated:
        return "calibrate", "not calibrated: " + "; ".join(result.explain())
    return None


FLAKY_LIMIT = 3
"""How many PASS_TO_PASS tests a calibration may find flaky and leave out; more failing is
no longer flakiness but a difference between the measure and the run, which is reported."""


def flaky_in_calibration(result: Calibration) -> list[str]:
    """The PASS_TO_PASS tests a gold run of the calibration failed when that is all that
    went wrong: every idle run failed as it should, and in every gold run that did not pass,
    every FAIL_TO_PASS test passed and the reports were trusted. The measure ran the same
    tests on the same image with the same gold patch and saw each of them pass in every
    repeat, so a failure now shows the test's result depends on something else than the code
    (timing: websockets 2026's ``test_close_waits_for_close_frame``, third corpus). At most
    :data:`FLAKY_LIMIT`; otherwise none."""
    from replay.base.outcomes import Outcome as RunOutcome

    if any(r.outcome != RunOutcome.MODEL_FAIL for r in result.idle):
        return []
    failed: set[str] = set()
    for run in result.gold:
        if run.outcome == RunOutcome.PASS:
            continue
        tests = run.grade.tests
        if run.outcome != RunOutcome.MODEL_FAIL or tests is None:
            return []
        if tests.spoofed or tests.stopped or tests.tampered or tests.contradictory:
            return []
        if tests.unguarded or any(s != "passed" for s in tests.fail_to_pass.values()):
            return []
        bad = {name for name, status in tests.pass_to_pass.items() if status != "passed"}
        if not bad:
            return []  # it failed for another reason than its tests (a rule, say)
        failed |= bad
    return sorted(failed) if len(failed) <= FLAKY_LIMIT else []


def drop_from_pass_to_pass(path: Path, tests: Sequence[str]) -> None:
    """Leave ``tests`` out of the case's PASS_TO_PASS list (the rest of the file as it was)."""
    data = yaml.safe_load(path.read_text())
    gone = set(tests)
    data["hidden_tests"]["pass_to_pass"] = [
        t for t in data["hidden_tests"]["pass_to_pass"] if t not in gone
    ]
    path.write_text(yaml.safe_dump(data, sort_keys=False, width=100))


def _first_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[0] if lines else "(no message)"


def build_fix(fix: Fix, settings: Settings) -> Outcome:
    """One fix, start to end, in this process; never raises (a stop is an outcome)."""
    from replay.casebuild.create import create_case, step_of
    from replay.runtime import get_runtime
    from replay.strength.record import measure_and_record

    start = time.monotonic()
    logs = settings.out / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    log_path = logs / f"{fix.id}.log"
    handler = logging.FileHandler(log_path, mode="w")
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(min(root.level or logging.INFO, logging.INFO))
    staging = settings.out / ".building" / fix.id

    def done(status: str, step: str | None = None, cause: str | None = None, **kw: Any) -> Outcome:
        if step is not None:
            log.error("stopped at %s: %s", step, cause)
            where = settings.out / "rejected" / fix.id
            shutil.rmtree(where, ignore_errors=True)
            if staging.exists():
                where.parent.mkdir(parents=True, exist_ok=True)
                staging.replace(where)
        return Outcome(
            fix.id, fix.source.repo_name, status, round(time.monotonic() - start, 1), step,
            _first_line(cause) if cause else None, log=str(log_path), **kw,
        )  # fmt: skip

    try:
        shutil.rmtree(staging, ignore_errors=True)
        staging.parent.mkdir(parents=True, exist_ok=True)
        runtime = get_runtime(settings.runtime)
        try:
            path, lists = create_case(fix.id, fix.source, staging, runtime, settings.repeats)
        except ReplayError as exc:
            return done("stopped", f"create: {step_of(exc) or 'history'}", str(exc))
        finally:
            runtime.close()
        stop = finish_case(
            path, settings.db, settings.out / ".runs" / fix.id, settings.calibration_runs
        )
        if stop is not None:
            return done("stopped", *stop, fail_to_pass=len(lists.fail_to_pass))
        measured = (
            measure_and_record(path, settings.runtime)
            if settings.strength and settings.calibration_runs > 0
            else None
        )
        final = settings.out / fix.id
        shutil.rmtree(final, ignore_errors=True)
        staging.replace(final)
        status = "calibrated" if settings.calibration_runs > 0 else "made"
        return done(
            status,
            case=str(final / "case.yaml"),
            fail_to_pass=len(lists.fail_to_pass),
            strength=None if measured is None else measured.strength,
            strong=None if measured is None else measured.strong,
        )
    except Exception as exc:  # one fix's crash is its outcome, not the batch's
        log.error("crashed:\n%s", traceback.format_exc())
        return done("stopped", "crash", f"{type(exc).__name__}: {exc}")
    finally:
        root.removeHandler(handler)
        handler.close()


def build_many(
    fixes: Sequence[Fix],
    settings: Settings,
    jobs: int,
    say: Callable[[str], None] = lambda _: None,
) -> list[Outcome]:
    """Build each fix in a process of its own, ``jobs`` at a time; write the yield report."""
    settings.out.mkdir(parents=True, exist_ok=True)
    outcomes: dict[str, Outcome] = {}
    started = time.monotonic()
    context = multiprocessing.get_context("spawn")  # no forked copies of this process's threads
    with concurrent.futures.ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        pending = {pool.submit(build_fix, f, settings): f for f in fixes}
        say(f"building {len(fixes)} fix(es), {jobs} at a time; logs in {settings.out / 'logs'}")
        for future in concurrent.futures.as_completed(pending):
            fix = pending[future]
            try:
                outcome = future.result()
            except Exception as exc:  # the worker process itself died
                died = f"the worker process died: {type(exc).__name__}: {exc}"
                outcome = Outcome(fix.id, fix.source.repo_name, "stopped", 0.0, "crash", died)
            outcomes[fix.id] = outcome
            what = outcome.status if outcome.step is None else f"stopped at {outcome.step}"
            if outcome.strength is not None:
                what += f" (strength {strength_label(outcome.strength, bool(outcome.strong))})"
            line = f"[{len(outcomes)}/{len(fixes)}] {fix.id}: {what} in {outcome.seconds:.0f} s"
            say(line + (f": {outcome.cause}" if outcome.cause else ""))
            # The report so far, after each fix: a list cut short still shows its yield.
            done = [outcomes[f.id] for f in fixes if f.id in outcomes]
            write_yield(settings.out, done, time.monotonic() - started, jobs, len(fixes))
    shutil.rmtree(settings.out / ".building", ignore_errors=True)
    return [outcomes[f.id] for f in fixes]


def summary(outcomes: Sequence[Outcome]) -> dict[str, Any]:
    total = len(outcomes)
    by = {s: sum(o.status == s for o in outcomes) for s in STATUSES}
    times = [o.seconds for o in outcomes]
    made = [o.seconds for o in outcomes if o.status != "stopped"]
    steps: dict[str, int] = {}
    for o in outcomes:
        if o.step is not None:
            steps[o.step] = steps.get(o.step, 0) + 1
    return {
        "fixes": total,
        **by,
        "yield": round(by["calibrated"] / total, 3) if total else 0.0,
        "median_seconds": round(statistics.median(times), 1) if times else None,
        "median_seconds_made": round(statistics.median(made), 1) if made else None,
        "stopped_by_step": steps,
    }


def write_yield(
    out: Path, outcomes: Sequence[Outcome], wall: float, jobs: int, listed: int | None = None
) -> None:
    """``yield.json`` (every outcome, and the summary) and ``yield.md`` (a table to read),
    written atomically; ``listed`` fixes in all, of which ``outcomes`` have ended."""
    s = summary(outcomes)
    listed = len(outcomes) if listed is None else listed
    data = {"summary": {**s, "listed": listed, "wall_seconds": round(wall, 1), "jobs": jobs},
            "fixes": [o.as_dict() for o in outcomes]}  # fmt: skip
    _write(out / "yield.json", json.dumps(data, indent=2) + "\n")
    pending = (
        f" ({listed - len(outcomes)} of {listed} still to build)" if listed > len(outcomes) else ""
    )
    made = s["median_seconds_made"]
    made_text = "none made" if made is None else f"{made} s for those made"
    lines = [
        f"# Yield: {s['calibrated']} of {s['fixes']} calibrated ({s['yield']:.0%}){pending}",
        "",
        f"made {s['calibrated'] + s['made']}, calibrated {s['calibrated']}, stopped "
        f"{s['stopped']}; median {s['median_seconds']} s per fix "
        f"({made_text}); {wall:.0f} s in all, {jobs} at a time",
        "",
        "| fix | repository | outcome | step | cause | strength | seconds |",
        "|---|---|---|---|---|---|---|",
    ]
    for o in outcomes:
        cause = (o.cause or "").replace("|", "\\|")
        strength = "" if o.strength is None else strength_label(o.strength, bool(o.strong))
        lines.append(
            f"| {o.id} | {o.repository} | {o.status} | {o.step or ''} | {cause} | {strength} "
            f"| {o.seconds:.0f} |"
        )
    _write(out / "yield.md", "\n".join(lines) + "\n")


def _write(path: Path, text: str) -> None:
    part = path.with_name(path.name + ".part")
    part.write_text(text)
    part.replace(path)


__all__ = [
    "Fix",
    "Outcome",
    "Settings",
    "build_fix",
    "build_many",
    "default_jobs",
    "finish_case",
    "read_fix_list",
    "summary",
    "write_yield",
]
