"""Invariants under concurrency: the pagination family's walks again, each while other clients
write at once, and writes made by several clients at once, held to what the vendors publish
about paging and identity.

A fake that pages correctly for one client can still lose or repeat items when others write
during a walk (an offset dressed as a cursor), hand two creates the same number (a
read-then-write allocation), or tear an object written by two clients at once. Here:

- **Every list the pagination family walks** (its own lists, taken from
  :mod:`replay.contract.evidence.pagination`, so this family cannot fall behind it), walked at
  its small page size (a list earlier checks have grown, in about :data:`PAGES` pages) while
  :data:`WRITERS` other clients (threads, each with its own HTTP connections) make
  :data:`WRITES` writes each. Where a write the fakes serve adds to that very list (GitHub's
  issues, comments, labels, label events, statuses, branches, pull requests, reviews and
  review comments; Linear's issues, comments, title changes and labels; Slack's messages and
  replies: :func:`github_walks`, :func:`linear_walks`, :func:`slack_walks`) those are the
  writes; elsewhere the writers write to another list at once (*writes elsewhere*). The
  writes are paced by the walk, not by the clock: before page *k* the walk waits until the
  writes released with page *k - 1* have answered, then releases one more write per writer,
  which races page *k*'s request; so writes land strictly between the walk's pages and, past
  page :data:`WRITES`, none are made. Three more walks order the list so that new items land
  *ahead* of the walk's position: GitHub's ``Repository.issues``, ``Repository.labels``
  (``orderBy: {field: CREATED_AT, direction: DESC}``, as ``gh issue list`` asks) and
  ``Issue.comments`` (``UPDATED_AT``, ``DESC``); Linear's issues and Slack's history are
  newest first already. And one REST walk orders issues oldest first
  (``sort=created&direction=asc``).
- Each walk is judged against the list read whole before and after it (no writer running):
  the walk ends within a bound, its pages are well-formed (the pagination family's page
  checks), every item seen is in the list before or after. Every item there **before** the
  walk is seen: **exactly once** where the vendor pages by cursor (GitHub's and Linear's
  GraphQL connections, Slack's cursor methods: a cursor names a place in the list, so items
  added elsewhere neither repeat nor hide an item), and on GitHub REST page-number lists
  whose new items land behind the walk (comments, reviews and review comments by ascending
  id, issues oldest first); **at least once** on GitHub REST lists whose new items land ahead
  or where GitHub documents no order, on GitHub's GraphQL ``search`` (its cursors are
  offsets, ``cursor:<n>``) and on Slack's ``search.messages`` (``page``/``count``). There an
  insert ahead shifts every later item by one, so a page-number walk repeats an item (GitHub
  documents page numbers; go-github's issue 566 shows the repeat on real GitHub), but an item
  can never be skipped while items are only added: its position only grows, and the page
  asked next starts where the last one ended. A new item is seen at most once on cursor
  lists. Items there before the walk keep their documented order among themselves.
- **Writes land exactly once**: every write answers success (no 5xx, no ``ok: false``, no
  GraphQL error), no two writes answer the same number, id or ``ts``, and the list afterwards
  is the list before plus exactly the items written (counted where the write does not name
  the item it adds: a label event). Writes elsewhere leave the list as it was.
- **One object, many writers** (per service): 3 x 5 concurrent changes of one issue's title
  (GitHub REST ``PATCH``, Linear ``issueUpdate``) or one message's text (Slack
  ``chat.update``) leave one of the values written, read back alike everywhere, and the
  object's other fields as they were; 15 distinct reactions added at once to one Slack
  message are all on it afterwards (no lost update).

Each check cites its evidence (:class:`Doc`: the vendor's documentation, found by URL;
:class:`writes.Cite`: the vendored schema or spec text, checked to still say it). Known gaps
live in :data:`GAPS` (this family's own; reported stale when they match nothing): none today.
The family found one: the GitHub fake's GraphQL cursors were offsets, so its lists that grow
ahead of a walk (newest first) repeated items; GitHub's cursors name a node (its GraphQL
pagination guide's example cursor is ``cursor:v2:`` and a node id), and since issue 36 the
fake's name the node's row (:mod:`fakes.github.graphql.connections`). The world
is the pagination family's seeded world, served afresh per run over real HTTP (uvicorn in a
thread): the concurrency is real, the fakes' route handlers run in the server's threads.
"""

from __future__ import annotations

import math
import threading
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from fnmatch import fnmatchcase
from functools import partial
from pathlib import Path
from typing import Any

import httpx

from replay.contract.evidence import (
    Check,
    KnownGap,
    Report,
    Service,
    apply_gaps,
    load_source,
)
from replay.contract.evidence import pagination as pg
from replay.contract.evidence.writes import Cite, cite_problem, gql, lin, octo, spec
from replay.contract.schema import graphql_schema
from replay.contract.targets import ContractSetupError, Wrap

FAMILY = "invariants under concurrency"
WRITERS = 3
"""Clients writing at once, beside the one walking."""
WRITES = 5
"""Writes per writer."""
PAGES = 6
"""A list that earlier checks have grown is walked in about this many pages (else at the
pagination family's small page size): enough for every round of writes to land between
two of its pages."""
REQUEST_TIMEOUT = 30.0
"""The HTTP clients' timeout (:class:`pagination.Clients`): every wait here is a number of
requests times this, never a measured time."""


