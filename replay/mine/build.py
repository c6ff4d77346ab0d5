"""Candidates become cases: built by ``replay case create``'s code, then validated, audited and
calibrated. A candidate that fails any step is set aside with the step and the reason, and its
directory moves under ``rejected/``: it is never written where the shipped cases are.

What each kind adds to the case ``case create`` writes:

- every case is tagged ``mined`` and with its kind;
- ``loop``: a rule that at most one pull request is opened (the real ticket saw several);
- ``rescue``: the replies that changed the work's course, as scripted people, played when the
  agent asks in that thread;
- ``fix-that-broke`` and ``test-optimiser``: the answer runs to the later fix, so the hidden
  tests hold the tests that caught the breakage (or the tests put back);
- a reverted fix with nothing after it is set aside: the team took the change back, so there
  is no answer to grade against.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from replay.base import gitrepo
from replay.base.errors import ReplayError, ToolError
from replay.capture.github import GitHubReader
from replay.casebuild.casedir import DEFAULT_COMMAND
from replay.casebuild.create import FixSource, create_case
from replay.casebuild.frompr import LinearTicket, SlackThread, fix_source_from_pr
from replay.casebuild.many import finish_case
from replay.mine.detect import Candidate
from replay.mine.history import History
from replay.strength.record import measure_and_record

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class BuildConfig:
    """Where the cases go, how they are built, and the services the history came from."""

    out: Path
    github_api: str
    github_git: str
    github_token: str = ""
    linear_url: str | None = None
    linear_key: str = ""
    slack_url: str | None = None
    slack_token: str = ""
    setup: list[str] = field(default_factory=list)
    command: str | None = None
    registry_index: Path | None = None
    runtime: str = "docker"
    repeats: int = 3
    """Test runs before and after the gold when measuring the test lists (>= 3)."""
    calibration_runs: int = 1
    """Gold and idle runs each when calibrating."""
    db: str | None = None
    """The results store calibration records into."""
    runs_out: Path | None = None
    """Where calibration's run directories go (default: ``out/.runs``)."""
    strength: bool = True
    """Measure each calibrated case's strength and record it beside the case."""


@dataclass(frozen=True)
class Built:
    candidate: Candidate
    case: Path
    """The calibrated case's file."""
    strength: float | None = None
    """Its strength (``strength.json`` beside it), when measured."""


@dataclass(frozen=True)
class Rejected:
    candidate: Candidate
    step: str
    """Where it failed: ``create``, ``validate``, ``audit``, ``calibrate`` or ``kind``."""
    reason: str
    directory: Path | None = None
    """What was built before it failed, kept for reading under ``rejected/``."""


_TAGS = {
    "plain": "mined-plain",
    "fix-that-broke": "fix-that-broke",
    "loop": "agent-loop",
    "rescue": "human-rescued",
    "test-optimiser": "test-weakened",
}


def build_candidates(
    history: History, candidates: list[Candidate], config: BuildConfig
) -> tuple[list[Built], list[Rejected]]:
    """Build, validate, audit and calibrate each candidate; write ``out/mined.json``."""
    from replay.runtime import get_runtime

    config.out.mkdir(parents=True, exist_ok=True)
    built: list[Built] = []
    rejected: list[Rejected] = []
    runtime = get_runtime(config.runtime)
    try:
        for candidate in candidates:
            log.info("building %s (%s)", candidate.id, candidate.kind)
            result = _one(history, candidate, config, runtime)
            if isinstance(result, Built):
                built.append(result)
            else:
                rejected.append(result)
    finally:
        runtime.close()
        shutil.rmtree(config.out / ".building", ignore_errors=True)  # each moved on, or failed
    (config.out / "mined.json").write_text(
        json.dumps(
            {
                "built": [
                    {**b.candidate.as_dict(), "case": str(b.case), "strength": b.strength}
                    for b in built
                ],
                "rejected": [
                    {
                        **r.candidate.as_dict(),
                        "step": r.step,
                        "rejected_because": r.reason,
                        "directory": str(r.directory) if r.directory else None,
                    }
                    for r in rejected
                ],
            },
            indent=2,
        )
        + "\n"
    )
    return built, rejected


