"""The ``gh`` CLI's own traffic, vendored and executed: every GraphQL document and REST call
that the gh commands this project's tests use send to GitHub, run against the GitHub fake and
held to GitHub's published schema.

**The evidence** (``contract_tests/evidence/gh-cli/``) is what gh itself sent, not what this
project's authors think it sends. The real ``gh`` binary (Debian's gh 2.23.0, built from
cli/cli v2.23.0) was run against the fake and every request it made was recorded at the
fake's door (:func:`capture`): one ``documents/<operation>[.n].graphql`` per distinct
document, byte for byte, and ``commands.json`` with, per command, its requests in order (the
document, the variables as gh sent them, a REST call's method, path and body, the headers
that choose GitHub behaviour) and the cli/cli file that builds each. cli/cli's code is not
vendored, only what it sent; so ``SOURCE.json`` has its own shape (:class:`GhSource`): the
tag, its commit, the gh build, the files here, and (``built_in``) the cli/cli files the
documents come from. :data:`CITES` gives for each operation words of its cli/cli file that its
document holds verbatim (checked against the source at the tag when vendored, and against the
documents by a test); the field lists between come from ``api/query_builder.go``. A test
captures again with the installed gh and requires the same traffic.

**The check** (one report, ``gh documents``): on a fresh world of the demo snapshot each
command's state is made through the fake's public API as it was at capture (a branch to open
a pull request from, a pull request with a review and a status to view, one to merge...), then
each recorded request is sent again with gh's variables and headers, the ids and numbers in
them bound to that state (:attr:`Sent.bind`). A GraphQL request must:

- be valid for GitHub's schema, and its variables coerce under it (graphql-core), except that
  same-named fields of different object types may differ in type, as GitHub accepts and gh's
  ``IssueByNumber`` needs (:func:`conflict_accepted`);
- be answered HTTP 200 without ``errors``, every root field non-null;
- have ``data`` valid against GitHub's schema by the document's selection set: nullability,
  scalar types, enum values, lists, ``__typename`` (the walk of
  :func:`.graphql_schemas.response_problems`);
- keep its connections' promises (GitHub's ``PageInfo`` and ``first``/``last``): no more items
  than asked, ``totalCount`` no less than the items, a first page holding
  ``min(limit, totalCount)`` items, ``hasNextPage`` (``hasPreviousPage`` for ``last``) true
  exactly when such a page leaves items out, an ``endCursor`` whenever there is a next page;
- for gh's feature detection (``__type(name: "PullRequest") { fields }``): name only fields
  GitHub's type has, and every field gh looks for that GitHub has (:data:`DETECTED`; else gh
  sends the fake another, older document than it sends GitHub).

A REST request must be answered with its status at capture and a body valid against
githubkit's model of GitHub's OpenAPI description (a key githubkit's 2026-03-10 model lacks is
accepted where octokit's recordings of real traffic show it: gh sends no API version, so
GitHub answers as 2022-11-28); the diff media type must answer a git diff. A request gh made by
following ``Link: rel="next"`` must be the ``next`` of the fake's previous answer, and the page
gh took as the last must have none. :func:`coverage` says for each command of :data:`LISTED`
which executed documents and REST calls cover it and which of octokit's recordings of real
traffic call the same REST operations. Known gaps would go in the directory's ``gaps.json``;
none is needed.
"""

from __future__ import annotations

import copy
import json
import os
import re
import shlex
import shutil
import subprocess
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack
from dataclasses import dataclass
from datetime import date
from functools import cache
from pathlib import Path
from typing import Any, Literal

import httpx
from graphql import (
    DocumentNode,
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLObjectType,
    InlineFragmentNode,
    IntValueNode,
    OperationDefinitionNode,
    SelectionSetNode,
    StringValueNode,
    VariableNode,
    parse,
    validate,
)
from graphql.error import GraphQLError, GraphQLSyntaxError
from graphql.execution.values import get_variable_values
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from fakes.core.server import ASGIApp, Message, Receive, Scope, Send
from replay.base.serving import serving
from replay.contract.evidence import (
    EVIDENCE,
    Check,
    Report,
    Source,
    apply_gaps,
    load_gaps,
    load_source,
)
from replay.contract.evidence.graphql_schemas import ResponseWalker, vendor_schema
from replay.contract.evidence.octokit import DIR as OCTOKIT_DIR
from replay.contract.evidence.octokit import OPERATIONS, Operation, load_interactions
from replay.contract.evidence.writes import Failed, Probe
from replay.contract.schema import check_github_body
from replay.contract.targets import DEMO, ContractSetupError, Served, ServiceApp, Wrap, serve_world

DIRECTORY = EVIDENCE / "gh-cli"
"""gh's captured traffic: ``SOURCE.json``, ``LICENSE``, ``commands.json``, ``documents/``."""
FAMILY = "gh documents"
GH = "/usr/bin/gh"
R = DEMO["repo"]

LISTED = (
    "issue view",
    "issue list",
    "issue create",
    "issue comment",
    "issue close",
    "pr create",
    "pr view",
    "pr list",
    "pr checkout",
    "pr merge --merge",
    "pr merge --squash",
    "pr merge --rebase",
    "api",
)
"""The gh commands whose traffic must be covered (issue 36), each merge method apart."""

DETECTED = {"PullRequest": ("isInMergeQueue",)}
"""Fields gh 2.23's feature detection looks for on github.com
(``internal/featuredetection/feature_detection.go``, ``PullRequestFeatures``)."""

SENT_HEADERS = ("accept", "content-type", "graphql-features")
"""Request headers kept from gh's requests and sent again: they choose GitHub behaviour."""


# ----------------------------------------------------------------------------- the evidence