# =========================================================================== citations


@dataclass(frozen=True)
class Doc:
    """A vendor's documentation page (not vendored) and the words there a check rests on."""

    url: str
    says: str

    def __str__(self) -> str:
        return self.url


Evidence = Doc | Cite

REST_PAGES = Doc(
    "https://docs.github.com/en/rest/using-the-rest-api/using-pagination-in-the-rest-api",
    "each paginated endpoint will use the `page`, `before`/`after`, or `since` query parameters",
)
PAGE_SHIFT = Doc(
    "https://github.com/google/go-github/issues/566",
    "I request page 2 via the Link header [...] So I'm processing event D twice",
)
# Its example cursor, Y3Vyc29yOnYyOpHOUH8B7g==, decodes to `cursor:v2:` and a msgpack'd node
# id (1350500846), not an offset: the position is a node's.
GRAPHQL_CURSOR = Doc(
    "https://docs.github.com/en/graphql/guides/using-pagination-in-the-graphql-api",
    "The cursor represents a specific position in the data set.",
)
SEARCH_OFFSET = Doc(
    "https://github.com/refined-github/refined-github/pull/2974",
    "GitHub cursor is a base64 representation of `cursor:#` where `#` is the number",
)
RELAY = Doc(
    "https://relay.dev/graphql/connections.htm",
    "This cursor is an opaque string, and is precisely what we would pass to the after arg to "
    "paginate starting after this edge.",
)
LINEAR_PAGES = Doc(
    "https://developers.linear.app/docs/graphql/working-with-the-graphql-api/pagination",
    "We implement Relay style cursor-based pagination model with first/after and last/before",
)
SLACK_PAGES = Doc(
    "https://docs.slack.dev/apis/web-api/pagination",
    "Cursors are like pointers. [...] they reference a specific iota, a place in the list "
    "where your last request left off. [...] some older methods use varied versions of "
    "pagination.",
)
REST_UPDATE = Doc(
    "https://docs.github.com/en/rest/issues/issues#update-an-issue",
    "Issue owners and users with push access can edit an issue.",
)
SLACK_CURSOR = "Paginate through collections of data by setting the `cursor` parameter"


def cite_problems(cites: Sequence[Evidence]) -> list[str]:
    """The vendored citations the evidence no longer holds (documentation pages are not
    vendored: they are cited, not re-read)."""
    return [p for c in cites if isinstance(c, Cite) and (p := cite_problem(c))]


# =========================================================================== writing at once


class Failed(Exception):
    """A write that did not answer as a write must: the check's problem."""


@dataclass
class Written:
    """What the writers' writes answered: the keys of what they added, and their problems."""

    keys: list[str | None] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


@dataclass
class Tempo:
    """Paces :data:`WRITERS` writers by a walk: write *j* of each writer waits until round
    *j + 1* is released; the walk waits for a round to be answered before releasing the next."""

    per_round: int
    wait: float
    """How long one round may take: the requests of one write times the request timeout."""
    patience: float
    """How long a writer waits for its round: the walk's pages and the rounds before, each
    at most its requests times the request timeout."""
    released: int = 0
    done: int = 0
    stopped: bool = False
    problems: list[str] = field(default_factory=list)
    out: Written = field(default_factory=Written)
    _cond: threading.Condition = field(default_factory=threading.Condition)

    def release(self, rounds: int) -> None:
        with self._cond:
            self.released = max(self.released, rounds)
            self._cond.notify_all()

    def stop(self) -> None:
        with self._cond:
            self.stopped = True
            self._cond.notify_all()

    def turn(self, j: int) -> bool:
        """Wait for write ``j``'s round; False when the writers are stopped (or it never
        comes)."""
        with self._cond:
            if not self._cond.wait_for(lambda: self.released > j or self.stopped, self.patience):
                self.problems.append(f"round {j + 1} of the writes was never released")
            return self.released > j and not self.stopped

    def answered(self) -> None:
        with self._cond:
            self.done += 1
            self._cond.notify_all()

    def landed(self, rounds: int) -> None:
        """Wait until ``rounds`` rounds have answered (or the writers stall)."""
        want = min(rounds, WRITES) * self.per_round
        with self._cond:
            if not self._cond.wait_for(lambda: self.done >= want or self.stopped, self.wait):
                self.problems.append(f"writers stalled: {self.done} of {want} writes answered")
                self.stopped = True
                self._cond.notify_all()


Make = Callable[[pg.Clients, str], str | None]
"""(a writer's clients, a tag unique to the write) -> the key of the item it added to the list
(None: the write does not name it; the list is then counted)."""


@dataclass(frozen=True)
class Grow:
    """Writes that add to a list."""

    what: str
    make: Make
    requests: int = 1
    """Requests per write (the waits are sized from it)."""
    last: bool = False
    """Its walks run after the others' (a label added to ENG-1 is a history entry without
    the title that Linear's history walks key their items by)."""


def _writer(grow: Grow, clients: pg.Clients, w: int, tag: str, tempo: Tempo) -> None:
    out = tempo.out
    for j in range(WRITES):
        if not tempo.turn(j):
            return
        try:
            key = grow.make(clients, f"{tag}-{w}-{j}")
            with out.lock:
                out.keys.append(key)
        except (Failed, httpx.HTTPError, KeyError, TypeError, ValueError) as exc:
            with out.lock:
                out.problems.append(f"write {w}.{j} ({grow.what}): {exc}")
        finally:
            tempo.answered()


