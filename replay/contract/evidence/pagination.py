"""The fakes' pagination held to what the vendors publish about it: every paginated list the
fakes serve is walked page by page to its end on a world seeded with more items than a small
page holds, and each walk is judged against the vendor's word on how its pages behave.

One family, ``pagination``, in four reports, each on the evidence its checks rest on:

- **GitHub REST** (``octokit-fixtures``: octokit's ``paginate-issues`` recording of real
  api.github.com traffic, whose ``Link`` headers show page 1 with ``next`` and ``last``, the
  pages between with ``prev``, ``next``, ``last``, ``first``, the last page with ``prev`` and
  ``first`` only, ``per_page`` and ``page`` in each URL, full pages but the last, newest issue
  first). One check per list GitHub pages (a ``GET`` of the fake whose operation takes
  ``per_page`` in GitHub's OpenAPI description, as githubkit generates it, and the legacy
  ``/statuses/{ref}``), walked at ``per_page=2`` by following ``rel="next"``; the three such
  operations that page *inside an object* (a commit's files, a combined status's statuses,
  check runs) are not walked and are named on the headline (:data:`NOT_LISTS`). One more
  check on a repository with 105 labels for ``per_page``'s default (30) and maximum (100, a
  larger one served as 100), as GitHub's REST docs give them.
- **GitHub GraphQL** (``github-graphql-schema``: ``PageInfo``, "When paginating forwards, are
  there more items?" / "the cursor to continue", ``first``: "Returns the first _n_ elements",
  and ``LabelOrder``'s default ``{field: CREATED_AT, direction: ASC}``). One check per
  connection field the fake's SDL serves, walked at ``first: 2`` (``first: 1`` for a commit's
  two parents and its one author) by ``after: endCursor``; GitHub's
  GraphQL guide (not vendored) puts ``first``/``last`` between 1 and 100, so ``first: 100`` must
  hold the whole list and ``first: 101`` and ``last: 101`` must be refused with an error.
- **Linear** (``linear-sdk``: the SDK's schema, ``PageInfo`` "Indicates if there are more
  results when paginating forward", ``first``: "Defaults to 50", ``orderBy``: "createdAt
  (default)"). One check per connection field the fake's SDL serves, walked at ``first: 2``
  (``first: 14`` for the 55 labels); ``first: 250`` (the fake's maximum; Linear's docs, not
  vendored) must hold the whole list; on ``Query.issueLabels`` no ``first`` gives 50.
- **Slack** (``slack-api-specs``: ``cursor`` "Set ``cursor`` to ``next_cursor`` returned by the
  previous call", ``limit`` "The maximum number of items to return. Fewer than the requested
  number of items may be returned", ``conversations.list``'s limit "no larger than 1000",
  ``users.list`` without ``limit`` "the entire result set", ``search.messages``' ``count``
  "Maximum of 100"). One check per method of the fake that the spec pages (by ``cursor`` or
  by ``count``/``page``), walked at ``limit=2`` (``count=2``).

Every walk follows the vendor's own continuation (``rel="next"``, ``endCursor``,
``next_cursor``, the next ``page``) until a page says it is the last, and checks: each seeded
item exactly once; the order (below); every page at most the size asked for, and for GitHub
and Linear every page but the last exactly that size and no empty page after one that said
there was more (GitHub's guides: "Each page contains the number of items specified ...
unless it is the last page"; Slack may send fewer); each page's own signals (REST: ``next``
and ``last`` only while there are more, ``prev`` and ``first`` exactly after page 1, each
rel's ``page`` and ``per_page`` right; GraphQL: ``endCursor``/``startCursor`` the cursors of
the page's last/first edges, ``null`` on an empty page, ``nodes`` the edges' nodes,
``totalCount`` the list's length where the type has it; Slack: ``has_more`` agreeing with
``next_cursor`` where the method has it); that the walk ends within a bound (more pages than
the seeded list needs plus three, or a cursor or URL handed out a second time, is reported
and the walk stopped, never waited on); and that one page of the documented maximum holds the
whole list, in the walk's order, and says it is the last. A list the fakes serve that is not
walked here (a route GitHub pages, a connection field of a fake's SDL, a method the Slack spec
pages) fails as such, so the family cannot fall behind the fakes.

The order checked: *exact* where the vendor documents it (GitHub REST: issues and pulls
newest first, as ``sort=created&direction=desc`` are the defaults and octokit's recording
shows; issue and review comments by ascending id and reviews chronological, statuses newest
first, as GitHub's OpenAPI description says; GraphQL ``labels`` by ``LabelOrder``'s default,
creation order; Slack ``conversations.history`` newest first and ``conversations.replies``
the parent then its replies oldest first, as Slack's method docs say); for Linear, sorted by
``createdAt`` one way or the other throughout (the schema names it the default order and gives
no direction); elsewhere the order is undocumented and the walk must give the order of one
whole page (stable pages).

The world is built here (a snapshot in a temporary directory, built once per process) and
served afresh per run; what the snapshot format cannot hold (commit statuses, a review with
line comments, more branches) is made through the fakes' own APIs before the walks. Lists
the fakes model as empty (GitHub's watchers, project cards, review requests, reaction users;
Linear's label children and delegated issues) are walked as empty: one page that says it is
the last, with null cursors.

Known gaps would live in each evidence directory's ``gaps.json`` with a subject naming one of
this family's checks (only those are applied here); none is needed at present. The other
family reading the same file would report such a gap as stale (it matches none of its checks)
until it, too, keeps to the gaps naming its own subjects.
"""

from __future__ import annotations

import atexit
import importlib
import inspect
import json
import math
import pkgutil
import re
import shutil
import subprocess
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from fnmatch import fnmatchcase
from functools import cache
from itertools import pairwise
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import yaml
from graphql import GraphQLObjectType, GraphQLSchema, get_named_type

from fakes.core.server import build_world
from replay.base.gitrepo import clean_env
from replay.base.snapshot import load_snapshot
from replay.contract.evidence import (
    EVIDENCE,
    Check,
    KnownGap,
    Report,
    Service,
    Source,
    apply_gaps,
    load_gaps,
    load_source,
)
from replay.contract.schema import graphql_schema
from replay.contract.targets import (
    FAKE_TOKENS,
    ContractSetupError,
    ServiceApp,
    Wrap,
    close_world,
    serve_asgi,
)

FAMILY = "pagination"
SMALL = 2
"""The page size of the walks."""

OCTOKIT_DIR = EVIDENCE / "octokit-fixtures"
GITHUB_GRAPHQL_DIR = EVIDENCE / "github-graphql-schema"
LINEAR_DIR = EVIDENCE / "linear-sdk"
SLACK_DIR = EVIDENCE / "slack-api-specs"

REST_MAX = 100
"""GitHub REST's ``per_page`` maximum (its REST docs: "The number of results per page (max
100)"); 30 is the default."""
REST_DEFAULT = 30
GITHUB_GRAPHQL_MAX = 100
"""GitHub's GraphQL guide: "The value of these arguments must be between 1 and 100"."""
LINEAR_MAX = 250
"""The fake's ``first``/``last`` maximum (Linear's pagination docs; the SDK schema states only
the default)."""
LINEAR_DEFAULT = 50
"""The SDK schema's ``first``: "Defaults to 50"."""
SLACK_WHOLE = 1000
"""The page that must hold a whole Slack list: ``conversations.list``'s documented maximum
("no larger than 1000"); the spec states no maximum for the other cursor methods."""
SLACK_SEARCH_MAX = 100
"""``search.messages``' ``count``: "Maximum of `100`"."""


# =========================================================================== the world

AT = datetime(2026, 2, 1, 12, 0, tzinfo=UTC)
"""The seeded world's T; everything in it is dated before."""


def _before(hours: float) -> datetime:
    return AT - timedelta(hours=hours)


def _iso(at: datetime) -> str:
    return at.isoformat().replace("+00:00", "Z")


# ---- GitHub
OWNER, NAME = "acme", "pages"
REPO = f"{OWNER}/{NAME}"
BIG = "many"
"""A second repository, with :data:`BIG_LABELS` labels: ``per_page``'s default and maximum."""
BIG_LABELS = 105
VIEWER = "octo"
PEOPLE = ("octo", "ada", "bo", "cy", "di", "ed", "flo")
LABELS = ("zeta", "alpha", "mu", "beta", "omega", "delta", "kappa")
"""In creation order, which is not their names' order."""
ISSUES = tuple(range(1, 8))
PULLS = tuple(range(8, 14))
RICH_ISSUE = 1
"""The issue carrying the nested lists: every label, every person assigned, 7 comments and
7 events."""
RICH_PULL = 8
"""The pull request carrying the nested lists: 5 commits touching 5 files, 6 labels, 6
assignees, 6 comments, 7 reviews (one of them with 6 line comments), 7 statuses."""
SHARED = "shared"
"""The head branch of pull requests #9 to #13 (four closed, one open)."""
FILES = tuple(f"f{i}.txt" for i in range(1, 6))
ISSUE_COMMENTS = tuple(range(7001, 7008))
PULL_COMMENTS = tuple(range(7101, 7107))
EVENTS = tuple(range(8001, 8008))
REVIEWERS = ("bo", "cy", "di", "ed", "flo", "octo")
REVIEWS = tuple(f"rv-{i}" for i in range(1, 8))
"""Six seeded reviews and a seventh made over the API with :data:`REVIEW_COMMENTS`."""
REVIEW_COMMENTS = tuple(f"rc-{i}" for i in range(1, 7))
STATUSES = tuple(f"ctx-{i}" for i in range(1, 8))
MADE_BRANCHES = ("br-1", "br-2", "br-3", "br-4")

