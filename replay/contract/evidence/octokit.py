"""GitHub REST held to real api.github.com traffic: octokit/fixtures' recorded scenarios.

octokit/fixtures records real interactions with api.github.com (each request's method, path,
headers and body; each response's status, headers and body) and normalises what changes
between recordings (ids, node ids, timestamps, SHAs, counts). For each scenario used here
this module seeds a fake GitHub with the state the recording implies (the owner, the
repository with its files and refs, its labels and issues, as the responses show them),
builds a snapshot of it in a temporary directory, serves it, sends the recorded requests in
order and compares each answer with the recorded one: the status; the headers clients read
(``Content-Type``, ``Link`` with its rels and their page parameters, the ``X-RateLimit-*``
names and the ``X-RateLimit-Resource`` value); and the body's shape (every recorded key
present with the same JSON type and nullability, enum-like values equal). A key the fake
sends beyond the recorded ones must be one GitHub's current OpenAPI description (githubkit's
generated models) lists for that operation, since the API has grown since 2017.

One :class:`~replay.contract.evidence.Check` per recorded request, subject
``<scenario> #<index> <METHOD> <path template>``.
"""

from __future__ import annotations

import json
import re
import subprocess
import tempfile
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import yaml
from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError

from fakes.core.server import build_world
from replay.base.gitrepo import clean_env
from replay.base.snapshot import load_snapshot
from replay.contract.evidence import (
    EVIDENCE,
    Check,
    Report,
    apply_gaps,
    json_kind,
    load_gaps,
    load_source,
)
from replay.contract.schema import _models_in, error_model
from replay.contract.targets import (
    FAKE_TOKENS,
    ContractSetupError,
    ServiceApp,
    Wrap,
    close_world,
    serve_asgi,
)

DIR = EVIDENCE / "octokit-fixtures"
"""The vendored recordings, their SOURCE.json, LICENSE and gaps.json."""


ORG = "octokit-fixture-org"
VIEWER = "octokit-fixture-user-a"
AT = "2017-10-10T16:00:00Z"
"""The recordings' normalised time: the snapshot's T."""
SEEDED = "2017-10-10T15:00:00Z"
"""When seeded objects were made: before T."""

PLACEHOLDER_SHA = re.compile(r"\b0{30,39}[1-9][0-9]*\b")
"""octokit's normalised commit SHAs (``000…01``, ``000…02``): the first, second... commit
the recording names; the fake's own commits stand in for them in the requests."""

ENUM_KEYS = frozenset(
    {"state", "state_reason", "type", "encoding", "active_lock_reason", "resource", "code"}
)
"""Keys whose string values are enumerations: equal, not only the same type."""
VALUE_KEYS = frozenset(
    {"name", "title", "ref", "path", "color", "number", "context", "description", "field"}
)
"""Keys whose values the scenario itself chose (names, titles, the request's own inputs):
equal too, since the fake was seeded and asked the same."""
RATE_LIMIT = "x-ratelimit-"

QUIET_WORLD: dict[str, Any] = {
    "linear": {
        "viewer": "u-1",
        "organization": {"id": "org-1", "name": "Fixtures", "url_key": "fixtures"},
        "teams": [{"id": "t-1", "key": "ENG", "name": "Engineering", "created_at": SEEDED}],
        "users": [
            {
                "id": "u-1",
                "name": "User",
                "display_name": "user",
                "email": "user@example.test",
                "created_at": SEEDED,
            }
        ],
        "workflow_states": [
            {"id": "s-1", "team": "ENG", "name": "Todo", "type": "unstarted", "position": 1}
        ],
    },
    "slack": {
        "team": {"id": "T01", "name": "Fixtures", "domain": "fixtures"},
        "bot_user": "U0BOT",
        "users": [{"id": "U0BOT", "name": "bot", "real_name": "Bot", "is_bot": True}],
        "channels": [],
    },
}
"""The least Linear and Slack a world needs: every scenario's world has them, unused."""


class Interaction(BaseModel):
    """One recorded request and its response, as ``normalized-fixture.json`` holds it."""

    model_config = ConfigDict(extra="ignore")

    method: str
    path: str
    body: Any = ""
    status: int
    response: Any = ""
    reqheaders: dict[str, Any] = {}
    headers: dict[str, Any] = {}


FIXTURE = TypeAdapter(list[Interaction])


def fixture_path(scenario: str) -> str:
    """A scenario's recording, as a path in octokit/fixtures."""
    return f"scenarios/api.github.com/{scenario}/normalized-fixture.json"