class GhSource(BaseModel):
    """``SOURCE.json`` of ``gh-cli/``: where gh's traffic comes from. Unlike other evidence
    the files here are not copies of the vendor's files but what its program sent."""

    model_config = ConfigDict(extra="forbid")

    repository: str = Field(pattern=r"^[\w.-]+/[\w.-]+$")
    """``cli/cli``."""
    tag: str
    """The release the gh binary was built from."""
    commit: str = Field(pattern=r"^[0-9a-f]{40}$")
    """The commit of that tag."""
    gh: str
    """``gh --version``'s first line for the binary that sent the traffic."""
    license: str
    """The license's SPDX identifier; its text is beside as ``LICENSE``."""
    retrieved: str = Field(pattern=r"^\d{4}-\d{2}-\d{2}$")
    """The day the traffic was captured."""
    files: list[str] = Field(min_length=1)
    """The files here (``commands.json``, ``documents/*.graphql``)."""
    built_in: list[str] = Field(min_length=1)
    """The cli/cli files (at ``commit``) that build the requests; not vendored."""

    def as_source(self) -> Source:
        """As the other families' :class:`Source` (its ``files``: the cli/cli files)."""
        return Source(
            repository=self.repository,
            commit=self.commit,
            files=self.built_in,
            license=self.license,
            retrieved=self.retrieved,
        )


class Sent(BaseModel):
    """One request gh sent, as the fake received it."""

    model_config = ConfigDict(extra="forbid")

    method: str
    path: str
    """Path and query; ``{name}`` stands for a value of the command's state (``{issue.number}``)."""
    headers: dict[str, str] = {}
    """The request headers of :data:`SENT_HEADERS` gh sent."""
    document: str | None = None
    """A GraphQL request's document: a file under ``documents/``."""
    operation: str | None = None
    """A GraphQL request's operation type and name (``query IssueByNumber``)."""
    variables: dict[str, Any] | None = None
    """The variables as gh sent them."""
    bind: dict[str, str] = {}
    """A dotted path in ``variables`` -> the state value that replaces it when run again."""
    body: Any = None
    """A REST request's JSON body."""
    follows: bool = False
    """gh asked for this URL because the previous answer's ``Link: rel="next"`` named it."""
    status: int
    """What the fake answered gh."""
    built_in: str
    """The cli/cli file that builds the request."""

    @property
    def label(self) -> str:
        return self.operation or f"{self.method} {self.path}"


class Command(BaseModel):
    """One gh invocation and every request it made."""

    model_config = ConfigDict(extra="forbid")

    covers: str
    """The command of :data:`LISTED` it is an instance of (or another one the tests run)."""
    argv: list[str]
    """gh's arguments; ``{name}`` stands for a value of the state."""
    setup: str
    """The state made before it (:data:`SETUPS`)."""
    where: Literal["repo", "branch", "main"]
    """``repo``: ``GH_REPO`` names the repository; ``branch``/``main``: run in a clone, on the
    branch the state names or on ``main``."""
    sent: list[Sent]

    @property
    def name(self) -> str:
        """The command line (state values as ``{name}``), quoted where a shell would need it."""
        return " ".join(
            ["gh", *(shlex.quote(a) if re.search(r"[\s#'\"&?*;[]", a) else a for a in self.argv)]
        )


class Captured(BaseModel):
    """``commands.json``: every command, in the order it ran on one world."""

    model_config = ConfigDict(extra="forbid")

    gh: str
    commands: list[Command]


def load_gh_source(directory: Path = DIRECTORY) -> GhSource:
    """``SOURCE.json``, checked: the license and every file it names are present."""
    path = directory / "SOURCE.json"
    try:
        source = GhSource.model_validate_json(path.read_bytes())
    except (OSError, ValidationError) as exc:
        raise ContractSetupError(f"{path}: not a valid gh evidence source: {exc}") from exc
    missing = [f for f in ("LICENSE", *source.files) if not (directory / f).is_file()]
    if missing:
        raise ContractSetupError(f"{directory}: SOURCE.json names missing files: {missing}")
    return source


def load_captured(directory: Path = DIRECTORY) -> Captured:
    path = directory / "commands.json"
    try:
        return Captured.model_validate_json(path.read_bytes())
    except (OSError, ValidationError) as exc:
        raise ContractSetupError(f"{path}: not a gh capture: {exc}") from exc


@cache
def document_text(name: str, directory: Path = DIRECTORY) -> str:
    return (directory / "documents" / name).read_text()


# ----------------------------------------------------------------------------- state

Values = dict[str, str | int]
Setup = Callable[[Probe], Values]


def _issue(p: Probe) -> Values:
    number = int(p.issue()["number"])
    return {"issue.number": number, "issue.id": p.gh_id(number)}


def _pull(p: Probe) -> Values:
    made = p.pull()
    number = int(made["number"])
    return {"pull.number": number, "pull.id": p.gh_id(number), "branch": made["head"]["ref"]}


def _rich_pull(p: Probe) -> Values:
    """A pull request with what ``gh pr view`` shows: a label, an assignee, a comment, a
    review and a commit status on its head."""
    values = _pull(p)
    n = values["pull.number"]
    head = p.rest("GET", f"/repos/{R}/pulls/{n}")["head"]["sha"]
    p.rest("POST", f"/repos/{R}/issues/{n}/labels", {"labels": ["bug"]})
    p.rest("PATCH", f"/repos/{R}/issues/{n}", {"assignees": ["chen"]})
    p.rest("POST", f"/repos/{R}/issues/{n}/comments", {"body": "Tried it: works."}, 201)
    p.rest("POST", f"/repos/{R}/pulls/{n}/reviews", {"body": "Reads well.", "event": "COMMENT"})
    status = {"state": "success", "context": "ci/tests", "description": "All green"}
    p.rest("POST", f"/repos/{R}/statuses/{head}", status, 201)
    return values


def _draft(p: Probe) -> Values:
    number = int(p.pull(draft=True)["number"])
    return {"draft.number": number, "draft.id": p.gh_id(number)}


def _branch(p: Probe) -> Values:
    name, _ = p.branch({f"gh/{p.fresh('file')}.txt": "one\ntwo\n"})
    return {"branch": name, "repo.id": p.gh_repo_id()}


SETUPS: dict[str, Setup] = {
    "none": lambda p: {},
    "issue": _issue,
    "pull": _pull,
    "rich pull": _rich_pull,
    "draft": _draft,
    "branch": _branch,
}
"""State a command needs, made through the fake's public API: its values by name. Values
stay for the commands after (``gh pr view`` on the branch ``gh pr create`` used)."""


@dataclass(frozen=True)
class Spec:
    """A command to capture (:func:`capture` runs them in order, on one world)."""

    covers: str
    line: str
    """gh's arguments, as a shell would split them."""
    setup: str = "none"
    where: Literal["repo", "branch", "main"] = "repo"

    @property
    def argv(self) -> list[str]:
        return shlex.split(self.line)