@contextmanager
def writing(
    grow: Grow, pool: Sequence[pg.Clients], tag: str, keep: bool, pages: int = 0
) -> Iterator[Tempo]:
    """:data:`WRITERS` threads making ``grow``'s writes, paced by the :class:`Tempo` yielded
    (to a walk of at most ``pages`` pages). On exit the rounds not yet released are released
    (``keep``: every write is made) or called off, and the writers are joined."""
    wait = REQUEST_TIMEOUT * grow.requests + 1
    tempo = Tempo(WRITERS, wait, (REQUEST_TIMEOUT + wait) * (pages + WRITES + 2))
    threads = [
        threading.Thread(target=_writer, args=(grow, pool[w], w, tag, tempo), daemon=True)
        for w in range(WRITERS)
    ]
    for t in threads:
        t.start()
    try:
        yield tempo
    finally:
        if keep and not tempo.stopped:
            tempo.release(WRITES)
        else:
            tempo.stop()
        for t in threads:
            t.join(wait * WRITES)
        if any(t.is_alive() for t in threads):
            tempo.problems.append("a writer did not finish its writes")


def paced(fetch: pg.Fetch, tempo: Tempo) -> pg.Fetch:
    """``fetch``, each page asked only once the previous round of writes has answered, with
    the next round released to race it."""
    asked = 0

    def page(size: int, follow: str | None) -> pg.Page:
        nonlocal asked
        asked += 1
        tempo.landed(asked - 1)
        tempo.release(asked)
        return fetch(size, follow)

    return page


# ====================================================================== walking while others write


@dataclass(frozen=True)
class Walk:
    """One list walked while others write, and what the vendor says of it."""

    listing: pg.Listing
    grow: Grow | None
    """Writes that add to this list; None: the writers write elsewhere."""
    once: bool
    """Items there before the walk are seen exactly once (else at least once)."""
    cites: tuple[Evidence, ...]
    variant: str = ""

    @property
    def subject(self) -> str:
        writes = self.grow.what if self.grow else "writes elsewhere"
        return f"{self.listing.subject}{self.variant} while {WRITERS}x{WRITES} {writes}"

    @property
    def ordered(self) -> bool:
        return self.listing.order == "exact" or bool(self.variant)


def read_all(listing: pg.Listing) -> tuple[list[str], list[str]]:
    """The whole list, read in its largest pages with nobody writing: (keys, problems)."""
    pages, problems = pg.walk(listing.fetch, listing.whole, 50)
    return [k for p in pages for k in p.keys], problems


def _short(keys: Sequence[Any], most: int = 8) -> str:
    shown = ", ".join(str(k) for k in keys[:most])
    return f"[{shown}{', ...' if len(keys) > most else ''}]"


def judge_walk(
    walk: Walk,
    before: Sequence[str],
    seen: Sequence[str],
    after: Sequence[str],
    keys: Sequence[str | None],
) -> list[str]:
    """What is wrong with a walk (``seen``) made between ``before`` and ``after`` while the
    writes answering ``keys`` were made (see the module docstring)."""
    out: list[str] = []
    counts, had, now = Counter(seen), set(before), set(after)
    lost = [k for k in before if counts[k] == 0]
    if lost:
        out.append(f"lost {len(lost)} item(s) there before the walk: {_short(lost)}")
    again = [k for k in before if counts[k] > 1]
    if again and walk.once:
        out.append(f"item(s) there before the walk seen more than once: {_short(again)}")
    fresh_twice = [k for k in counts if k not in had and counts[k] > 1]
    if fresh_twice and walk.once:
        out.append(f"item(s) written during the walk seen more than once: {_short(fresh_twice)}")
    phantom = [k for k in counts if k not in had and k not in now]
    if phantom:
        out.append(f"item(s) seen that the list holds neither before nor after: {_short(phantom)}")
    if walk.ordered:
        firsts = [k for k in dict.fromkeys(seen) if k in had]
        if firsts != [k for k in before if k in set(firsts)]:
            out.append(f"items there before out of their order: {_short(firsts)}")
    twice = [k for k, n in Counter(after).items() if n > 1]
    if twice:
        out.append(f"the list afterwards holds item(s) twice: {_short(twice)}")
    gone = [k for k in before if k not in now]
    if gone:
        out.append(f"item(s) gone from the list afterwards: {_short(gone)}")
    if walk.grow is None:
        if now - had:
            out.append(f"the list grew under writes elsewhere: {_short(sorted(now - had))}")
        return out
    named = [k for k in keys if k is not None]
    same = [k for k, n in Counter(named).items() if n > 1]
    if same:
        out.append(f"two writes answered the same key: {_short(same)}")
    if len(named) == len(keys):
        missing = [k for k in named if k not in now]
        if missing:
            out.append(f"written, not in the list afterwards: {_short(missing)}")
        extra = sorted(now - had - set(named))
        if extra:
            out.append(f"in the list afterwards, written by nobody: {_short(extra)}")
    elif len(after) - len(before) != len(keys):
        out.append(f"the list grew by {len(after) - len(before)} with {len(keys)} writes answered")
    return out


