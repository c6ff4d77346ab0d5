"""The coverage table: per service, what the fake implements (introspected: the FastAPI
routes of GitHub's REST app, Slack's method table, the GraphQL schemas' root fields), what
the recorded runs were seen calling, and what agents are known to call (field notes, §1-4);
anything called or expected but not implemented is *missing*. Generated, never hand-written.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from graphql import GraphQLObjectType, OperationDefinitionNode, parse

from replay.contract.recording import Exchange, Recording
from replay.contract.schema import graphql_schema

COVERAGE_FILE = Path(__file__).resolve().parents[2] / "contract_tests" / "COVERAGE.md"

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

    @property
    def evidence(self) -> bool:
        return bool(self.real or self.schema)

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
        return "self only" if self.calls else "not exercised"


def table(
    service: str,
    recordings: list[Recording],
    events: Counter[tuple[str, str]] | None = None,
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
    return [
        Row(n, n in have, counts[n], n in expected, agents[n], real[n], checked[n], n in most)
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


def render(recordings: list[Recording], events: list[Path] | None = None) -> str:
    """The whole markdown file (deterministic: a test compares it with the committed one)."""
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
        "- *most called*: among what agents call most; each needs real traffic or a schema check.",
        "- *status*: `real traffic` or `published schema` (evidence the fake did not write),",
        "  `self only` (exercised only against the fake's own recordings), `not exercised`,",
        "  or **missing** (called or expected, but the fake does not implement it).",
        "",
    ]
    seen = event_calls(events or [])
    for service in ("github", "slack", "linear"):
        rows = table(service, recordings, seen)
        missing = sum(1 for r in rows if r.status == "**missing**")
        done = sum(1 for r in rows if r.implemented)
        lines += [
            f"## {service}",
            "",
            f"{done} implemented, {sum(1 for r in rows if r.calls)} called in recordings, "
            f"{sum(1 for r in rows if r.implemented and r.evidence)} held to evidence, "
            f"{missing} missing.",
            "",
            "| endpoint or field | implemented | calls | real | schema | agent runs | expected "
            "| most called | status |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for r in rows:
            lines.append(
                f"| `{r.name}` | {'yes' if r.implemented else 'no'} | {r.calls or ''} "
                f"| {r.real or ''} | {r.schema or ''} | {r.agent_calls or ''} "
                f"| {'yes' if r.expected else ''} | {'yes' if r.most_called else ''} "
                f"| {r.status} |"
            )
        lines.append("")
    from replay.contract.evidence import gh_documents

    lines += [*gh_documents.coverage_lines(gh_documents.execute()), ""]
    lines += ["Recordings read:", ""] + [f"- {s}" for s in sources] + [""]
    return "\n".join(lines)


def load_recordings(root: Path) -> list[Recording]:
    return [Recording.model_validate_json(p.read_text()) for p in sorted(root.glob("*/*.json"))]