SPECS = (
    # Reads of the demo's state first: --paginate's pages depend on it.
    Spec("api", f"api repos/{R}/issues"),
    Spec("api", f"api --paginate 'repos/{R}/issues?state=all&per_page=5'"),
    Spec("issue view", "issue view 7"),
    Spec("issue view", "issue view 7 --comments"),
    Spec("issue view", "issue view 7 --json state,title,labels"),
    Spec("issue list", "issue list"),
    Spec("issue list", "issue list --label bug"),
    Spec("issue list", "issue list --json number,state,labels"),
    Spec("pr list", "pr list"),
    Spec("pr list", "pr list --state all --json number"),
    Spec("pr view", "pr view 4 --json state,mergedBy,reviews"),
    # Writes and reads of what they made, each on state of its own.
    Spec("pr create", "pr create --title 'Fix caret' --body 'Fixes #7'", "branch", "branch"),
    Spec("pr view", "pr view", where="branch"),
    Spec("pr view", "pr view {pull.number}", "rich pull"),
    Spec("pr view", "pr view {pull.number} --comments"),
    Spec("pr view", "pr view {pull.number} --json headRefName,commits,files"),
    Spec("pr list", "pr list --state merged"),
    Spec("pr checkout", "pr checkout {pull.number}", "pull", "main"),
    Spec("pr merge --merge", "pr merge {pull.number} --merge", "pull"),
    Spec("pr merge --squash", "pr merge {pull.number} --squash", "pull"),
    Spec("pr merge --rebase", "pr merge {pull.number} --rebase", "pull"),
    Spec("issue create", "issue create --title 'Found it' --body b --label bug"),
    Spec("issue comment", "issue comment 7 --body 'Looking into it'"),
    Spec("issue close", "issue close {issue.number}", "issue"),
    Spec("issue close", "issue close {issue.number} --reason 'not planned'", "issue"),
    Spec("issue reopen", "issue reopen {issue.number}"),
    Spec(
        "api", f"api -X POST repos/{R}/issues -f 'title=From gh api' -f body=hi -f 'labels[]=bug'"
    ),
    Spec("api", f"api -X PATCH repos/{R}/issues/{{issue.number}} -f state=closed", "issue"),
    # Other commands the project's tests run.
    Spec("pr comment", "pr comment {pull.number} --body 'Ready for review'", "pull"),
    Spec(
        "issue edit",
        "issue edit {issue.number} --add-label ranges --remove-label bug --add-assignee chen",
        "issue",
    ),
    Spec("pr ready", "pr ready {draft.number}", "draft"),
    Spec("pr review", "pr review {pull.number} --comment --body 'looks fine'", "pull"),
    Spec("pr diff", "pr diff {pull.number} --color never", "pull"),
    Spec("repo view", f"repo view {R}"),
)
"""Every command captured, in order."""


@dataclass(frozen=True)
class Cite:
    """Where cli/cli (at ``SOURCE.json``'s commit) builds a request: the file, and words of it
    that the document gh sent holds verbatim (a struct tag's text, a query's first line)."""

    file: str
    says: str


_LOOKUP, _FINDER = "pkg/cmd/issue/shared/lookup.go", "pkg/cmd/pr/shared/finder.go"
_REPO, _PR = "api/queries_repo.go", "api/queries_pr.go"
_EDIT, _ISSUES = "pkg/cmd/pr/shared/editable_http.go", "pkg/cmd/issue/list/http.go"
CITES = {
    "IssueByNumber": Cite(
        _LOOKUP, "query IssueByNumber($owner: String!, $repo: String!, $number: Int!) {"
    ),
    "CommentsForIssue": Cite(
        "pkg/cmd/issue/view/http.go", "comments(first: 100, after: $endCursor)"
    ),
    "IssueList": Cite(
        _ISSUES,
        "query IssueList($owner: String!, $repo: String!, $limit: Int, $endCursor: String, "
        "$states: [IssueState!] = OPEN, $assignee: String, $author: String, $mention: String) {",
    ),
    "IssueSearch": Cite(
        _ISSUES,
        "query IssueSearch($repo: String!, $owner: String!, $type: SearchType!, $limit: Int, "
        "$after: String, $query: String!) {",
    ),
    "IssueCreate": Cite(
        "api/queries_issue.go", "mutation IssueCreate($input: CreateIssueInput!) {"
    ),
    "CommentCreate": Cite("api/queries_comments.go", "addComment(input: $input)"),
    "IssueClose": Cite("pkg/cmd/issue/close/close.go", "closeIssue(input: $input)"),
    "IssueReopen": Cite("pkg/cmd/issue/reopen/reopen.go", "reopenIssue(input: $input)"),
    "IssueUpdate": Cite(_EDIT, "updateIssue(input: $input)"),
    "LabelAdd": Cite(_EDIT, "addLabelsToLabelable(input: $input)"),
    "LabelRemove": Cite(_EDIT, "removeLabelsFromLabelable(input: $input)"),
    "RepositoryInfo": Cite(_REPO, "query RepositoryInfo($owner: String!, $name: String!) {"),
    "RepositoryResolveMetadataIDs": Cite(_REPO, "query RepositoryResolveMetadataIDs {"),
    "RepositoryAssignableUsers": Cite(_REPO, "assignableUsers(first: 100, after: $endCursor)"),
    "RepositoryLabelList": Cite(
        _REPO, "labels(first: 100, orderBy: {field: NAME, direction: ASC}, after: $endCursor)"
    ),
    "PullRequestByNumber": Cite(
        _FINDER, "query PullRequestByNumber($owner: String!, $repo: String!, $pr_number: Int!) {"
    ),
    "PullRequestForBranch": Cite(
        _FINDER,
        "query PullRequestForBranch($owner: String!, $repo: String!, $headRefName: String!, "
        "$states: [PullRequestState!]) {",
    ),
    "PullRequestList": Cite("pkg/cmd/pr/list/http.go", "query PullRequestList("),
    "PullRequestCreate": Cite(_PR, "mutation PullRequestCreate($input: CreatePullRequestInput!) {"),
    "PullRequestMerge": Cite("pkg/cmd/pr/merge/http.go", "mergePullRequest(input: $input)"),
    "PullRequest_fields": Cite(
        "internal/featuredetection/feature_detection.go", "fields(includeDeprecated: true)"
    ),
    "PullRequestReadyForReview": Cite(_PR, "markPullRequestReadyForReview(input: $input)"),
    "PullRequestReviewAdd": Cite("api/queries_pr_review.go", "addPullRequestReview(input:$input)"),
}
"""Operation name -> where cli/cli builds its document."""
REST_CITES = {
    "api": Cite("pkg/cmd/api/api.go", 'StringVarP(&opts.RequestMethod, "method", "X", "GET"'),
    "pr diff": Cite("pkg/cmd/pr/diff/diff.go", 'acceptType := "application/vnd.github.v3.diff"'),
    "repo view": Cite(
        "pkg/cmd/repo/view/http.go", 'path := fmt.Sprintf("repos/%s/readme", ghrepo.FullName(repo))'
    ),
}
"""Command -> where cli/cli builds the REST requests it sends."""


