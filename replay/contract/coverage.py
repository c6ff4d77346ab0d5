"""The coverage table: per service, what the fake implements (introspected: the FastAPI
routes of GitHub's REST app, Slack's method table, the GraphQL schemas' root fields), what
the recorded runs were seen calling, and what agents are known to call (field notes, §1-4);
anything called or expected but not implemented is *missing*. Generated, never hand-written.
"""

from __future__ import annotations

import itertools
import json
import re
import shlex
from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from graphql import FieldNode, GraphQLObjectType, OperationDefinitionNode, parse

from replay.contract.recording import Exchange, Recording
from replay.contract.schema import graphql_schema

COVERAGE_FILE = Path(__file__).resolve().parents[2] / "contract_tests" / "COVERAGE.md"
HARNESS_CALLS = COVERAGE_FILE.parent / "harness-calls"
"""Harness runs' logs, vendored: ``<case>/<trajectory>/transcript.jsonl`` and ``events.jsonl``
as ``replay run`` wrote them (the command is in the README there)."""

GIT_ENDPOINTS = {
    "git GET /{}/{}.git/info/refs": "/o/r.git/info/refs",
    "git POST /{}/{}.git/git-upload-pack": "/o/r.git/git-upload-pack",
    "git POST /{}/{}.git/git-receive-pack": "/o/r.git/git-receive-pack",
}
"""Smart HTTP's endpoints (field notes §2), each with a path the fake's router is asked about."""

EXPECTED: dict[str, tuple[str, ...]] = {
    # Field notes §1 (gh's REST calls) and §2 (the GitHub MCP server's tools).
    "github": (
        "GET /",
        "GET /user",
        "GET /repos/{}/{}/readme",
        "POST /repos/{}/{}/forks",
        "GET /repos/{}/{}/issues",
        "POST /repos/{}/{}/issues",
        "GET /repos/{}/{}/issues/{}",
        "PATCH /repos/{}/{}/issues/{}",
        "GET /repos/{}/{}/issues/{}/comments",
        "POST /repos/{}/{}/issues/{}/comments",
        "GET /search/issues",
        "GET /search/code",
        "GET /repos/{}/{}/pulls/{}",
        "POST /repos/{}/{}/pulls",
        "GET /repos/{}/{}/pulls/{}/files",
        "GET /repos/{}/{}/pulls/{}/reviews",
        "POST /repos/{}/{}/pulls/{}/reviews",
        "PUT /repos/{}/{}/pulls/{}/merge",
        "GET /repos/{}/{}/commits",
        "GET /repos/{}/{}/contents/{}",
        "PUT /repos/{}/{}/contents/{}",
        "GET /repos/{}/{}/branches",
        "GET /repos/{}/{}/git/ref/{}",
        "graphql query repository",
        "graphql query node",
        "graphql query search",
        "graphql mutation createPullRequest",
        "graphql mutation addComment",
        *GIT_ENDPOINTS,
    ),
    # Field notes §3: the methods whose behaviour the notes describe.
    "slack": (
        "chat.postMessage",
        "chat.update",
        "conversations.history",
        "conversations.replies",
        "reactions.add",
        "search.messages",
    ),
    # Field notes §4: Linear's queries and mutations agents use.
    "linear": (
        "graphql query issue",
        "graphql query issues",
        "graphql query searchIssues",
        "graphql query viewer",
        "graphql query team",
        "graphql query teams",
        "graphql query workflowStates",
        "graphql query users",
        "graphql query issueLabels",
        "graphql mutation issueCreate",
        "graphql mutation issueUpdate",
        "graphql mutation commentCreate",
    ),
}