# ---- Linear
L_TEAMS = ("ENG", "OPS", "DES", "MKT", "SAL", "SUP")
L_USERS = tuple(f"lu-{i}" for i in range(1, 7))
L_STATES = tuple(f"ls-{i}" for i in range(1, 8))
L_LABELS = tuple(f"ll-{i}" for i in range(1, 8))
L_FILLER = 48
"""Workspace labels beside :data:`L_LABELS`: 55 in all, more than the default page of 50."""
L_ISSUES = tuple(range(1, 8))
L_COMMENTS = tuple(f"lc-{i}" for i in range(1, 8))
L_REPLIES = tuple(f"lc-{i}" for i in range(8, 14))
WORD, SOLO = "walkword", "soloterm"
"""Every Linear issue's title has :data:`WORD`; only ENG-1's has :data:`SOLO`."""
L_HISTORY = tuple(f"{WORD} {SOLO} 1 v{i}" for i in range(1, 8))
"""ENG-1's later titles, one change each: its history (keyed by ``toTitle``)."""

# ---- Slack
S_BOT = "U0BOT"
S_USERS = (S_BOT, *(f"U0{i}" for i in range(1, 7)))
S_CHANNELS = tuple(f"C0{i}" for i in range(1, 7))
S_CHANNEL = S_CHANNELS[0]
NEEDLE = "needle"


def _ts(hours: float, micro: int = 0) -> str:
    at = _before(hours)
    return f"{int(at.timestamp())}.{micro:06d}"


S_MESSAGES = tuple(_ts(60 - i) for i in range(1, 8))
"""Top-level messages of :data:`S_CHANNEL`, oldest first; the third starts a thread."""
S_PARENT = S_MESSAGES[2]
S_REPLIES = tuple(_ts(60 - 3 - 0.1 * i, i) for i in range(1, 7))
"""Replies in the thread, oldest first (between the third and fourth messages)."""