# ----------------------------------------------------------------------------- capture


class Recorder:
    """An ASGI app that passes requests on and, while :attr:`log` is a list, records each
    request and its answer's status and headers."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.log: list[dict[str, Any]] | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or self.log is None:
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        while True:
            message = await receive()
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                break
        body = b"".join(chunks)
        query = scope.get("query_string", b"").decode()
        entry: dict[str, Any] = {
            "method": scope["method"],
            "path": scope["path"] + (f"?{query}" if query else ""),
            "headers": {k.decode().lower(): v.decode() for k, v in scope["headers"]},
            "body": body,
        }
        self.log.append(entry)
        done = False

        async def replay() -> Message:
            nonlocal done
            if done:
                return {"type": "http.disconnect"}
            done = True
            return {"type": "http.request", "body": body, "more_body": False}

        async def keep(message: Message) -> None:
            if message["type"] == "http.response.start":
                entry["status"] = message["status"]
                entry["link"] = next(
                    (v.decode() for k, v in message.get("headers", []) if k.lower() == b"link"), ""
                )
            await send(message)

        await self.app(scope, replay, keep)


class GhRunner:
    """The real gh against one served world: its API calls over a Unix socket (gh's
    ``http_unix_socket``), and for git a clone whose remote *says* github.com, so gh knows the
    repository, but resolves to the fake's port (git's ``http.curloptResolve``)."""

    def __init__(self, served: Served, root: Path, gh: str, token: str) -> None:
        self.gh = gh
        self.root = root
        self.token = token
        self.home = root / "gh-home"
        (self.home / "tmp").mkdir(parents=True)
        (self.home / "config.yml").write_text(f"http_unix_socket: {root / 'gh.sock'}\n")
        port = served.urls["github"].rsplit(":", 1)[1]
        self.remote = f"http://x-access-token:{token}@github.com:{port}/{R}.git"
        self.resolve = f"github.com:{port}:127.0.0.1"
        self.clone = root / "clone"

    def env(self, repo: bool) -> dict[str, str]:
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.home),
            "GH_CONFIG_DIR": str(self.home),
            "XDG_CACHE_HOME": str(self.home / "cache"),
            # go-gh caches some answers (gh's feature detection, for a day) under TMPDIR: a
            # cache shared with other runs would hide requests from the capture.
            "TMPDIR": str(self.home / "tmp"),
            "GH_TOKEN": self.token,
            "GH_NO_UPDATE_NOTIFIER": "1",
            "GH_PROMPT_DISABLED": "1",
            "NO_COLOR": "1",
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_AUTHOR_NAME": "Agent",
            "GIT_COMMITTER_NAME": "Agent",
            "EMAIL": "agent@example.test",
        }
        return env | ({"GH_REPO": R} if repo else {})

    def _run(self, argv: list[str], cwd: Path, repo: bool = False) -> None:
        done = subprocess.run(
            argv, cwd=cwd, env=self.env(repo), capture_output=True, text=True, timeout=120
        )
        if done.returncode != 0:
            raise ContractSetupError(f"{shlex.join(argv)} failed: {done.stderr}{done.stdout}")

    def git(self, *args: str) -> None:
        if not self.clone.exists():
            resolve = f"http.curloptResolve={self.resolve}"
            self._run(
                ["git", "-c", resolve, "clone", "-q", self.remote, str(self.clone)], self.root
            )
            self._run(["git", "config", "http.curloptResolve", self.resolve], self.clone)
        self._run(["git", *args], self.clone)

    def run(self, argv: list[str], where: str, branch: str | None) -> None:
        if where == "repo":
            self._run([self.gh, *argv], self.root, repo=True)
            return
        self.git("fetch", "-q", "origin")
        self.git("checkout", "-q", "-f", "main")
        if where == "branch":
            if branch is None:
                raise ContractSetupError(f"gh {shlex.join(argv)}: no branch to stand on")
            self.git("checkout", "-q", "-B", branch, "--track", f"origin/{branch}")
        self._run([self.gh, *argv], self.clone)


def gh_version(gh: str = GH) -> str:
    out = subprocess.run([gh, "--version"], capture_output=True, text=True, check=True).stdout
    return out.splitlines()[0]


def _fill(text: str, values: Values) -> str:
    for name, value in values.items():
        text = text.replace("{" + name + "}", str(value))
    return text


def _leaves(value: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(v, f"{path}.{k}" if path else k)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _leaves(v, f"{path}.{i}")
    else:
        yield path, value


def _binds(variables: Any, values: Values) -> dict[str, str]:
    """The leaves of gh's variables that hold a value of the state: ids and branch names by
    value, numbers only under a key that names a number."""
    by_text = {v: k for k, v in values.items() if isinstance(v, str)}
    by_number = {v: k for k, v in values.items() if isinstance(v, int)}
    out: dict[str, str] = {}
    for path, leaf in _leaves(variables):
        if isinstance(leaf, str) and leaf in by_text:
            out[path] = by_text[leaf]
        elif isinstance(leaf, int) and "number" in path.rsplit(".", 1)[-1] and leaf in by_number:
            out[path] = by_number[leaf]
    return out


def _templated(path: str, values: Values) -> str:
    for name, value in values.items():
        if name.endswith(".number"):
            path = re.sub(rf"/{value}(?=$|[/?])", "/{" + name + "}", path)
    return path


def _sent(covers: str, entry: dict[str, Any], values: Values, follows: bool) -> Sent:
    headers = {k: v for k, v in entry["headers"].items() if k in SENT_HEADERS}
    if entry["method"] != "POST" or entry["path"] != "/graphql":
        return Sent(
            method=entry["method"],
            path=_templated(entry["path"], values),
            headers=headers,
            body=json.loads(entry["body"]) if entry["body"] else None,
            follows=follows,
            status=entry["status"],
            built_in=REST_CITES[covers].file,
        )
    payload = json.loads(entry["body"])
    query: str = payload["query"]
    op = _operation(parse(query))
    name = op.name.value if op.name else "(anonymous)"
    embedded = [v for v in values.values() if isinstance(v, str) and v in query]
    if embedded:
        raise ContractSetupError(f"{name}: the document embeds values of the state: {embedded}")
    variables = payload.get("variables")
    return Sent(
        method="POST",
        path="/graphql",
        headers=headers,
        document=query,
        operation=f"{op.operation.value} {name}",
        variables=variables,
        bind=_binds(variables, values),
        status=entry["status"],
        built_in=CITES[name].file,
    )


def capture(out: Path = DIRECTORY, gh: str = GH, specs: tuple[Spec, ...] = SPECS) -> Captured:
    """Run every command of ``specs`` with the real gh on one fresh world of the demo
    snapshot, record what it sent, and write ``commands.json`` and ``documents/`` under
    ``out`` (and ``SOURCE.json``'s ``files``, ``gh``, ``built_in`` and ``retrieved``, when
    there is one)."""
    commands: list[Command] = []
    with ExitStack() as stack:
        served = stack.enter_context(serve_world())
        root = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="gh-capture-")))
        recorder = Recorder(ServiceApp(served.world, "github"))
        stack.enter_context(serving(recorder, uds=root / "gh.sock", ws="none"))
        probe = Probe(served, root)
        stack.callback(probe.close)
        runner = GhRunner(served, root, gh, probe.target.github_token)
        values: Values = {}
        for spec in specs:
            values |= SETUPS[spec.setup](probe)
            recorder.log = []
            try:
                branch = values.get("branch")
                argv = [_fill(a, values) for a in spec.argv]
                runner.run(argv, spec.where, None if branch is None else str(branch))
            finally:
                log, recorder.log = recorder.log, None
            sent = [
                _sent(spec.covers, e, values, i > 0 and _next(log[i - 1]["link"]) == e["path"])
                for i, e in enumerate(log)
            ]
            commands.append(
                Command(
                    covers=spec.covers,
                    argv=spec.argv,
                    setup=spec.setup,
                    where=spec.where,
                    sent=sent,
                )
            )
    captured = Captured(gh=gh_version(gh), commands=commands)
    _write(out, captured)
    return captured


def _write(out: Path, captured: Captured) -> None:
    """Name each distinct document (``<operation>.graphql``; ``<operation>.<n>.graphql`` when
    gh sends different documents under one name) and write the files."""
    variants: dict[str, list[str]] = {}
    graphql = [s for c in captured.commands for s in c.sent if s.document is not None]
    for sent in graphql:
        known = variants.setdefault(str(sent.operation).split()[-1], [])
        if sent.document not in known:
            known.append(str(sent.document))
    names = {
        text: f"{op}.graphql" if len(texts) == 1 else f"{op}.{i}.graphql"
        for op, texts in variants.items()
        for i, text in enumerate(texts, 1)
    }
    docs = out / "documents"
    if docs.exists():
        shutil.rmtree(docs)
    docs.mkdir(parents=True)
    for text, name in names.items():
        (docs / name).write_text(text)
    for sent in graphql:
        sent.document = names[str(sent.document)]
    dump = captured.model_dump_json(indent=1, exclude_defaults=True)
    (out / "commands.json").write_text(dump + "\n")
    source_path = out / "SOURCE.json"
    if source_path.exists():
        source = GhSource.model_validate_json(source_path.read_bytes())
        source.files = ["commands.json", *(f"documents/{n}" for n in sorted(names.values()))]
        source.retrieved = date.today().isoformat()
        source.gh = captured.gh
        source.built_in = sorted({s.built_in for c in captured.commands for s in c.sent})
        source_path.write_text(source.model_dump_json(indent=2) + "\n")
    document_text.cache_clear()


# ----------------------------------------------------------------------------- GraphQL checks


def _operation(doc: DocumentNode) -> OperationDefinitionNode:
    ops = [d for d in doc.definitions if isinstance(d, OperationDefinitionNode)]
    if len(ops) != 1:
        raise ContractSetupError("a gh document holds not exactly one operation")
    return ops[0]


def _key(node: FieldNode) -> str:
    return node.alias.value if node.alias else node.name.value


def conflict_accepted(error: GraphQLError) -> bool:
    """GitHub (graphql-ruby) does not hold same-named fields of *different* object types to
    one response shape, and gh relies on it: its ``IssueByNumber`` asks for ``state`` under
    ``...on Issue`` (``IssueState!``) and ``...on PullRequest`` (``PullRequestState!``), and
    ``gh issue view`` works on github.com. Every other validation error counts."""
    return "conflict because they return conflicting types" in error.message


def variable_problems(doc: DocumentNode, variables: Mapping[str, Any] | None) -> list[str]:
    """gh's variables coerced under GitHub's schema by the document's definitions."""
    definitions = _operation(doc).variable_definitions or ()
    got = get_variable_values(vendor_schema("github"), definitions, dict(variables or {}))
    return [f"variables: {e.message}" for e in got] if isinstance(got, list) else []