def run_walk(walk: Walk, tag: str, pool: Sequence[pg.Clients], elsewhere: Grow) -> Check:
    listing = walk.listing
    problems = cite_problems(walk.cites)
    try:
        before, broken = read_all(listing)
        if broken:
            problems += [f"read before the walk: {p}" for p in broken]
            return Check(walk.subject, tuple(problems))
        grow = walk.grow or elsewhere
        size = min(max(listing.size, math.ceil(len(before) / PAGES)), listing.whole)
        bound = math.ceil((len(before) + WRITERS * WRITES) / size) + 3
        with writing(grow, pool, tag, walk.grow is not None, bound) as tempo:
            pages, walked = pg.walk(paced(listing.fetch, tempo), size, bound)
        problems += walked + tempo.problems + tempo.out.problems
        after, broken = read_all(listing)
        problems += [f"read after the walk: {p}" for p in broken]
    except httpx.HTTPError as exc:
        problems.append(f"a request failed: {type(exc).__name__}: {exc}")
        return Check(walk.subject, tuple(problems))
    seen = [k for page in pages for k in page.keys]
    problems += judge_walk(walk, before, seen, after, tempo.out.keys)
    evidence = f" (evidence: {walk.cites[0]})" if walk.cites else ""
    return Check(walk.subject, tuple(f"{p}{evidence}" for p in dict.fromkeys(problems)))


# =========================================================================== the writes


def _ok(r: httpx.Response, what: str) -> Any:
    if r.status_code >= 300:
        raise Failed(f"{what}: HTTP {r.status_code} {r.text[:160]}")
    return r.json()


R = f"/repos/{pg.REPO}"


def gh_issue(c: pg.Clients, tag: str) -> str:
    return str(_ok(c.github.post(f"{R}/issues", json={"title": tag}), "POST issues")["number"])


def gh_comment(number: int, prefix: str, c: pg.Clients, tag: str) -> str:
    made = _ok(c.github.post(f"{R}/issues/{number}/comments", json={"body": tag}), "comment")
    return f"{prefix}{made['id']}"


def gh_label(c: pg.Clients, tag: str) -> str:
    _ok(c.github.post(f"{R}/labels", json={"name": tag, "color": "ededed"}), "POST labels")
    return tag


def gh_label_on(number: int, named: bool, c: pg.Clients, tag: str) -> str | None:
    gh_label(c, tag)
    _ok(c.github.post(f"{R}/issues/{number}/labels", json={"labels": [tag]}), "add label")
    return tag if named else None


def gh_status(sha: str, c: pg.Clients, tag: str) -> str:
    body = {"state": "success", "context": tag}
    _ok(c.github.post(f"{R}/statuses/{sha}", json=body), "POST statuses")
    return tag


def gh_branch(sha: str, c: pg.Clients, tag: str) -> str:
    body = {"ref": f"refs/heads/{tag}", "sha": sha}
    _ok(c.github.post(f"{R}/git/refs", json=body), "POST git/refs")
    return tag


BASE = "cc-base"
"""A branch at the first commit: the base of the pull requests made here."""


def base_branch(c: pg.Clients, world: pg.World) -> None:
    """:data:`BASE`, made once before the walks."""
    try:
        gh_branch(world.shas["c0"], c, BASE)
    except (Failed, httpx.HTTPError) as exc:
        raise ContractSetupError(f"concurrency: cannot make the base branch: {exc}") from exc


def gh_pull(sha: str, c: pg.Clients, tag: str) -> str:
    gh_branch(sha, c, tag)
    body = {"title": tag, "head": tag, "base": BASE}
    return str(_ok(c.github.post(f"{R}/pulls", json=body), "POST pulls")["number"])


def gh_review(c: pg.Clients, tag: str) -> str:
    body = {"event": "COMMENT", "body": tag}
    _ok(c.github.post(f"{R}/pulls/{pg.RICH_PULL}/reviews", json=body), "POST reviews")
    return tag


def gh_review_comment(sha: str, c: pg.Clients, tag: str) -> str:
    body = {"body": tag, "commit_id": sha, "path": pg.FILES[0], "line": 1}
    _ok(c.github.post(f"{R}/pulls/{pg.RICH_PULL}/comments", json=body), "review comment")
    return tag


def linear(c: pg.Clients, document: str, variables: dict[str, Any], *path: str) -> Any:
    body = _ok(c.linear.post("/graphql", json={"query": document, "variables": variables}), "")
    if not isinstance(body, dict) or body.get("errors") or not body.get("data"):
        raise Failed(f"errors: {str(body)[:200]}")
    data: Any = body["data"]
    for step in path:
        data = data[step]
    return data


ISSUE_CREATE = (
    "mutation($input: IssueCreateInput!) { issueCreate(input: $input) "
    "{ success issue { identifier } } }"
)
COMMENT_CREATE = (
    "mutation($input: CommentCreateInput!) { commentCreate(input: $input) "
    "{ success comment { id } } }"
)
ISSUE_UPDATE = (
    "mutation($id: String!, $input: IssueUpdateInput!) { issueUpdate(id: $id, input: $input) "
    "{ success issue { title } } }"
)
ADD_LABEL = (
    "mutation($id: String!, $label: String!) { issueAddLabel(id: $id, labelId: $label) "
    "{ success } }"
)
ENG_1 = "li-1"