def load_interactions(directory: Path, scenario: str) -> list[Interaction]:
    """A scenario's recorded interactions; a missing or malformed file is a
    :class:`ContractSetupError`."""
    path = directory / fixture_path(scenario)
    try:
        return FIXTURE.validate_json(path.read_bytes())
    except (OSError, ValidationError) as exc:
        raise ContractSetupError(f"{path}: not an octokit fixture: {exc}") from exc


# --------------------------------------------------------------------------- operations


def _model(name: str) -> Any:
    from githubkit_schemas.latest import models

    return getattr(models, name)


@dataclass(frozen=True)
class Operation:
    """A REST operation the recordings call: its method, path template (matched as a
    regular expression) and githubkit's model of its success response (None: no JSON)."""

    method: str
    template: str
    model: str | None
    many: bool = False

    @property
    def pattern(self) -> re.Pattern[str]:
        regex = re.sub(r"\\\{[a-z_]+\\\}", "[^/]+", re.escape(self.template))
        regex = regex.replace("\\{path\\+\\}", ".*")
        return re.compile(f"^{regex}/?$")

    def response_model(self) -> Any:
        if self.model is None:
            return None
        model = _model(self.model)
        return list[model] if self.many else model  # type: ignore[valid-type]


R = "/repos/{owner}/{repo}"
OPERATIONS = (
    Operation("GET", "/", "Root"),
    Operation("GET", "/orgs/{org}", "OrganizationFull"),
    Operation("GET", R, "FullRepository"),
    Operation("GET", f"{R}/labels", "Label", many=True),
    Operation("POST", f"{R}/labels", "Label"),
    Operation("GET", f"{R}/labels/{{name}}", "Label"),
    Operation("PATCH", f"{R}/labels/{{name}}", "Label"),
    Operation("DELETE", f"{R}/labels/{{name}}", None),
    Operation("GET", f"{R}/issues", "Issue", many=True),
    Operation("GET", "/repositories/{id}/issues", "Issue", many=True),
    Operation("POST", f"{R}/issues", "Issue"),
    Operation("POST", f"{R}/issues/{{number}}/labels", "Label", many=True),
    Operation("PUT", f"{R}/issues/{{number}}/lock", None),
    Operation("DELETE", f"{R}/issues/{{number}}/lock", None),
    Operation("GET", "/search/issues", "SearchIssuesGetResponse200"),
    Operation("GET", f"{R}/contents/", "ContentDirectoryItems", many=True),
    Operation("GET", f"{R}/contents/{{path+}}", "ContentFile"),
    Operation("PUT", f"{R}/contents/{{path+}}", "FileCommit"),
    Operation("GET", f"{R}/git/refs/", "GitRef", many=True),
    Operation("POST", f"{R}/git/refs", "GitRef"),
    Operation("PATCH", f"{R}/git/refs/{{ref}}/{{name}}", "GitRef"),
    Operation("DELETE", f"{R}/git/refs/{{ref}}/{{name}}", None),
    Operation("POST", f"{R}/statuses/{{sha}}", "Status"),
    Operation("GET", f"{R}/commits/{{sha}}/statuses", "Status", many=True),
    Operation("GET", f"{R}/commits/{{sha}}/status", "CombinedCommitStatus"),
)
"""Every operation the chosen scenarios send, most specific first where two could match."""


def operation_of(method: str, path: str) -> Operation:
    """The operation a recorded request calls; a request no operation matches is a setup
    error (a scenario was added without saying which model answers it)."""
    bare = path.split("?", 1)[0]
    for op in OPERATIONS:
        if op.method == method.upper() and op.pattern.match(bare):
            return op
    raise ContractSetupError(f"no known REST operation for {method.upper()} {path}")


# --------------------------------------------------------------------------- seeding


@dataclass
class Seed:
    """The state a scenario's recording implies, for its fake: one repository (with a git
    history of ``files``), its labels and issues, and the users they name."""

    repo: str
    repo_id: int = 1000
    default_branch: str = "main"
    description: str | None = None
    files: dict[str, str] = field(default_factory=lambda: {"README.md": "# fixture\n"})
    labels: list[dict[str, Any]] = field(default_factory=list)
    issues: list[dict[str, Any]] = field(default_factory=list)


