"""``replay case create``: a case from a fix commit (or range) in a local repository.

Base commit = the fix's first parent (or the given base). The fix's test changes become the
hidden tests and the rest the gold patch. T defaults to just before the work started: the
ticket's creation or one second before the fix's first commit, whichever is earlier.
FAIL_TO_PASS and PASS_TO_PASS are then measured in the environment image
(:mod:`replay.casebuild.testlists`).
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from replay import gitrepo
from replay.capture.github import GitHubReader
from replay.casebuild.patches import split_fix, test_files
from replay.casebuild.testlists import MIN_REPEATS, TestLists, measure, write_lists
from replay.casebuild.world import (
    DEFAULT_COMMAND,
    CaseSpec,
    TicketSpec,
    latest_history_date,
    write_case_dir,
)
from replay.errors import InputError
from replay.runtime.base import Runtime


@dataclass(frozen=True)
class FixSource:
    repo: Path
    fix: str
    """The fix commit (the PR's merge or squash commit, or its last commit)."""
    repo_name: str
    ticket_title: str
    ticket_body: str
    issue_number: int = 1
    ticket_author: str = "reporter"
    ticket_created: datetime | None = None
    base: str | None = None
    """Default: the fix's first parent."""
    at: datetime | None = None
    setup: list[str] = field(default_factory=list)
    command: str | None = None
    registry_index: Path | None = None
    docs_index: Path | None = None


def _date(repo: Path, rev: str) -> datetime:
    return datetime.fromisoformat(gitrepo.run(repo, "log", "-1", "--format=%aI", rev))


def spec_from_fix(case_id: str, src: FixSource) -> CaseSpec:
    """Everything but the measured test lists, read off the fix."""
    repo = src.repo.resolve()
    fix = gitrepo.run(repo, "rev-parse", "--verify", f"{src.fix}^{{commit}}")
    base = gitrepo.run(repo, "rev-parse", "--verify", f"{src.base or fix + '^'}^{{commit}}")
    diff = gitrepo.run(repo, "diff", "--binary", "--full-index", base, fix) + "\n"
    gold, tests = split_fix(diff)
    if not tests.strip():
        raise InputError(repo, f"{src.fix}: the fix changes no test file; nothing to grade with")
    if not gold.strip():
        raise InputError(repo, f"{src.fix}: the fix changes only tests; there is no gold patch")
    commits = gitrepo.run(repo, "rev-list", "--reverse", f"{base}..{fix}").split()
    first = min(_date(repo, c) for c in commits)
    created = src.ticket_created or first
    # The ticket must exist at T; the first commit must not.
    at = src.at or min(created, first - timedelta(seconds=1))
    floor = latest_history_date(repo, base)
    if at < floor:
        raise InputError(
            repo,
            f"T ({at.isoformat()}) is before the base commit's history ends "
            f"({floor.isoformat()}); choose a later --at",
        )
    command = src.command or f"{DEFAULT_COMMAND} {' '.join(test_files(tests))}".strip()
    subject = gitrepo.run(repo, "log", "-1", "--format=%s", fix)
    return CaseSpec(
        id=case_id,
        repo=repo,
        repo_name=src.repo_name,
        base=base,
        gold=gold,
        tests=tests,
        ticket=TicketSpec(
            src.issue_number, src.ticket_title, src.ticket_body, src.ticket_author, min(created, at)
        ),
        at=at,
        setup=src.setup,
        command=command,
        pr_title=subject,
        registry_index=src.registry_index,
        docs_index=src.docs_index,
    )


def create_case(
    case_id: str, src: FixSource, out: Path, runtime: Runtime, repeats: int = MIN_REPEATS
) -> tuple[Path, TestLists]:
    """Write the case under ``out`` and measure its test lists in the environment image."""
    spec = spec_from_fix(case_id, src)
    path, _ = write_case_dir(spec, out)
    lists = measure(path, runtime, repeats)
    if not lists.fail_to_pass:
        raise InputError(path, "no test fails before the gold patch and passes after it")
    write_lists(path, lists)
    return path, lists


_CLOSES = re.compile(r"(?i)\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\s+#(\d+)")


def fix_source_from_pr(
    reader: GitHubReader, git_url: str, token: str, repo: str, number: int, clone: Path
) -> FixSource:
    """A merged pull request on GitHub as a fix: base = the merge base of its base and head,
    fix = its head; the ticket is the issue its body closes (else the PR itself). The first
    commit's date (for T) is read from the clone by :func:`spec_from_fix`."""
    pr = reader.get(f"/repos/{repo}/pulls/{number}")
    if not pr.get("merged_at"):
        raise InputError(Path(f"{repo}#{number}"), "the pull request was not merged")
    m = _CLOSES.search(pr.get("body") or "")
    ticket = reader.get(f"/repos/{repo}/issues/{m.group(1)}") if m else pr
    basic = base64.b64encode(f"x-access-token:{token}".encode()).decode()
    gitrepo.run(
        clone.parent, "-c", f"http.extraHeader=Authorization: Basic {basic}", "clone", "-q",
        "--no-tags", f"{git_url.rstrip('/')}/{repo}.git", str(clone),
    )  # fmt: skip
    head = pr["head"]["sha"]
    gitrepo.run(clone, "cat-file", "-e", f"{head}^{{commit}}")
    base = gitrepo.run(clone, "merge-base", pr["base"]["sha"], head)
    created = datetime.fromisoformat(ticket["created_at"].replace("Z", "+00:00"))
    return FixSource(
        repo=clone,
        fix=head,
        base=base,
        repo_name=repo,
        ticket_title=ticket["title"],
        ticket_body=ticket.get("body") or "",
        issue_number=int(ticket["number"]),
        ticket_author=(ticket.get("user") or {}).get("login", "reporter"),
        ticket_created=created,
    )


__all__ = ["FixSource", "create_case", "fix_source_from_pr", "spec_from_fix"]