EVENT_OPERATIONS: dict[str, tuple[str, str]] = {
    "github.issue.opened": ("github", "POST /repos/{}/{}/issues"),
    "github.issue.updated": ("github", "PATCH /repos/{}/{}/issues/{}"),
    "github.issue_comment.created": ("github", "POST /repos/{}/{}/issues/{}/comments"),
    "github.pull_request.opened": ("github", "POST /repos/{}/{}/pulls"),
    "github.pull_request.updated": ("github", "PATCH /repos/{}/{}/pulls/{}"),
    "github.pull_request.merged": ("github", "PUT /repos/{}/{}/pulls/{}/merge"),
    "github.pull_request_review.submitted": ("github", "POST /repos/{}/{}/pulls/{}/reviews"),
    "github.review_comment.created": ("github", "POST /repos/{}/{}/pulls/{}/comments"),
    "github.contents.updated": ("github", "PUT /repos/{}/{}/contents/{}"),
    "github.contents.deleted": ("github", "DELETE /repos/{}/{}/contents/{}"),
    "github.commit.created": ("github", "graphql mutation createCommitOnBranch"),
    "github.label.added": ("github", "POST /repos/{}/{}/issues/{}/labels"),
    "github.label.removed": ("github", "DELETE /repos/{}/{}/issues/{}/labels/{}"),
    "github.label.created": ("github", "POST /repos/{}/{}/labels"),
    "github.label.updated": ("github", "PATCH /repos/{}/{}/labels/{}"),
    "github.label.deleted": ("github", "DELETE /repos/{}/{}/labels/{}"),
    "github.status.created": ("github", "POST /repos/{}/{}/statuses/{}"),
    "git.push": ("github", "git POST /{}/{}.git/git-receive-pack"),
    "slack.message.posted": ("slack", "chat.postMessage"),
    "slack.message.updated": ("slack", "chat.update"),
    "slack.message.deleted": ("slack", "chat.delete"),
    "slack.reaction.added": ("slack", "reactions.add"),
    "slack.reaction.removed": ("slack", "reactions.remove"),
    "slack.channel.joined": ("slack", "conversations.join"),
    "linear.issue.created": ("linear", "graphql mutation issueCreate"),
    "linear.issue.updated": ("linear", "graphql mutation issueUpdate"),
    "linear.comment.created": ("linear", "graphql mutation commentCreate"),
}
"""An agent run's event kinds (fakes/README.md) -> the operation that makes them. Events are
mutations only, and say nothing of the route: a GitHub write is counted under its REST
endpoint even when the agent went through GraphQL (``gh pr create``). Semantic kinds
(``github.branch.moved``...) restate another event's change and are not counted."""


def event_calls(paths: list[Path]) -> Counter[tuple[str, str]]:
    """(service, operation) counts from event logs (``events.jsonl``, one event a line)."""
    counts: Counter[tuple[str, str]] = Counter()
    for path in paths:
        for line in path.read_text().splitlines():
            if line.strip():
                kind = json.loads(line).get("kind", "")
                if kind in EVENT_OPERATIONS:
                    counts[EVENT_OPERATIONS[kind]] += 1
    return counts


def _template(path: str) -> str:
    return re.sub(r"\{[^}]*\}", "{}", path)


def _fastapi(app: Any) -> FastAPI:
    seen = 0
    while not isinstance(app, FastAPI):
        app = app.app
        seen += 1
        if seen > 10:
            raise TypeError("no FastAPI app inside the GitHub REST app")
    return app


def github_rest_routes() -> dict[str, re.Pattern[str]]:
    """``METHOD /template`` -> a pattern of its paths, for every REST route (root and
    ``/api/v3`` as one). Read through FastAPI's public OpenAPI generator, which sees every
    included router."""
    from fakes.core.world import World
    from fakes.github.backend import GitHubBackend
    from fakes.github.routes import make_rest_app
    from replay.base.snapshot import load_snapshot
    from replay.contract.targets import DEFAULT_SNAPSHOT

    world = World(load_snapshot(DEFAULT_SNAPSHOT))
    backend = GitHubBackend(world)
    try:
        app = _fastapi(make_rest_app(backend))
    finally:
        close: Any = getattr(backend, "close", None)
        if callable(close):
            close()
        world.engine.dispose()
    paths = get_openapi(title="github", version="0", routes=app.routes)["paths"]
    out: dict[str, re.Pattern[str]] = {}
    for path, ops in paths.items():
        if path.startswith("/api/v3"):
            continue
        pattern = re.compile("^" + re.sub(r"\\\{[^}]*\\\}", "[^/]+", re.escape(path)) + "$")
        if path.endswith("}") and ("{path" in path or "{ref" in path):
            pattern = re.compile(pattern.pattern.removesuffix("[^/]+$") + ".+$")
        for method in sorted(ops):
            out[f"{method.upper()} {_template(path)}"] = pattern
    return out


def graphql_roots(service: str) -> list[str]:
    schema = graphql_schema(service)
    out = []
    for kind, root in (("query", schema.query_type), ("mutation", schema.mutation_type)):
        if isinstance(root, GraphQLObjectType):
            out += [f"graphql {kind} {name}" for name in root.fields]
    return out


def git_endpoints() -> list[str]:
    """The smart HTTP endpoints the GitHub app hands to git (asked of its own dispatcher)."""
    from fakes.github.git_http import is_git_path

    return [name for name, path in GIT_ENDPOINTS.items() if is_git_path(path)]


def implemented(service: str) -> list[str]:
    """What the fake serves, introspected from the running code."""
    if service == "github":
        return sorted(github_rest_routes()) + graphql_roots("github") + git_endpoints()
    if service == "slack":
        from fakes.slack import METHODS

        return sorted(METHODS)
    return graphql_roots("linear")


