"""Mutation testing of the fakes: behavioural faults planted on purpose, one at a time, in a
copy of a fake, and which of them the evidence from outside the project catches.

Each :class:`Mutant` is a fault a fake could plausibly grow: an argument ignored, pagination
that ends early or never ends, a wrong error status or envelope, a write that does not show
in a read, a success status swapped, a field the vendor requires dropped, a wrong value.
:func:`run_mutants` runs the evidence families (``FAMILIES`` of
:mod:`replay.contract.evidence.families`, and nothing else: the project's own scenarios
compared with the fake's own recordings are not evidence and are never consulted) on the
unmodified fakes and then with each mutant planted. A mutant is *caught* when a check that is
not a failure on the unmodified fake is one with the mutant (a known gap excuses a difference
on both), or when a family cannot finish with it.

Where a mutant is planted: every family builds its worlds with
:func:`fakes.core.server.build_world`, which calls the ``install(world)`` of each fake's module
(:data:`fakes.core.server.FAKES`). While a mutant runs, that ``install`` is wrapped: the fake
is installed as usual, then the mutant replaces methods on *that world's* backend object, or
wraps *that world's* app in a middleware that rewrites requests or answers. The fake's
classes and modules are never changed, and the wrapper is removed when the run ends, so
nothing carries over to the next mutant or to the real fakes.

To keep a run to minutes, a mutant of one service runs only the families that report on that
service, the cheapest first (by their time on the unmodified fakes), narrowed to that service
where a family can be (:data:`NARROW`), and stops at the first family that catches it;
``every_family=True`` runs them all and names every family that catches it.
"""

from __future__ import annotations

import importlib
import inspect
import json
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal, cast, get_args
from urllib.parse import parse_qsl, urlencode

from fakes.core.server import FAKES, ASGIApp, Message, Receive, Scope, Send
from fakes.core.world import World
from replay.contract.evidence import Report, Service, pagination, writes
from replay.contract.evidence.families import FAMILIES

SERVICES = cast(tuple[Service, ...], tuple(FAKES))
"""The services with a fake, in the registry's order (the figure's)."""

Kind = Literal[
    "argument ignored",
    "pagination ends early",
    "pagination never ends",
    "wrong error status",
    "wrong error envelope",
    "write not read",
    "status swapped",
    "field dropped",
    "wrong value",
]
KINDS: tuple[Kind, ...] = get_args(Kind)

Plant = Callable[[Any, ASGIApp], ASGIApp]
"""Plants a fault in one world's fake: given its backend object and its app, changes the
backend's methods in place and returns the app to serve (the same, or a wrapper)."""


@dataclass(frozen=True)
class Mutant:
    """One behavioural fault planted in a copy of one fake."""

    name: str
    """Short and stable (``merge-ignores-method``)."""
    kind: Kind
    service: Service
    fault: str
    """What the fake does wrong, in a sentence."""
    plant: Plant


# ============================================================ planting in the backend


def _method_of(backend: Any, path: str) -> tuple[Any, str]:
    *owners, name = path.split(".")
    obj = backend
    for owner in owners:
        obj = getattr(obj, owner)
    return obj, name


def replacing(path: str, make: Callable[[Callable[..., Any]], Callable[..., Any]]) -> Plant:
    """A plant that replaces the backend's method at ``path`` (``pulls.merge``) with
    ``make(the method)``, on that world's backend object only."""

    def plant(backend: Any, app: ASGIApp) -> ASGIApp:
        obj, name = _method_of(backend, path)
        setattr(obj, name, make(getattr(obj, name)))
        return app

    return plant