def _one(history: History, c: Candidate, config: BuildConfig, runtime: Any) -> Built | Rejected:
    if c.reverted_by is not None:
        return Rejected(
            c, "kind", f"reverted by {c.reverted_by[:7]} and not fixed again since: the team "
            "took the change back, so there is no answer to grade against",
        )  # fmt: skip
    staging = config.out / ".building" / c.id
    if staging.exists():
        shutil.rmtree(staging)
    staging.parent.mkdir(parents=True, exist_ok=True)

    def reject(step: str, reason: str) -> Rejected:
        where = config.out / "rejected" / c.id
        if where.exists():
            shutil.rmtree(where)
        if staging.exists():
            where.parent.mkdir(parents=True, exist_ok=True)
            staging.replace(where)
            return Rejected(c, step, reason, where)
        return Rejected(c, step, reason)

    with tempfile.TemporaryDirectory(prefix="replay-mine-") as tmp:
        try:
            src = _source(history, c, config, Path(tmp) / "clone")
            path, _ = create_case(c.id, src, staging, runtime, config.repeats)
        except ReplayError as exc:
            return reject("create", str(exc).strip())
    _amend(path, c, history)
    stop = finish_case(
        path, config.db, config.runs_out or config.out / ".runs", config.calibration_runs
    )
    if stop is not None:
        return reject(*stop)
    measured = measure_and_record(path, config.runtime) if config.strength else None
    final = config.out / c.id
    if final.exists():
        shutil.rmtree(final)
    staging.replace(final)
    return Built(c, final / "case.yaml", None if measured is None else measured.strength)


def _source(history: History, c: Candidate, config: BuildConfig, clone: Path) -> FixSource:
    """What ``case create`` builds from: the landing pull request read from GitHub (with its
    Linear ticket and the Slack thread of the hints, captured at T), or the local clone."""
    extra = {"setup": config.setup, "command": config.command or _command(history, c),
             "registry_index": config.registry_index}  # fmt: skip
    if c.pull is None:
        ticket = history.tickets.get(c.ticket or "")
        last = history.commit(c.fix)
        assert last is not None
        return FixSource(
            repo=history.clone,
            fix=c.fix,
            base=c.base,
            repo_name=history.repo_name,
            ticket_title=ticket.title if ticket else last.subject,
            ticket_body=ticket.body if ticket else last.body,
            issue_number=int(c.ticket[1:]) if c.ticket and c.ticket.startswith("#") else 1,
            ticket_author=ticket.author if ticket else last.author,
            ticket_created=ticket.created_at if ticket else None,
            ticket_source="the ticket the fix closed" if ticket else "the fix's own message",
            **extra,  # type: ignore[arg-type]
        )
    linear = None
    if c.ticket and not c.ticket.startswith("#") and config.linear_url:
        linear = LinearTicket(c.ticket, config.linear_key, config.linear_url)
    slack = None
    thread = next(
        (t for h in c.hints for t in history.threads if h.service == "slack" and t.ref == h.where),
        None,
    )
    if thread is not None and config.slack_url:
        slack = SlackThread(thread.channel, thread.ts, config.slack_token, config.slack_url)
    reader = GitHubReader(config.github_api, config.github_token)
    try:
        src = fix_source_from_pr(
            reader, config.github_git, config.github_token, history.repo_name, c.pull, clone,
            linear=linear, slack=slack,
        )  # fmt: skip
    finally:
        reader.close()
    # The answer runs from the candidate's base to its fix: for a fix that broke, through the
    # later fix; for a weakened test, through the change that restored it.
    return dataclasses.replace(src, base=c.base, fix=c.fix, **extra)  # type: ignore[arg-type]


def _command(history: History, c: Candidate) -> str | None:
    """The test command over every test file a commit of the answer touched, the ones whose
    net change is nil included: a test weakened and then restored must run (and pass) in the
    case, or an agent could weaken it again unseen."""
    order = [x.sha for x in history.commits]
    commits = history.commits[order.index(c.base) + 1 : order.index(c.fix) + 1]
    touched = {ch.path for x in commits for ch in x.changes
               if ch.is_test and ch.path.endswith(".py")}  # fmt: skip
    files = sorted(f for f in touched if _exists(history.clone, c.fix, f))
    return f"{DEFAULT_COMMAND} {' '.join(files)}" if files else None


def _exists(clone: Path, rev: str, path: str) -> bool:
    try:
        gitrepo.run(clone, "cat-file", "-e", f"{rev}:{path}")
    except ToolError:
        return False
    return True


def _amend(path: Path, c: Candidate, history: History) -> None:
    """Tags, rules and scripted people from what really happened, added to the case file."""
    data = yaml.safe_load(path.read_text())
    tags = data.get("tags") or []
    data["tags"] = [*tags, *(t for t in ("mined", _TAGS[c.kind]) if t not in tags)]
    if c.kind == "loop":
        numbers = ", ".join(f"#{n}" for n in c.attempts)
        data["side_effects"].insert(
            1,
            {
                "id": "one-pull-request",
                "description": f"At most one pull request is opened (the real ticket saw "
                f"{numbers} closed unmerged before #{c.pull} landed).",
                "service": "github",
                "kind": "github.pull_request.opened",
                "at_most": 1,
            },
        )
    humans = data.get("humans") or []
    for hint in c.hints:
        if hint.service == "github":
            continue  # the GitHub fake plays no scripted people: the reason still names it
        humans.append(
            {
                "person": hint.person,
                "service": hint.service,
                "thread": hint.where,
                "trigger": "asks_in_thread",
                "text": hint.text,
            }
        )
    if humans:
        data["humans"] = humans
    path.write_text(yaml.safe_dump(data, sort_keys=False, width=100))