class _Pages:
    """A document walked beside its answer: each connection against its arguments."""

    def __init__(self, doc: DocumentNode, variables: Mapping[str, Any] | None) -> None:
        self.fragments = {
            d.name.value: d for d in doc.definitions if isinstance(d, FragmentDefinitionNode)
        }
        self.variables = variables or {}
        self.problems: list[str] = []

    def fields(self, selections: SelectionSetNode, typename: Any) -> Iterator[FieldNode]:
        for sel in selections.selections:
            if isinstance(sel, FieldNode):
                yield sel
                continue
            if isinstance(sel, FragmentSpreadNode):
                frag = self.fragments.get(sel.name.value)
                if frag is None:
                    continue
                on: str | None = frag.type_condition.name.value
                inner = frag.selection_set
            else:
                assert isinstance(sel, InlineFragmentNode)
                on = sel.type_condition.name.value if sel.type_condition else None
                inner = sel.selection_set
            concrete = isinstance(vendor_schema("github").get_type(on or ""), GraphQLObjectType)
            if on is None or not isinstance(typename, str) or not concrete or on == typename:
                yield from self.fields(inner, typename)

    def arg(self, node: FieldNode, name: str) -> Any:
        for a in node.arguments or ():
            if a.name.value != name:
                continue
            if isinstance(a.value, VariableNode):
                return self.variables.get(a.value.name.value)
            if isinstance(a.value, IntValueNode):
                return int(a.value.value)
            return a.value.value if isinstance(a.value, StringValueNode) else True
        return None

    def walk(self, path: str, selections: SelectionSetNode, value: Any) -> None:
        if isinstance(value, list):
            for i, item in enumerate(value):
                self.walk(f"{path}[{i}]", selections, item)
            return
        if not isinstance(value, dict):
            return
        for node in self.fields(selections, value.get("__typename")):
            sub = value.get(_key(node))
            if node.selection_set is None or sub is None:
                continue
            if isinstance(sub, dict):
                self.page(f"{path}.{_key(node)}", node, sub)
            self.walk(f"{path}.{_key(node)}", node.selection_set, sub)

    def page(self, path: str, node: FieldNode, conn: dict[str, Any]) -> None:
        items = conn.get("nodes", conn.get("edges"))
        first, last = self.arg(node, "first"), self.arg(node, "last")
        limit = first if isinstance(first, int) else last if isinstance(last, int) else None
        cursor = self.arg(node, "after") or self.arg(node, "before")
        total = conn.get("totalCount")
        if isinstance(items, list) and limit is not None and len(items) > limit:
            self.problems.append(f"{path}: {len(items)} items for a page of {limit}")
        if isinstance(items, list) and isinstance(total, int):
            if total < len(items):
                self.problems.append(f"{path}: totalCount {total} below its {len(items)} items")
            elif limit is not None and not cursor and len(items) != min(limit, total):
                self.problems.append(
                    f"{path}: {len(items)} items on a first page of {limit} of {total}"
                )
        info = conn.get("pageInfo")
        if not isinstance(info, dict):
            return
        if info.get("hasNextPage") is True and "endCursor" in info and not info["endCursor"]:
            self.problems.append(f"{path}.pageInfo: hasNextPage without an endCursor")
        more = "hasNextPage" if isinstance(first, int) else "hasPreviousPage"
        if (
            limit is not None
            and not cursor
            and isinstance(total, int)
            and isinstance(info.get(more), bool)
            and info[more] != (total > limit)
        ):
            self.problems.append(f"{path}.pageInfo.{more}: {info[more]} for {limit} of {total}")


