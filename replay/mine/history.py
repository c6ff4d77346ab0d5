"""What the miners read: a repository's commits from a local clone, and the threads around them
(pull requests, tickets, Slack threads) as plain records.

The records are deliberately small and service-neutral: a detector asks "who said what, where,
when" and "which lines did this commit take back", never how GitHub or Linear spell it. The
readers that fill them from the services live in :mod:`replay.mine.read`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from replay.base import gitrepo
from replay.casebuild.patches import is_test_path

_CLOSES = re.compile(
    r"(?i)\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\s*:?\s+(#\d+|[A-Z][A-Z0-9]*-\d+)\b"
)


def closed_refs(text: str) -> tuple[str, ...]:
    """The tickets a pull request or commit message says it closes (``#12``, ``ENG-7``)."""
    found: list[str] = []
    for m in _CLOSES.finditer(text or ""):
        ref = m.group(1)
        ref = ref if ref.startswith("#") else ref.upper()
        if ref not in found:
            found.append(ref)
    return tuple(found)


@dataclass(frozen=True)
class FileChange:
    """One file of a commit's diff against its first parent."""

    path: str
    added: tuple[str, ...] = ()
    """The added lines' text (without the leading ``+``)."""
    removed: tuple[str, ...] = ()

    @property
    def is_test(self) -> bool:
        return is_test_path(self.path)


@dataclass(frozen=True)
class Commit:
    sha: str
    author: str
    """The author's name as git has it."""
    date: datetime
    """The author date."""
    subject: str
    body: str = ""
    changes: tuple[FileChange, ...] = ()
    rewrites: frozenset[str] = frozenset()
    """Earlier commits some of whose lines this commit removes or replaces (by blame)."""

    @property
    def short(self) -> str:
        return self.sha[:7]

    @property
    def changes_tests(self) -> bool:
        return any(c.is_test for c in self.changes)

    @property
    def changes_code(self) -> bool:
        return any(not c.is_test for c in self.changes)


@dataclass(frozen=True)
class Post:
    """A message in a thread: a comment, a review, a Slack message."""

    service: str
    """``github``, ``linear`` or ``slack``."""
    where: str
    """The thread: ``owner/name#12``, ``ENG-7`` or ``#channel/<ts>``."""
    person: str
    """Who, as the service names them (a login, a Linear user id, a Slack user id)."""
    name: str
    """Who, for a reader (a login, a display name)."""
    at: datetime
    text: str
    agent: bool
    """Written by the agent (a bot account, or one given as the agent's)."""


@dataclass(frozen=True)
class Pull:
    number: int
    title: str
    body: str
    author: str
    agent: bool
    created_at: datetime
    closed_at: datetime | None
    merged_at: datetime | None
    head_sha: str
    base_sha: str
    merge_commit: str | None
    closes: tuple[str, ...]
    """Tickets its title or body closes (``#12``, ``ENG-7``)."""
    posts: tuple[Post, ...] = ()

    @property
    def merged(self) -> bool:
        return self.merged_at is not None


@dataclass(frozen=True)
class Ticket:
    ref: str
    """``#12`` for a GitHub issue, ``ENG-7`` for a Linear issue."""
    service: str
    title: str
    body: str
    author: str
    created_at: datetime
    posts: tuple[Post, ...] = ()


@dataclass(frozen=True)
class SlackThread:
    channel: str
    """The channel's id."""
    channel_name: str
    ts: str
    """The parent message's ts."""
    posts: tuple[Post, ...]
    """The parent first, then the replies, oldest first."""

    @property
    def ref(self) -> str:
        return f"#{self.channel_name}/{self.ts}"


@dataclass
class History:
    """A repository's history: its default branch's commits and the threads around them."""

    repo_name: str
    """``owner/name`` on GitHub."""
    clone: Path
    branch: str
    commits: list[Commit]
    """Oldest first."""
    pulls: list[Pull] = field(default_factory=list)
    tickets: dict[str, Ticket] = field(default_factory=dict)
    threads: list[SlackThread] = field(default_factory=list)

    def commit(self, sha: str) -> Commit | None:
        return next((c for c in self.commits if c.sha == sha), None)

    def pull_commits(self, pull: Pull) -> list[Commit]:
        """The merged pull request's commits on the branch: its head's own commits when the
        head is on the branch (a rebase or merge), else the merge (squash) commit alone."""
        index = {c.sha: i for i, c in enumerate(self.commits)}
        if pull.head_sha in index and pull.base_sha in index:
            return self.commits[index[pull.base_sha] + 1 : index[pull.head_sha] + 1]
        if pull.merge_commit in index:
            return [self.commits[index[pull.merge_commit]]]
        return []

    def threads_about(self, refs: set[str]) -> list[SlackThread]:
        """Slack threads whose messages mention any of ``refs`` (a ticket, a PR's URL)."""
        return [t for t in self.threads if any(r in p.text for p in t.posts for r in refs)]


def read_commits(clone: Path, branch: str, since: datetime | None = None) -> list[Commit]:
    """The first-parent history of ``branch`` in ``clone``, oldest first, each with its diff's
    lines and the earlier commits whose lines it takes back (``git blame`` on its parent)."""
    fmt = "%H%x1f%an%x1f%aI%x1f%s%x1f%b%x1e"
    out = gitrepo.run_exact(clone, "log", "--first-parent", "--reverse", f"--format={fmt}", branch)
    commits = []
    for record in out.split("\x1e"):
        record = record.strip("\n")
        if not record:
            continue
        sha, author, date, subject, body = record.split("\x1f")
        when = datetime.fromisoformat(date)
        if since is not None and when < since:
            commits.append(Commit(sha, author, when, subject, body.strip()))
            continue
        changes, hunks = _diff(clone, sha)
        commits.append(
            Commit(sha, author, when, subject, body.strip(), changes, _blame(clone, sha, hunks))
        )
    return commits


_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@")


def _diff(clone: Path, sha: str) -> tuple[tuple[FileChange, ...], dict[str, list[tuple[int, int]]]]:
    """The commit's changes against its first parent, and per file the parent's line ranges
    its hunks remove (``(start, count)``)."""
    parent = f"{sha}^" if gitrepo.resolve(clone, f"{sha}^") else _empty_tree(clone)
    text = gitrepo.run_exact(clone, "diff", "-U0", "--no-renames", parent, sha)
    changes: list[FileChange] = []
    hunks: dict[str, list[tuple[int, int]]] = {}
    path, added, removed = "", [], []  # type: ignore[var-annotated]
    old_path = ""

    def flush() -> None:
        if path:
            changes.append(FileChange(path, tuple(added), tuple(removed)))

    for line in text.splitlines():
        if line.startswith("diff --git "):
            flush()
            path, added, removed, old_path = line.split(" b/", 1)[-1], [], [], ""
        elif line.startswith("--- "):
            old_path = line[6:] if line.startswith("--- a/") else ""
        elif line.startswith("+++ "):
            continue
        elif line.startswith("@@"):
            m = _HUNK.match(line)
            if m and old_path and int(m.group(2) or 1) > 0:
                hunks.setdefault(old_path, []).append((int(m.group(1)), int(m.group(2) or 1)))
        elif line.startswith("+"):
            added.append(line[1:])
        elif line.startswith("-"):
            removed.append(line[1:])
    flush()
    return tuple(changes), hunks


def _empty_tree(clone: Path) -> str:
    return gitrepo.run(clone, "hash-object", "-t", "tree", "/dev/null")


def _blame(clone: Path, sha: str, hunks: dict[str, list[tuple[int, int]]]) -> frozenset[str]:
    found: set[str] = set()
    for path, ranges in hunks.items():
        spans = [f"-L{start},{start + count - 1}" for start, count in ranges]
        out = gitrepo.run(clone, "blame", "--porcelain", *spans, f"{sha}^", "--", path)
        found |= {
            line.split()[0] for line in out.splitlines() if re.match(r"^[0-9a-f]{40} \d+ \d+", line)
        }
    return frozenset(found)