def called(recording: Recording) -> list[str]:
    """The operations a recording shows, named as :func:`implemented` names them."""
    routes = github_rest_routes() if recording.service == "github" else {}
    out = []
    for ex in recording.exchanges:
        if ex.query:
            doc = parse(ex.query)
            for op in doc.definitions:
                if isinstance(op, OperationDefinitionNode):
                    for sel in op.selection_set.selections:
                        name = getattr(sel, "name", None)
                        if name is not None:
                            out.append(f"graphql {op.operation.value} {name.value}")
        elif recording.service == "slack":
            out.append(ex.operation or ex.path.rsplit("/", 1)[-1])
        else:
            concrete = re.sub(r"<repo>", "o/r", ex.path.split("?")[0])
            concrete = re.sub(r"<[^>]+>", "1", concrete)
            for key, route in routes.items():
                if key.split(" ", 1)[0] == ex.method and route.match(concrete):
                    out.append(key)
                    break
            else:
                out.append(f"{ex.method} {ex.path.split('?')[0]}")
    return out


MOST_CALLED: dict[str, tuple[str, ...]] = {
    "github": (
        "GET /repos/{}/{}/issues",
        "GET /repos/{}/{}/issues/{}",
        "GET /repos/{}/{}/pulls",
        "GET /repos/{}/{}/pulls/{}",
        "GET /repos/{}/{}/issues/{}/comments",
        "POST /repos/{}/{}/issues/{}/comments",
        "GET /repos/{}/{}/labels",
        "POST /repos/{}/{}/issues/{}/labels",
        "GET /repos/{}/{}/branches",
        "GET /repos/{}/{}/commits",
        "GET /repos/{}/{}/contents/{}",
        "GET /search/issues",
        "GET /repos/{}/{}/commits/{}/check-runs",
        "GET /repos/{}/{}/commits/{}/statuses",
        "POST /repos/{}/{}/statuses/{}",
    ),
    "slack": (
        "conversations.history",
        "conversations.replies",
        "chat.postMessage",
        "reactions.add",
        "users.info",
    ),
    "linear": (
        "graphql query issue",
        "graphql query issues",
        "graphql mutation commentCreate",
        "graphql query workflowStates",
        "graphql query teams",
    ),
}
"""What agents call most (issue 15's list: issue and PR lists and reads, comments, labels,
branches, commits, contents, search, checks and statuses; Slack history, replies, post,
reactions, users; Linear issues, comments, states, teams): each must be exercised by at
least one check against evidence (real traffic or a published schema)."""


_SUBJECT = re.compile(r"^[\w-]+ #\d+ ([A-Z]+) (/\S*)$")


@cache
def real_traffic() -> Counter[str]:
    """How many of octokit's recorded real api.github.com requests to each REST route the
    fake reproduces (the checks of :mod:`replay.contract.evidence.octokit` that held; a
    request listed as a known gap is not counted)."""
    from replay.contract.evidence import octokit

    routes = set(github_rest_routes())
    counts: Counter[str] = Counter()
    for report in octokit.reports():
        for check in report.checks:
            found = _SUBJECT.match(check.subject)
            if check.ok and found:
                key = f"{found.group(1)} {_template(found.group(2))}"
                if key in routes:
                    counts[key] += 1
    return counts


def schema_checked(service: str, exchange: Exchange) -> bool:
    """Whether a scenario exchange is held to a vendor's published schema: a GitHub REST
    body to githubkit's model of GitHub's OpenAPI description (or its error model), a GraphQL
    response to the vendor's GraphQL schema, a Slack response to the Web API's OpenAPI spec."""
    if exchange.query or service == "slack":
        return True
    return exchange.model is not None or exchange.status >= 400


@dataclass(frozen=True)
class Row:
    name: str
    implemented: bool
    calls: int
    expected: bool
    agent_calls: int = 0
    """Seen in agent runs' event logs."""
    real: int = 0
    """Requests to it in the vendors' recordings of real traffic."""
    schema: int = 0
    """Scenario calls to it whose response was held to a vendor's published schema."""
    most_called: bool = False
    """Among what agents call most (:data:`MOST_CALLED`)."""
    behaviour: str = ""
    """The behaviour families' checks of it (:func:`behaviour`): ``writes 5, errors 1``."""

    @property
    def behaviour_held(self) -> bool:
        """Whether a behaviour family's check of it held (``writes 1``, not ``errors 0 + 3
        gaps``)."""
        return any(int(n) for n in re.findall(r"[a-z]+ (\d+)", self.behaviour))

    @property
    def evidence(self) -> bool:
        return bool(self.real or self.schema or self.behaviour_held)

    @property
    def status(self) -> str:
        if not self.implemented and (self.calls or self.expected or self.agent_calls):
            return "**missing**"
        if not self.implemented:
            return ""
        if self.real:
            return "real traffic"
        if self.schema:
            return "published schema"
        if self.behaviour_held:
            return "behaviour"
        return "self only" if self.calls else "not exercised"