def ln_issue(c: pg.Clients, tag: str) -> str:
    """An issue in every list of ENG-1's kin: team ENG, assigned to lu-2, state ls-3, label
    ll-2, a child of ENG-1, its title holding the walks' search word."""
    values = {
        "teamId": "lt-1",
        "title": f"{pg.WORD} {tag}",
        "assigneeId": pg.L_USERS[1],
        "stateId": pg.L_STATES[2],
        "labelIds": [pg.L_LABELS[1]],
        "parentId": ENG_1,
    }
    return str(linear(c, ISSUE_CREATE, {"input": values}, "issueCreate", "issue", "identifier"))


def ln_comment(issue: str, parent: str | None, c: pg.Clients, tag: str) -> str:
    values = {"issueId": issue, "body": tag, **({"parentId": parent} if parent else {})}
    return str(linear(c, COMMENT_CREATE, {"input": values}, "commentCreate", "comment", "id"))


def ln_title(issue: str, title: str, c: pg.Clients, tag: str) -> str:
    done = f"{title} {tag}"
    linear(c, ISSUE_UPDATE, {"id": issue, "input": {"title": done}}, "issueUpdate", "issue")
    return done


@dataclass
class Fillers:
    """The seeded workspace labels ENG-1 does not have, handed out once each."""

    left: list[str] = field(default_factory=lambda: [f"lf-{i:02d}" for i in range(pg.L_FILLER)])
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, c: pg.Clients, tag: str) -> str:
        with self.lock:
            if not self.left:
                raise Failed("no seeded label left to add")
            label = self.left.pop(0)
        linear(c, ADD_LABEL, {"id": ENG_1, "label": label}, "issueAddLabel")
        return label


def slack(c: pg.Clients, method: str, body: dict[str, Any]) -> dict[str, Any]:
    answer = _ok(c.slack.post(f"/api/{method}", json=body), method)
    if not isinstance(answer, dict) or answer.get("ok") is not True:
        raise Failed(f"{method}: {str(answer)[:200]}")
    return answer


def sl_post(channel: str, thread: str | None, word: str, c: pg.Clients, tag: str) -> str:
    body = {"channel": channel, "text": f"{word}{tag}", **({"thread_ts": thread} if thread else {})}
    return str(slack(c, "chat.postMessage", body)["ts"])


# =========================================================================== the walks

T = "/repos/{owner}/{repo}"
DESC = "orderBy: {field: CREATED_AT, direction: DESC}"
AFTER = "Returns the elements in the list that come after the specified cursor."
LINEAR_AFTER = "A cursor to be used with first for forward pagination"
REST_CITES: tuple[Evidence, ...] = (
    REST_PAGES,
    octo("paginate-issues #1", "/issues?per_page=3&page=2"),
)


def github_walks(c: pg.Clients, world: pg.World) -> list[Walk]:
    """Every GitHub list the pagination family walks (REST, then GraphQL), each with the
    writes that grow it, and the variants ordered so that new items land ahead."""
    shas = world.shas
    issues = Grow("issue creates", gh_issue)
    labels = Grow("label creates", gh_label)
    statuses = Grow("status creates", partial(gh_status, shas["c5"]))
    rest: dict[str, tuple[Grow, bool]] = {
        f"GET {T}/issues": (issues, False),
        f"GET {T}/issues/{{issue_number}}/comments": (
            Grow("comments", partial(gh_comment, pg.RICH_ISSUE, "")),
            True,
        ),
        f"GET {T}/issues/{{issue_number}}/events": (
            Grow("labels added", partial(gh_label_on, pg.RICH_ISSUE, False), 2),
            False,
        ),
        f"GET {T}/issues/events": (
            Grow("labels added", partial(gh_label_on, pg.RICH_ISSUE, False), 2),
            False,
        ),
        f"GET {T}/issues/{{issue_number}}/timeline": (
            Grow("comments", partial(gh_comment, pg.RICH_ISSUE, "commented:")),
            False,
        ),
        f"GET {T}/issues/{{issue_number}}/labels": (
            Grow("labels added", partial(gh_label_on, pg.RICH_ISSUE, True), 2),
            False,
        ),
        f"GET {T}/labels": (labels, False),
        f"GET {T}/pulls": (Grow("pull request creates", partial(gh_pull, shas["c1"]), 2), False),
        f"GET {T}/pulls/{{pull_number}}/comments": (
            Grow("review comments", partial(gh_review_comment, shas["c5"])),
            True,
        ),
        f"GET {T}/pulls/{{pull_number}}/reviews": (Grow("reviews", gh_review), True),
        f"GET {T}/branches": (Grow("branch creates", partial(gh_branch, shas["merge"])), False),
        f"GET {T}/commits/{{ref}}/statuses": (statuses, False),
        f"GET {T}/statuses/{{ref}}": (statuses, False),
        "GET /search/issues": (issues, False),
    }
    walks: list[Walk] = []
    for listing in pg.github_rest_listings(c, world):
        grow, once = rest.get(listing.subject, (None, True))
        cites = REST_CITES if once else (*REST_CITES, PAGE_SHIFT)
        walks.append(Walk(listing, grow, once, cites))
    oldest = pg.rest_fetch(
        c.github,
        f"{R}/issues",
        pg.by("number"),
        {"state": "all", "sort": "created", "direction": "asc"},
    )
    walks.append(
        Walk(
            pg.Listing(f"GET {T}/issues", oldest, (), "exact", whole=pg.REST_MAX),
            issues,
            True,
            REST_CITES,
            " (sort=created&direction=asc)",
        )
    )
    target = pg.GraphQLTarget("github", c.github, graphql_schema("github"), pg.GITHUB_GRAPHQL_MAX)
    comments = Grow("comments", partial(gh_comment, pg.RICH_ISSUE, ""))
    gql_grows: dict[str, Grow] = {
        "Repository.issues": issues,
        "Repository.pullRequests": Grow("pull request creates", partial(gh_pull, shas["c1"]), 2),
        "Repository.labels": labels,
        "Issue.comments": comments,
        "Issue.labels": Grow("labels added", partial(gh_label_on, pg.RICH_ISSUE, True), 2),
        "PullRequest.comments": Grow("comments", partial(gh_comment, pg.RICH_PULL, "")),
        "PullRequest.labels": Grow("labels added", partial(gh_label_on, pg.RICH_PULL, True), 2),
        "PullRequest.reviews": Grow("reviews", gh_review),
        "StatusCheckRollup.contexts": statuses,
        "Query.search": issues,
    }
    connections = pg.github_connections(world)
    for conn in connections:
        once = conn.subject != "Query.search"
        first: Evidence = GRAPHQL_CURSOR if once else SEARCH_OFFSET
        cites = (gql(f"{conn.subject}(after:)", AFTER), first, RELAY)
        walks.append(
            Walk(pg.graphql_listing(target, conn), gql_grows.get(conn.subject), once, cites)
        )
    ahead = {
        "Repository.issues": DESC,
        "Repository.labels": DESC,
        "Issue.comments": "orderBy: {field: UPDATED_AT, direction: DESC}",
    }
    for conn in connections:
        if conn.subject in ahead:
            order = ahead[conn.subject]
            listing = pg.graphql_listing(target, replace(conn, args=order, order="exact"))
            cites = (gql(f"{conn.subject}(after:)", AFTER), GRAPHQL_CURSOR, RELAY)
            walks.append(Walk(listing, gql_grows[conn.subject], True, cites, f" ({order})"))
    return walks