def introspection_problems(doc: DocumentNode, data: Any) -> list[str]:
    """gh's feature detection: ``alias: __type(name: "T") { fields(...) { name } }``."""
    schema = vendor_schema("github")
    problems: list[str] = []
    for node in _operation(doc).selection_set.selections:
        assert isinstance(node, FieldNode)
        key = _key(node)
        arg = next((a.value for a in node.arguments or () if a.name.value == "name"), None)
        type_name = arg.value if isinstance(arg, StringValueNode) else ""
        vendor = schema.get_type(type_name)
        answer = data.get(key) if isinstance(data, dict) else None
        if not isinstance(vendor, GraphQLObjectType) or not isinstance(answer, dict):
            problems.append(f"data.{key}: no type {type_name} answered")
            continue
        fields = answer.get("fields")
        if set(answer) != {"fields"} or not isinstance(fields, list):
            problems.append(f"data.{key}: not {{fields: [...]}}: {sorted(answer)}")
            continue
        names = [
            str(f["name"]) for f in fields if isinstance(f, dict) and isinstance(f.get("name"), str)
        ]
        if len(names) != len(fields) or any(set(f) != {"name"} for f in fields):
            problems.append(f"data.{key}.fields: not a list of {{name: String!}}")
            continue
        unknown = sorted(set(names) - set(vendor.fields))
        if unknown:
            problems.append(f"data.{key}.fields: {unknown} are not fields of GitHub's {vendor}")
        lacking = [
            f for f in DETECTED.get(vendor.name, ()) if f in vendor.fields and f not in names
        ]
        if lacking:
            problems.append(
                f"data.{key}.fields: lacks {lacking}, which gh looks for and GitHub has: gh "
                "would send the fake an older document than it sends GitHub"
            )
    return problems


def data_problems(doc: DocumentNode, body: dict[str, Any], variables: Any) -> list[str]:
    """``data`` against GitHub's schema by the document's selection set: the walk of
    :func:`.graphql_schemas.response_problems`, whose validation would refuse what
    :func:`conflict_accepted` lets through."""
    schema = vendor_schema("github")
    problems = [
        f"body.{k}: not a key of a GraphQL response"
        for k in body
        if k not in ("data", "errors", "extensions")
    ]
    data = body.get("data")
    if not isinstance(data, dict):
        return [*problems, "data: missing or not an object"]
    op = _operation(doc)
    root = schema.get_root_type(op.operation)
    if root is None:
        return [*problems, f"document: GitHub has no {op.operation.value} root"]
    fragments = {d.name.value: d for d in doc.definitions if isinstance(d, FragmentDefinitionNode)}
    walker = ResponseWalker(schema, fragments, variables)
    walker.fields("data", root, [op.selection_set], data)
    return problems + walker.problems