def _git(repo: Path, *args: str, at: datetime | None = None) -> str:
    env: dict[str, str] = {
        "GIT_AUTHOR_NAME": "Ada",
        "GIT_AUTHOR_EMAIL": "ada@example.test",
        "GIT_COMMITTER_NAME": "Ada",
        "GIT_COMMITTER_EMAIL": "ada@example.test",
    }
    if at is not None:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = _iso(at)
    done = subprocess.run(
        ["git", *args], cwd=repo, env=clean_env(env), capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def _write_repository(work: Path, bundle: Path) -> dict[str, str]:
    """The repository's history: ``c0`` a README, ``c1``..``c5`` one of :data:`FILES` each
    (every one holding :data:`NEEDLE`), then a side branch merged back (``merge``: two
    parents). Its commits by name, and the bundle of ``main``."""
    work.mkdir()
    _git(work, "init", "-q", "-b", "main")
    shas: dict[str, str] = {}

    def commit(name: str, path: str, text: str, hours: float) -> None:
        (work / path).write_text(text)
        _git(work, "add", path)
        _git(work, "commit", "-q", "-m", f"Add {path}", at=_before(hours))
        shas[name] = _git(work, "rev-parse", "HEAD")

    commit("c0", "README.md", "# pages\n", 300)
    for i, path in enumerate(FILES, 1):
        commit(f"c{i}", path, f"{NEEDLE} {i}\nline two\n", 300 - i)
    _git(work, "checkout", "-q", "-b", "side")
    commit("c6", "side.txt", "side\n", 290)
    _git(work, "checkout", "-q", "main")
    commit("c7", "main.txt", "main\n", 289)
    _git(work, "merge", "-q", "--no-ff", "side", "-m", "Merge side", at=_before(288))
    shas["merge"] = _git(work, "rev-parse", "HEAD")
    _git(work, "bundle", "create", "-q", str(bundle), "refs/heads/main")
    return shas


def _github_state(shas: Mapping[str, str]) -> dict[str, Any]:
    users: list[dict[str, Any]] = [
        {"login": OWNER, "id": 900, "type": "Organization", "created_at": _iso(_before(900))}
    ]
    users += [
        {"login": p, "id": 1001 + i, "name": p.title(), "created_at": _iso(_before(800 - i))}
        for i, p in enumerate(PEOPLE)
    ]
    threads: list[dict[str, Any]] = []
    for n in (*ISSUES, *PULLS):
        closed = n in (2, 4, 6, 9, 10, 11, 12)
        thread: dict[str, Any] = {
            "repo": REPO,
            "number": n,
            "id": 3000 + n,
            "title": f"Thread {n}",
            "body": f"Body of {n}",
            "state": "closed" if closed else "open",
            "author": "ada",
            "created_at": _iso(_before(200 - n)),
            "updated_at": _iso(_before(200 - n)),
            "closed_at": _iso(_before(150 - n)) if closed else None,
        }
        if n in ISSUES and closed:
            thread["state_reason"] = "completed"
        if n in PULLS:
            thread.update(
                base_ref="main",
                base_sha=shas["c0"],
                head_ref="topic-8" if n == RICH_PULL else SHARED,
                head_sha=shas["c5"] if n == RICH_PULL else shas["c1"],
            )
        threads.append(thread)
    rich_issue = threads[RICH_ISSUE - 1]
    rich_issue["labels"] = list(LABELS)
    rich_issue["assignees"] = list(PEOPLE)
    rich_issue["comments"] = [
        {
            "id": cid,
            "author": PEOPLE[i % len(PEOPLE)],
            "body": f"comment {cid}",
            "created_at": _iso(_before(100 - i)),
            "updated_at": _iso(_before(100 - i)),
        }
        for i, cid in enumerate(ISSUE_COMMENTS)
    ]
    rich_issue["events"] = [
        {
            "id": eid,
            "event": "labeled",
            "actor": "ada",
            "label": LABELS[i],
            "created_at": _iso(_before(120 - i)),
        }
        for i, eid in enumerate(EVENTS)
    ]
    pull = threads[RICH_PULL - 1]
    pull["labels"] = list(LABELS[:6])
    pull["assignees"] = list(PEOPLE[:6])
    pull["comments"] = [
        {
            "id": cid,
            "author": PEOPLE[i],
            "body": f"comment {cid}",
            "created_at": _iso(_before(90 - i)),
            "updated_at": _iso(_before(90 - i)),
        }
        for i, cid in enumerate(PULL_COMMENTS)
    ]
    pull["reviews"] = [
        {
            "id": 9001 + i,
            "author": who,
            "state": "COMMENTED",
            "body": REVIEWS[i],
            "commit_id": shas["c5"],
            "submitted_at": _iso(_before(80 - i)),
        }
        for i, who in enumerate(REVIEWERS)
    ]
    repos = [
        {
            "owner": OWNER,
            "name": NAME,
            "id": 5000,
            "default_branch": "main",
            "created_at": _iso(_before(700)),
            "labels": [{"name": name} for name in LABELS],
        },
        {
            "owner": OWNER,
            "name": BIG,
            "id": 5001,
            "default_branch": "main",
            "created_at": _iso(_before(700)),
            "labels": [{"name": f"many-{i:03d}"} for i in range(BIG_LABELS)],
        },
    ]
    return {
        "viewer": VIEWER,
        "users": users,
        "repos": repos,
        "issues": [t for t in threads if t["number"] in ISSUES],
        "pulls": [t for t in threads if t["number"] in PULLS],
    }


def _linear_state() -> dict[str, Any]:
    teams = [
        {"id": f"lt-{i}", "key": key, "name": f"Team {key}", "created_at": _iso(_before(600 - i))}
        for i, key in enumerate(L_TEAMS, 1)
    ]
    users = [
        {
            "id": uid,
            "name": f"Person {i}",
            "display_name": f"person{i}",
            "email": f"person{i}@example.test",
            "created_at": _iso(_before(500 - i)),
        }
        for i, uid in enumerate(L_USERS, 1)
    ]
    kinds = ("backlog", "unstarted", "started", "started", "started", "completed", "canceled")
    states = [
        {"id": sid, "team": "ENG", "name": f"State {i}", "type": kinds[i - 1], "position": i}
        for i, sid in enumerate(L_STATES, 1)
    ]
    labels: list[dict[str, Any]] = [
        {"id": lid, "name": LABELS[i], "team": "ENG" if i < 4 else None}
        for i, lid in enumerate(L_LABELS)
    ]
    labels += [{"id": f"lf-{i:02d}", "name": f"filler-{i:02d}"} for i in range(L_FILLER)]
    issues: list[dict[str, Any]] = []
    for n in L_ISSUES:
        issue: dict[str, Any] = {
            "id": f"li-{n}",
            "team": "ENG",
            "number": n,
            "title": f"{WORD} {SOLO} {n}" if n == 1 else f"{WORD} {n}",
            "state": "ls-3",
            "assignee": "lu-2",
            "creator": "lu-3",
            "labels": list(L_LABELS) if n == 1 else [L_LABELS[1]],
            "parent": None if n == 1 else "li-1",
            "created_at": _iso(_before(400 - n)),
            "updated_at": _iso(_before(400 - n)),
        }
        issues.append(issue)
    first = issues[0]
    first["comments"] = [
        {
            "id": cid,
            "user": L_USERS[i % len(L_USERS)],
            "body": f"comment {cid}",
            "created_at": _iso(_before(300 - i)),
            "updated_at": _iso(_before(300 - i)),
        }
        for i, cid in enumerate(L_COMMENTS)
    ] + [
        {
            "id": cid,
            "user": L_USERS[i % len(L_USERS)],
            "body": f"reply {cid}",
            "parent": L_COMMENTS[0],
            "created_at": _iso(_before(250 - i)),
            "updated_at": _iso(_before(250 - i)),
        }
        for i, cid in enumerate(L_REPLIES)
    ]
    first["history"] = [  # the sources' timeline: each change becomes an IssueHistory node
        {"at": _iso(_before(350 - i)), "by": "lu-3", "set": {"title": title}}
        for i, title in enumerate(L_HISTORY)
    ]
    return {
        "viewer": L_USERS[0],
        "organization": {"id": "org-1", "name": "Walk", "url_key": "walk"},
        "teams": teams,
        "users": users,
        "workflow_states": states,
        "labels": labels,
        "issues": issues,
    }


def _slack_state() -> dict[str, Any]:
    users = [{"id": S_BOT, "name": "bot", "real_name": "Bot", "is_bot": True}]
    users += [{"id": u, "name": f"user{u[-1]}", "real_name": f"User {u[-1]}"} for u in S_USERS[1:]]
    messages: list[dict[str, Any]] = [
        {"ts": ts, "user": S_USERS[1 + i % 6], "text": f"{NEEDLE} {i + 1}"}
        for i, ts in enumerate(S_MESSAGES)
    ]
    messages += [
        {"ts": ts, "user": S_USERS[1 + i % 6], "text": f"reply {i + 1}", "thread_ts": S_PARENT}
        for i, ts in enumerate(S_REPLIES)
    ]
    channels = [
        {
            "id": cid,
            "name": f"walk-{i}",
            "created": int(_before(700 - i).timestamp()),
            "creator": S_USERS[1],
            "members": list(S_USERS) if cid == S_CHANNEL else [S_BOT, S_USERS[1]],
            "messages": sorted(messages, key=lambda m: str(m["ts"])) if cid == S_CHANNEL else [],
        }
        for i, cid in enumerate(S_CHANNELS, 1)
    ]
    return {
        "team": {"id": "T0WALK", "name": "Walk", "domain": "walk"},
        "bot_user": S_BOT,
        "users": users,
        "channels": channels,
    }


@dataclass(frozen=True)
class World:
    """The built snapshot and the repository's commits by name (:func:`_write_repository`)."""

    snapshot: Path
    shas: Mapping[str, str]


@cache
def build() -> World:
    """The seeded world's snapshot, built once per process in a temporary directory (removed
    at exit)."""
    from replay.snapshot import build_snapshot

    root = Path(tempfile.mkdtemp(prefix="pagination-"))
    atexit.register(shutil.rmtree, root, True)
    src = root / "sources"
    src.mkdir()
    shas = _write_repository(root / "git", src / "repo.bundle")
    world = {
        "at": _iso(AT),
        "repository": {"name": REPO, "default_branch": "main", "bundle": "repo.bundle"},
        "github": _github_state(shas),
        "linear": _linear_state(),
        "slack": _slack_state(),
    }
    (src / "world.yaml").write_text(yaml.safe_dump(world, sort_keys=False))
    try:
        build_snapshot(src, root / "snapshot")
    except Exception as exc:  # a seed the snapshot format refuses is this module's bug
        raise ContractSetupError(f"pagination: cannot build the seeded world: {exc}") from exc
    return World(root / "snapshot", shas)


class Clients:
    """HTTP clients for the served services (and Slack's user token, for search)."""

    def __init__(self, urls: Mapping[str, str]) -> None:
        def client(service: str, auth: str) -> httpx.Client:
            return httpx.Client(
                base_url=urls.get(service, "http://127.0.0.1:9"),
                headers={"Authorization": auth},
                timeout=30,
            )

        self.github = client("github", f"Bearer {FAKE_TOKENS['github']}")
        self.linear = client("linear", FAKE_TOKENS["linear"])
        self.slack = client("slack", f"Bearer {FAKE_TOKENS['slack']}")
        self.slack_user = {"Authorization": "Bearer xoxp-pagination-walk"}

    def close(self) -> None:
        for c in (self.github, self.linear, self.slack):
            c.close()


def _made(response: httpx.Response, what: str) -> None:
    if response.status_code >= 300:
        raise ContractSetupError(
            f"pagination: seeding {what} failed: HTTP {response.status_code} {response.text[:300]}"
        )


def seed_over_api(clients: Clients, shas: Mapping[str, str]) -> None:
    """What the snapshot format does not hold, made through GitHub's own API: the statuses of
    pull request #8's head, a review of it with line comments, more branches."""
    gh = clients.github
    for context in STATUSES:
        _made(
            gh.post(
                f"/repos/{REPO}/statuses/{shas['c5']}",
                json={"state": "success", "context": context, "description": context},
            ),
            f"status {context}",
        )
    comments = [
        {"path": FILES[i % len(FILES)], "line": 1, "body": body}
        for i, body in enumerate(REVIEW_COMMENTS)
    ]
    _made(
        gh.post(
            f"/repos/{REPO}/pulls/{RICH_PULL}/reviews",
            json={"event": "COMMENT", "body": REVIEWS[-1], "comments": comments},
        ),
        "a review with line comments",
    )
    for name in MADE_BRANCHES:
        _made(
            gh.post(
                f"/repos/{REPO}/git/refs", json={"ref": f"refs/heads/{name}", "sha": shas["merge"]}
            ),
            f"branch {name}",
        )


@contextmanager
def seeded(
    services: Sequence[Service], wrap: Wrap | None = None
) -> Iterator[tuple[Clients, World]]:
    """The seeded world's ``services``, each served on its own port through ``wrap``, with
    the API-made state in, and clients for them."""
    world = build()
    built = build_world(load_snapshot(world.snapshot), tuple(services))
    try:
        with ExitStack() as stack:
            urls: dict[str, str] = {
                s: stack.enter_context(serve_asgi(ServiceApp(built, s, wrap))) for s in services
            }
            clients = Clients(urls)
            stack.callback(clients.close)
            if "github" in services:
                seed_over_api(clients, world.shas)
            yield clients, world
    finally:
        close_world(built)


# =========================================================================== walking


@dataclass(frozen=True)
class Page:
    """One page as a client reads it."""

    keys: tuple[str, ...]
    more: bool
    """The page says there is a next page."""
    follow: str | None = None
    """How to get it (a ``Link`` URL, an ``endCursor``, a ``next_cursor``, a page number)."""
    values: tuple[str, ...] = ()
    """Each item's sort value, where the order is checked by one (Linear's ``createdAt``)."""
    total: int | None = None
    """The length of the whole list, where the page says it (``totalCount``...)."""
    problems: tuple[str, ...] = ()
    """What is wrong with the page on its own (an error, a bad ``Link``, cursors that are not
    its edges')."""


Fetch = Callable[[int, str | None], Page]
"""(page size, where to continue or None for the first page) -> the page."""


@dataclass(frozen=True)
class Listing:
    """One paginated list of a fake and what the evidence says of it."""

    subject: str
    fetch: Fetch
    expected: tuple[str, ...]
    """The seeded items' keys; in their documented order where :attr:`order` is ``exact``."""
    order: str
    """``exact`` (:attr:`expected`'s order is documented), ``createdAt`` (sorted by the
    items' :attr:`Page.values`, one way throughout), or ``stable`` (undocumented: the walk's
    order must be one whole page's)."""
    whole: int
    """A page size that must hold the whole list: the documented maximum."""
    size: int = SMALL
    strict: bool = True
    """Every page but the last holds exactly :attr:`size` items (GitHub), rather than at
    most (Slack: "Fewer than the requested number of items may be returned")."""
    extra: Callable[[], list[str]] | None = None
    """More problems: page-size limits and defaults, asked for apart."""


def _short(keys: Sequence[str], most: int = 8) -> str:
    shown = ", ".join(keys[:most])
    return f"[{shown}{', ...' if len(keys) > most else ''}]"


def walk(fetch: Fetch, size: int, bound: int) -> tuple[list[Page], list[str]]:
    """Every page from the first, following what each hands out, until one says it is the
    last; never more than ``bound`` pages, and never a continuation twice."""
    pages: list[Page] = []
    problems: list[str] = []
    used: set[str] = set()
    follow: str | None = None
    while len(pages) < bound:
        page = fetch(size, follow)
        pages.append(page)
        n = len(pages)
        problems += [f"page {n}: {p}" for p in page.problems]
        if not page.more:
            return pages, problems
        if not page.follow:
            problems.append(f"page {n} says there is more but gives no way to it")
            return pages, problems
        if page.follow in used:
            problems.append(
                f"page {n} hands out {page.follow!r} again (already followed): "
                "the pagination never ends"
            )
            return pages, problems
        used.add(page.follow)
        follow = page.follow
    problems.append(
        f"no last page after {bound} pages of {size}: the pagination never ends (walk stopped)"
    )
    return pages, problems


def item_problems(keys: Sequence[str], expected: Sequence[str], exact: bool) -> list[str]:
    """Each item once, none missing or unexpected, and (``exact``) in the expected order."""
    out: list[str] = []
    twice = [k for k, n in Counter(keys).items() if n > 1]
    if twice:
        out.append(f"seen more than once: {_short(twice)}")
    missing = [k for k in expected if k not in set(keys)]
    if missing:
        out.append(f"missing {len(missing)} of {len(expected)}: {_short(missing)}")
    unexpected = [k for k in dict.fromkeys(keys) if k not in set(expected)]
    if unexpected:
        out.append(f"not seeded: {_short(unexpected)}")
    if exact and not out and list(keys) != list(expected):
        out.append(f"order {_short(keys)}, documented {_short(expected)}")
    return out


def _monotone(values: Sequence[str]) -> bool:
    pairs = list(pairwise(values))
    return all(a <= b for a, b in pairs) or all(a >= b for a, b in pairs)


def judge(listing: Listing) -> Check:
    """One list walked and held to the evidence (see the module docstring)."""
    expected = listing.expected
    size = listing.size
    bound = math.ceil(max(len(expected), 1) / size) + 3
    pages, problems = walk(listing.fetch, size, bound)
    walked = f"walking {size} a page"
    for n, page in enumerate(pages, 1):
        last = n == len(pages)
        if len(page.keys) > size:
            problems.append(f"page {n}: {len(page.keys)} items, {size} asked for")
        elif listing.strict and not last and len(page.keys) < size:
            problems.append(f"page {n}: {len(page.keys)} items of {size}, yet not the last page")
        if page.total is not None and page.total != len(expected):
            problems.append(f"page {n}: says the list holds {page.total}, not {len(expected)}")
    if listing.strict and len(pages) > 1 and not pages[-1].keys:
        problems.append(f"page {len(pages) - 1} said there was more; page {len(pages)} is empty")
    keys = [k for page in pages for k in page.keys]
    exact = listing.order == "exact"
    problems += [f"{walked}: {p}" for p in item_problems(keys, expected, exact)]
    whole = listing.fetch(listing.whole, None)
    one = f"one page of {listing.whole}"
    problems += [f"{one}: {p}" for p in whole.problems]
    if whole.more:
        problems.append(f"{one}: says there is more, with {len(whole.keys)} of {len(expected)}")
    whole_problems = item_problems(whole.keys, expected, exact)
    problems += [f"{one}: {p}" for p in whole_problems]
    if (
        not whole_problems
        and not exact
        and keys != list(whole.keys)
        and Counter(keys) == Counter(whole.keys)
    ):
        problems.append(f"{walked}: order {_short(keys)}, one page's {_short(list(whole.keys))}")
    if listing.order == "createdAt":
        values = [v for page in pages for v in page.values]
        if not _monotone(values):
            problems.append(f"{walked}: not sorted by createdAt: {_short(values, 4)}")
        if not _monotone(whole.values):
            problems.append(f"{one}: not sorted by createdAt: {_short(list(whole.values), 4)}")
    if listing.extra is not None:
        problems += listing.extra()
    return Check(listing.subject, tuple(dict.fromkeys(problems)))


# =========================================================================== GitHub REST


def parse_link(value: str | None) -> dict[str, tuple[str, dict[str, str]]]:
    """A ``Link`` header: rel -> (URL, its query)."""
    out: dict[str, tuple[str, dict[str, str]]] = {}
    for part in (value or "").split(","):
        m = re.match(r'\s*<([^>]*)>\s*;\s*rel="([^"]+)"', part)
        if m:
            query = {k: v[-1] for k, v in parse_qs(urlsplit(m.group(1)).query).items()}
            out[m.group(2)] = (m.group(1), query)
    return out


def link_problems(
    rels: Mapping[str, tuple[str, dict[str, str]]], page: int, size: int | None, has_last: bool
) -> list[str]:
    """A page's ``Link`` rels as octokit's recording of real traffic shows them: ``next`` and
    ``last`` while there are more (GitHub leaves ``last`` out of commit lists), ``prev`` and
    ``first`` after page 1, each URL with the right page and (``size`` given) this page
    size."""
    out: list[str] = []
    want = {"next": page + 1, "prev": page - 1, "first": 1}
    for rel, (_url, query) in rels.items():
        if size is not None and query.get("per_page") != str(size):
            out.append(f'Link rel="{rel}" has per_page={query.get("per_page")}, asked {size}')
        number = query.get("page")
        if rel in want and number != str(want[rel]):
            out.append(f'Link rel="{rel}" points at page {number}, not {want[rel]}')
        if rel == "last" and (number is None or not number.isdigit() or int(number) <= page):
            out.append(f'Link rel="last" points at page {number}, not past page {page}')
    has = set(rels)
    if "next" in has and has_last and "last" not in has:
        out.append('Link has rel="next" without rel="last"')
    if "next" not in has and "last" in has:
        out.append('Link has rel="last" on the last page')
    if page > 1 and not {"prev", "first"} <= has:
        out.append(f'Link on page {page} lacks rel="prev" or rel="first": {sorted(has)}')
    if page == 1 and has & {"prev", "first"}:
        out.append(f"Link on page 1 has {sorted(has & {'prev', 'first'})}")
    return out


def rest_fetch(
    client: httpx.Client,
    path: str,
    key: Callable[[Any], str],
    params: Mapping[str, str] | None = None,
    items_at: str | None = None,
    has_last: bool = True,
) -> Fetch:
    """A GitHub REST list, paged by ``per_page`` and followed by ``Link: rel="next"``."""

    def fetch(size: int, follow: str | None) -> Page:
        if follow is None:
            r = client.get(path, params={**(params or {}), "per_page": str(size)})
        else:
            r = client.get(follow)
        try:
            body = r.json() if r.status_code == 200 else None
        except ValueError:
            body = None
        if body is None:
            return Page((), False, problems=(f"HTTP {r.status_code}: {r.text[:200]}",))
        items = body.get(items_at) if items_at and isinstance(body, dict) else body
        if not isinstance(items, list):
            return Page((), False, problems=(f"not a list: {str(body)[:200]}",))
        total = body.get("total_count") if items_at and isinstance(body, dict) else None
        asked = r.request.url.params.get("page", "1")
        number = int(asked) if asked.isdigit() else 0
        rels = parse_link(r.headers.get("link"))
        problems = link_problems(rels, number, min(size, REST_MAX), has_last)
        nxt = rels.get("next")
        return Page(
            tuple(key(i) for i in items),
            nxt is not None,
            nxt[0] if nxt else None,
            total=total if isinstance(total, int) else None,
            problems=tuple(problems),
        )

    return fetch


BIG_SUBJECT = (
    f"GET /repos/{{owner}}/{{repo}}/labels ({BIG_LABELS} labels: per_page default "
    f"{REST_DEFAULT}, at most {REST_MAX})"
)


def per_page_limits(client: httpx.Client) -> Check:
    """``per_page`` on a list of :data:`BIG_LABELS` labels (GitHub's REST docs: "The number
    of results per page (max 100)", default 30): 30 without it, 100 at 100 with the rest on
    page 2, and 100 for a larger one (served, not refused). The ``per_page`` GitHub writes
    into its links is checked only where it was asked for within the maximum (octokit's
    recording shows no other case)."""
    path = f"/repos/{OWNER}/{BIG}/labels"
    expected = tuple(f"many-{i:03d}" for i in range(BIG_LABELS))
    problems: list[str] = []
    for asked, want in ((None, REST_DEFAULT), (REST_MAX, REST_MAX), (REST_MAX + 1, REST_MAX)):
        params = {} if asked is None else {"per_page": str(asked)}
        label = "no per_page" if asked is None else f"per_page={asked}"
        r = client.get(path, params=params)
        if r.status_code != 200:
            problems.append(f"{label}: HTTP {r.status_code}: {r.text[:200]}")
            continue
        got = [str(lb.get("name")) for lb in r.json()]
        if len(got) != want:
            problems.append(f"{label}: {len(got)} items, GitHub serves {want}")
        rels = parse_link(r.headers.get("link"))
        size = REST_MAX if asked == REST_MAX else None
        problems += [f"{label}: {p}" for p in link_problems(rels, 1, size, True)]
        if "next" not in rels:
            problems.append(f'{label}: no rel="next" with {len(got)} of {BIG_LABELS}')
        elif asked == REST_MAX:
            second = client.get(rels["next"][0])
            rest = [str(lb.get("name")) for lb in second.json()] if second.is_success else []
            problems += [
                f"{label}, page 2: {p}"
                for p in link_problems(parse_link(second.headers.get("link")), 2, size, True)
            ]
            problems += [
                f"{label}, both pages: {p}" for p in item_problems(got + rest, expected, False)
            ]
    return Check(BIG_SUBJECT, tuple(dict.fromkeys(problems)))


@cache
def github_paged_operations() -> dict[str, tuple[str, str]]:
    """Every ``GET`` operation of GitHub's OpenAPI description (githubkit's generated REST
    clients, latest version) that takes ``per_page``: its path with placeholders as ``{}`` ->
    (its operation id, its path as GitHub writes it)."""
    import githubkit  # noqa: F401  (registers the versions)
    from githubkit.versions import LATEST_VERSION, VERSIONS

    rest = importlib.import_module(f"githubkit_schemas.{VERSIONS[LATEST_VERSION]}.rest")
    out: dict[str, tuple[str, str]] = {}
    for info in pkgutil.iter_modules(rest.__path__):
        module = importlib.import_module(f"{rest.__name__}.{info.name}")
        for cls in vars(module).values():
            if not inspect.isclass(cls) or cls.__module__ != module.__name__:
                continue
            for name, fn in vars(cls).items():
                if name.startswith(("_", "async_")) or not inspect.isfunction(fn):
                    continue
                if "per_page" not in inspect.signature(fn).parameters:
                    continue
                doc = inspect.getdoc(fn) or ""
                found = re.search(r"^GET (/\S*)$", doc, re.M)
                if found:
                    template = re.sub(r"\{[^}]*\}", "{}", found.group(1))
                    out[template] = (doc.splitlines()[0], found.group(1))
    return out


def fake_get_routes() -> list[str]:
    """The GitHub fake's REST ``GET`` paths (placeholders as ``{}``)."""
    from fakes.github.routes import ROUTERS

    out: list[str] = []
    for router in ROUTERS:
        for route in router.routes:
            methods = getattr(route, "methods", None) or set()
            if "GET" in methods:
                out.append(re.sub(r"\{[^}]*\}", "{}", str(getattr(route, "path", ""))))
    return out


NOT_LISTS: dict[str, str] = {
    "/repos/{}/{}/commits/{}": "pages the commit's `files` inside one commit object",
    "/repos/{}/{}/commits/{}/status": "pages `statuses` inside the combined status object",
    "/repos/{}/{}/commits/{}/check-runs": "pages `check_runs` inside an object; the world "
    "holds no check runs",
}
"""Operations GitHub pages *inside an object* rather than as a list: not walked here (the
fake serves them whole), named on the report's headline."""


@dataclass
class RestReport(Report):
    """GitHub REST's report: its headline also names what GitHub pages that is not walked."""

    not_walked: tuple[str, ...] = ()

    def headline(self) -> str:
        if not self.not_walked:
            return super().headline()
        return f"{super().headline()}; not walked: {', '.join(self.not_walked)}"


def by(key: str) -> Callable[[Any], str]:
    """An item's key: its ``key`` field, as a string."""
    return lambda item: str(item.get(key)) if isinstance(item, dict) else repr(item)


def github_rest_listings(c: Clients, world: World) -> list[Listing]:
    """Every GitHub REST list walked, with its seeded items (in their documented order where
    the order is checked exactly)."""
    gh = c.github
    r = f"/repos/{REPO}"
    t = "/repos/{owner}/{repo}"
    shas = world.shas
    number, ident, name, body = by("number"), by("id"), by("name"), by("body")
    sha, context = by("sha"), by("context")

    def timeline_key(item: Any) -> str:
        return f"{by('event')(item)}:{by('id')(item)}"

    threads = tuple(str(n) for n in sorted((*ISSUES, *PULLS), reverse=True))
    commits = [shas[k] for k in ("merge", "c7", "c6", "c5", "c4", "c3", "c2", "c1", "c0")]
    timeline = tuple(
        [f"commented:{cid}" for cid in ISSUE_COMMENTS] + [f"labeled:{eid}" for eid in EVENTS]
    )
    branches = ("main", "topic-8", SHARED, *MADE_BRANCHES)
    head = shas["c5"]

    def rest(
        template: str,
        path: str,
        key: Callable[[Any], str],
        expected: Sequence[str],
        order: str = "stable",
        params: Mapping[str, str] | None = None,
        items_at: str | None = None,
        has_last: bool = True,
    ) -> Listing:
        return Listing(
            f"GET {template}",
            rest_fetch(gh, path, key, params, items_at, has_last),
            tuple(expected),
            order,
            whole=REST_MAX,
        )

    return [
        rest(f"{t}/issues", f"{r}/issues", number, threads, "exact", {"state": "all"}),
        rest(
            f"{t}/issues/{{issue_number}}/comments",
            f"{r}/issues/{RICH_ISSUE}/comments",
            ident,
            [str(i) for i in ISSUE_COMMENTS],
            "exact",
        ),
        rest(
            f"{t}/issues/{{issue_number}}/events",
            f"{r}/issues/{RICH_ISSUE}/events",
            ident,
            [str(i) for i in EVENTS],
        ),
        rest(f"{t}/issues/events", f"{r}/issues/events", ident, [str(i) for i in EVENTS]),
        rest(
            f"{t}/issues/{{issue_number}}/timeline",
            f"{r}/issues/{RICH_ISSUE}/timeline",
            timeline_key,
            timeline,
        ),
        rest(
            f"{t}/issues/{{issue_number}}/labels", f"{r}/issues/{RICH_ISSUE}/labels", name, LABELS
        ),
        rest(f"{t}/labels", f"{r}/labels", name, LABELS),
        rest(
            f"{t}/pulls",
            f"{r}/pulls",
            number,
            [str(n) for n in sorted(PULLS, reverse=True)],
            "exact",
            {"state": "all"},
        ),
        rest(
            f"{t}/pulls/{{pull_number}}/comments",
            f"{r}/pulls/{RICH_PULL}/comments",
            body,
            REVIEW_COMMENTS,
            "exact",
        ),
        rest(
            f"{t}/pulls/{{pull_number}}/commits",
            f"{r}/pulls/{RICH_PULL}/commits",
            sha,
            [shas[f"c{i}"] for i in range(1, 6)],
        ),
        rest(
            f"{t}/pulls/{{pull_number}}/files",
            f"{r}/pulls/{RICH_PULL}/files",
            by("filename"),
            FILES,
        ),
        rest(
            f"{t}/pulls/{{pull_number}}/reviews",
            f"{r}/pulls/{RICH_PULL}/reviews",
            body,
            REVIEWS,
            "exact",
        ),
        rest(f"{t}/branches", f"{r}/branches", name, branches),
        rest(f"{t}/commits", f"{r}/commits", sha, commits, has_last=False),
        rest(
            f"{t}/commits/{{ref}}/statuses",
            f"{r}/commits/{head}/statuses",
            context,
            tuple(reversed(STATUSES)),
            "exact",
        ),
        rest(
            f"{t}/statuses/{{ref}}",
            f"{r}/statuses/{head}",
            context,
            tuple(reversed(STATUSES)),
            "exact",
        ),
        rest(
            "/search/issues",
            "/search/issues",
            number,
            [str(n) for n in ISSUES],
            params={"q": f"repo:{REPO} is:issue"},
            items_at="items",
        ),
        rest(
            "/search/code",
            "/search/code",
            by("path"),
            FILES,
            params={"q": f"{NEEDLE} repo:{REPO}"},
            items_at="items",
        ),
    ]


def github_rest_checks(c: Clients, world: World, only: Sequence[str] | None) -> RestReport:
    listings = github_rest_listings(c, world)
    checks = [judge(lst) for lst in listings if _wanted(lst.subject, only)]
    if _wanted(BIG_SUBJECT, only):
        checks.append(per_page_limits(c.github))
    not_walked: list[str] = []
    if only is None:
        walked = {re.sub(r"\{[^}]*\}", "{}", lst.subject.removeprefix("GET ")) for lst in listings}
        paged = github_paged_operations()
        for route in sorted(set(fake_get_routes())):
            if route not in paged:
                continue
            op, template = paged[route]
            if route in NOT_LISTS:
                not_walked.append(f"GET {template} ({NOT_LISTS[route]})")
                continue
            if route not in walked:
                checks.append(
                    Check(
                        f"GET {template}",
                        (
                            f"GitHub pages it ({op} takes per_page in its OpenAPI description) "
                            "but this family does not walk it",
                        ),
                    )
                )
        served = {route for route in fake_get_routes() if route in paged}
        for route in sorted(set(NOT_LISTS) - served):
            checks.append(
                Check(
                    f"GET {route} (not walked)",
                    ("named in NOT_LISTS, but no GET of the fake that GitHub pages any more",),
                )
            )
    source = load_source(OCTOKIT_DIR)
    report = _with_gaps("github", source, checks, OCTOKIT_DIR)
    return RestReport(**vars(report), not_walked=tuple(not_walked))


# =========================================================================== GraphQL


@dataclass(frozen=True)
class Connection:
    """One connection field the fake serves, reached from the root: ``steps`` are the fields
    down to it (a list on the way is entered at its first item; ``... on T`` is a fragment),
    ``args`` its fixed arguments beside the page's."""

    subject: str
    steps: tuple[str, ...]
    expected: tuple[str, ...]
    order: str = "stable"
    args: str = ""
    size: int = SMALL


KEY_FIELDS: dict[str, str] = {
    # GitHub
    "User": "login",
    "Label": "name",
    "Issue": "number",
    "PullRequest": "number",
    "IssueComment": "databaseId",
    "PullRequestCommit": "commit { oid }",
    "PullRequestChangedFile": "path",
    "PullRequestReview": "body",
    "PullRequestReviewComment": "body",
    "ProjectCard": "id",
    "ReviewRequest": "id",
    "GitActor": "email",
    "Commit": "oid",
    "SearchResultItem": "... on Issue { number } ... on PullRequest { number }",
    "StatusCheckRollupContext": "... on StatusContext { context } ... on CheckRun { name }",
    # Linear (with createdAt beside: the order is checked by it)
    "IssueSearchResult": "identifier",
    "IssueHistory": "toTitle",
    "Team": "key",
    "WorkflowState": "id",
    "IssueLabel": "id",
    "Comment": "id",
}
LINEAR_KEYS = {"Issue": "identifier", "User": "id"}
"""Linear's key fields where a type's name is shared with GitHub's."""


def _leaf(value: Any, skip: str = "createdAt") -> str:
    """The first scalar in a node (depth first), as a string: the node's key."""
    if isinstance(value, dict):
        for k, v in value.items():
            if k != skip:
                found = _leaf(v, skip)
                if found:
                    return found
        return ""
    if isinstance(value, list):
        return _leaf(value[0], skip) if value else ""
    return "" if value is None else str(value)


def _dig(data: Any, steps: Sequence[str]) -> Any:
    for step in steps:
        if step.startswith("..."):
            continue
        if isinstance(data, list):
            data = data[0] if data else None
        if not isinstance(data, dict):
            return None
        data = data.get(step.split("(", 1)[0].strip())
    return data


def _document(steps: Sequence[str], call: str) -> str:
    """``{ a { b { <call> } } }`` for steps ``a``, ``b``, the last step's field with ``call``
    (its arguments and selection)."""
    inner = call
    for step in reversed(steps[:-1]):
        inner = f"{step} {{ {inner} }}"
    return f"{{ {inner} }}"


@dataclass(frozen=True)
class GraphQLTarget:
    """A served GraphQL endpoint and its schema."""

    service: Service
    client: httpx.Client
    schema: GraphQLSchema
    maximum: int

    def post(self, document: str) -> tuple[Any, list[Any], str | None]:
        """(data, errors, a transport problem or None)."""
        r = self.client.post("/graphql", json={"query": document})
        try:
            body = r.json()
        except ValueError:
            return None, [], f"HTTP {r.status_code}, not JSON: {r.text[:200]}"
        if not isinstance(body, dict):
            return None, [], f"HTTP {r.status_code}: {str(body)[:200]}"
        errors = body.get("errors") or []
        return body.get("data"), errors if isinstance(errors, list) else [errors], None

    def field_type(self, subject: str) -> tuple[str, bool, bool]:
        """A connection field's node type name, whether the connection has ``totalCount``
        and whether its nodes have ``createdAt``."""
        type_name, field_name = subject.split(".", 1)
        owner = self.schema.get_type(type_name)
        assert isinstance(owner, GraphQLObjectType)
        conn = get_named_type(owner.fields[field_name].type)
        assert isinstance(conn, GraphQLObjectType)
        node = get_named_type(conn.fields["nodes"].type)
        has_created = isinstance(node, GraphQLObjectType) and "createdAt" in node.fields
        return node.name, "totalCount" in conn.fields, has_created


def connection_fields(schema: GraphQLSchema) -> list[str]:
    """Every field of the schema that pages (``Type.field`` taking ``first``)."""
    out: list[str] = []
    for name, t in sorted(schema.type_map.items()):
        if isinstance(t, GraphQLObjectType) and not name.startswith("__"):
            out += [f"{name}.{f}" for f, fld in t.fields.items() if "first" in fld.args]
    return out


def graphql_listing(target: GraphQLTarget, conn: Connection) -> Listing:
    node_type, has_total, has_created = target.field_type(conn.subject)
    linear = target.service == "linear"
    key_field = (LINEAR_KEYS.get(node_type) if linear else None) or KEY_FIELDS.get(node_type, "id")
    sort = linear and has_created
    node = f"{key_field} createdAt" if sort else key_field
    selection = (
        f"edges {{ cursor node {{ {node} }} }} nodes {{ {node} }} "
        "pageInfo { hasNextPage hasPreviousPage startCursor endCursor }"
        + (" totalCount" if has_total else "")
    )
    field_name = conn.steps[-1]

    def call(page_args: str) -> str:
        args = ", ".join(a for a in (page_args, conn.args) if a)
        return _document(conn.steps, f"{field_name}({args}) {{ {selection} }}")

    def fetch(size: int, after: str | None) -> Page:
        page_args = f"first: {size}" + (f", after: {json.dumps(after)}" if after else "")
        data, errors, broken = target.post(call(page_args))
        if broken:
            return Page((), False, problems=(broken,))
        if errors:
            return Page((), False, problems=(f"errors: {_messages(errors)}",))
        found = _dig(data, conn.steps)
        if not isinstance(found, dict):
            return Page((), False, problems=(f"no {conn.subject} in the answer: {data!r:.200}",))
        return connection_page(found, sort)

    def extra() -> list[str]:
        out: list[str] = []
        if target.service == "github":
            for arg in ("first", "last"):
                data, errors, broken = target.post(call(f"{arg}: {target.maximum + 1}"))
                if broken:
                    out.append(f"{arg}: {target.maximum + 1}: {broken}")
                elif not errors:
                    got = _dig(data, conn.steps)
                    n = len(got.get("nodes") or []) if isinstance(got, dict) else 0
                    out.append(
                        f"{arg}: {target.maximum + 1} served ({n} items) without an error; "
                        f"GitHub refuses more than {target.maximum}"
                    )
        return out

    whole = target.maximum
    return Listing(
        conn.subject,
        fetch,
        conn.expected,
        "createdAt" if sort else conn.order,
        whole=whole,
        size=conn.size,
        extra=extra,
    )


def _messages(errors: Sequence[Any]) -> str:
    return "; ".join(str(e.get("message", e)) if isinstance(e, dict) else str(e) for e in errors)[
        :300
    ]


def connection_page(conn: Mapping[str, Any], sort: bool) -> Page:
    """A connection's page: its nodes' keys, ``hasNextPage``, ``endCursor``, and the cursors
    and nodes held to its edges."""
    problems: list[str] = []
    edges = conn.get("edges")
    nodes = conn.get("nodes")
    info = conn.get("pageInfo")
    if not isinstance(edges, list) or not isinstance(nodes, list) or not isinstance(info, dict):
        return Page((), False, problems=(f"not a connection: {dict(conn)!r:.200}",))
    edge_nodes = [e.get("node") if isinstance(e, dict) else None for e in edges]
    if edge_nodes != nodes:
        problems.append("nodes are not the edges' nodes")
    cursors = [e.get("cursor") if isinstance(e, dict) else None for e in edges]
    start, end = info.get("startCursor"), info.get("endCursor")
    if cursors:
        if end != cursors[-1]:
            problems.append(f"endCursor {end!r} is not the last edge's cursor {cursors[-1]!r}")
        if start != cursors[0]:
            problems.append(f"startCursor {start!r} is not the first edge's cursor {cursors[0]!r}")
    elif start is not None or end is not None:
        problems.append(f"no edges, yet startCursor {start!r} and endCursor {end!r}")
    if len(set(map(str, cursors))) != len(cursors):
        problems.append("two edges share a cursor")
    more = info.get("hasNextPage")
    if not isinstance(more, bool):
        problems.append(f"hasNextPage is {more!r}")
    total = conn.get("totalCount")
    return Page(
        tuple(_leaf(n) for n in nodes),
        more is True,
        end if isinstance(end, str) else None,
        tuple(str(n.get("createdAt")) for n in nodes if isinstance(n, dict)) if sort else (),
        int(total) if isinstance(total, int | float) and not isinstance(total, bool) else None,
        tuple(problems),
    )


def github_connections(world: World) -> list[Connection]:
    shas = world.shas
    repo = f'repository(owner: "{OWNER}", name: "{NAME}")'
    issue = f"issue(number: {RICH_ISSUE})"
    pull = f"pullRequest(number: {RICH_PULL})"
    people = tuple(sorted(PEOPLE))
    return [
        Connection("Repository.issues", (repo, "issues"), tuple(str(n) for n in ISSUES)),
        Connection("Repository.pullRequests", (repo, "pullRequests"), tuple(map(str, PULLS))),
        Connection("Repository.labels", (repo, "labels"), LABELS, "exact"),
        Connection("Repository.assignableUsers", (repo, "assignableUsers"), people),
        Connection("Repository.mentionableUsers", (repo, "mentionableUsers"), people),
        Connection("Repository.watchers", (repo, "watchers"), ()),
        Connection("Issue.assignees", (repo, issue, "assignees"), PEOPLE),
        Connection("Issue.comments", (repo, issue, "comments"), tuple(map(str, ISSUE_COMMENTS))),
        Connection("Issue.labels", (repo, issue, "labels"), LABELS, "exact"),
        Connection("Issue.projectCards", (repo, issue, "projectCards"), ()),
        Connection("ReactionGroup.users", (repo, issue, "reactionGroups", "users"), ()),
        Connection("PullRequest.assignees", (repo, pull, "assignees"), PEOPLE[:6]),
        Connection(
            "PullRequest.comments", (repo, pull, "comments"), tuple(map(str, PULL_COMMENTS))
        ),
        Connection(
            "PullRequest.commits",
            (repo, pull, "commits"),
            tuple(shas[f"c{i}"] for i in range(1, 6)),
        ),
        Connection("PullRequest.files", (repo, pull, "files"), FILES),
        Connection("PullRequest.labels", (repo, pull, "labels"), LABELS[:6], "exact"),
        Connection("PullRequest.reviews", (repo, pull, "reviews"), REVIEWS),
        Connection("PullRequest.latestReviews", (repo, pull, "latestReviews"), REVIEWS[:6]),
        Connection("PullRequest.reviewRequests", (repo, pull, "reviewRequests"), ()),
        Connection("PullRequest.projectCards", (repo, pull, "projectCards"), ()),
        Connection(
            "PullRequestReview.comments",
            (repo, pull, "reviews(last: 1)", "nodes", "comments"),
            REVIEW_COMMENTS,
        ),
        Connection(
            "StatusCheckRollup.contexts", (repo, pull, "statusCheckRollup", "contexts"), STATUSES
        ),
        Connection(
            "Ref.associatedPullRequests",
            (repo, f'ref(qualifiedName: "refs/heads/{SHARED}")', "associatedPullRequests"),
            tuple(str(n) for n in PULLS if n != RICH_PULL),
        ),
        Connection(
            "Commit.parents",
            (repo, 'ref(qualifiedName: "refs/heads/main")', "target", "... on Commit", "parents"),
            (shas["c7"], shas["c6"]),
            size=1,
        ),
        Connection(
            "Commit.authors",
            (repo, 'ref(qualifiedName: "refs/heads/main")', "target", "... on Commit", "authors"),
            ("ada@example.test",),
            size=1,
        ),
        Connection(
            "Query.search",
            ("search",),
            tuple(str(n) for n in ISSUES),
            args=f'query: "repo:{REPO} is:issue", type: ISSUE',
        ),
    ]


def linear_connections() -> list[Connection]:
    issues = tuple(f"ENG-{n}" for n in L_ISSUES)
    children = issues[1:]
    comments = (*L_COMMENTS, *L_REPLIES)
    labels = (*L_LABELS, *(f"lf-{i:02d}" for i in range(L_FILLER)))
    teams = L_TEAMS
    eng = 'team(id: "lt-1")'
    first = 'issue(id: "ENG-1")'
    found = (f'searchIssues(term: "{SOLO}", first: 1)', "nodes")
    search = f'term: "{WORD}"'
    return [
        Connection("Query.issues", ("issues",), issues),
        Connection("Query.issueSearch", ("issueSearch",), issues, args=f'query: "{WORD}"'),
        Connection("Query.searchIssues", ("searchIssues",), issues, args=search),
        Connection("Query.teams", ("teams",), teams),
        Connection("Query.users", ("users",), L_USERS),
        Connection("Query.workflowStates", ("workflowStates",), L_STATES),
        Connection("Query.issueLabels", ("issueLabels",), labels, size=14),
        Connection("Query.comments", ("comments",), comments),
        Connection("Organization.teams", ("organization", "teams"), teams),
        Connection("Organization.users", ("organization", "users"), L_USERS),
        Connection("Organization.labels", ("organization", "labels"), labels, size=14),
        Connection("Team.issues", (eng, "issues"), issues),
        Connection("Team.states", (eng, "states"), L_STATES),
        Connection("Team.labels", (eng, "labels"), labels, size=14),
        Connection("Team.members", (eng, "members"), L_USERS),
        Connection("User.assignedIssues", ('user(id: "lu-2")', "assignedIssues"), issues),
        Connection("User.createdIssues", ('user(id: "lu-3")', "createdIssues"), issues),
        Connection("User.delegatedIssues", ('user(id: "lu-2")', "delegatedIssues"), ()),
        Connection("User.teams", ('user(id: "lu-1")', "teams"), teams),
        Connection("WorkflowState.issues", ('workflowState(id: "ls-3")', "issues"), issues),
        Connection("IssueLabel.issues", (f'issueLabel(id: "{L_LABELS[1]}")', "issues"), issues),
        Connection("IssueLabel.children", (f'issueLabel(id: "{L_LABELS[1]}")', "children"), ()),
        Connection("Issue.children", (first, "children"), children),
        Connection("Issue.comments", (first, "comments"), comments),
        Connection("Issue.history", (first, "history"), L_HISTORY),
        Connection("Issue.labels", (first, "labels"), L_LABELS),
        Connection("Comment.children", (f'comment(id: "{L_COMMENTS[0]}")', "children"), L_REPLIES),
        Connection("IssueSearchResult.children", (*found, "children"), children),
        Connection("IssueSearchResult.comments", (*found, "comments"), comments),
        Connection("IssueSearchResult.history", (*found, "history"), L_HISTORY),
        Connection("IssueSearchResult.labels", (*found, "labels"), L_LABELS),
    ]


def linear_default(target: GraphQLTarget) -> list[str]:
    """``Query.issueLabels`` without ``first``: the schema's default page of 50."""
    data, errors, broken = target.post(
        "{ issueLabels { nodes { id } pageInfo { hasNextPage endCursor } } }"
    )
    if broken or errors:
        return [f"without first: {broken or _messages(errors)}"]
    found = _dig(data, ("issueLabels",)) or {}
    n = len(found.get("nodes") or [])
    out = []
    if n != LINEAR_DEFAULT:
        out.append(f"without first: {n} items, the schema's default is {LINEAR_DEFAULT}")
    if (found.get("pageInfo") or {}).get("hasNextPage") is not True:
        out.append(f"without first: hasNextPage is not true with {n} of {len(L_LABELS) + L_FILLER}")
    return out


def graphql_checks(
    target: GraphQLTarget, connections: list[Connection], only: Sequence[str] | None
) -> list[Check]:
    checks: list[Check] = []
    for conn in connections:
        if not _wanted(conn.subject, only):
            continue
        listing = graphql_listing(target, conn)
        if target.service == "linear" and conn.subject == "Query.issueLabels":
            base = listing.extra

            def both(base: Callable[[], list[str]] | None = base) -> list[str]:
                return (base() if base else []) + linear_default(target)

            listing = Listing(**{**vars(listing), "extra": both})
        checks.append(judge(listing))
    if only is None:
        walked = {c.subject for c in connections}
        for subject in connection_fields(target.schema):
            if subject not in walked:
                checks.append(
                    Check(subject, ("a connection the fake serves that this family does not walk",))
                )
    return checks


# =========================================================================== Slack


def slack_fetch(
    client: httpx.Client, method: str, items_at: str, key: Callable[[Any], str], **args: str
) -> Fetch:
    """A Slack cursor method: ``limit`` and ``cursor`` in, ``response_metadata.next_cursor``
    out."""

    def fetch(size: int, cursor: str | None) -> Page:
        data = {**args, "limit": str(size)}
        if cursor:
            data["cursor"] = cursor
        body, broken = _slack(client, method, data)
        if broken:
            return Page((), False, problems=(broken,))
        items = body.get(items_at)
        if not isinstance(items, list):
            return Page((), False, problems=(f"no {items_at} list",))
        meta = body.get("response_metadata")
        nxt = meta.get("next_cursor") if isinstance(meta, dict) else None
        more = isinstance(nxt, str) and nxt != ""
        problems = []
        if "has_more" in body and body["has_more"] is not more:
            problems.append(
                f"has_more is {body['has_more']!r} but next_cursor is {'set' if more else 'empty'}"
            )
        return Page(
            tuple(key(i) for i in items), more, nxt if more else None, problems=tuple(problems)
        )

    return fetch


def _slack(
    client: httpx.Client,
    method: str,
    data: Mapping[str, str],
    headers: Mapping[str, str] | None = None,
) -> tuple[dict[str, Any], str | None]:
    r = client.post(f"/api/{method}", data=dict(data), headers=dict(headers or {}))
    try:
        body = r.json()
    except ValueError:
        return {}, f"HTTP {r.status_code}, not JSON: {r.text[:200]}"
    if not isinstance(body, dict) or body.get("ok") is not True:
        return {}, f"HTTP {r.status_code}: {str(body)[:200]}"
    return body, None


def search_fetch(c: Clients) -> Fetch:
    """``search.messages``: ``count`` and ``page`` in, ``messages.paging`` out."""

    def fetch(size: int, page: str | None) -> Page:
        data = {"query": NEEDLE, "count": str(size), "page": page or "1"}
        body, broken = _slack(c.slack, "search.messages", data, c.slack_user)
        if broken:
            return Page((), False, problems=(broken,))
        messages = body.get("messages") or {}
        matches = messages.get("matches") or []
        paging = messages.get("paging") or {}
        problems = []
        asked = min(size, SLACK_SEARCH_MAX)
        if paging.get("count") != asked:
            problems.append(f"paging.count is {paging.get('count')!r}, asked {asked}")
        number, pages = paging.get("page"), paging.get("pages")
        if not isinstance(number, int) or not isinstance(pages, int):
            return Page((), False, problems=(f"no paging page/pages: {paging!r}",))
        more = number < pages
        return Page(
            tuple(str(m.get("ts")) for m in matches),
            more,
            str(number + 1) if more else None,
            total=paging.get("total") if isinstance(paging.get("total"), int) else None,
            problems=tuple(problems),
        )

    return fetch


def slack_listings(c: Clients) -> list[Listing]:
    sl = c.slack
    ts, ident = by("ts"), by("id")

    def whole_users() -> list[str]:
        body, broken = _slack(sl, "users.list", {})
        if broken:
            return [f"without limit: {broken}"]
        got = [str(u.get("id")) for u in body.get("members") or []]
        out = [f"without limit: {p}" for p in item_problems(got, S_USERS, False)]
        meta = body.get("response_metadata") or {}
        if meta.get("next_cursor"):
            out.append("without limit: next_cursor set; the spec says the entire result set")
        return out

    def search_max() -> list[str]:
        fetch = search_fetch(c)
        page = fetch(SLACK_SEARCH_MAX + 1, None)
        return [f"count={SLACK_SEARCH_MAX + 1}: {p}" for p in page.problems]

    def cursor(
        subject: str,
        fetch: Fetch,
        expected: tuple[str, ...],
        order: str,
        extra: Callable[[], list[str]] | None = None,
    ) -> Listing:
        return Listing(subject, fetch, expected, order, SLACK_WHOLE, strict=False, extra=extra)

    return [
        cursor(
            "conversations.history",
            slack_fetch(sl, "conversations.history", "messages", ts, channel=S_CHANNEL),
            tuple(reversed(S_MESSAGES)),
            "exact",
        ),
        cursor(
            "conversations.replies",
            slack_fetch(
                sl, "conversations.replies", "messages", ts, channel=S_CHANNEL, ts=S_PARENT
            ),
            (S_PARENT, *S_REPLIES),
            "exact",
        ),
        cursor(
            "conversations.list",
            slack_fetch(sl, "conversations.list", "channels", ident),
            S_CHANNELS,
            "stable",
        ),
        cursor(
            "conversations.members",
            slack_fetch(sl, "conversations.members", "members", str, channel=S_CHANNEL),
            S_USERS,
            "stable",
        ),
        cursor(
            "users.list",
            slack_fetch(sl, "users.list", "members", ident),
            S_USERS,
            "stable",
            whole_users,
        ),
        Listing(
            "search.messages",
            search_fetch(c),
            tuple(reversed(S_MESSAGES)),
            "stable",
            SLACK_SEARCH_MAX,
            extra=search_max,
        ),
    ]


def slack_paged_methods() -> list[str]:
    """The fake's methods the spec pages: by ``cursor``, or by ``count`` and ``page``."""
    from fakes.slack.routes import METHODS
    from replay.contract.evidence.slack_spec import SPEC

    spec = json.loads((SLACK_DIR / SPEC).read_bytes())
    out = []
    for name in sorted(METHODS):
        op: dict[str, Any] = next(iter(spec["paths"].get(f"/{name}", {}).values()), {})
        params = {p.get("name") for p in op.get("parameters", [])}
        if "cursor" in params or {"count", "page"} <= params:
            out.append(name)
    return out


def slack_checks(c: Clients, only: Sequence[str] | None) -> list[Check]:
    listings = slack_listings(c)
    checks = [judge(lst) for lst in listings if _wanted(lst.subject, only)]
    if only is None:
        walked = {lst.subject for lst in listings}
        for method in slack_paged_methods():
            if method not in walked:
                checks.append(
                    Check(
                        method, ("the spec pages it (cursor or count/page) but it is not walked",)
                    )
                )
    return checks


# =========================================================================== reports


def _wanted(subject: str, only: Sequence[str] | None) -> bool:
    return only is None or any(fnmatchcase(subject, pattern) for pattern in only)


def _with_gaps(service: Service, source: Source, checks: list[Check], directory: Path) -> Report:
    """The report with the known gaps of ``directory`` whose subject names one of these
    checks (the directory's other gaps belong to the other families reading it)."""
    mine: list[KnownGap] = [
        g for g in load_gaps(directory) if any(fnmatchcase(c.subject, g.subject) for c in checks)
    ]
    return apply_gaps(service, FAMILY, source, checks, mine)


SERVICES: tuple[Service, ...] = ("github", "linear", "slack")


def reports(
    wrap: Wrap | None = None,
    *,
    services: Sequence[Service] = SERVICES,
    only: Sequence[str] | None = None,
) -> list[Report]:
    """The pagination family: GitHub REST, GitHub GraphQL, Linear and Slack, each list walked
    on a freshly served seeded world (whose apps ``wrap`` may break, as tests do). ``only``
    (fnmatch patterns over subjects) walks just those lists and skips the completeness checks,
    for tests that plant one fault."""
    out: list[Report] = []
    with seeded(services, wrap) as (clients, world):
        if "github" in services:
            out.append(github_rest_checks(clients, world, only))
            target = GraphQLTarget(
                "github", clients.github, graphql_schema("github"), GITHUB_GRAPHQL_MAX
            )
            checks = graphql_checks(target, github_connections(world), only)
            out.append(
                _with_gaps("github", load_source(GITHUB_GRAPHQL_DIR), checks, GITHUB_GRAPHQL_DIR)
            )
        if "linear" in services:
            target = GraphQLTarget("linear", clients.linear, graphql_schema("linear"), LINEAR_MAX)
            checks = graphql_checks(target, linear_connections(), only)
            out.append(_with_gaps("linear", load_source(LINEAR_DIR), checks, LINEAR_DIR))
        if "slack" in services:
            checks = slack_checks(clients, only)
            out.append(_with_gaps("slack", load_source(SLACK_DIR), checks, SLACK_DIR))
    return out