def table(
    service: str,
    recordings: list[Recording],
    events: Counter[tuple[str, str]] | None = None,
    checks: Collection[BehaviourCheck] = (),
) -> list[Row]:
    have = set(implemented(service))
    counts: Counter[str] = Counter()
    checked: Counter[str] = Counter()
    for rec in recordings:
        if rec.service == service:
            names_called = called(rec)
            counts.update(names_called)
            # called() names GraphQL documents once per root field, REST and Slack once each.
            kept = [ex for ex in rec.exchanges for _ in range(_roots(ex))]
            checked.update(
                n for n, ex in zip(names_called, kept, strict=True) if schema_checked(service, ex)
            )
    real = real_traffic() if service == "github" else Counter()
    agents = Counter({op: n for (svc, op), n in (events or Counter()).items() if svc == service})
    expected, most = set(EXPECTED[service]), set(MOST_CALLED[service])
    names = sorted(have | set(counts) | expected | most | set(agents))
    held = behaviour(service, checks)
    return [
        Row(
            n,
            n in have,
            counts[n],
            n in expected,
            agents[n],
            real[n],
            checked[n],
            n in most,
            held.get(n, ""),
        )
        for n in names
    ]


def _roots(exchange: Exchange) -> int:
    """How many names :func:`called` gives an exchange."""
    if not exchange.query:
        return 1
    return sum(
        1
        for op in parse(exchange.query).definitions
        if isinstance(op, OperationDefinitionNode)
        for sel in op.selection_set.selections
        if getattr(sel, "name", None) is not None
    )