def graphql_problems(
    document: str, variables: Mapping[str, Any] | None, status: int, body: Any
) -> list[str]:
    """Every way one executed gh document and its answer depart from GitHub's schema."""
    try:
        doc = parse(document)
    except GraphQLSyntaxError as exc:
        return [f"document: {exc.message}"]
    schema = vendor_schema("github")
    problems = [f"document: {e.message}" for e in validate(schema, doc) if not conflict_accepted(e)]
    if problems:
        return problems
    problems = variable_problems(doc, variables)
    if status != 200:
        problems.append(f"HTTP {status}: GitHub answers GraphQL with 200")
    if not isinstance(body, dict):
        return [*problems, "body: not a JSON object"]
    if body.get("errors"):
        texts = [e.get("message") if isinstance(e, dict) else e for e in body["errors"]]
        problems.append(f"errors: {'; '.join(map(str, texts))}")
    op = _operation(doc)
    roots = [s for s in op.selection_set.selections if isinstance(s, FieldNode)]
    data = body.get("data")
    if roots and all(r.name.value == "__type" for r in roots):
        return problems + introspection_problems(doc, data)
    problems += data_problems(doc, body, variables)
    if isinstance(data, dict):
        problems += [
            f"data.{_key(r)}: null where gh reads an answer"
            for r in roots
            if _key(r) in data and data[_key(r)] is None
        ]
        pages = _Pages(doc, variables)
        pages.walk("data", op.selection_set, data)
        problems += pages.problems
    return list(dict.fromkeys(problems))


# ----------------------------------------------------------------------------- REST checks

EXTRA_OPERATIONS = (
    Operation("PATCH", "/repos/{owner}/{repo}/issues/{number}", "Issue"),
    Operation("GET", "/repos/{owner}/{repo}/pulls/{number}", "PullRequest"),
    Operation("GET", "/repos/{owner}/{repo}/readme", "ContentFile"),
)
"""REST operations gh sends that octokit's scenarios do not, with githubkit's model."""
DIFF = "application/vnd.github.v3.diff"
"""The media type ``gh pr diff`` asks for: the answer is the diff itself, not JSON."""


def rest_operation(method: str, path: str) -> Operation | None:
    bare = path.split("?", 1)[0]
    for op in (*OPERATIONS, *EXTRA_OPERATIONS):
        if op.method == method.upper() and op.pattern.match(bare):
            return op
    return None


@cache
def _octokit() -> tuple[tuple[str, Operation, Any], ...]:
    """Each of octokit's recorded real requests (``scenario #index``) with its operation and
    recorded answer."""
    out = []
    for path in load_source(OCTOKIT_DIR).files:
        scenario = path.split("/")[2]
        for i, it in enumerate(load_interactions(OCTOKIT_DIR, scenario)):
            op = rest_operation(it.method, it.path)
            if op is not None:
                out.append((f"{scenario} #{i}", op, it.response if it.status < 400 else None))
    return tuple(out)


def octokit_recordings(op: Operation) -> tuple[str, ...]:
    """octokit's recordings of real traffic that call ``op``."""
    return tuple(name for name, recorded, _ in _octokit() if recorded == op)


@cache
def recorded_keys(model: str) -> frozenset[str]:
    """The keys octokit's recordings of real traffic show on objects answered as ``model``
    (githubkit's name; the top level, or a list's items)."""
    keys: set[str] = set()
    for _, op, answer in _octokit():
        if op.model == model:
            items = answer if isinstance(answer, list) else [answer]
            keys.update(k for item in items if isinstance(item, dict) for k in item)
    return frozenset(keys)


NOT_A_FIELD = re.compile(r"^\$(?:\[\d+\])?\.(\w+): not a field of (\w+)$")


def _next(link: str) -> str | None:
    """The path and query of a ``Link`` header's ``rel="next"``."""
    for part in link.split(","):
        found = re.match(r'\s*<([^>]*)>;\s*rel="next"', part)
        if found:
            return httpx.URL(found.group(1)).raw_path.decode()
    return None


def rest_problems(sent: Sent, response: httpx.Response) -> list[str]:
    problems: list[str] = []
    if response.status_code != sent.status:
        problems.append(f"HTTP {response.status_code} where gh was answered {sent.status}")
    if sent.headers.get("accept") == DIFF:
        if not response.text.startswith("diff --git "):
            problems.append(f"not a git diff for {DIFF}: {response.text[:60]!r}")
        return problems
    op = rest_operation(sent.method, sent.path)
    if op is None:
        return [*problems, f"no githubkit model known for {sent.method} {sent.path}"]
    try:
        data = response.json()
    except ValueError:
        return [*problems, "body: not JSON"]
    for problem in check_github_body(op.response_model(), response.status_code, data):
        # gh sends no X-GitHub-Api-Version, so GitHub answers as 2022-11-28; githubkit here
        # models 2026-03-10, which dropped deprecated keys (``assignee``) that octokit's
        # recordings of real traffic show.
        found = NOT_A_FIELD.match(problem)
        if not (found and found.group(1) in recorded_keys(found.group(2))):
            problems.append(problem)
    return problems


# ----------------------------------------------------------------------------- executing


@dataclass
class Result:
    """One recorded request of one command, sent again, and what it found."""

    command: Command
    sent: Sent
    check: Check
    octokit: tuple[str, ...] = ()
    """octokit's recordings of real traffic to the same REST operation."""


def bound(variables: Any, bind: Mapping[str, str], values: Mapping[str, Any]) -> Any:
    """gh's variables with each leaf of ``bind`` replaced by its value in ``values``."""
    out = copy.deepcopy(variables)
    for path, name in bind.items():
        if name not in values:
            raise ContractSetupError(f"variables.{path}: the state has no {name}")
        *parents, last = path.split(".")
        node = out
        for step in parents:
            node = node[int(step)] if isinstance(node, list) else node[step]
        node[int(last) if isinstance(node, list) else last] = values[name]
    return out


def _send(probe: Probe, sent: Sent, text: str | None, path: str, variables: Any) -> httpx.Response:
    headers = {**sent.headers, "Authorization": f"token {probe.target.github_token}"}
    payload = {"query": text, "variables": variables} if text is not None else sent.body
    content = None if payload is None else json.dumps(payload).encode()
    return probe.client.request(
        sent.method, probe.target.github_url + path, content=content, headers=headers
    )


def subject(command: Command, index: int, sent: Sent) -> str:
    return f"{command.name} #{index} {sent.label}"