def recorded_issues(interactions: list[Interaction], repo: str) -> list[dict[str, Any]]:
    """Every issue a scenario's responses show (lists, search results), as seed issues."""
    found: dict[int, dict[str, Any]] = {}
    for it in interactions:
        body = it.response
        items = body.get("items", []) if isinstance(body, dict) else body
        if not isinstance(items, list) or it.method.upper() != "GET":
            continue
        for item in items:
            if isinstance(item, dict) and "number" in item and "title" in item:
                found[item["number"]] = {
                    "repo": repo,
                    "number": item["number"],
                    "id": 5000 + item["number"],
                    "title": item["title"],
                    "body": item.get("body"),
                    "state": item["state"],
                    "author": item["user"]["login"],
                    "labels": [lb["name"] for lb in item.get("labels", [])],
                    "created_at": SEEDED,
                    "updated_at": SEEDED,
                }
    return [found[n] for n in sorted(found)]


def recorded_labels(interactions: list[Interaction]) -> list[dict[str, Any]]:
    """The labels the scenario's first listing of them shows."""
    for it in interactions:
        if it.method.upper() == "GET" and it.path.endswith("/labels"):
            return [
                {"name": lb["name"], "color": lb["color"], "description": lb["description"]}
                for lb in it.response
            ]
    return []


def seed_for(scenario: str, interactions: list[Interaction]) -> Seed:
    """The state a scenario starts from, read off its recording (and, where the recording
    shows no state, the least the requests need: the issue ``lock-issue`` locks)."""
    first = interactions[0].path
    match = re.match(rf"^/repos/{ORG}/([^/?]+)", first)
    name = match.group(1) if match else scenario
    seed = Seed(repo=f"{ORG}/{name}")
    seed.labels = recorded_labels(interactions)
    seed.issues = recorded_issues(interactions, seed.repo)
    if scenario in ("get-content", "get-repository"):
        seed.default_branch = "master"
    if scenario == "get-content":
        seed.files = {"README.md": str(interactions[1].response)}
    if scenario == "lock-issue":
        seed.issues = [
            {
                "repo": seed.repo,
                "number": 1,
                "id": 5001,
                "title": "Issue to lock",
                "state": "open",
                "author": VIEWER,
                "created_at": SEEDED,
                "updated_at": SEEDED,
            }
        ]
    return seed