def render(
    recordings: list[Recording], events: list[Path] | None = None, harness: Path = HARNESS_CALLS
) -> str:
    """The whole markdown file (deterministic: a test compares it with the committed one).
    Runs the behaviour families once per process (:func:`evidence`)."""
    found = evidence()
    sources = sorted({f"{r.service}/{r.scenario} ({r.recorded_against})" for r in recordings})
    lines = [
        "# Contract coverage of the fakes",
        "",
        "Generated by `replay contract coverage`; do not edit by hand.",
        "",
        "- *implemented*: introspected from the fake (FastAPI routes, Slack's method table,",
        "  the GraphQL schema's root fields).",
        "- *calls*: how often the recorded runs called it "
        f"({len(recordings)} recordings under `contract_tests/recordings`).",
        "- *expected*: agents are known to call it (field notes, sections 1 to 4).",
        "- *agent runs*: mutations seen in agent runs' event logs "
        f"({len(events or [])} logs given; writes only, GitHub writes named by REST endpoint).",
        "- *real*: requests to it in octokit's recordings of real api.github.com traffic",
        "  (`contract_tests/evidence/octokit-fixtures`) that the fake reproduces (known gaps",
        "  not counted).",
        "- *schema*: scenario calls whose response was held to the vendor's published schema",
        "  (GitHub's OpenAPI description through githubkit's models, the vendors' GraphQL",
        "  schemas, Slack's Web API OpenAPI spec).",
        "  Slack's scenario responses are also held to the Java SDK's samples (keys, types).",
        "- *behaviour*: the checks of the behaviour families (`replay contract run`) that",
        "  exercise it and held, per family: `pagination`, `writes` (read your writes),",
        "  `errors`, `concurrency`, `gh` (gh 2.23's captured requests executed), `linear-sdk`",
        "  (the Linear SDK's own documents executed); `+ N gaps`",
        "  for known gaps. A write is counted under the write, not the reads that show it; a",
        "  GraphQL connection (`Repository.issues`) under the root field that reaches its type.",
        "- *most called*: among what agents call most; each needs real traffic or a schema check.",
        "- *status*: `real traffic`, `published schema` or `behaviour` (a behaviour family's",
        "  check held; all three are evidence the fake did not write),",
        "  `self only` (exercised only against the fake's own recordings), `not exercised`,",
        "  or **missing** (called or expected, but the fake does not implement it).",
        "",
    ]
    seen = event_calls(events or [])
    tables: dict[str, list[Row]] = {}
    for service in ("github", "slack", "linear"):
        rows = tables[service] = table(service, recordings, seen, found.checks)
        missing = sum(1 for r in rows if r.status == "**missing**")
        done = sum(1 for r in rows if r.implemented)
        lost = unmatched(service, found.checks)
        lines += [
            f"## {service}",
            "",
            f"{done} implemented, {sum(1 for r in rows if r.calls)} called in recordings, "
            f"{sum(1 for r in rows if r.implemented and r.evidence)} held to evidence, "
            f"{sum(1 for r in rows if r.behaviour)} with behaviour checks, {missing} missing.",
            "",
            f"Behaviour checks not matched to a row: {len(lost)}"
            + (" (" + "; ".join(f"`{x}`" for x in lost) + ")." if lost else "."),
            "",
            "| endpoint or field | implemented | calls | real | schema | behaviour | agent runs "
            "| expected | most called | status |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for r in rows:
            lines.append(
                f"| `{r.name}` | {'yes' if r.implemented else 'no'} | {r.calls or ''} "
                f"| {r.real or ''} | {r.schema or ''} | {r.behaviour} | {r.agent_calls or ''} "
                f"| {'yes' if r.expected else ''} | {'yes' if r.most_called else ''} "
                f"| {r.status} |"
            )
        lines.append("")
    from replay.contract.evidence import gh_documents

    lines += [*gh_documents.coverage_lines(list(found.gh)), ""]
    lines += harness_lines(harness, tables)
    lines += ["Recordings read:", ""] + [f"- {s}" for s in sources] + [""]
    return "\n".join(lines)


CLIENTS = ("gh", "git", "curl (Slack)", "curl (Linear)")
"""The clients the harness runs use, in the order the section lists them."""


def call_evidence(row: Row | None, document: str = "") -> str:
    """What holds one call: gh's own document executed (``document held 1/1``), octokit's
    real traffic, a published schema, behaviour checks; ``**none**`` when nothing does."""
    if row is None or not row.implemented:
        return "**none**"
    parts = [
        document,
        f"real {row.real}" if row.real else "",
        f"schema {row.schema}" if row.schema else "",
    ]
    return ", ".join(p for p in [*parts, row.behaviour] if p) or "**none**"


def harness_lines(root: Path, tables: dict[str, list[Row]]) -> list[str]:
    """The ``COVERAGE.md`` section: each call the vendored harness runs make, per client,
    with its evidence."""
    runs = harness_runs(root)
    calls = harness_calls(root)
    kinds: Counter[str] = Counter()
    for run in runs:
        for line in (run / "events.jsonl").read_text().splitlines():
            kind = json.loads(line).get("kind", "") if line.strip() else ""
            if kind and not kind.startswith("model."):
                kinds[kind] += 1
    names = ", ".join(f"`{p.parent.name}/{p.name}`" for p in runs)
    lines = [
        "## Calls the harness runs make",
        "",
        f"{len(runs)} runs of the reference harness with the stub model, vendored under",
        f"`contract_tests/harness-calls` (how: its README): {names}.",
        "Their event logs hold mutations only, so each call is read from the run's transcript",
        "(its bash commands); a gh command's requests are those gh 2.23 sent for the same",
        "subcommand in `contract_tests/evidence/gh-cli`. The stub's trajectories reach Slack and",
        "Linear with curl (`replay/run/steps.py`): no harness run uses slack_sdk or the Linear",
        "SDK. *runs*: how many runs make the call; *evidence* as in the tables above.",
        "",
        "Mutations in their event logs: "
        + ", ".join(f"`{k}` {n}" for k, n in sorted(kinds.items()))
        + ".",
        "",
    ]
    by_name = {s: {r.name: r for r in rows} for s, rows in tables.items()}
    held: Counter[str] = Counter()
    sent: Counter[str] = Counter()
    for result in evidence().gh:
        if result.sent.document:
            sent[result.sent.document] += 1
            held[result.sent.document] += result.check.ok
    for client in CLIENTS:
        mine = sorted(c for c in calls if c.client == client)
        lines += [f"### {client}", ""]
        if not mine:
            lines += ["No calls.", ""]
            continue
        lines += ["| call | sent by | runs | evidence |", "|---|---|---|---|"]
        for c in mine:
            row = by_name.get(c.service, {}).get(c.row)
            doc = f"document held {held[c.document]}/{sent[c.document]}" if c.document else ""
            lines.append(f"| `{c.row}` | {c.via} | {calls[c]} | {call_evidence(row, doc)} |")
        lines.append("")
    return lines


def load_recordings(root: Path) -> list[Recording]:
    return [Recording.model_validate_json(p.read_text()) for p in sorted(root.glob("*/*.json"))]


# ----------------------------------------------------------------------------- behaviour

BEHAVIOUR_FAMILIES: tuple[str, ...] = (
    "pagination",
    "writes",
    "errors",
    "concurrency",
    "gh",
    "linear-sdk",
)
"""The behaviour families the *behaviour* column counts, in its order (``gh``: the gh
documents family; ``linear-sdk``: the Linear SDK's documents executed, each under the root
fields of its document); the conformance families (octokit, GraphQL schemas, Slack spec) have the
*real* and *schema* columns."""

_REST = re.compile(r"^(?:GraphQL )?(GET|POST|PUT|PATCH|DELETE) (/[^\s?]*)")
_OPERATION = re.compile(r"^(?:GraphQL )?(query|mutation) (\w+)\b")
_FIELD = re.compile(r"^([A-Z]\w*)\.(\w+)\b")
_BARE = re.compile(r"^(\w+)\b(?![.:(])")
_SLACK = re.compile(r"^([a-z]+(?:\.[a-zA-Z]+)+)\b")


@cache
def root_for_type(service: str, type_name: str) -> str | None:
    """The root query field a connection subject ``Type.field`` is reached through: the root
    field named after the type (``Issue`` -> ``issue``) when it returns that type, else the
    one root field nearest to it through object fields; ``None`` when none or several are."""
    from graphql import get_named_type

    schema = graphql_schema(service)
    query = schema.query_type
    if query is None:
        return None
    own = type_name[:1].lower() + type_name[1:]
    if own in query.fields and get_named_type(query.fields[own].type).name == type_name:
        return own
    nearest: dict[str, int] = {}
    for root, field in query.fields.items():
        seen: set[str] = set()
        level: list[Any] = [get_named_type(field.type)]
        for depth in range(8):
            types = [t for t in level if isinstance(t, GraphQLObjectType) and t.name not in seen]
            if any(t.name == type_name for t in types):
                nearest[root] = depth
                break
            seen.update(t.name for t in types)
            level = [get_named_type(f.type) for t in types for f in t.fields.values()]
    if not nearest:
        return None
    best = min(nearest.values())
    roots = [r for r, d in nearest.items() if d == best]
    return roots[0] if len(roots) == 1 else None


def subject_rows(service: str, subject: str, names: Collection[str]) -> tuple[str, ...]:
    """The rows of ``service``'s table a behaviour check's subject names (none, or one; a
    ``git push`` both of its requests).

    A subject starts with what it exercises; what follows (``-> GET issue``, ``while 3x5
    comments``, ``(no such number) -> 404``) is ignored: a write is counted under the write,
    not under the reads that show it. REST: ``GET /repos/{owner}/{repo}/issues``; git:
    ``git push``; GraphQL: ``mutation issueCreate(...)``, ``GraphQL query node (...)``,
    ``issueUpdate title, ...`` (a root field by itself), or a connection ``Type.field``
    (``Query.issues``, or ``Repository.issues`` under the root field that reaches the type:
    :func:`root_for_type`); Slack: its method (``chat.postMessage (thread_ts) -> ...``)."""
    row: str | None = None
    if service == "slack":
        found = _SLACK.match(subject)
        row = found.group(1) if found else None
    elif subject.startswith("git push"):
        push = ("git GET /{}/{}.git/info/refs", "git POST /{}/{}.git/git-receive-pack")
        return tuple(r for r in push if r in names)
    elif found := _REST.match(subject):
        row = f"{found.group(1)} {_template(found.group(2))}"
    elif found := _OPERATION.match(subject):
        row = f"graphql {found.group(1)} {found.group(2)}"
    elif found := _FIELD.match(subject):
        kind, field = found.group(1), found.group(2)
        if kind in ("Query", "Mutation"):
            row = f"graphql {kind.lower()} {field}"
        elif root := root_for_type(service, kind):
            row = f"graphql query {root}"
    elif found := _BARE.match(subject):
        word = found.group(1)
        row = next(
            (n for n in (f"graphql mutation {word}", f"graphql query {word}") if n in names), None
        )
    return (row,) if row is not None and row in names else ()


@dataclass(frozen=True)
class BehaviourCheck:
    """One check of a behaviour family, placed in the table."""

    family: str
    """One of :data:`BEHAVIOUR_FAMILIES`."""
    service: str
    subject: str
    ok: bool
    gap: bool
    """Not ok, and accepted as a known gap."""
    rows: tuple[str, ...]
    """The table rows it exercises; empty when its subject maps to none."""


@dataclass(frozen=True)
class Evidence:
    """What every family found, run once: the behaviour checks and gh's executed commands."""

    checks: tuple[BehaviourCheck, ...]
    gh: tuple[Any, ...]
    """:func:`replay.contract.evidence.gh_documents.execute`'s results."""


def _gh_rows(result: Any, names: Collection[str]) -> tuple[str, ...]:
    """The rows one executed gh request reaches (each root field of its document, or its
    REST operation)."""
    from replay.contract.evidence import gh_documents

    sent = result.sent
    if sent.document is None:
        op = gh_documents.rest_operation(sent.method, sent.path)
        out = [f"{op.method} {_template(op.template)}"] if op else []
    else:
        out = _graphql_rows(gh_documents.document_text(sent.document))
    return tuple(sorted({n for n in out if n in names}))


@cache
def evidence() -> Evidence:
    """Run the behaviour families and gh's documents once per process (minutes: the
    coverage table, its test and ``--check`` share it; a new process runs them afresh)."""
    from replay.contract.evidence import (
        concurrency,
        errors,
        gh_documents,
        linear_documents,
        pagination,
        writes,
    )

    names = {s: set(table_names(s)) for s in ("github", "slack", "linear")}
    checks: list[BehaviourCheck] = []
    for family, run in (
        ("pagination", pagination.reports),
        ("writes", writes.reports),
        ("errors", errors.reports),
        ("concurrency", concurrency.reports),
    ):
        for report in run():
            for c in report.checks:
                placed = subject_rows(report.service, c.subject, names[report.service])
                checks.append(
                    BehaviourCheck(family, report.service, c.subject, c.ok, bool(c.gap), placed)
                )
    results = gh_documents.execute()
    report = gh_documents.report_of(results)
    for result, c in zip(results, report.checks, strict=True):
        placed = _gh_rows(result, names["github"])
        checks.append(BehaviourCheck("gh", "github", c.subject, c.ok, bool(c.gap), placed))
    linear = linear_documents.execute()
    for done, c in zip(linear, linear_documents.report_of(linear).checks, strict=True):
        placed = tuple(r for r in done.document.rows if r in names["linear"])
        checks.append(BehaviourCheck("linear-sdk", "linear", c.subject, c.ok, bool(c.gap), placed))
    return Evidence(tuple(checks), tuple(results))


def table_names(service: str) -> list[str]:
    """Every row name of ``service``'s table that does not depend on recordings or events."""
    return sorted(set(implemented(service)) | set(EXPECTED[service]) | set(MOST_CALLED[service]))


def behaviour(service: str, checks: Collection[BehaviourCheck]) -> dict[str, str]:
    """Row -> the *behaviour* cell: per family, the checks that held (``writes 5``), with
    known gaps and failures beside (``errors 1 + 2 gaps``)."""
    held: Counter[tuple[str, str]] = Counter()
    gaps: Counter[tuple[str, str]] = Counter()
    failed: Counter[tuple[str, str]] = Counter()
    for c in checks:
        if c.service != service:
            continue
        for row in c.rows:
            (held if c.ok else gaps if c.gap else failed)[(row, c.family)] += 1
    out: dict[str, str] = {}
    for row in sorted({r for r, _ in held + gaps + failed}):
        cells = []
        for family in BEHAVIOUR_FAMILIES:
            n, g, f = held[(row, family)], gaps[(row, family)], failed[(row, family)]
            if n or g or f:
                extra = (f" + {g} gaps" if g else "") + (f" + {f} failing" if f else "")
                cells.append(f"{family} {n}{extra}")
        out[row] = ", ".join(cells)
    return out


def unmatched(service: str, checks: Collection[BehaviourCheck]) -> list[str]:
    """``family: subject`` of each behaviour check of ``service`` that names no row."""
    return sorted(
        {f"{c.family}: {c.subject}" for c in checks if c.service == service and not c.rows}
    )


# ----------------------------------------------------------------------------- harness calls

_HEREDOC = re.compile(r"<<-?\s*(['\"]?)(\w+)\1[^\n]*\n.*?\n\2(?=\n|$)", re.DOTALL)
_SEPARATORS = frozenset({"&&", "||", ";", "|", "\n", "&"})


@dataclass(frozen=True, order=True)
class HarnessCall:
    """One call a client made in a harness run, named as the table names it."""

    client: str
    """``gh``, ``git``, ``curl (Slack)``, ``curl (Linear)``."""
    service: str
    row: str
    via: str
    """What sent it: the command (``gh pr create``) and, for gh, the document it sends."""
    document: str = ""
    """For gh: the captured GraphQL document (``RepositoryInfo.1.graphql``)."""


def shell_commands(script: str) -> list[list[str]]:
    """The simple commands of a bash script, as argv lists (heredoc bodies dropped: they are
    data, not commands)."""
    text = _HEREDOC.sub("<<HEREDOC", script)
    lexer = shlex.shlex(text, posix=True, punctuation_chars="();<>|&\n")
    lexer.whitespace = " \t\r"
    lexer.whitespace_split = True
    out: list[list[str]] = [[]]
    for token in lexer:
        if token in _SEPARATORS:
            out.append([])
        else:
            out[-1].append(token)
    return [argv for argv in out if argv]


def _graphql_rows(document: str) -> list[str]:
    """``graphql <kind> <root field>`` for each root field of a GraphQL document."""
    return [
        f"graphql {d.operation.value} {sel.name.value}"
        for d in parse(document).definitions
        if isinstance(d, OperationDefinitionNode)
        for sel in d.selection_set.selections
        if isinstance(sel, FieldNode)
    ]


_CURL_DATA = frozenset({"-d", "--data", "--data-binary", "--data-raw"})


def _curl(argv: list[str]) -> list[HarnessCall]:
    url = next((a for a in argv if a.startswith("https://")), "")
    host, _, path = url.removeprefix("https://").partition("/")
    if host == "slack.com" and path.startswith("api/"):
        method = path.removeprefix("api/").split("?")[0]
        return [HarnessCall("curl (Slack)", "slack", method, f"curl {method}")]
    if host == "api.linear.app":
        data = [b for a, b in itertools.pairwise(argv) if a in _CURL_DATA]
        out = []
        for body in data:
            query = json.loads(body).get("query", "")
            out += [
                HarnessCall("curl (Linear)", "linear", row, f"curl {row.split(' ', 1)[1]}")
                for row in _graphql_rows(query)
            ]
        return out
    return []


def _gh(argv: list[str]) -> list[HarnessCall]:
    """A gh command's requests, as the gh 2.23 capture recorded that command (``gh pr
    create``'s RepositoryInfo, PullRequestForBranch, PullRequestCreate)."""
    from replay.contract.evidence import gh_documents

    covers = " ".join(argv[1:3])
    captured = next((c for c in gh_documents.load_captured().commands if c.covers == covers), None)
    if captured is None:
        return [HarnessCall("gh", "github", f"gh {covers}", f"gh {covers} (not captured)")]
    out = []
    for sent in captured.sent:
        if sent.document is None:
            op = gh_documents.rest_operation(sent.method, sent.path)
            row = f"{op.method} {_template(op.template)}" if op else sent.label
            out.append(HarnessCall("gh", "github", row, f"gh {covers}"))
        else:
            doc = gh_documents.document_text(sent.document)
            via = f"gh {covers}: `{sent.document.removesuffix('.graphql')}`"
            out += [HarnessCall("gh", "github", r, via, sent.document) for r in _graphql_rows(doc)]
    return out


def _git(argv: list[str]) -> list[HarnessCall]:
    verb = next((a for a in argv[1:] if not a.startswith("-")), "")
    if verb == "push":
        pack = "git-receive-pack"
    elif verb in ("clone", "fetch", "pull"):
        pack = "git-upload-pack"
    else:
        return []
    return [
        HarnessCall("git", "github", row, f"git {verb}")
        for row in ("git GET /{}/{}.git/info/refs", f"git POST /{{}}/{{}}.git/{pack}")
    ]


def command_calls(argv: list[str]) -> list[HarnessCall]:
    """The calls one command of an agent's makes to the world's services."""
    name = argv[0].rsplit("/", 1)[-1]
    if name == "gh" and len(argv) >= 3:
        return _gh(argv)
    if name == "git":
        return _git(argv)
    if name == "curl":
        return _curl(argv)
    return []


def transcript_calls(path: Path) -> list[HarnessCall]:
    """Every call of a run's transcript (``transcript.jsonl``: its bash tool calls)."""
    out: list[HarnessCall] = []
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        for tool in json.loads(line).get("tool_calls", []):
            script = tool.get("arguments", {}).get("command")
            if tool.get("name") == "bash" and isinstance(script, str):
                for argv in shell_commands(script):
                    out += command_calls(argv)
    return out


def harness_runs(root: Path = HARNESS_CALLS) -> list[Path]:
    """The vendored run directories (``<case>/<trajectory>``), sorted."""
    return sorted(p.parent for p in root.glob("*/*/transcript.jsonl"))


def harness_calls(root: Path = HARNESS_CALLS) -> Counter[HarnessCall]:
    """How many of the vendored runs make each call (once per run however often)."""
    counts: Counter[HarnessCall] = Counter()
    for run in harness_runs(root):
        counts.update(set(transcript_calls(run / "transcript.jsonl")))
    return counts