def run_command(probe: Probe, command: Command, values: Values, directory: Path) -> list[Result]:
    """Make the command's state (into ``values``), then send each of its requests again and
    check the answer."""
    try:
        values |= SETUPS[command.setup](probe)
    except Failed as exc:
        return [
            Result(command, s, Check(subject(command, i, s), (f"setup: {exc}",)))
            for i, s in enumerate(command.sent)
        ]
    results: list[Result] = []
    link = ""
    for i, sent in enumerate(command.sent):
        path = _fill(sent.path, values)
        problems: list[str] = []
        if sent.follows and _next(link) != path:
            problems.append(f"gh followed Link rel=next to {path}; the fake's is {_next(link)}")
        variables = bound(sent.variables, sent.bind, values)
        text = None if sent.document is None else document_text(sent.document, directory)
        response = _send(probe, sent, text, path, variables)
        octokit: tuple[str, ...] = ()
        if text is not None:
            try:
                body = response.json()
            except ValueError:
                body = None
            problems += graphql_problems(text, variables, response.status_code, body)
        else:
            problems += rest_problems(sent, response)
            link = response.headers.get("link", "")
            later = command.sent[i + 1] if i + 1 < len(command.sent) else None
            paged = any(s.follows for s in command.sent)
            if paged and _next(link) and not (later and later.follows):
                problems.append(f"Link rel=next ({_next(link)}) on the page gh took as the last")
            op = rest_operation(sent.method, sent.path)
            octokit = octokit_recordings(op) if op else ()
        check = Check(subject(command, i, sent), tuple(problems))
        results.append(Result(command, sent, check, octokit))
    return results


def execute(wrap: Wrap | None = None, directory: Path = DIRECTORY) -> list[Result]:
    """Every captured command run again, in order, on a fresh world of the demo snapshot."""
    captured = load_captured(directory)
    results: list[Result] = []
    with serve_world(wrap=wrap) as served, tempfile.TemporaryDirectory() as tmp:
        probe = Probe(served, Path(tmp))
        try:
            values: Values = {}
            for command in captured.commands:
                results += run_command(probe, command, values, directory)
        finally:
            probe.close()
    return results


def report_of(results: list[Result]) -> Report:
    source = load_gh_source().as_source()
    return apply_gaps("github", FAMILY, source, [r.check for r in results], load_gaps(DIRECTORY))


def reports(wrap: Wrap | None = None) -> list[Report]:
    """One report: each request of each captured gh command, executed and checked."""
    return [report_of(execute(wrap))]


# ----------------------------------------------------------------------------- coverage


@dataclass(frozen=True)
class Coverage:
    """What covers one gh command."""

    command: str
    checks: tuple[Check, ...]
    """The checks of every request of every captured instance of it (known gaps applied)."""
    documents: tuple[str, ...]
    """The vendored GraphQL documents it sends, executed."""
    rest: tuple[str, ...]
    """The REST operations it calls, executed."""
    octokit: tuple[str, ...]
    """octokit's recordings of real traffic to the same REST operations."""

    @property
    def ok(self) -> bool:
        """Covered: at least one executed request, and every one held (or a known gap)."""
        return bool(self.checks) and all(c.ok or c.gap for c in self.checks)


def coverage(results: list[Result] | None = None) -> dict[str, Coverage]:
    """Per command of :data:`LISTED`, then every other one captured: what covers it."""
    results = execute() if results is None else results
    checks = report_of(results).checks
    out: dict[str, Coverage] = {}
    for name in dict.fromkeys([*LISTED, *(r.command.covers for r in results)]):
        mine = [(r, c) for r, c in zip(results, checks, strict=True) if r.command.covers == name]
        out[name] = Coverage(
            command=name,
            checks=tuple(c for _, c in mine),
            documents=tuple(dict.fromkeys(r.sent.document for r, _ in mine if r.sent.document)),
            rest=tuple(dict.fromkeys(rest_name(r.sent) for r, _ in mine if not r.sent.document)),
            octokit=tuple(dict.fromkeys(o for r, _ in mine for o in r.octokit)),
        )
    return out


def rest_name(sent: Sent) -> str:
    """A REST request as its operation (``GET /repos/{owner}/{repo}/issues``)."""
    op = rest_operation(sent.method, sent.path)
    name = f"{op.method} {op.template}" if op else sent.label
    return f"{name} ({DIFF})" if sent.headers.get("accept") == DIFF else name


def root_fields(results: list[Result]) -> Counter[str]:
    """How many executed gh requests that held reach each GraphQL root field or REST route,
    named as ``replay contract coverage`` names them (``graphql mutation mergePullRequest``,
    ``GET /repos/{}/{}/issues``)."""
    counts: Counter[str] = Counter()
    for r in results:
        if not r.check.ok:
            continue
        if r.sent.document is None:
            op = rest_operation(r.sent.method, r.sent.path)
            if op is not None:
                counts[f"{op.method} {re.sub(r'{[^}]*}', '{}', op.template)}"] += 1
            continue
        doc = parse(document_text(r.sent.document))
        kind = _operation(doc).operation.value
        for sel in _operation(doc).selection_set.selections:
            if isinstance(sel, FieldNode):
                counts[f"graphql {kind} {sel.name.value}"] += 1
    return counts


def coverage_lines(results: list[Result]) -> list[str]:
    """The ``COVERAGE.md`` section: each gh command, what covers it, and its status."""
    lines = [
        "## gh commands",
        "",
        "Each command's GraphQL documents and REST calls as the real gh 2.23 sends them",
        "(`contract_tests/evidence/gh-cli`, captured from `/usr/bin/gh`, built from cli/cli",
        "v2.23.0), executed against the fake and held to GitHub's published schema",
        "(`replay.contract.evidence.gh_documents`).",
        "",
        "| gh command | requests held | documents | REST calls (octokit's real recordings) "
        "| status |",
        "|---|---|---|---|---|",
    ]
    for name, c in coverage(results).items():
        held = sum(1 for x in c.checks if x.ok)
        docs = ", ".join(f"`{d.removesuffix('.graphql')}`" for d in c.documents)
        rest = ", ".join(f"`{r}`" for r in c.rest)
        if c.octokit:
            rest += f" ({', '.join(c.octokit)})"
        status = "executed, holds" if c.ok else "**fails**"
        listed = "" if name in LISTED else " (also run by the tests)"
        lines.append(
            f"| `gh {name}`{listed} | {held}/{len(c.checks)} | {docs} | {rest} | {status} |"
        )
    return lines