def without(argument: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The method called as if ``argument`` had not been given (its default used)."""

    def make(real: Callable[..., Any]) -> Callable[..., Any]:
        signature = inspect.signature(real)

        def ignoring(*args: Any, **kwargs: Any) -> Any:
            bound = signature.bind(*args, **kwargs)
            bound.arguments.pop(argument, None)
            return real(*bound.args, **bound.kwargs)

        return ignoring

    return make


def without_key(argument: str, key: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The method called with ``key`` left out of its dict ``argument`` (an input object)."""

    def make(real: Callable[..., Any]) -> Callable[..., Any]:
        signature = inspect.signature(real)

        def ignoring(*args: Any, **kwargs: Any) -> Any:
            bound = signature.bind(*args, **kwargs)
            data = bound.arguments[argument]
            bound.arguments[argument] = {k: v for k, v in data.items() if k != key}
            return real(*bound.args, **bound.kwargs)

        return ignoring

    return make


def _github_comments_unlisted(backend: Any, app: ASGIApp) -> ASGIApp:
    """Comments made in this world answer their create and their own GET, but an issue's list
    of comments leaves them out."""
    issues = backend.issues
    made: set[int] = set()
    add, page = issues.add_comment, issues.comments_page

    def add_comment(*args: Any, **kwargs: Any) -> Any:
        comment = add(*args, **kwargs)
        made.add(int(comment.id))
        return comment

    def comments_page(*args: Any, **kwargs: Any) -> tuple[list[Any], int]:
        rows, total = page(*args, **kwargs)
        kept = [c for c in rows if c.id not in made]
        return kept, total - (len(rows) - len(kept))

    issues.add_comment, issues.comments_page = add_comment, comments_page
    return app


def _linear_comments_unlisted(backend: Any, app: ASGIApp) -> ASGIApp:
    """Comments made in this world answer their ``commentCreate``, but every list of comments
    (an issue's, the workspace's) leaves them out, by Linear's own ``id: {nin}`` filter."""
    made: set[str] = set()
    create, listed = backend.create_comment, backend.comments

    def create_comment(*args: Any, **kwargs: Any) -> Any:
        comment = create(*args, **kwargs)
        made.add(str(comment.id))
        return comment

    def comments(s: Any, viewer: str, filter: Any = None, order_by: str = "createdAt") -> Any:
        if made:
            hide = {"id": {"nin": sorted(made)}}
            filter = {"and": [filter, hide]} if filter else hide
        return listed(s, viewer, filter, order_by)

    backend.create_comment, backend.comments = create_comment, comments
    return app


# ============================================================ planting in the wire


@dataclass
class Answer:
    """One JSON answer of a fake as a mutant may rewrite it, beside the request it answers."""

    method: str
    path: str
    base: str
    """``scheme://host`` the request was sent to."""
    request: dict[str, Any]
    """The request's query parameters, then its form or JSON body's fields."""
    status: int
    headers: list[tuple[bytes, bytes]]
    body: Any

    def header(self, name: str) -> str | None:
        key = name.lower().encode()
        return next((v.decode() for k, v in self.headers if k.lower() == key), None)

    def set_header(self, name: str, value: str | None) -> None:
        key = name.lower().encode()
        self.headers = [(k, v) for k, v in self.headers if k.lower() != key]
        if value is not None:
            self.headers.append((key, value.encode()))


Rewrite = Callable[[Answer], None]


def _request_fields(scope: Scope, body: bytes) -> dict[str, Any]:
    fields: dict[str, Any] = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
    kind = dict(scope.get("headers", [])).get(b"content-type", b"")
    try:
        if b"json" in kind and body:
            data = json.loads(body)
            if isinstance(data, dict):
                fields.update(data)
        elif b"form" in kind:
            fields.update(parse_qsl(body.decode()))
    except (ValueError, UnicodeDecodeError):
        pass  # a body the fake itself must refuse: nothing for a mutant to read
    return fields


def rewriting(rewrite: Rewrite, query: Callable[[str], str] | None = None) -> Plant:
    """A plant that serves the app behind a middleware: each JSON answer goes through
    ``rewrite`` (other answers, such as git's, pass untouched); ``query`` rewrites each
    request's query string first."""

    def plant(_backend: Any, app: ASGIApp) -> ASGIApp:
        async def mutated(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] != "http":
                await app(scope, receive, send)
                return
            if query is not None:
                scope = dict(scope)
                asked = scope.get("query_string", b"").decode("latin-1")
                scope["query_string"] = query(asked).encode("latin-1")
            sent: list[bytes] = []
            start: Message | None = None
            chunks: list[bytes] = []

            async def reading() -> Message:
                message = await receive()
                if message["type"] == "http.request":
                    sent.append(message.get("body", b""))
                return message

            async def capture(message: Message) -> None:
                nonlocal start
                if message["type"] == "http.response.start":
                    kind = dict(message.get("headers", [])).get(b"content-type", b"")
                    if b"json" in kind:
                        start = message
                    else:
                        await send(message)
                    return
                if start is None or message["type"] != "http.response.body":
                    await send(message)
                    return
                chunks.append(message.get("body", b""))
                if message.get("more_body"):
                    return
                await send_rewritten(scope, start, b"".join(chunks), b"".join(sent), send)

            await app(scope, reading, capture)

        return mutated

    async def send_rewritten(
        scope: Scope, start: Message, raw: bytes, asked: bytes, send: Send
    ) -> None:
        headers = [(k, v) for k, v in start.get("headers", []) if k.lower() != b"content-length"]
        status = int(start["status"])
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        if body is not None:
            host = dict(scope.get("headers", [])).get(b"host", b"").decode()
            answer = Answer(
                scope["method"],
                scope.get("path", ""),
                f"{scope.get('scheme', 'http')}://{host}",
                _request_fields(scope, asked),
                status,
                headers,
                body,
            )
            rewrite(answer)
            status, headers = answer.status, answer.headers
            raw = json.dumps(answer.body).encode()
        headers.append((b"content-length", str(len(raw)).encode()))
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": raw})

    return plant


def _dicts(data: Any) -> Iterator[dict[str, Any]]:
    """Every object in a JSON value, outermost first."""
    if isinstance(data, dict):
        yield data
        for value in data.values():
            yield from _dicts(value)
    elif isinstance(data, list):
        for value in data:
            yield from _dicts(value)


def _links(value: str | None) -> list[tuple[str, str]]:
    """A ``Link`` header as (url, rel) pairs."""
    out: list[tuple[str, str]] = []
    for part in (value or "").split(","):
        url, _, rest = part.strip().partition(">;")
        rel = rest.split('rel="', 1)[-1].split('"', 1)[0] if 'rel="' in rest else ""
        if url.startswith("<"):
            out.append((url[1:], rel))
    return out


def _set_links(a: Answer, links: list[tuple[str, str]]) -> None:
    a.set_header("link", ", ".join(f'<{url}>; rel="{rel}"' for url, rel in links) or None)


def _github_last_page(a: Answer) -> None:
    """Every page says it is the last: ``Link`` loses ``next`` and ``last``."""
    if a.header("link") is not None:
        _set_links(a, [(u, r) for u, r in _links(a.header("link")) if r not in ("next", "last")])


def _github_endless(a: Answer) -> None:
    """Every page of a list says there is a next one: ``Link`` gains ``rel="next"`` to the
    page after this one where it had none."""
    links = _links(a.header("link"))
    if a.method != "GET" or a.status != 200 or not isinstance(a.body, list):
        return
    if any(rel == "next" for _, rel in links):
        return
    query = {k: str(v) for k, v in a.request.items()}
    query["page"] = str(int(query.get("page", "1") or "1") + 1)
    _set_links(a, [*links, (f"{a.base}{a.path}?{urlencode(query)}", "next")])


def _status(old: int, new: int) -> Rewrite:
    def swap(a: Answer) -> None:
        if a.status == old:
            a.status = new

    return swap


def _github_bare_not_found(a: Answer) -> None:
    """A 404's body without ``message`` and ``documentation_url``."""
    if a.status == 404 and isinstance(a.body, dict):
        a.body = {k: v for k, v in a.body.items() if k not in ("message", "documentation_url")}


def _page_info(more: bool) -> Rewrite:
    def rewrite(a: Answer) -> None:
        for obj in _dicts(a.body):
            if "hasNextPage" in obj:
                obj["hasNextPage"] = more

    return rewrite


def _github_total_plus_one(a: Answer) -> None:
    """Every GraphQL ``totalCount`` one more than the list holds."""
    for obj in _dicts(a.body):
        if isinstance(obj.get("totalCount"), int):
            obj["totalCount"] += 1


def _untyped_errors(a: Answer) -> None:
    """GraphQL errors without their ``type`` (GitHub's beside ``message``, Linear's in
    ``extensions``)."""
    if isinstance(a.body, dict):
        for error in a.body.get("errors") or []:
            if isinstance(error, dict):
                error.pop("type", None)
                if isinstance(error.get("extensions"), dict):
                    error["extensions"].pop("type", None)


def _slack_cursor_ends(a: Answer) -> None:
    """Every cursor page says it is the last: ``next_cursor`` empty, ``has_more`` false."""
    if not isinstance(a.body, dict):
        return
    meta = a.body.get("response_metadata")
    if isinstance(meta, dict) and meta.get("next_cursor"):
        meta["next_cursor"] = ""
        if "has_more" in a.body:
            a.body["has_more"] = False


def _slack_cursor_repeats(a: Answer) -> None:
    """The last page of a cursor walk hands back the cursor it was asked with."""
    if not isinstance(a.body, dict) or not a.request.get("cursor"):
        return
    meta = a.body.get("response_metadata")
    if isinstance(meta, dict) and not meta.get("next_cursor"):
        meta["next_cursor"] = str(a.request["cursor"])
        if "has_more" in a.body:
            a.body["has_more"] = True


def _slack_error(change: Callable[[Answer], None]) -> Rewrite:
    def rewrite(a: Answer) -> None:
        if isinstance(a.body, dict) and a.body.get("ok") is False:
            change(a)

    return rewrite


def _slack_no_code(a: Answer) -> None:
    a.body.pop("error", None)


def _slack_posted_without_channel(a: Answer) -> None:
    """``chat.postMessage``'s answer without ``channel``."""
    if a.path.endswith("/chat.postMessage") and isinstance(a.body, dict) and a.body.get("ok"):
        a.body.pop("channel", None)


def _drop_query(name: str) -> Callable[[str], str]:
    return lambda query: urlencode([(k, v) for k, v in parse_qsl(query) if k != name])


MUTANTS: tuple[Mutant, ...] = (
    Mutant(
        "merge-ignores-method",
        "argument ignored",
        "github",
        "merging a pull request (REST and GraphQL) ignores the merge method: always a merge commit",
        replacing("pulls.merge", without("method")),
    ),
    Mutant(
        "per-page-ignored",
        "argument ignored",
        "github",
        "REST lists ignore per_page: always pages of the default 30",
        rewriting(lambda a: None, query=_drop_query("per_page")),
    ),
    Mutant(
        "link-without-next",
        "pagination ends early",
        "github",
        "REST lists' Link header never has next or last: every page says it is the last",
        rewriting(_github_last_page),
    ),
    Mutant(
        "link-never-ends",
        "pagination never ends",
        "github",
        "REST lists' Link header always has a next page, past the end too",
        rewriting(_github_endless),
    ),
    Mutant(
        "not-found-as-200",
        "wrong error status",
        "github",
        "a 404 is answered with status 200 (the same body)",
        rewriting(_status(404, 200)),
    ),
    Mutant(
        "not-found-bare",
        "wrong error envelope",
        "github",
        "a 404's body has no message and no documentation_url",
        rewriting(_github_bare_not_found),
    ),
    Mutant(
        "graphql-errors-without-type",
        "wrong error envelope",
        "github",
        "GraphQL errors have no type (NOT_FOUND...)",
        rewriting(_untyped_errors),
    ),
    Mutant(
        "comment-not-listed",
        "write not read",
        "github",
        "a comment made answers 201, but the issue's list of comments leaves it out",
        _github_comments_unlisted,
    ),
    Mutant(
        "created-as-200",
        "status swapped",
        "github",
        "every 201 Created is answered as 200",
        rewriting(_status(201, 200)),
    ),
    Mutant(
        "total-count-off-by-one",
        "wrong value",
        "github",
        "every GraphQL totalCount is one more than the list holds",
        rewriting(_github_total_plus_one),
    ),
    Mutant(
        "issue-update-ignores-state",
        "argument ignored",
        "linear",
        "issueUpdate ignores stateId",
        replacing("update_issue", without_key("data", "stateId")),
    ),
    Mutant(
        "has-next-page-false",
        "pagination ends early",
        "linear",
        "pageInfo.hasNextPage is always false",
        rewriting(_page_info(False)),
    ),
    Mutant(
        "has-next-page-true",
        "pagination never ends",
        "linear",
        "pageInfo.hasNextPage is always true",
        rewriting(_page_info(True)),
    ),
    Mutant(
        "errors-without-type",
        "wrong error envelope",
        "linear",
        "GraphQL errors' extensions have no type",
        rewriting(_untyped_errors),
    ),
    Mutant(
        "comment-not-listed",
        "write not read",
        "linear",
        "a comment made answers commentCreate, but no list of comments holds it",
        _linear_comments_unlisted,
    ),
    Mutant(
        "post-ignores-thread-ts",
        "argument ignored",
        "slack",
        "chat.postMessage ignores thread_ts: a reply is posted to the channel",
        replacing("post_message", without("thread_ts")),
    ),
    Mutant(
        "next-cursor-empty",
        "pagination ends early",
        "slack",
        "response_metadata.next_cursor is always empty (has_more false)",
        rewriting(_slack_cursor_ends),
    ),
    Mutant(
        "next-cursor-repeats",
        "pagination never ends",
        "slack",
        "the last page of a cursor walk hands back its own cursor (has_more true)",
        rewriting(_slack_cursor_repeats),
    ),
    Mutant(
        "error-as-http-400",
        "wrong error status",
        "slack",
        "an ok: false answer comes with HTTP 400 instead of 200",
        rewriting(_slack_error(lambda a: setattr(a, "status", 400))),
    ),
    Mutant(
        "error-without-code",
        "wrong error envelope",
        "slack",
        "an ok: false answer has no error",
        rewriting(_slack_error(_slack_no_code)),
    ),
    Mutant(
        "posted-without-channel",
        "field dropped",
        "slack",
        "chat.postMessage's answer has no channel",
        rewriting(_slack_posted_without_channel),
    ),
)
"""Every mutant, by service."""


@contextmanager
def planted(mutant: Mutant) -> Iterator[None]:
    """While inside, every world built gets ``mutant`` planted in its fake of the mutant's
    service (see the module docstring); afterwards the fake's module is as it was."""
    module: Any = importlib.import_module(FAKES[mutant.service])
    real = module.install

    def install(world: World, *args: Any, **kwargs: Any) -> ASGIApp:
        app = real(world, *args, **kwargs)
        return mutant.plant(world.fakes[mutant.service], app)

    module.install = install
    try:
        yield
    finally:
        module.install = real


# ============================================================ running the families

Family = Callable[[], list[Report]]

NARROW: Mapping[Callable[..., list[Report]], Callable[[Service], dict[str, Any]]] = {
    pagination.reports: lambda s: {"services": (s,)},
    writes.reports: lambda s: {"only": lambda w: w.service == s},
}
"""The arguments that narrow a family to one service, for those that take one; the others
run whole and their reports are read for the service."""


def family_name(family: Family) -> str:
    """``pagination`` for :func:`replay.contract.evidence.pagination.reports`."""
    return family.__module__.rsplit(".", 1)[-1]


@dataclass(frozen=True)
class FamilyRun:
    """One family's reports and how long it took."""

    family: Family
    reports: list[Report]
    seconds: float


def run_family(family: Family, service: Service | None = None) -> FamilyRun:
    """``family`` run whole, or narrowed to ``service`` where :data:`NARROW` knows how (its
    reports then kept for ``service`` only)."""
    narrow = NARROW.get(family) if service is not None else None
    began = time.monotonic()
    run = cast(Callable[..., list[Report]], family)
    found = run(**narrow(service)) if narrow and service else run()
    if service is not None:
        found = [r for r in found if r.service == service]
    return FamilyRun(family, found, time.monotonic() - began)


def _failures(reports: list[Report], service: Service) -> frozenset[str]:
    return frozenset(
        f"{r.family}: {c.subject}" for r in reports if r.service == service for c in r.failures
    )


@dataclass(frozen=True)
class Baseline:
    """One family on the unmodified fakes, for one service."""

    family: Family
    failures: frozenset[str]
    """Its checks that already fail there (``<report family>: <subject>``)."""
    seconds: float


def baselines(
    services: Sequence[Service],
    families: Sequence[Family] = FAMILIES,
    unmodified: Sequence[FamilyRun] = (),
) -> dict[Service, list[Baseline]]:
    """Per service, the families that report on it, on the unmodified fakes, cheapest first.
    A family :data:`NARROW` narrows is run narrowed, as its mutants will be; the others are
    run whole once (or taken from ``unmodified``, whole runs already made)."""
    whole = {run.family: run for run in unmodified}
    out: dict[Service, list[Baseline]] = {}
    for service in services:
        found: list[Baseline] = []
        for family in families:
            if family in NARROW:
                run = run_family(family, service)
            else:
                known = whole.get(family)
                run = whole[family] = known if known is not None else run_family(family)
            if any(r.service == service for r in run.reports):
                found.append(Baseline(family, _failures(run.reports, service), run.seconds))
        out[service] = sorted(found, key=lambda b: b.seconds)
    return out


@dataclass(frozen=True)
class Catch:
    """A family that caught a mutant."""

    family: str
    failures: tuple[str, ...]
    """Its checks that failed with the mutant and not without (``<report family>:
    <subject>``)."""
    stopped: str | None = None
    """Set when the family could not finish with the mutant planted: the exception."""

    def describe(self) -> str:
        if self.stopped:
            return f"{self.family} (stopped: {self.stopped[:160]})"
        return f"{self.family} ({len(self.failures)} checks, e.g. {self.failures[0]})"


@dataclass(frozen=True)
class MutantResult:
    """What the evidence made of one mutant."""

    mutant: Mutant
    caught_by: tuple[Catch, ...]
    tried: tuple[str, ...]
    """The families run with it, in order."""

    @property
    def caught(self) -> bool:
        return bool(self.caught_by)

    def line(self) -> str:
        m = self.mutant
        what = f"{m.service} {m.name} ({m.kind})"
        if self.caught:
            return f"{what}: caught by {', '.join(c.family for c in self.caught_by)}"
        return f"{what}: NOT caught by {', '.join(self.tried) or 'any family'}: {m.fault}"


def try_family(mutant: Mutant, base: Baseline) -> Catch | None:
    """One family run with ``mutant`` planted: a :class:`Catch` when it notices."""
    name = family_name(base.family)
    try:
        with planted(mutant):
            run = run_family(base.family, mutant.service)
    except Exception as exc:  # a family that cannot finish with the fault has noticed it
        return Catch(name, (), f"{type(exc).__name__}: {exc}")
    new = sorted(_failures(run.reports, mutant.service) - base.failures)
    return Catch(name, tuple(new)) if new else None


def try_mutant(mutant: Mutant, bases: Sequence[Baseline], every_family: bool) -> MutantResult:
    """``mutant`` through the families of ``bases`` in order, up to the first that catches it
    (all of them with ``every_family``)."""
    caught: list[Catch] = []
    tried: list[str] = []
    for base in bases:
        tried.append(family_name(base.family))
        catch = try_family(mutant, base)
        if catch is not None:
            caught.append(catch)
            if not every_family:
                break
    return MutantResult(mutant, tuple(caught), tuple(tried))


@dataclass
class MutationReport:
    """Every mutant tried, and what caught it."""

    services: tuple[Service, ...]
    results: list[MutantResult] = field(default_factory=list)

    def counts(self, service: Service) -> tuple[int, int]:
        """(caught, total) for ``service``."""
        mine = [r for r in self.results if r.mutant.service == service]
        return sum(1 for r in mine if r.caught), len(mine)

    @property
    def caught(self) -> int:
        return sum(1 for r in self.results if r.caught)

    @property
    def uncaught(self) -> list[MutantResult]:
        return [r for r in self.results if not r.caught]

    def figure(self) -> str:
        """``mutants caught by evidence from outside: N/M (github a/b, ...)``."""
        per = ", ".join(f"{s} {'/'.join(map(str, self.counts(s)))}" for s in self.services)
        return f"mutants caught by evidence from outside: {self.caught}/{len(self.results)} ({per})"

    def lines(self, every: bool = False) -> list[str]:
        """The figure, then a line per mutant not caught (with ``every``, per mutant)."""
        shown = self.results if every else self.uncaught
        return [self.figure(), *(f"  {r.line()}" for r in shown)]


Progress = Callable[[int, int, MutantResult], None]
"""Told after each mutant: its position (from 1), how many there are, its result."""


def run_mutants(
    services: Sequence[str],
    mutants: Sequence[Mutant] = MUTANTS,
    *,
    every_family: bool = False,
    progress: Progress | None = None,
    families: Sequence[Family] = FAMILIES,
    unmodified: Sequence[FamilyRun] = (),
) -> MutationReport:
    """Every mutant of ``services`` planted in turn and held to the outside evidence's
    ``families`` (see the module docstring): per service how many were caught, and by which
    family. ``unmodified`` may hand in whole runs of the families already made on the
    unmodified fakes (``replay contract run`` does). Minutes: each mutant runs its service's
    families afresh."""
    chosen = tuple(s for s in SERVICES if s in services)
    todo = [m for m in mutants if m.service in chosen]
    bases = baselines(tuple({m.service: None for m in todo}), families, unmodified)
    report = MutationReport(chosen)
    for i, mutant in enumerate(todo, 1):
        result = try_mutant(mutant, bases[mutant.service], every_family)
        report.results.append(result)
        if progress is not None:
            progress(i, len(todo), result)
    return report
