"""The miners: each reads a :class:`~replay.mine.history.History` and names the candidate cases
of one kind, each with the evidence that picked it (commits, pull requests, dates, replies).

Kinds (``docs/mine.md`` says what each looks for and where it falls short):

- ``plain``: a merged fix that closes a ticket and changes tests beside the code;
- ``fix-that-broke``: a fix reverted later, or followed within N days by a fix that rewrote
  lines it wrote;
- ``loop``: a ticket with several pull requests closed unmerged before the one that landed;
- ``rescue``: a human's reply in a thread of the work, after which the next push took back
  lines the earlier pushes wrote;
- ``test-optimiser``: a change that weakened tests (an assertion removed, a test skipped) and
  a later change that restored them.

A fix can fit several kinds; it is listed under the most specific one only (the order above,
reversed), since all would build the same case.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal

from replay.mine.history import Commit, History, Post, Pull, closed_refs

Kind = Literal["plain", "fix-that-broke", "loop", "rescue", "test-optimiser"]
KINDS: tuple[Kind, ...] = ("plain", "fix-that-broke", "loop", "rescue", "test-optimiser")


@dataclass(frozen=True)
class Candidate:
    """A fix worth a case, and why."""

    id: str
    """A case id proposed for it (``loop-27``)."""
    kind: Kind
    reason: str
    """What was found, for a reader: shas, pull request numbers, people and dates."""
    base: str
    """The commit the case starts from (the fix's first commit's parent)."""
    fix: str
    """The last commit of the answer (for a fix that broke: the later fix's)."""
    fixed_at: datetime
    ticket: str | None = None
    """The ticket (``#27``, ``ENG-17``), if the fix closes one."""
    pull: int | None = None
    """The pull request that landed the fix, if any."""
    attempts: tuple[int, ...] = ()
    """``loop``: the pull requests closed unmerged before it."""
    hints: tuple[Post, ...] = ()
    """``rescue``: the replies that changed the course of the work."""
    reverted_by: str | None = None
    """``fix-that-broke``: the commit that reverted the fix, if it was reverted."""
    later: tuple[str, ...] = field(default=())
    """``fix-that-broke``, ``test-optimiser``: the later commits whose tests join the case."""

    def as_dict(self) -> dict[str, Any]:
        """The candidate as JSON-ready data (``--json``, ``mined.json``)."""
        data = dataclasses.asdict(self)
        data["fixed_at"] = self.fixed_at.isoformat()
        data["hints"] = [{**dataclasses.asdict(h), "at": h.at.isoformat()} for h in self.hints]
        return data


def _day(when: datetime) -> str:
    return when.strftime("%Y-%m-%d %H:%M")


def _pull_of(history: History, sha: str) -> Pull | None:
    for pull in history.pulls:
        if pull.merged and any(c.sha == sha for c in history.pull_commits(pull)):
            return pull
    return None


def _fixes(history: History) -> list[tuple[list[Commit], Pull | None, tuple[str, ...]]]:
    """Every landed change: ``(its commits, its pull request, the tickets it closes)`` for each
    merged pull request, and each commit pushed to the branch outside any."""
    out: list[tuple[list[Commit], Pull | None, tuple[str, ...]]] = []
    seen: set[str] = set()
    for pull in sorted(history.pulls, key=lambda p: p.merged_at or p.created_at):
        commits = history.pull_commits(pull) if pull.merged else []
        if commits:
            out.append((commits, pull, pull.closes))
            seen |= {c.sha for c in commits}
    for c in history.commits:
        if c.sha not in seen and c.changes:
            out.append(([c], None, closed_refs(f"{c.subject}\n{c.body}")))
    out.sort(key=lambda item: item[0][-1].date)
    return out


def _what(commits: list[Commit], pull: Pull | None) -> str:
    last = commits[-1]
    if pull is not None:
        return f"PR #{pull.number} ({pull.author}, merged {_day(pull.merged_at or last.date)})"
    return f"{last.short} ({last.author}, {_day(last.date)})"


def _files(commits: list[Commit], tests: bool) -> str:
    paths = sorted({ch.path for c in commits for ch in c.changes if ch.is_test == tests})
    return ", ".join(paths)


def _parent(history: History, commit: Commit) -> str | None:
    index = next(i for i, c in enumerate(history.commits) if c.sha == commit.sha)
    return history.commits[index - 1].sha if index > 0 else None


def plain(history: History) -> list[Candidate]:
    """Merged fixes that close a ticket and change tests beside the code."""
    found = []
    for commits, pull, closes in _fixes(history):
        base = _parent(history, commits[0])
        if not closes or base is None:
            continue
        if not any(c.changes_tests for c in commits) or not any(c.changes_code for c in commits):
            continue
        key = pull.number if pull is not None else commits[-1].short
        found.append(
            Candidate(
                id=f"plain-{key}",
                kind="plain",
                reason=f"{_what(commits, pull)} closes {', '.join(closes)} and changes tests "
                f"({_files(commits, True)}) beside the code ({_files(commits, False)})",
                base=base,
                fix=commits[-1].sha,
                fixed_at=commits[-1].date,
                ticket=closes[0],
                pull=pull.number if pull is not None else None,
            )
        )
    return found


_REVERTS = re.compile(r"This reverts commit ([0-9a-f]{7,40})")


def _is_fix(closes: tuple[str, ...], commits: list[Commit]) -> bool:
    """A fix: it closes a ticket, or its message says it fixes something."""
    return bool(closes) or any(re.search(r"(?i)\bfix", c.subject) for c in commits)


def fix_that_broke(history: History, days: int = 14) -> list[Candidate]:
    """Fixes reverted later, or followed within ``days`` by a fix that rewrote their lines."""
    found = []
    fixes = _fixes(history)
    for i, (commits, pull, closes) in enumerate(fixes):
        base = _parent(history, commits[0])
        if base is None or not any(c.changes_code for c in commits):
            continue
        shas = {c.sha for c in commits}
        key = pull.number if pull is not None else commits[-1].short
        what = _what(commits, pull)
        for later, later_pull, later_closes in fixes[i + 1 :]:
            last = later[-1]
            m = _REVERTS.search(last.body)
            reverted = (m is not None and any(s.startswith(m.group(1)) for s in shas)) or any(
                last.subject == f'Revert "{c.subject}"' for c in commits
            )
            rewrites = any(shas & c.rewrites for c in later)
            soon = last.date - commits[-1].date <= timedelta(days=days)
            if reverted:
                found.append(
                    Candidate(
                        id=f"reverted-{key}",
                        kind="fix-that-broke",
                        reason=f"{what} was reverted by {last.short} ({last.author}, "
                        f"{_day(last.date)}): {last.subject!r}",
                        base=base,
                        fix=commits[-1].sha,
                        fixed_at=commits[-1].date,
                        ticket=closes[0] if closes else None,
                        pull=pull.number if pull is not None else None,
                        reverted_by=last.sha,
                    )
                )
                break
            if rewrites and soon and _is_fix(closes, commits) and _is_fix(later_closes, later):
                by = f"PR #{later_pull.number}" if later_pull is not None else last.short
                closing = f" (closes {', '.join(later_closes)})" if later_closes else ""
                found.append(
                    Candidate(
                        id=f"broke-{key}",
                        kind="fix-that-broke",
                        reason=f"{what}{' closes ' + ', '.join(closes) if closes else ''}; "
                        f"{(last.date - commits[-1].date).days} day(s) later {by}{closing} "
                        f"rewrote lines it wrote ({last.short}, {_day(last.date)}: "
                        f"{last.subject!r})",
                        base=base,
                        fix=last.sha,
                        fixed_at=last.date,
                        ticket=closes[0] if closes else None,
                        pull=pull.number if pull is not None else None,
                        later=tuple(c.sha for c in later),
                    )
                )
                break
    return found


def loop(history: History, attempts: int = 2) -> list[Candidate]:
    """Tickets with at least ``attempts`` pull requests closed unmerged before one landed."""
    found = []
    for pull in history.pulls:
        commits = history.pull_commits(pull) if pull.merged else []
        if not commits or not pull.closes:
            continue
        base = _parent(history, commits[0])
        ticket = pull.closes[0]
        failed = [
            p
            for p in history.pulls
            if ticket in p.closes and not p.merged and p.closed_at is not None
            and p.created_at < pull.created_at
        ]  # fmt: skip
        if len(failed) < attempts or base is None:
            continue
        failed.sort(key=lambda p: p.created_at)
        tried = ", ".join(
            f"#{p.number} ({p.author}{', the agent' if p.agent else ''}, closed unmerged "
            f"{_day(p.closed_at or p.created_at)})"
            for p in failed
        )
        found.append(
            Candidate(
                id=f"loop-{ticket.lstrip('#').lower()}",
                kind="loop",
                reason=f"{ticket}: {len(failed)} pull requests closed unmerged, {tried}, "
                f"before {_what(commits, pull)} landed",
                base=base,
                fix=commits[-1].sha,
                fixed_at=commits[-1].date,
                ticket=ticket,
                pull=pull.number,
                attempts=tuple(p.number for p in failed),
            )
        )
    return found


def _posts_around(history: History, pull: Pull) -> list[Post]:
    """Every post in the work's threads: the pull request's, its tickets', and the Slack
    threads that name the pull request or its tickets."""
    refs = {f"{history.repo_name}/pull/{pull.number}", *(r for r in pull.closes if "-" in r)}
    refs |= {f"{history.repo_name}{r}" for r in pull.closes if r.startswith("#")}
    posts = list(pull.posts)
    for ref in pull.closes:
        if ref in history.tickets:
            posts += history.tickets[ref].posts
    for thread in history.threads_about(refs):
        posts += thread.posts
    return sorted(posts, key=lambda p: p.at)


def rescue(history: History) -> list[Candidate]:
    """Pull requests whose next push, after a human's reply in a thread of the work, took back
    lines their earlier pushes wrote."""
    found = []
    for pull in history.pulls:
        commits = history.pull_commits(pull) if pull.merged else []
        base = _parent(history, commits[0]) if commits else None
        if len(commits) < 2 or base is None:
            continue
        posts = _posts_around(history, pull)
        for i in range(1, len(commits)):
            before, after = commits[i - 1], commits[i]
            earlier = {c.sha for c in commits[:i]}
            if not (after.rewrites & earlier):
                continue
            hints = [
                p
                for p in posts
                if not p.agent and p.name != pull.author and before.date < p.at < after.date
            ]
            if not hints:
                continue
            hint = hints[-1]
            taken = sorted(c.short for c in commits[:i] if c.sha in after.rewrites)
            found.append(
                Candidate(
                    id=f"rescue-{pull.number}",
                    kind="rescue",
                    reason=f"PR #{pull.number} ({pull.author}"
                    f"{', the agent' if pull.agent else ''}"
                    f"{' for ' + ', '.join(pull.closes) if pull.closes else ''}): "
                    f"{hint.name} replied in {hint.where} at {_day(hint.at)} "
                    f"({_quote(hint.text)}), and the next push {after.short} "
                    f"({_day(after.date)}) took back lines of {', '.join(taken)}",
                    base=base,
                    fix=commits[-1].sha,
                    fixed_at=commits[-1].date,
                    ticket=pull.closes[0] if pull.closes else None,
                    pull=pull.number,
                    hints=tuple(hints),
                )
            )
            break
    return found


def _quote(text: str, words: int = 12) -> str:
    parts = text.split()
    return '"' + " ".join(parts[:words]) + (' ..."' if len(parts) > words else '"')


_SKIP = re.compile(
    r"@pytest\.mark\.(?:skip|xfail)\b|\bpytest\.(?:skip|xfail)\(|@unittest\.skip"
    r"|\b(?:it|test|describe)\.skip\(|^\s*x(?:it|describe)\(|\bt\.Skip\(|#\[ignore\]"
)
_CHECK = re.compile(r"\bassert\b|pytest\.raises|\bexpect\(|self\.assert\w+\(|\bt\.(?:Error|Fatal)")


def weakened(commit: Commit) -> tuple[list[str], list[str]]:
    """``(skips added, checks removed)`` in the commit's test files: lines that turn a test
    off, and assertion lines removed and not put back elsewhere in the commit."""
    skips: list[str] = []
    checks: list[str] = []
    for ch in commit.changes:
        if not ch.is_test:
            continue
        added = {line.strip() for line in ch.added}
        skips += [line.strip() for line in ch.added if _SKIP.search(line)]
        checks += [
            line.strip() for line in ch.removed if _CHECK.search(line) and line.strip() not in added
        ]
        if re.search(r"(?m)^def test_", "\n".join(ch.removed)) and not ch.added:
            checks.append(f"(tests deleted from {ch.path})")
    return skips, checks


def optimiser(history: History) -> list[Candidate]:
    """Changes that weakened tests, and the later change that restored them."""
    found = []
    fixes = _fixes(history)
    for i, (commits, pull, closes) in enumerate(fixes):
        base = _parent(history, commits[0])
        if base is None:
            continue
        skips, checks = [], []
        for c in commits:
            s, k = weakened(c)
            skips += s
            checks += k
        if not (skips or checks):
            continue
        shas = {c.sha for c in commits}
        key = pull.number if pull is not None else commits[-1].short
        for later, later_pull, _ in fixes[i + 1 :]:
            removed = {
                ln.strip() for c in later for ch in c.changes if ch.is_test for ln in ch.removed
            }
            added = {ln.strip() for c in later for ch in c.changes if ch.is_test for ln in ch.added}
            unskipped = (
                [s for s in skips if s in removed] if any(shas & c.rewrites for c in later) else []
            )
            restored = [k for k in checks if k in added]
            if not (unskipped or restored):
                continue
            last = later[-1]
            by = f"PR #{later_pull.number}" if later_pull is not None else last.short
            what = "; ".join(
                [*(f"added {s!r}" for s in skips), *(f"removed {k!r}" for k in checks)]
            )
            found.append(
                Candidate(
                    id=f"weakened-{key}",
                    kind="test-optimiser",
                    reason=f"{_what(commits, pull)}"
                    f"{' closes ' + ', '.join(closes) if closes else ''} and weakened its "
                    f"tests ({what}); {by} ({last.short}, {_day(last.date)}) restored them",
                    base=base,
                    fix=last.sha,
                    fixed_at=last.date,
                    ticket=closes[0] if closes else None,
                    pull=pull.number if pull is not None else None,
                    later=tuple(c.sha for c in later),
                )
            )
            break
    return found


@dataclass(frozen=True)
class MineOptions:
    days: int = 14
    """``fix-that-broke``: how soon a later fix of the same lines counts."""
    attempts: int = 2
    """``loop``: how many pull requests closed unmerged make a loop."""
    since: datetime | None = None
    """Only fixes that landed at or after this time."""
    kinds: tuple[Kind, ...] = KINDS


def mine(history: History, options: MineOptions | None = None) -> list[Candidate]:
    """Every candidate, most specific kind first for a fix that fits several, oldest first."""
    o = options or MineOptions()
    runs: list[tuple[Kind, list[Candidate]]] = [
        ("test-optimiser", optimiser(history)),
        ("rescue", rescue(history)),
        ("loop", loop(history, o.attempts)),
        ("fix-that-broke", fix_that_broke(history, o.days)),
        ("plain", plain(history)),
    ]
    order = [c.sha for c in history.commits]
    taken: set[str] = set()
    out: list[Candidate] = []
    for kind, found in runs:
        for c in found:
            # A fix that a more specific kind's case already holds (its base to its fix).
            if c.fix in taken:
                continue
            taken |= set(order[order.index(c.base) + 1 : order.index(c.fix) + 1])
            if kind in o.kinds and (o.since is None or c.fixed_at >= o.since):
                out.append(c)
    return sorted(out, key=lambda c: c.fixed_at)