def _git(repo: Path, *args: str, env: Mapping[str, str] | None = None) -> str:
    done = subprocess.run(
        ["git", *args],
        cwd=repo,
        env=clean_env(dict(env or {})),
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def write_sources(seed: Seed, root: Path) -> Path:
    """The snapshot sources (world.yaml and a bundle of the repository) for ``seed``."""
    src = root / "sources"
    work = root / "git"
    work.mkdir(parents=True)
    src.mkdir()
    _git(work, "init", "-q", "-b", seed.default_branch)
    env = {
        "GIT_AUTHOR_NAME": VIEWER,
        "GIT_AUTHOR_EMAIL": f"{VIEWER}@users.noreply.github.com",
        "GIT_COMMITTER_NAME": "GitHub",
        "GIT_COMMITTER_EMAIL": "noreply@github.com",
        "GIT_AUTHOR_DATE": "2017-10-10T12:00:00Z",
        "GIT_COMMITTER_DATE": "2017-10-10T12:00:00Z",
    }
    for path, text in seed.files.items():
        (work / path).parent.mkdir(parents=True, exist_ok=True)
        (work / path).write_text(text)
    _git(work, "add", "-A")
    _git(work, "commit", "-q", "-m", "Initial commit", env=env)
    # A second commit, so that the recordings' first and second SHAs both name one.
    _git(work, "commit", "-q", "--allow-empty", "-m", "Second commit", env=env)
    _git(
        work,
        "bundle",
        "create",
        "-q",
        str(src / "repo.bundle"),
        f"refs/heads/{seed.default_branch}",
    )
    owner, name = seed.repo.split("/")
    authors = sorted({VIEWER, "octokit-fixture-user-b", *(i["author"] for i in seed.issues)})
    users = [{"login": ORG, "id": 900, "type": "Organization", "created_at": SEEDED}]
    users += [{"login": u, "id": 1000 + n, "created_at": SEEDED} for n, u in enumerate(authors)]
    world = {
        "at": AT,
        "repository": {
            "name": seed.repo,
            "default_branch": seed.default_branch,
            "bundle": "repo.bundle",
        },
        "github": {
            "viewer": VIEWER,
            "users": users,
            "repos": [
                {
                    "owner": owner,
                    "name": name,
                    "id": seed.repo_id,
                    "description": seed.description,
                    "default_branch": seed.default_branch,
                    "created_at": SEEDED,
                    "pushed_at": SEEDED,
                    "labels": seed.labels,
                }
            ],
            "issues": seed.issues,
        },
        **QUIET_WORLD,
    }
    (src / "world.yaml").write_text(yaml.safe_dump(world, sort_keys=False))
    return src


@contextmanager
def seeded_world(seed: Seed, wrap: Wrap | None = None) -> Iterator[tuple[str, list[str]]]:
    """The fake GitHub for ``seed``, served: its URL and the repository's commits, newest
    first (what the recordings' placeholder SHAs stand for)."""
    from replay.snapshot import build_snapshot

    with tempfile.TemporaryDirectory(prefix="octokit-") as tmp:
        root = Path(tmp)
        src = write_sources(seed, root)
        build_snapshot(src, root / "snapshot")
        commits = _git(root / "git", "rev-list", f"refs/heads/{seed.default_branch}").split()
        # GitHub alone: the other fakes would only cost start-up time.
        world = build_world(load_snapshot(root / "snapshot"), ("github",))
        try:
            with serve_asgi(ServiceApp(world, "github", wrap)) as url:
                yield url, commits
        finally:
            close_world(world)


# --------------------------------------------------------------------------- comparing


def links(value: str | None) -> dict[str, dict[str, list[str]]]:
    """A ``Link`` header as rel -> the page parameters of its URL."""
    out: dict[str, dict[str, list[str]]] = {}
    for part in (value or "").split(","):
        m = re.match(r'\s*<([^>]*)>\s*;\s*rel="([^"]+)"', part)
        if m:
            query = parse_qs(urlsplit(m.group(1)).query)
            out[m.group(2)] = {k: v for k, v in query.items() if k in ("page", "per_page")}
    return out


def header_problems(want: Mapping[str, Any], got: Mapping[str, str]) -> list[str]:
    """The headers a client reads, compared (``got`` has lower-case names)."""
    problems: list[str] = []
    want = {k.lower(): str(v) for k, v in want.items()}
    wtype, gtype = want.get("content-type"), got.get("content-type")
    if (wtype or "").replace(" ", "").lower() != (gtype or "").replace(" ", "").lower():
        problems.append(f"Content-Type {gtype!r}, recorded {wtype!r}")
    if links(want.get("link")) != links(got.get("link")):
        problems.append(f"Link {links(got.get('link'))}, recorded {links(want.get('link'))}")
    for name in sorted(k for k in want if k.startswith(RATE_LIMIT)):
        if name not in got:
            problems.append(f"header {name} missing")
    resource = f"{RATE_LIMIT}resource"
    if resource in want and resource in got and want[resource] != got[resource]:
        problems.append(f"X-RateLimit-Resource {got[resource]!r}, recorded {want[resource]!r}")
    return problems


def _fields(models: list[type[BaseModel]]) -> dict[str, Any]:
    """Each wire name the models know -> its annotation."""
    out: dict[str, Any] = {}
    for model in models:
        for name, f in model.model_fields.items():
            out.setdefault(f.alias or name, f.annotation)
    return out


def shape_problems(
    want: Any, got: Any, models: list[type[BaseModel]], path: str = "$", key: str = ""
) -> list[str]:
    """How ``got`` differs in shape from the recorded ``want``: a recorded key missing, a
    JSON type or nullability changed, an enum-like or chosen value changed, or a key beyond
    the recorded ones that ``models`` (githubkit's, for this place) do not list."""
    wk, gk = json_kind(want), json_kind(got)
    if wk != gk:
        return [f"{path}: {gk}, recorded {wk}"]
    if key in ENUM_KEYS | VALUE_KEYS and wk in ("string", "number") and want != got:
        return [f"{path}: {got!r}, recorded {want!r}"]
    if wk == "array":
        problems = []
        if len(want) != len(got):
            problems.append(f"{path}: {len(got)} items, recorded {len(want)}")
        for i, (w, g) in enumerate(zip(want, got, strict=False)):
            problems += shape_problems(w, g, models, f"{path}[{i}]")
        return problems
    if wk != "object":
        return []
    known = _fields(models)
    problems = []
    for k, w in want.items():
        if k not in got:
            problems.append(f"{path}.{k}: missing")
            continue
        problems += shape_problems(w, got[k], _models_in(known.get(k)), f"{path}.{k}", k)
    where = "/".join(m.__name__ for m in models) or "no model"
    for k in got:
        if k in want:
            continue
        if k not in known:
            problems.append(f"{path}.{k}: not recorded, nor in the OpenAPI description ({where})")
        elif got[k] is None and not _required(models, k):
            # An optional field GitHub has nothing for is left out, not sent as null.
            problems.append(f"{path}.{k}: null where GitHub omits it ({where} makes it optional)")
    return problems


def _required(models: list[type[BaseModel]], key: str) -> bool:
    return any(
        (f.alias or name) == key and f.is_required()
        for model in models
        for name, f in model.model_fields.items()
    )


def body_problems(it: Interaction, op: Operation, response: httpx.Response) -> list[str]:
    """The response body against the recorded one."""
    want = it.response
    if it.status == 204 or (want == "" and not response.content):
        return (
            []
            if not response.content
            else [f"a body where GitHub sends none: {response.text[:80]!r}"]
        )
    ctype = response.headers.get("content-type", "")
    if "json" not in ctype:
        if isinstance(want, str):
            return (
                []
                if response.text == want
                else [f"body {response.text[:80]!r}, recorded {want[:80]!r}"]
            )
        return [f"body of type {ctype!r}, recorded JSON"]
    try:
        got = response.json()
    except ValueError:
        return ["body is not JSON"]
    model: Any = error_model(it.status) if it.status >= 400 else op.response_model()
    return shape_problems(want, got, _models_in(model))


def check_interaction(
    scenario: str, index: int, it: Interaction, response: httpx.Response
) -> Check:
    """One recorded request replayed: the answer compared with the recorded one."""
    op = operation_of(it.method, it.path)
    subject = f"{scenario} #{index} {op.method} {op.template}"
    problems: list[str] = []
    if response.status_code != it.status:
        problems.append(f"status {response.status_code}, recorded {it.status}")
    problems += header_problems(it.headers, {k.lower(): v for k, v in response.headers.items()})
    if response.status_code == it.status:
        problems += body_problems(it, op, response)
    return Check(subject, tuple(problems))


def _request(
    it: Interaction, shas: Callable[[str], str]
) -> tuple[str, str, dict[str, str], bytes | None]:
    headers = {"Authorization": f"token {FAKE_TOKENS['github']}"}
    for name in ("accept", "content-type"):
        if name in it.reqheaders:
            headers[name.title()] = str(it.reqheaders[name])
    body: bytes | None = None
    if it.body not in ("", None):
        text = it.body if isinstance(it.body, str) else json.dumps(it.body)
        body = shas(text).encode()
    elif it.method.upper() in ("PUT", "POST", "PATCH"):
        body = b""
    return it.method.upper(), shas(it.path), headers, body


def run_scenario(scenario: str, interactions: list[Interaction], wrap: Wrap | None) -> list[Check]:
    """Seed, serve and replay one scenario: one check per recorded request."""
    seed = seed_for(scenario, interactions)
    checks: list[Check] = []
    with (
        seeded_world(seed, wrap) as (url, commits),
        httpx.Client(base_url=url, timeout=30) as client,
    ):

        def shas(text: str) -> str:
            def swap(m: re.Match[str]) -> str:
                n = int(m.group(0))
                return commits[n - 1] if 0 < n <= len(commits) else m.group(0)

            return PLACEHOLDER_SHA.sub(swap, text)

        for index, it in enumerate(interactions):
            method, path, headers, body = _request(it, shas)
            response = client.request(method, path, headers=headers, content=body)
            checks.append(check_interaction(scenario, index, it, response))
    return checks


SCENARIOS = (
    "labels",
    "add-labels-to-issue",
    "paginate-issues",
    "search-issues",
    "get-content",
    "create-file",
    "git-refs",
    "lock-issue",
    "create-status",
    "errors",
    "get-repository",
    "get-root",
    "get-organization",
)
"""The scenarios replayed: those whose operations the fake serves."""


def reports(
    directory: Path = DIR, wrap: Wrap | None = None, scenarios: tuple[str, ...] = SCENARIOS
) -> list[Report]:
    """The ``real interactions`` report for GitHub: every chosen scenario replayed against
    a fake seeded for it (``wrap`` wraps the fake's apps, as tests do to break it)."""
    source = load_source(directory)
    gaps = load_gaps(directory)
    checks: list[Check] = []
    for scenario in scenarios:
        checks += run_scenario(scenario, load_interactions(directory, scenario), wrap)
    return [apply_gaps("github", "real interactions", source, checks, gaps)]