def linear_walks(c: pg.Clients, fillers: Fillers) -> list[Walk]:
    target = pg.GraphQLTarget("linear", c.linear, graphql_schema("linear"), pg.LINEAR_MAX)
    issues = Grow("issue creates", ln_issue)
    comments = Grow("comments", partial(ln_comment, ENG_1, pg.L_COMMENTS[0]))
    titles = Grow("title changes", partial(ln_title, ENG_1, f"{pg.WORD} {pg.SOLO} 1"))
    labels = Grow("labels added", fillers.add, last=True)
    grows: dict[str, Grow] = {
        **dict.fromkeys(
            (
                "Query.issues",
                "Query.issueSearch",
                "Query.searchIssues",
                "Team.issues",
                "User.assignedIssues",
                "WorkflowState.issues",
                "IssueLabel.issues",
                "Issue.children",
                "IssueSearchResult.children",
            ),
            issues,
        ),
        **dict.fromkeys(
            ("Query.comments", "Issue.comments", "Comment.children", "IssueSearchResult.comments"),
            comments,
        ),
        "Issue.history": titles,
        "IssueSearchResult.history": titles,
        "Issue.labels": labels,
        "IssueSearchResult.labels": labels,
    }
    walks = []
    for conn in pg.linear_connections():
        cites = (lin(f"{conn.subject}(after:)", LINEAR_AFTER), LINEAR_PAGES, RELAY)
        listing = pg.graphql_listing(target, conn)
        walks.append(Walk(listing, grows.get(conn.subject), True, cites))
    return walks


def slack_walks(c: pg.Clients) -> list[Walk]:
    channel = pg.S_CHANNEL
    grows: dict[str, tuple[Grow, bool]] = {
        "conversations.history": (
            Grow("messages", partial(sl_post, channel, None, "")),
            True,
        ),
        "conversations.replies": (
            Grow("replies", partial(sl_post, channel, pg.S_PARENT, "")),
            True,
        ),
        "search.messages": (
            Grow("messages", partial(sl_post, channel, None, f"{pg.NEEDLE} ")),
            False,
        ),
    }
    walks = []
    for listing in pg.slack_listings(c):
        grow, once = grows.get(listing.subject, (None, True))
        if listing.subject == "search.messages":
            cites: tuple[Evidence, ...] = (
                spec("search.messages count", 'the number of results you want per "page"'),
                SLACK_PAGES,
            )
        else:
            cites = (spec(f"{listing.subject} cursor", SLACK_CURSOR), SLACK_PAGES)
        walks.append(Walk(listing, grow, once, cites))
    return walks


ELSEWHERE: dict[Service, Grow] = {
    "github": Grow("comments elsewhere", partial(gh_comment, 3, "")),
    "linear": Grow("comments elsewhere", partial(ln_comment, "li-2", None)),
    "slack": Grow("messages elsewhere", partial(sl_post, pg.S_CHANNELS[1], None, "")),
}
"""What the writers write while a list no served write grows is walked."""


# ====================================================================== one object, many writers


@dataclass(frozen=True)
class Together:
    """:data:`WRITERS` x :data:`WRITES` writes to one object, all released at once, and how
    the object must read afterwards (given the keys the writes answered)."""

    subject: str
    grow: Grow
    judge: Callable[[pg.Clients, list[str]], list[str]]
    cites: tuple[Evidence, ...]
    prepare: Callable[[pg.Clients], None] | None = None
    """Made first, by the reader: the object, where the writers need one of their own."""


def run_together(t: Together, tag: str, pool: Sequence[pg.Clients], reader: pg.Clients) -> Check:
    problems = cite_problems(t.cites)
    if t.prepare is not None:
        try:
            t.prepare(reader)
        except (Failed, httpx.HTTPError, KeyError) as exc:
            return Check(t.subject, (f"making the object: {exc}",))
    with writing(t.grow, pool, tag, keep=True) as tempo:
        tempo.release(WRITES)
    problems += tempo.problems + tempo.out.problems
    keys = [k for k in tempo.out.keys if k is not None]
    try:
        problems += t.judge(reader, keys)
    except (Failed, httpx.HTTPError, KeyError, IndexError, TypeError, ValueError) as exc:
        problems.append(f"reading it back: {type(exc).__name__}: {exc}")
    evidence = f" (evidence: {t.cites[0]})"
    return Check(t.subject, tuple(f"{p}{evidence}" for p in dict.fromkeys(problems)))


def _one_of(what: str, got: Any, keys: Sequence[str]) -> list[str]:
    if got not in keys:
        return [f"{what} is {got!r}, none of the {len(keys)} values written"]
    return []


SAME_ISSUE = 5
"""An open issue with nothing else written to it."""


def gh_title(c: pg.Clients, tag: str) -> str:
    _ok(c.github.patch(f"{R}/issues/{SAME_ISSUE}", json={"title": tag}), "PATCH issue")
    return tag


def gh_same(c: pg.Clients, keys: list[str]) -> list[str]:
    issue = _ok(c.github.get(f"{R}/issues/{SAME_ISSUE}"), "GET issue")
    out = _one_of("the title", issue["title"], keys)
    kept = {"number": SAME_ISSUE, "body": f"Body of {SAME_ISSUE}", "state": "open"}
    out += [f"{k} is {issue.get(k)!r}, was {v!r}" for k, v in kept.items() if issue.get(k) != v]
    if (issue.get("user") or {}).get("login") != "ada":
        out.append(f"the author is {issue.get('user')!r}, was ada")
    query = (
        f'{{ repository(owner: "{pg.OWNER}", name: "{pg.NAME}") '
        f"{{ issue(number: {SAME_ISSUE}) {{ title }} }} }}"
    )
    data = _ok(c.github.post("/graphql", json={"query": query}), "GraphQL issue")
    title = ((data.get("data") or {}).get("repository") or {}).get("issue", {}).get("title")
    if title != issue["title"]:
        out.append(f"GraphQL reads the title {title!r}, REST {issue['title']!r}")
    return out


def ln_same(c: pg.Clients, keys: list[str]) -> list[str]:
    query = '{ issue(id: "ENG-5") { title identifier number state { id } team { key } } }'
    issue = linear(c, query, {}, "issue")
    out = _one_of("the title", issue["title"], keys)
    kept = {"identifier": "ENG-5", "number": 5}
    out += [f"{k} is {issue.get(k)!r}, was {v!r}" for k, v in kept.items() if issue.get(k) != v]
    if issue["state"]["id"] != pg.L_STATES[2] or issue["team"]["key"] != "ENG":
        out.append(f"state or team changed: {issue['state']}, {issue['team']}")
    return out


REACTED = pg.S_MESSAGES[4]
EMOJI = (
    *("thumbsup", "heart", "smile", "tada", "eyes", "rocket", "fire", "100", "wave"),
    *("clap", "star", "zap", "sparkles", "white_check_mark", "raised_hands"),
)
"""One distinct reaction per write (:data:`WRITERS` x :data:`WRITES` of them)."""


def _message(c: pg.Clients, ts: str) -> dict[str, Any]:
    body = slack(c, "conversations.replies", {"channel": pg.S_CHANNEL, "ts": ts, "limit": 1})
    message: dict[str, Any] = body["messages"][0]
    return message


@dataclass
class BotMessage:
    """A message the bot posts, then edits from every writer at once (a bot may edit only
    its own messages: ``cant_update_message``)."""

    ts: str = ""

    def post(self, c: pg.Clients) -> None:
        self.ts = sl_post(pg.S_CHANNEL, None, "", c, "to be edited")

    def update(self, c: pg.Clients, tag: str) -> str:
        slack(c, "chat.update", {"channel": pg.S_CHANNEL, "ts": self.ts, "text": tag})
        return tag

    def judge(self, c: pg.Clients, keys: list[str]) -> list[str]:
        message = _message(c, self.ts)
        out = _one_of("the text", message.get("text"), keys)
        if message.get("ts") != self.ts or message.get("user") != pg.S_BOT:
            out.append(f"ts or user changed: {message.get('ts')}, {message.get('user')}")
        history, problems = read_all(pg.slack_listings(c)[0])
        out += [f"reading the history: {p}" for p in problems]
        if history.count(self.ts) != 1:
            out.append(f"the history holds the message {history.count(self.ts)} times")
        return out


def sl_react(c: pg.Clients, tag: str) -> str:
    w, j = (int(n) for n in tag.rsplit("-", 2)[1:])
    name = EMOJI[w * WRITES + j]
    slack(c, "reactions.add", {"channel": pg.S_CHANNEL, "timestamp": REACTED, "name": name})
    return name


def sl_reacted(c: pg.Clients, keys: list[str]) -> list[str]:
    got = {r["name"]: r for r in _message(c, REACTED).get("reactions") or []}
    out = []
    missing = [k for k in keys if k not in got]
    if missing:
        out.append(f"reactions added, not on the message: {_short(missing)}")
    wrong = [n for n, r in got.items() if r.get("count") != 1 or r.get("users") != [pg.S_BOT]]
    if wrong:
        out.append(f"reactions counted wrong: {_short(wrong)}")
    extra = sorted(set(got) - set(keys))
    if extra:
        out.append(f"reactions nobody added: {_short(extra)}")
    return out


def togethers(service: Service) -> list[Together]:
    many = f"{WRITERS}x{WRITES}"
    if service == "github":
        return [
            Together(
                f"PATCH {T}/issues/{{issue_number}} title, {many} at once",
                Grow("title changes", gh_title),
                gh_same,
                (REST_UPDATE, gql("UpdateIssueInput.title", "The title for the issue.")),
            )
        ]
    if service == "linear":
        return [
            Together(
                f"issueUpdate title, {many} at once",
                Grow("title changes", partial(ln_title, "li-5", "same")),
                ln_same,
                (lin("Mutation.issueUpdate", "Updates an issue."),),
            )
        ]
    edited = BotMessage()
    return [
        Together(
            f"chat.update text, {many} at once",
            Grow("text changes", edited.update),
            edited.judge,
            (spec("chat.update", "Updates a message."), spec("chat.update text", "New text")),
            edited.post,
        ),
        Together(
            f"reactions.add, {many} distinct names at once",
            Grow("reactions", sl_react),
            sl_reacted,
            (spec("reactions.add", "Adds a reaction to an item."),),
        ),
    ]


# =========================================================================== reports

GAPS: dict[Service, tuple[KnownGap, ...]] = {"github": (), "linear": (), "slack": ()}
"""This family's known gaps (its own: the ``gaps.json`` files are read whole by other
families, which would report these as stale)."""
SERVICES: tuple[Service, ...] = ("github", "linear", "slack")


def _wanted(subject: str, only: Sequence[str] | None) -> bool:
    return only is None or any(fnmatchcase(subject, pattern) for pattern in only)


def _run(
    walks: Sequence[Walk],
    together: Sequence[Together],
    pool: Sequence[pg.Clients],
    reader: pg.Clients,
    elsewhere: Grow,
    only: Sequence[str] | None,
) -> dict[str, Check]:
    """Every wanted check by subject: first the walks under writes elsewhere (so each reads
    the lists as seeded), then the walks that grow their lists, then the writes together."""
    chosen = [w for w in walks if _wanted(w.subject, only)]
    ordered = sorted(chosen, key=lambda w: (w.grow is not None, w.grow is not None and w.grow.last))
    out: dict[str, Check] = {}
    for n, walk in enumerate(ordered):
        out[walk.subject] = run_walk(walk, f"cc{n}", pool, elsewhere)
    for n, t in enumerate(together):
        if _wanted(t.subject, only):
            out[t.subject] = run_together(t, f"same{n}", pool, reader)
    return out


def _report(
    service: Service, directory: Path, subjects: Sequence[str], checks: dict[str, Check]
) -> Report:
    mine = [checks[s] for s in subjects if s in checks]
    gaps = [g for g in GAPS[service] if any(fnmatchcase(c.subject, g.subject) for c in mine)]
    return apply_gaps(service, FAMILY, load_source(directory), mine, gaps)


def reports(
    wrap: Wrap | None = None,
    *,
    services: Sequence[Service] = SERVICES,
    only: Sequence[str] | None = None,
) -> list[Report]:
    """The family on a freshly served seeded world (whose apps ``wrap`` may break): GitHub
    REST, GitHub GraphQL, Linear and Slack. ``only`` (fnmatch patterns over subjects) runs
    just those checks, for tests that plant one fault."""
    out: list[Report] = []
    with pg.seeded(services, wrap) as (clients, world):
        urls: dict[str, str] = {s: str(getattr(clients, s).base_url) for s in services}
        pool = [pg.Clients(urls) for _ in range(WRITERS)]
        try:
            if "github" in services:
                base_branch(clients, world)
                walks = github_walks(clients, world)
                checks = _run(walks, togethers("github"), pool, clients, ELSEWHERE["github"], only)
                rest = [w.subject for w in walks if w.listing.subject.startswith("GET ")]
                rest += [t.subject for t in togethers("github")]
                graph = [w.subject for w in walks if not w.listing.subject.startswith("GET ")]
                out.append(_report("github", pg.OCTOKIT_DIR, rest, checks))
                out.append(_report("github", pg.GITHUB_GRAPHQL_DIR, graph, checks))
            if "linear" in services:
                walks = linear_walks(clients, Fillers())
                together = togethers("linear")
                checks = _run(walks, together, pool, clients, ELSEWHERE["linear"], only)
                subjects = [w.subject for w in walks] + [t.subject for t in together]
                out.append(_report("linear", pg.LINEAR_DIR, subjects, checks))
            if "slack" in services:
                walks = slack_walks(clients)
                together = togethers("slack")
                checks = _run(walks, together, pool, clients, ELSEWHERE["slack"], only)
                subjects = [w.subject for w in walks] + [t.subject for t in together]
                out.append(_report("slack", pg.SLACK_DIR, subjects, checks))
        finally:
            for c in pool:
                c.close()
    return out
