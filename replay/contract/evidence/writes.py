"""Read your writes: every write the fakes serve, made through the fake's public API, then
read back through the reads that show its effect, held to what the vendor documents that
effect to be.

The other families check shapes; a fake whose write answers in the right shape but has the
wrong effect (a merge method ignored, a comment answered 201 and never stored, a reply posted
at the top level, a state change dropped) passes them all. Here each mutation the fakes serve
is one check, and one more for each argument whose documented effect differs:

- GitHub REST (``fakes/github/routes_*.py``), GitHub GraphQL (``Mutation``) and a git push
  over smart HTTP; Slack's Web API writes (``chat.*``, ``reactions.*``,
  ``conversations.join``); Linear's GraphQL mutations.
- create -> read back by its own read and found in its list; update -> the read shows the
  new value (one check per argument); delete -> the read answers 404 (Slack:
  ``thread_not_found`` and ``message_not_found``) and, where there is one, the list no
  longer has it; comment -> in the thread's comments (and GitHub's timeline); labels -> the
  thread's labels; state (close, reopen, Linear's ``stateId``) -> the state (REST and Linear:
  also the lists by state); a merge refused for a stale head (``sha``, ``expectedHeadOid``)
  -> the base and the pull request unchanged.
- GitHub's merge methods, by REST ``merge_method`` and by GraphQL ``mergePullRequest``'s
  ``mergeMethod`` (and its documented default): the base branch is fetched with real git
  from a clone made over the fake's smart HTTP. ``merge``: one new merge commit whose
  parents are the old base and the head. ``squash``: one new commit, its only parent the old
  base, none of the head's commits on the base. ``rebase``: as many new commits as the head
  has, each with one parent (linear), each with its head commit's message and change, none
  of them the head's own. All three: the base's net change is the head's combined change.

Each check cites the evidence from outside for the effect it expects (:class:`Cite`): the
descriptions in GitHub's public GraphQL schema and the Linear SDK's schema, the method and
parameter descriptions of Slack's Web API spec, githubkit's models of GitHub's OpenAPI
description, octokit's recordings of real api.github.com traffic. A cited text the
evidence no longer holds is a problem of that check, and each problem names the check's first
citation. One report per service; its ``source`` is the vendored evidence its checks rest on
(GitHub's GraphQL schema, Slack's spec, the Linear SDK). Known gaps come from that
directory's ``gaps.json`` (shared with the other families): those whose subject pattern names
a check of this family. None is needed today; note that the other families reading the same
file would report a gap of this family as stale, as it names none of their checks.

Everything runs on one fresh world of the demo snapshot, each check making its own issues,
branches, pull requests, messages. One step is not made through the API: the demo's bot is in
every Slack channel, so the ``conversations.join`` check first takes it out of ``#random`` in
the world's database.
"""

from __future__ import annotations

import base64
import fnmatch
import json
import subprocess
import tempfile
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache, cached_property, partial
from pathlib import Path
from typing import Any, Literal

import httpx
from graphql import GraphQLEnumType

from replay.base.gitrepo import clean_env
from replay.contract.evidence import (
    EVIDENCE,
    Check,
    KnownGap,
    Report,
    Service,
    apply_gaps,
    load_gaps,
    load_source,
)
from replay.contract.targets import DEMO, Served, Target, Wrap, fake_target, serve_world

FAMILY = "read your writes"
DIRS: dict[Service, Path] = {
    "github": EVIDENCE / "github-graphql-schema",
    "slack": EVIDENCE / "slack-api-specs",
    "linear": EVIDENCE / "linear-sdk",
}
"""The evidence each service's report rests on (its ``SOURCE.json`` and ``gaps.json``)."""
SLACK_SPEC = "web-api/slack_web_openapi_v2_without_examples.json"

OWNER, NAME = DEMO["repo"].split("/")
R = f"/repos/{OWNER}/{NAME}"
REPO = {"owner": OWNER, "name": NAME}
ZERO = "0" * 40


# ----------------------------------------------------------------------------- citations

Origin = Literal[
    "github-graphql-schema", "githubkit", "octokit-fixtures", "slack-api-specs", "linear-sdk"
]


@dataclass(frozen=True)
class Cite:
    """Where the outside evidence states the effect a check expects."""

    origin: Origin
    where: str
    """A GraphQL schema coordinate (``Type``, ``Type.field``, ``Type.field(arg:)``,
    ``Enum.VALUE``); githubkit's ``Model.field``; a Slack method, ``method param`` or
    ``method errors``; an octokit recording's request, ``scenario #index``."""
    says: str
    """Words of the text there that state the effect (compared with whitespace collapsed)."""

    def __str__(self) -> str:
        return f"{self.origin} {self.where}"


def gql(where: str, says: str) -> Cite:
    return Cite("github-graphql-schema", where, says)


def kit(where: str, says: str) -> Cite:
    return Cite("githubkit", where, says)


def octo(where: str, says: str) -> Cite:
    return Cite("octokit-fixtures", where, says)


def spec(where: str, says: str) -> Cite:
    return Cite("slack-api-specs", where, says)


def lin(where: str, says: str) -> Cite:
    return Cite("linear-sdk", where, says)


def _schema_text(service: Literal["github", "linear"], where: str) -> str | None:
    from replay.contract.evidence.graphql_schemas import vendor_schema

    schema = vendor_schema(service)
    type_name, _, rest = where.partition(".")
    named = schema.type_map.get(type_name)
    if named is None:
        return None
    if not rest:
        return named.description
    name, _, arg = rest.partition("(")
    if isinstance(named, GraphQLEnumType):
        value = named.values.get(name)
        return value.description if value is not None else None
    fields: dict[str, Any] = getattr(named, "fields", {})
    if name not in fields:
        return None
    if arg:
        argument = getattr(fields[name], "args", {}).get(arg.rstrip(":)"))
        return argument.description if argument is not None else None
    description: str | None = fields[name].description
    return description


def _githubkit_text(where: str) -> str | None:
    from githubkit_schemas.latest import models

    model_name, _, wanted = where.partition(".")
    model = getattr(models, model_name, None)
    if model is None:
        return None
    for name, info in model.model_fields.items():
        if (info.alias or name) == wanted:
            return f"{info.description or ''} {info.annotation}"
    return None


@cache
def _slack_document() -> dict[str, Any]:
    document: dict[str, Any] = json.loads((DIRS["slack"] / SLACK_SPEC).read_bytes())
    return document


def _slack_text(where: str) -> str | None:
    method, _, param = where.partition(" ")
    for op in _slack_document()["paths"].get(f"/{method}", {}).values():
        if not param:
            return str(op.get("description", ""))
        if param == "errors":
            schema = op.get("responses", {}).get("default", {}).get("schema", {})
            return " ".join(schema.get("properties", {}).get("error", {}).get("enum", []))
        for p in op.get("parameters", []):
            if p.get("name") == param:
                return str(p.get("description", ""))
    return None


def _octokit_text(where: str) -> str | None:
    from replay.contract.evidence.octokit import DIR, load_interactions
    from replay.contract.targets import ContractSetupError

    scenario, _, index = where.partition(" #")
    try:
        it = load_interactions(DIR, scenario)[int(index)]
    except (ContractSetupError, ValueError, IndexError):
        return None
    return (
        f"{it.method.upper()} {it.path} {it.status} {json.dumps(it.body)} {json.dumps(it.response)}"
    )


def cited_text(cite: Cite) -> str | None:
    """The text at a citation's place in the evidence (None: no such place)."""
    if cite.origin == "github-graphql-schema":
        return _schema_text("github", cite.where)
    if cite.origin == "linear-sdk":
        return _schema_text("linear", cite.where)
    if cite.origin == "githubkit":
        return _githubkit_text(cite.where)
    if cite.origin == "slack-api-specs":
        return _slack_text(cite.where)
    return _octokit_text(cite.where)


def _words(text: str) -> str:
    return " ".join(text.split())


def cite_problem(cite: Cite) -> str | None:
    """Why the evidence does not hold a citation (None: it does)."""
    text = cited_text(cite)
    if text is None:
        return f"cited evidence not found: {cite}"
    if _words(cite.says) not in _words(text):
        return f"cited evidence no longer says {cite.says!r}: {cite}"
    return None


# ----------------------------------------------------------------------------- probing


class Failed(Exception):
    """A write or a read a check needs did not answer as it must: the check's problem."""


class Git:
    """A clone of the fake's repository over its smart HTTP endpoint, driven by real git."""

    def __init__(self, target: Target, root: Path) -> None:
        token = target.github_token
        helper = f"!f() {{ echo username=x-access-token; echo password={token}; }}; f"
        self.base = ["git", "-c", f"credential.helper={helper}"]
        self.env = clean_env({"GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "", "SSH_ASKPASS": ""})
        self.dir = root / "clone"
        self("clone", "-q", f"{target.git_url}/{target.repo}.git", str(self.dir), cwd=root)

    def __call__(self, *args: str, cwd: Path | None = None) -> str:
        done = subprocess.run(
            [*self.base, *args],
            cwd=cwd or self.dir,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        if done.returncode != 0:
            raise Failed(f"git {args[0]} failed: {done.stderr.strip()[:200]}")
        return done.stdout.strip()

    def commit(self, files: dict[str, str], message: str) -> str:
        for path, text in files.items():
            (self.dir / path).parent.mkdir(parents=True, exist_ok=True)
            (self.dir / path).write_text(text)
        self("add", "-A")
        self("commit", "-q", "-m", message)
        return self("rev-parse", "HEAD")

    def parents(self, sha: str) -> list[str]:
        return self("rev-list", "--parents", "-n", "1", sha).split()[1:]

    def change(self, sha: str) -> str:
        """A commit's change against its first parent, without its header."""
        return self("diff-tree", "-p", "--no-commit-id", "-r", sha)


@dataclass(frozen=True)
class MergeCase:
    """A head branch two commits on from a fork point and a base branch one commit on from
    the same point, pushed: merging needs a real merge, and a rebase really replays."""

    base: str
    head: str
    fork: str
    base_before: str
    head_commits: tuple[str, ...]
    """Oldest first."""


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def short(shas: Iterable[str]) -> str:
    return "[" + ", ".join(s[:7] for s in shas) + "]"


class Probe:
    """The fakes of one served world, as a client sees them, plus what the checks share."""

    def __init__(self, served: Served, root: Path) -> None:
        self.served = served
        self.target = fake_target(served)
        self.root = root
        self.client = httpx.Client(timeout=60)
        self.n = 0
        self._git: Git | None = None

    def close(self) -> None:
        self.client.close()

    def fresh(self, what: str) -> str:
        self.n += 1
        return f"rw-{what}-{self.n}"

    # ------------------------------------------------------------------ GitHub REST

    def rest_response(self, method: str, path: str, body: Any = None) -> httpx.Response:
        headers = {
            "Authorization": f"token {self.target.github_token}",
            "Accept": "application/vnd.github+json",
            "Content-Type": "application/json",
        }
        content = None if body is None else json.dumps(body).encode()
        return self.client.request(
            method, self.target.github_url + path, content=content, headers=headers
        )

    def rest(self, method: str, path: str, body: Any = None, want: int = 200) -> Any:
        r = self.rest_response(method, path, body)
        if r.status_code != want:
            raise Failed(f"{method} {path} answered {r.status_code}: {r.text[:160]}")
        return r.json() if r.content else None

    def status(self, path: str) -> int:
        return self.rest_response("GET", path).status_code

    def issue(self, **extra: Any) -> dict[str, Any]:
        body = {"title": self.fresh("issue"), "body": "Made to be read back.", **extra}
        made: dict[str, Any] = self.rest("POST", f"{R}/issues", body, 201)
        return made

    def sha_of(self, branch: str) -> str:
        return str(self.rest("GET", f"{R}/git/ref/heads/{branch}")["object"]["sha"])

    def branch(self, files: dict[str, str] | None = None, start: str = "main") -> tuple[str, str]:
        """A new branch from ``start`` with a commit per file (made through REST): its name
        and its head."""
        name = self.fresh("branch")
        sha = self.sha_of(start)
        self.rest("POST", f"{R}/git/refs", {"ref": f"refs/heads/{name}", "sha": sha}, 201)
        for path, text in (files or {}).items():
            out = self.rest(
                "PUT",
                f"{R}/contents/{path}",
                {"message": f"Add {path}", "content": b64(text), "branch": name},
                201,
            )
            sha = out["commit"]["sha"]
        return name, sha

    def pull(self, **extra: Any) -> dict[str, Any]:
        """A new open pull request into ``main`` from a new branch with one new file."""
        name, _ = self.branch({f"rw/{self.fresh('file')}.txt": "one\ntwo\nthree\n"})
        body = {"title": f"Change on {name}", "head": name, "base": "main", "body": "Read back."}
        made: dict[str, Any] = self.rest("POST", f"{R}/pulls", {**body, **extra}, 201)
        return made

    # ------------------------------------------------------------------ GitHub GraphQL

    def gh(self, query: str, **variables: Any) -> Any:
        r = self.client.post(
            self.target.github_url + "/graphql",
            json={"query": query, "variables": variables},
            headers={"Authorization": f"bearer {self.target.github_token}"},
        )
        body = r.json() if r.content else None
        if r.status_code != 200 or not isinstance(body, dict) or body.get("errors"):
            errors = body.get("errors") if isinstance(body, dict) else r.text[:160]
            raise Failed(f"GitHub GraphQL answered {r.status_code}: {errors}")
        return body["data"]

    def gh_mutate(self, name: str, input: dict[str, Any], select: str = "clientMutationId") -> Any:
        kind = name[0].upper() + name[1:] + "Input"
        data = self.gh(
            f"mutation($input: {kind}!) {{ {name}(input: $input) {{ {select} }} }}", input=input
        )
        return data[name]

    def gh_id(self, number: int) -> str:
        data = self.gh(
            "query($owner: String!, $name: String!, $n: Int!) { repository(owner: $owner, "
            "name: $name) { issueOrPullRequest(number: $n) { ... on Issue { id } "
            "... on PullRequest { id } } } }",
            **REPO,
            n=number,
        )
        return str(data["repository"]["issueOrPullRequest"]["id"])

    def gh_repo_id(self) -> str:
        data = self.gh(
            "query($owner: String!, $name: String!) { repository(owner: $owner, name: $name) "
            "{ id } }",
            **REPO,
        )
        return str(data["repository"]["id"])

    def gh_label_id(self, name: str) -> str:
        data = self.gh(
            "query($owner: String!, $name: String!, $label: String!) { repository(owner: "
            "$owner, name: $name) { label(name: $label) { id } } }",
            **REPO,
            label=name,
        )
        return str(data["repository"]["label"]["id"])

    def gh_user_id(self, login: str) -> str:
        data = self.gh("query($login: String!) { user(login: $login) { id } }", login=login)
        return str(data["user"]["id"])

    def gh_ref(self, qualified: str) -> dict[str, Any] | None:
        data = self.gh(
            "query($owner: String!, $name: String!, $ref: String!) { repository(owner: "
            "$owner, name: $name) { ref(qualifiedName: $ref) { id name target { oid "
            "... on Commit { message parents(first: 5) { nodes { oid } } } } } } }",
            **REPO,
            ref=qualified,
        )
        ref: dict[str, Any] | None = data["repository"]["ref"]
        return ref

    def gh_thread(self, number: int, pull: bool = False) -> dict[str, Any]:
        fields = (
            "id title body state closed locked activeLockReason labels(first: 20) { nodes { "
            "name } } assignees(first: 20) { nodes { login } } comments(last: 50) { totalCount "
            "nodes { id body } }"
        )
        if pull:
            fields += (
                " isDraft baseRefName headRefName maintainerCanModify merged mergeCommit "
                "{ oid } reviews(last: 20) { nodes { id state body } }"
            )
        else:
            fields += " stateReason"
        kind = "pullRequest" if pull else "issue"
        data = self.gh(
            f"query($owner: String!, $name: String!, $n: Int!) {{ repository(owner: $owner, "
            f"name: $name) {{ {kind}(number: $n) {{ {fields} }} }} }}",
            **REPO,
            n=number,
        )
        thread: dict[str, Any] = data["repository"][kind]
        return thread

    # ------------------------------------------------------------------ git

    def git(self) -> Git:
        if self._git is None:
            self._git = Git(self.target, self.root)
        return self._git

    def merge_case(self) -> MergeCase:
        git = self.git()
        name = self.fresh("merge")
        fork = git("rev-parse", "origin/main")
        git("checkout", "-q", "-B", f"{name}-head", fork)
        first = git.commit({f"rw/{name}.txt": "one\n"}, f"{name}: first")
        second = git.commit(
            {f"rw/{name}.txt": "one\ntwo\n", f"rw/{name}-more.txt": "more\n"}, f"{name}: second"
        )
        git("checkout", "-q", "-B", f"{name}-base", fork)
        base = git.commit({f"rw/{name}-base.txt": "base\n"}, f"{name}: the base moves on")
        git("push", "-q", "origin", f"{name}-base", f"{name}-head")
        return MergeCase(f"{name}-base", f"{name}-head", fork, base, (first, second))

    # ------------------------------------------------------------------ Slack

    def slack_call(self, method: str, form: bool = False, **args: Any) -> dict[str, Any]:
        headers = {"Authorization": f"Bearer {self.target.slack_token}"}
        url = self.target.slack_url + method
        if form:
            r = self.client.post(url, data={k: str(v) for k, v in args.items()}, headers=headers)
        else:
            r = self.client.post(url, json=args, headers=headers)
        body = r.json()
        if not isinstance(body, dict):
            raise Failed(f"{method} answered {r.status_code}: {r.text[:160]}")
        return body

    def slack(self, method: str, form: bool = False, **args: Any) -> dict[str, Any]:
        body = self.slack_call(method, form, **args)
        if body.get("ok") is not True:
            raise Failed(f"{method} answered {body.get('error')!r}")
        return body

    def post(self, text: str, **args: Any) -> str:
        return str(
            self.slack("chat.postMessage", channel=self.target.channel, text=text, **args)["ts"]
        )

    def history(self) -> dict[str, dict[str, Any]]:
        body = self.slack("conversations.history", True, channel=self.target.channel, limit=999)
        return {str(m["ts"]): m for m in body["messages"]}

    def replies(self, ts: str) -> dict[str, dict[str, Any]]:
        body = self.slack(
            "conversations.replies", True, channel=self.target.channel, ts=ts, limit=1000
        )
        return {str(m["ts"]): m for m in body["messages"]}

    # ------------------------------------------------------------------ Linear

    def linear(self, query: str, **variables: Any) -> Any:
        r = self.client.post(
            self.target.linear_url,
            json={"query": query, "variables": variables},
            headers={"Authorization": self.target.linear_key},
        )
        body = r.json() if r.content else None
        if r.status_code != 200 or not isinstance(body, dict) or body.get("errors"):
            errors = body.get("errors") if isinstance(body, dict) else r.text[:160]
            raise Failed(f"Linear answered {r.status_code}: {errors}")
        return body["data"]

    @cached_property
    def team(self) -> dict[str, Any]:
        data = self.linear("query { teams { nodes { id key states { nodes { id name type } } } } }")
        for team in data["teams"]["nodes"]:
            if team["key"] == self.target.team:
                found: dict[str, Any] = team
                return found
        raise Failed(f"no Linear team {self.target.team}")

    def state_id(self, kind: str) -> str:
        """The first workflow state of the team of a kind (``started``, ``completed``...)."""
        for state in self.team["states"]["nodes"]:
            if state["type"] == kind:
                return str(state["id"])
        raise Failed(f"the team has no {kind} state")

    def label_ids(self) -> dict[str, str]:
        data = self.linear("query { issueLabels(first: 100) { nodes { id name } } }")
        return {n["name"]: n["id"] for n in data["issueLabels"]["nodes"]}

    def user_ids(self) -> list[str]:
        data = self.linear("query { viewer { id } users(first: 50) { nodes { id } } }")
        viewer = data["viewer"]["id"]
        return [viewer] + [u["id"] for u in data["users"]["nodes"] if u["id"] != viewer]

    def linear_issue(self, **input: Any) -> dict[str, Any]:
        data = self.linear(
            "mutation($input: IssueCreateInput!) { issueCreate(input: $input) { success "
            "issue { id identifier } } }",
            input={"teamId": self.team["id"], "title": self.fresh("issue"), **input},
        )
        issue: dict[str, Any] = data["issueCreate"]["issue"]
        return issue

    def read_issue(self, id: str) -> dict[str, Any]:
        data = self.linear(
            "query($id: String!) { issue(id: $id) { id identifier title description "
            "priority estimate team { id } state { id name } assignee { id } parent { id } "
            "labels { nodes { id name } } children { nodes { id } } "
            "comments { nodes { id body parent { id } } } } }",
            id=id,
        )
        issue: dict[str, Any] = data["issue"]
        return issue


# ----------------------------------------------------------------------------- the checks

Step = Callable[[Probe], list[str]]


@dataclass(frozen=True)
class Write:
    """One write, the reads that show its effect, and the evidence for that effect."""

    service: Service
    subject: str
    """``<the write> -> <the reads>``."""
    cites: tuple[Cite, ...]
    step: Step


WRITES: list[Write] = []
"""Every check of this family, in the order it runs."""


def write(service: Service, subject: str, *cites: Cite) -> Callable[[Step], Step]:
    def register(step: Step) -> Step:
        WRITES.append(Write(service, subject, cites, step))
        return step

    return register


def differ(where: str, got: Any, want: Any) -> list[str]:
    return [] if got == want else [f"{where} is {got!r}, expected {want!r}"]


def names(items: Iterable[dict[str, Any]], key: str = "name") -> list[str]:
    return sorted(str(i[key]) for i in items)


# ------------------------------------------------------------------ GitHub REST: issues

ISSUE = "/repos/{owner}/{repo}/issues/{number}"
ISSUES_NEWEST = f"{R}/issues?state=all&sort=created&direction=desc&per_page=100"


@write(
    "github",
    "POST /repos/{owner}/{repo}/issues -> GET issue, GET issues",
    kit("ReposOwnerRepoIssuesPostBody.labels", "Labels to associate with this issue."),
    kit("ReposOwnerRepoIssuesPostBody.assignees", "Logins for Users to assign to this issue."),
    gql("Repository.issues", "A list of issues that have been opened in the repository."),
)
def rest_issue_create(p: Probe) -> list[str]:
    title = p.fresh("title")
    made = p.rest(
        "POST",
        f"{R}/issues",
        {"title": title, "body": "Body.", "labels": ["bug"], "assignees": ["alice"]},
        201,
    )
    got = p.rest("GET", f"{R}/issues/{made['number']}")
    problems = differ("GET issue title", got["title"], title)
    problems += differ("GET issue body", got["body"], "Body.")
    problems += differ("GET issue state", got["state"], "open")
    problems += differ("GET issue labels", names(got["labels"]), ["bug"])
    problems += differ("GET issue assignees", names(got["assignees"], "login"), ["alice"])
    if made["number"] not in [i["number"] for i in p.rest("GET", ISSUES_NEWEST)]:
        problems.append(f"GET issues does not list #{made['number']}")
    return problems


def rest_issue_patch(arg: str, p: Probe) -> list[str]:
    made = p.issue(labels=["bug", "question"], assignees=["alice"])
    n = made["number"]
    path = f"{R}/issues/{n}"
    if arg == "state: open":
        p.rest("PATCH", path, {"state": "closed"})
    changes: dict[str, dict[str, Any]] = {
        "title": {"title": "A new title"},
        "body": {"body": "A new body."},
        "state: closed": {"state": "closed"},
        "state: open": {"state": "open"},
        "state_reason": {"state": "closed", "state_reason": "not_planned"},
        "labels": {"labels": ["documentation"]},
        "assignees": {"assignees": ["bob"]},
    }
    change = changes[arg]
    p.rest("PATCH", path, change)
    got = p.rest("GET", path)
    if arg == "title":
        return differ("GET issue title", got["title"], "A new title")
    if arg == "body":
        return differ("GET issue body", got["body"], "A new body.")
    if arg == "labels":
        return differ("GET issue labels", names(got["labels"]), ["documentation"])
    if arg == "assignees":
        return differ("GET issue assignees", names(got["assignees"], "login"), ["bob"])
    if arg == "state_reason":
        return differ("GET issue state", got["state"], "closed") + differ(
            "GET issue state_reason", got["state_reason"], "not_planned"
        )
    state = "closed" if arg == "state: closed" else "open"
    problems = differ("GET issue state", got["state"], state)
    listed = {
        s: [i["number"] for i in p.rest("GET", f"{R}/issues?state={s}&per_page=100")]
        for s in ("open", "closed")
    }
    if n not in listed[state]:
        problems.append(f"GET issues?state={state} does not list #{n}")
    other = "open" if state == "closed" else "closed"
    if n in listed[other]:
        problems.append(f"GET issues?state={other} still lists #{n}")
    return problems


_PATCH = "ReposOwnerRepoIssuesIssueNumberPatchBody"
for _arg, _cite in (
    ("title", kit(f"{_PATCH}.title", "The title of the issue.")),
    ("body", kit(f"{_PATCH}.body", "The contents of the issue.")),
    ("state: closed", kit(f"{_PATCH}.state", "The open or closed state of the issue.")),
    ("state: open", kit(f"{_PATCH}.state", "The open or closed state of the issue.")),
    ("state_reason", kit(f"{_PATCH}.state_reason", "The reason for the state change.")),
    (
        "labels",
        kit(f"{_PATCH}.labels", "Pass one or more labels to _replace_ the set of labels"),
    ),
    (
        "assignees",
        kit(f"{_PATCH}.assignees", "Pass one or more user logins to _replace_ the set of"),
    ),
):
    _reads = "GET issue, GET issues?state=" if _arg.startswith("state:") else "GET issue"
    WRITES.append(
        Write(
            "github",
            f"PATCH {ISSUE} ({_arg}) -> {_reads}",
            (_cite,),
            partial(rest_issue_patch, _arg),
        )
    )


@write(
    "github",
    f"POST {ISSUE}/comments -> GET comments, GET timeline, GET comment, GET issue",
    kit("ReposOwnerRepoIssuesIssueNumberCommentsPostBody.body", "The contents of the comment."),
    gql("Issue.comments", "A list of comments associated with the Issue."),
    gql("Issue.timelineItems", "A list of events, comments, commits, etc. associated"),
    kit("TimelineCommentEvent.event", "Literal['commented']"),
)
def rest_comment_create(p: Probe) -> list[str]:
    n = p.issue()["number"]
    made = p.rest("POST", f"{R}/issues/{n}/comments", {"body": "A comment to read back."}, 201)
    problems: list[str] = []
    listed = {c["id"]: c["body"] for c in p.rest("GET", f"{R}/issues/{n}/comments?per_page=100")}
    if listed.get(made["id"]) != "A comment to read back.":
        problems.append(f"GET comments has {listed}, not the new comment")
    timeline = p.rest("GET", f"{R}/issues/{n}/timeline?per_page=100")
    if not any(e.get("event") == "commented" and e.get("id") == made["id"] for e in timeline):
        problems.append("GET timeline has no `commented` entry for the new comment")
    if p.status(f"{R}/issues/comments/{made['id']}") != 200:
        problems.append("GET comment does not find the new comment")
    problems += differ(
        "GET issue comments (count)", p.rest("GET", f"{R}/issues/{n}")["comments"], 1
    )
    return problems


@write(
    "github",
    "PATCH /repos/{owner}/{repo}/issues/comments/{comment_id} -> GET comment, GET comments",
    kit("ReposOwnerRepoIssuesCommentsCommentIdPatchBody.body", "The contents of the comment."),
    gql("Mutation.updateIssueComment", "Updates an IssueComment object."),
)
def rest_comment_edit(p: Probe) -> list[str]:
    n = p.issue()["number"]
    made = p.rest("POST", f"{R}/issues/{n}/comments", {"body": "Before."}, 201)
    p.rest("PATCH", f"{R}/issues/comments/{made['id']}", {"body": "After."})
    got = p.rest("GET", f"{R}/issues/comments/{made['id']}")
    listed = [c["body"] for c in p.rest("GET", f"{R}/issues/{n}/comments")]
    return differ("GET comment body", got["body"], "After.") + differ(
        "GET comments bodies", listed, ["After."]
    )


@write(
    "github",
    "DELETE /repos/{owner}/{repo}/issues/comments/{comment_id} -> GET comment 404, GET comments",
    gql("Mutation.deleteIssueComment", "Deletes an IssueComment object."),
)
def rest_comment_delete(p: Probe) -> list[str]:
    n = p.issue()["number"]
    made = p.rest("POST", f"{R}/issues/{n}/comments", {"body": "Doomed."}, 201)
    p.rest("DELETE", f"{R}/issues/comments/{made['id']}", want=204)
    problems = differ("GET comment status", p.status(f"{R}/issues/comments/{made['id']}"), 404)
    listed = [c["id"] for c in p.rest("GET", f"{R}/issues/{n}/comments")]
    if made["id"] in listed:
        problems.append("GET comments still lists the deleted comment")
    return problems


@write(
    "github",
    f"PUT {ISSUE}/lock (lock_reason) -> GET issue, Issue.activeLockReason",
    kit("ReposOwnerRepoIssuesIssueNumberLockPutBody.lock_reason", "The reason for locking"),
    gql("Issue.locked", "`true` if the object is locked"),
    gql("Issue.activeLockReason", "Reason that the conversation was locked."),
    octo("lock-issue #0", "PUT /repos/octokit-fixture-org/lock-issue/issues/1/lock 204"),
)
def rest_lock(p: Probe) -> list[str]:
    n = p.issue()["number"]
    p.rest("PUT", f"{R}/issues/{n}/lock", {"lock_reason": "resolved"}, 204)
    got = p.rest("GET", f"{R}/issues/{n}")
    problems = differ("GET issue locked", got["locked"], True)
    problems += differ("GET issue active_lock_reason", got.get("active_lock_reason"), "resolved")
    thread = p.gh_thread(n)
    return problems + differ(
        "Issue (locked, activeLockReason)",
        (thread["locked"], thread["activeLockReason"]),
        (True, "RESOLVED"),
    )


@write(
    "github",
    f"DELETE {ISSUE}/lock -> GET issue",
    gql("Mutation.unlockLockable", "Unlock a lockable object"),
    gql("Issue.locked", "`true` if the object is locked"),
    octo("lock-issue #1", "DELETE /repos/octokit-fixture-org/lock-issue/issues/1/lock 204"),
)
def rest_unlock(p: Probe) -> list[str]:
    n = p.issue()["number"]
    p.rest("PUT", f"{R}/issues/{n}/lock", {"lock_reason": "resolved"}, 204)
    p.rest("DELETE", f"{R}/issues/{n}/lock", want=204)
    got = p.rest("GET", f"{R}/issues/{n}")
    return differ("GET issue locked", got["locked"], False) + differ(
        "GET issue active_lock_reason", got.get("active_lock_reason"), None
    )


@write(
    "github",
    f"POST {ISSUE}/labels -> GET labels of the issue, GET issue",
    kit(
        "ReposOwnerRepoIssuesIssueNumberLabelsPostBodyOneof0.labels",
        "The labels to add to the issue's existing labels.",
    ),
    octo("add-labels-to-issue #1", '"name": "bAr"'),
)
def rest_labels_add(p: Probe) -> list[str]:
    n = p.issue(labels=["bug"])["number"]
    p.rest("POST", f"{R}/issues/{n}/labels", {"labels": ["question"]})
    return differ(
        "GET labels of the issue",
        names(p.rest("GET", f"{R}/issues/{n}/labels")),
        ["bug", "question"],
    ) + differ(
        "GET issue labels", names(p.rest("GET", f"{R}/issues/{n}")["labels"]), ["bug", "question"]
    )


@write(
    "github",
    f"PUT {ISSUE}/labels -> GET labels of the issue",
    kit(
        "ReposOwnerRepoIssuesIssueNumberLabelsPutBodyOneof0.labels",
        "The labels you set replace any existing labels.",
    ),
)
def rest_labels_set(p: Probe) -> list[str]:
    n = p.issue(labels=["bug", "question"])["number"]
    p.rest("PUT", f"{R}/issues/{n}/labels", {"labels": ["documentation"]})
    got = names(p.rest("GET", f"{R}/issues/{n}/labels"))
    return differ("GET labels of the issue", got, ["documentation"])


@write(
    "github",
    f"DELETE {ISSUE}/labels/{{name}} -> GET labels of the issue",
    gql("Mutation.removeLabelsFromLabelable", "Removes labels from a Labelable object."),
)
def rest_label_remove(p: Probe) -> list[str]:
    n = p.issue(labels=["bug", "question"])["number"]
    p.rest("DELETE", f"{R}/issues/{n}/labels/bug")
    got = names(p.rest("GET", f"{R}/issues/{n}/labels"))
    return differ("GET labels of the issue", got, ["question"])


# ------------------------------------------------------------------ GitHub REST: pull requests

PULL = "/repos/{owner}/{repo}/pulls/{number}"
_PULLS_POST = "ReposOwnerRepoPullsPostBody"
_PULL_PATCH = "ReposOwnerRepoPullsPullNumberPatchBody"


@write(
    "github",
    "POST /repos/{owner}/{repo}/pulls -> GET pull, GET pulls",
    kit(f"{_PULLS_POST}.head", "The name of the branch where your changes are implemented."),
    kit(f"{_PULLS_POST}.base", "The name of the branch you want the changes pulled into."),
    gql("Repository.pullRequests", "A list of pull requests that have been opened"),
)
def rest_pull_create(p: Probe) -> list[str]:
    made = p.pull()
    got = p.rest("GET", f"{R}/pulls/{made['number']}")
    problems = differ("GET pull title", got["title"], made["title"])
    problems += differ("GET pull state", got["state"], "open")
    problems += differ("GET pull head.ref", got["head"]["ref"], made["head"]["ref"])
    problems += differ("GET pull base.ref", got["base"]["ref"], "main")
    problems += differ("GET pull draft", got["draft"], False)
    listed = [x["number"] for x in p.rest("GET", f"{R}/pulls?state=open&per_page=100")]
    if made["number"] not in listed:
        problems.append(f"GET pulls does not list #{made['number']}")
    return problems


@write(
    "github",
    "POST /repos/{owner}/{repo}/pulls (draft) -> GET pull",
    kit(f"{_PULLS_POST}.draft", "Indicates whether the pull request is a draft."),
)
def rest_pull_create_draft(p: Probe) -> list[str]:
    made = p.pull(draft=True)
    return differ("GET pull draft", p.rest("GET", f"{R}/pulls/{made['number']}")["draft"], True)


def rest_pull_patch(arg: str, p: Probe) -> list[str]:
    made = p.pull()
    n = made["number"]
    path = f"{R}/pulls/{n}"
    if arg == "state: open":
        p.rest("PATCH", path, {"state": "closed"})
    other = p.branch()[0] if arg == "base" else ""
    changes: dict[str, dict[str, Any]] = {
        "title": {"title": "A new title"},
        "body": {"body": "A new body."},
        "state: closed": {"state": "closed"},
        "state: open": {"state": "open"},
        "base": {"base": other},
        "maintainer_can_modify": {"maintainer_can_modify": not made["maintainer_can_modify"]},
    }
    change = changes[arg]
    p.rest("PATCH", path, change)
    got = p.rest("GET", path)
    if arg in ("title", "body", "maintainer_can_modify"):
        return differ(f"GET pull {arg}", got[arg], change[arg])
    if arg == "base":
        return differ("GET pull base.ref", got["base"]["ref"], other)
    state = "closed" if arg == "state: closed" else "open"
    problems = differ("GET pull state", got["state"], state) + differ(
        "GET pull merged", got["merged"], False
    )
    if n not in [x["number"] for x in p.rest("GET", f"{R}/pulls?state={state}&per_page=100")]:
        problems.append(f"GET pulls?state={state} does not list #{n}")
    return problems


for _arg, _cite in (
    ("title", kit(f"{_PULL_PATCH}.title", "The title of the pull request.")),
    ("body", kit(f"{_PULL_PATCH}.body", "The contents of the pull request.")),
    ("state: closed", kit(f"{_PULL_PATCH}.state", "Either `open` or `closed`.")),
    ("state: open", kit(f"{_PULL_PATCH}.state", "Either `open` or `closed`.")),
    ("base", kit(f"{_PULL_PATCH}.base", "The name of the branch you want your changes pulled")),
    (
        "maintainer_can_modify",
        kit(f"{_PULL_PATCH}.maintainer_can_modify", "Indicates whether [maintainers can modify]"),
    ),
):
    _reads = "GET pull, GET pulls?state=" if _arg.startswith("state:") else "GET pull"
    WRITES.append(
        Write(
            "github", f"PATCH {PULL} ({_arg}) -> {_reads}", (_cite,), partial(rest_pull_patch, _arg)
        )
    )


MERGE_CITES: dict[str, Cite] = {
    "merge": gql(
        "PullRequestMergeMethod.MERGE",
        "Add all commits from the head branch to the base branch with a merge commit.",
    ),
    "squash": gql(
        "PullRequestMergeMethod.SQUASH",
        "Combine all commits from the head branch into a single commit in the base branch.",
    ),
    "rebase": gql(
        "PullRequestMergeMethod.REBASE",
        "Add all commits from the head branch onto the base branch individually.",
    ),
}


def merged_base_problems(git: Git, case: MergeCase, method: str) -> list[str]:
    """The base branch after a merge by ``method``, fetched with git, against the method's
    documented effect (see the module docstring)."""
    git("fetch", "-q", "origin", f"+refs/heads/{case.base}:refs/remotes/origin/{case.base}")
    tip = git("rev-parse", f"origin/{case.base}")
    new = git("rev-list", "--reverse", "--topo-order", f"{case.base_before}..{tip}").split()
    head = list(case.head_commits)
    problems: list[str] = []
    if git("diff", case.base_before, tip) != git("diff", case.fork, head[-1]):
        problems.append("git diff of the base before and after is not the head's combined change")
    ours = [c for c in new if c in head]
    if method == "merge":
        parents = git.parents(tip)
        if parents != [case.base_before, head[-1]]:
            problems.append(
                f"git log: the base's new tip has parents {short(parents)}, expected a merge "
                f"commit of the old base and the head {short([case.base_before, head[-1]])}"
            )
        if ours != head:
            problems.append(f"git log: the head's commits on the base are {short(ours)}")
        return problems
    if ours:
        problems.append(f"git log: the head's own commits {short(ours)} are on the base")
    if method == "squash":
        if len(new) != 1:
            problems.append(f"git log: the base gained {len(new)} commits, expected one")
        elif git.parents(tip) != [case.base_before]:
            problems.append(
                f"git log: the new commit has parents {short(git.parents(tip))}, expected only "
                "the old base"
            )
        return problems
    if len(new) != len(head):
        problems.append(
            f"git log: the base gained {len(new)} commits, expected the head's {len(head)} "
            "replayed one by one"
        )
        return problems
    before = case.base_before
    for i, (made, theirs) in enumerate(zip(new, head, strict=True), 1):
        if git.parents(made) != [before]:
            problems.append(
                f"git log: replayed commit {i} has parents {short(git.parents(made))}, expected "
                f"{short([before])} (linear history)"
            )
        if git.change(made) != git.change(theirs):
            problems.append(
                f"git show: replayed commit {i} does not carry head commit {i}'s change"
            )
        if git("log", "-1", "--format=%B", made) != git("log", "-1", "--format=%B", theirs):
            problems.append(f"git log: replayed commit {i}'s message is not head commit {i}'s")
        before = made
    return problems


def rest_merge(method: str, p: Probe) -> list[str]:
    case = p.merge_case()
    made = p.rest(
        "POST",
        f"{R}/pulls",
        {"title": f"Merge by {method}", "head": case.head, "base": case.base},
        201,
    )
    n = made["number"]
    answer = p.rest("PUT", f"{R}/pulls/{n}/merge", {"merge_method": method})
    problems = differ("merge answer merged", answer.get("merged"), True)
    problems += merged_base_problems(p.git(), case, method)
    got = p.rest("GET", f"{R}/pulls/{n}")
    problems += differ("GET pull merged", got["merged"], True)
    problems += differ("GET pull state", got["state"], "closed")
    problems += differ(f"GET {PULL}/merge status", p.status(f"{R}/pulls/{n}/merge"), 204)
    return problems


for _method in ("merge", "squash", "rebase"):
    WRITES.append(
        Write(
            "github",
            f"PUT {PULL}/merge (merge_method: {_method}) -> git log of the base, GET pull",
            (
                MERGE_CITES[_method],
                kit(
                    "ReposOwnerRepoPullsPullNumberMergePutBody.merge_method",
                    "The merge method to use.",
                ),
            ),
            partial(rest_merge, _method),
        )
    )


def _merge_message(p: Probe, case: MergeCase) -> str:
    git = p.git()
    git("fetch", "-q", "origin", f"+refs/heads/{case.base}:refs/remotes/origin/{case.base}")
    return git("log", "-1", "--format=%B", f"origin/{case.base}")


@write(
    "github",
    f"PUT {PULL}/merge (merge_method: squash, commit_title, commit_message) -> git log",
    kit("ReposOwnerRepoPullsPullNumberMergePutBody.commit_title", "Title for the automatic"),
    kit("ReposOwnerRepoPullsPullNumberMergePutBody.commit_message", "Extra detail to append"),
)
def rest_merge_message(p: Probe) -> list[str]:
    case = p.merge_case()
    pull = {"title": "Squash with a message", "head": case.head, "base": case.base}
    n = p.rest("POST", f"{R}/pulls", pull, 201)["number"]
    body = {"merge_method": "squash", "commit_title": "Title", "commit_message": "Detail."}
    p.rest("PUT", f"{R}/pulls/{n}/merge", body)
    return differ("git log: the new commit's message", _merge_message(p, case), "Title\n\nDetail.")


def _unmerged_problems(p: Probe, case: MergeCase, n: int) -> list[str]:
    git = p.git()
    git("fetch", "-q", "origin", f"+refs/heads/{case.base}:refs/remotes/origin/{case.base}")
    tip = git("rev-parse", f"origin/{case.base}")
    problems = differ("git log: the base's tip", tip, case.base_before)
    got = p.rest("GET", f"{R}/pulls/{n}")
    return problems + differ(
        "GET pull (state, merged)", (got["state"], got["merged"]), ("open", False)
    )


@write(
    "github",
    f"PUT {PULL}/merge (sha: not the head's) -> refused, git log, GET pull",
    kit(
        "ReposOwnerRepoPullsPullNumberMergePutBody.sha",
        "SHA that pull request head must match to allow merge.",
    ),
)
def rest_merge_stale(p: Probe) -> list[str]:
    case = p.merge_case()
    pull = {"title": "Merge at a stale head", "head": case.head, "base": case.base}
    n = p.rest("POST", f"{R}/pulls", pull, 201)["number"]
    r = p.rest_response("PUT", f"{R}/pulls/{n}/merge", {"sha": case.head_commits[0]})
    problems = (
        [] if r.status_code >= 400 else [f"the merge answered {r.status_code}, not a refusal"]
    )
    return problems + _unmerged_problems(p, case, n)


@write(
    "github",
    f"POST {PULL}/reviews (event: COMMENT) -> GET reviews, GET review",
    gql("PullRequestReviewEvent.COMMENT", "Submit general feedback without explicit approval."),
    kit("ReposOwnerRepoPullsPullNumberReviewsPostBody.event", "The review action you want"),
)
def rest_review(p: Probe) -> list[str]:
    n = p.pull()["number"]
    made = p.rest("POST", f"{R}/pulls/{n}/reviews", {"event": "COMMENT", "body": "Looks fine."})
    listed = {r["id"]: (r["state"], r["body"]) for r in p.rest("GET", f"{R}/pulls/{n}/reviews")}
    problems = differ("GET reviews entry", listed.get(made["id"]), ("COMMENTED", "Looks fine."))
    got = p.rest("GET", f"{R}/pulls/{n}/reviews/{made['id']}")
    return problems + differ("GET review state", got["state"], "COMMENTED")


@write(
    "github",
    f"POST {PULL}/reviews (event omitted) -> GET reviews",
    kit(
        "ReposOwnerRepoPullsPullNumberReviewsPostBody.event",
        "By leaving this blank, you set the review action state to `PENDING`",
    ),
)
def rest_review_pending(p: Probe) -> list[str]:
    n = p.pull()["number"]
    made = p.rest("POST", f"{R}/pulls/{n}/reviews", {"body": "Draft thoughts."})
    listed = {r["id"]: r["state"] for r in p.rest("GET", f"{R}/pulls/{n}/reviews")}
    return differ("GET reviews state of the new review", listed.get(made["id"]), "PENDING")


@write(
    "github",
    f"POST {PULL}/reviews (comments) -> GET review comments",
    kit(
        "ReposOwnerRepoPullsPullNumberReviewsPostBody.comments",
        "Use the following table to specify the location, destination, and contents of the "
        "draft review comment.",
    ),
)
def rest_review_comments(p: Probe) -> list[str]:
    pull = p.pull()
    n = pull["number"]
    path = p.rest("GET", f"{R}/pulls/{n}/files")[0]["filename"]
    comment = {"path": path, "line": 1, "body": "Inline."}
    body = {"event": "COMMENT", "body": "With a comment.", "comments": [comment]}
    review = p.rest("POST", f"{R}/pulls/{n}/reviews", body)
    got = [
        (c["body"], c["path"], c["line"], c.get("pull_request_review_id"))
        for c in p.rest("GET", f"{R}/pulls/{n}/comments")
    ]
    return differ("GET review comments", got, [("Inline.", path, 1, review["id"])])


def _review_comment(p: Probe) -> tuple[int, dict[str, Any]]:
    pull = p.pull()
    n = pull["number"]
    path = p.rest("GET", f"{R}/pulls/{n}/files")[0]["filename"]
    made = p.rest(
        "POST",
        f"{R}/pulls/{n}/comments",
        {
            "body": "On this line.",
            "commit_id": pull["head"]["sha"],
            "path": path,
            "line": 2,
            "side": "RIGHT",
        },
        201,
    )
    return n, made


@write(
    "github",
    f"POST {PULL}/comments -> GET review comments, GET review comment",
    kit("ReposOwnerRepoPullsPullNumberCommentsPostBody.path", "The relative path to the file"),
    kit("ReposOwnerRepoPullsPullNumberCommentsPostBody.line", "The line of the blob"),
    gql("PullRequest.reviewThreads", "The list of all review threads for this pull request."),
)
def rest_review_comment(p: Probe) -> list[str]:
    n, made = _review_comment(p)
    listed = {
        c["id"]: (c["body"], c["path"], c["line"]) for c in p.rest("GET", f"{R}/pulls/{n}/comments")
    }
    problems = differ(
        "GET review comments entry", listed.get(made["id"]), ("On this line.", made["path"], 2)
    )
    got = p.rest("GET", f"{R}/pulls/comments/{made['id']}")
    return problems + differ("GET review comment body", got["body"], "On this line.")


@write(
    "github",
    f"POST {PULL}/comments/{{comment_id}}/replies -> GET review comments",
    kit("PullRequestReviewComment.in_reply_to_id", "The comment ID to reply to."),
    gql("PullRequestReviewComment.replyTo", "The comment this is a reply to."),
)
def rest_review_reply(p: Probe) -> list[str]:
    n, made = _review_comment(p)
    reply = p.rest("POST", f"{R}/pulls/{n}/comments/{made['id']}/replies", {"body": "Agreed."}, 201)
    listed = {
        c["id"]: (c["body"], c.get("in_reply_to_id"))
        for c in p.rest("GET", f"{R}/pulls/{n}/comments")
    }
    return differ(
        "GET review comments entry of the reply", listed.get(reply["id"]), ("Agreed.", made["id"])
    )


@write(
    "github",
    f"POST {PULL}/comments (in_reply_to) -> GET review comments",
    kit(
        "ReposOwnerRepoPullsPullNumberCommentsPostBody.in_reply_to",
        "The ID of the review comment to reply to.",
    ),
)
def rest_review_in_reply_to(p: Probe) -> list[str]:
    n, made = _review_comment(p)
    reply = p.rest(
        "POST", f"{R}/pulls/{n}/comments", {"body": "Me too.", "in_reply_to": made["id"]}, 201
    )
    listed = {
        c["id"]: (c["body"], c.get("in_reply_to_id"))
        for c in p.rest("GET", f"{R}/pulls/{n}/comments")
    }
    return differ(
        "GET review comments entry of the reply", listed.get(reply["id"]), ("Me too.", made["id"])
    )


# ------------------------------------------------------------------ GitHub REST: repository

CONTENTS = "/repos/{owner}/{repo}/contents/{path}"
_PUT_CONTENTS = "ReposOwnerRepoContentsPathPutBody"


def _content(p: Probe, path: str, ref: str | None = None) -> str:
    got = p.rest("GET", f"{R}/contents/{path}" + (f"?ref={ref}" if ref else ""))
    return base64.b64decode(got["content"]).decode()


@write(
    "github",
    f"PUT {CONTENTS} (branch omitted) -> GET contents, GET commits",
    kit(f"{_PUT_CONTENTS}.content", "The new file content, using Base64 encoding."),
    kit(f"{_PUT_CONTENTS}.branch", "Default: the repository"),
    kit(f"{_PUT_CONTENTS}.message", "The commit message."),
    octo("create-file #0", '"path": "test.txt"'),
)
def rest_contents_create(p: Probe) -> list[str]:
    path = f"rw/{p.fresh('file')}.txt"
    p.rest(
        "PUT", f"{R}/contents/{path}", {"message": f"Add {path}", "content": b64("hello\n")}, 201
    )
    problems = differ("GET contents (default branch)", _content(p, path), "hello\n")
    latest = p.rest("GET", f"{R}/commits?per_page=1")[0]["commit"]["message"]
    return problems + differ("GET commits: the newest commit's message", latest, f"Add {path}")


@write(
    "github",
    f"PUT {CONTENTS} (branch) -> GET contents?ref=",
    kit(f"{_PUT_CONTENTS}.branch", "The branch name."),
)
def rest_contents_branch(p: Probe) -> list[str]:
    name, _ = p.branch()
    path = f"rw/{p.fresh('file')}.txt"
    p.rest(
        "PUT",
        f"{R}/contents/{path}",
        {"message": "On a branch", "content": b64("branch\n"), "branch": name},
        201,
    )
    problems = differ("GET contents?ref=<branch>", _content(p, path, name), "branch\n")
    return problems + differ(
        "GET contents on the default branch: status", p.status(f"{R}/contents/{path}"), 404
    )


@write(
    "github",
    f"PUT {CONTENTS} (sha: an update) -> GET contents?ref=",
    kit(f"{_PUT_CONTENTS}.sha", "**Required if you are updating a file**."),
)
def rest_contents_update(p: Probe) -> list[str]:
    path = f"rw/{p.fresh('file')}.txt"
    name, _ = p.branch({path: "first\n"})
    blob = p.rest("GET", f"{R}/contents/{path}?ref={name}")["sha"]
    p.rest(
        "PUT",
        f"{R}/contents/{path}",
        {"message": "Update", "content": b64("second\n"), "sha": blob, "branch": name},
    )
    return differ("GET contents?ref=<branch>", _content(p, path, name), "second\n")


@write(
    "github",
    f"DELETE {CONTENTS} -> GET contents?ref= 404",
    kit("ReposOwnerRepoContentsPathDeleteBody.sha", "The blob SHA of the file being deleted."),
)
def rest_contents_delete(p: Probe) -> list[str]:
    path = f"rw/{p.fresh('file')}.txt"
    name, _ = p.branch({path: "doomed\n"})
    blob = p.rest("GET", f"{R}/contents/{path}?ref={name}")["sha"]
    p.rest("DELETE", f"{R}/contents/{path}", {"message": "Remove", "sha": blob, "branch": name})
    return differ(
        "GET contents?ref=<branch> status", p.status(f"{R}/contents/{path}?ref={name}"), 404
    )


@write(
    "github",
    "POST /repos/{owner}/{repo}/git/refs -> GET ref, GET refs",
    kit("ReposOwnerRepoGitRefsPostBody.sha", "The SHA1 value for this reference."),
    octo("git-refs #3", '"ref": "refs/heads/test"'),
)
def rest_ref_create(p: Probe) -> list[str]:
    _, sha = p.branch({f"rw/{p.fresh('file')}.txt": "x\n"})
    name = p.fresh("ref")
    p.rest("POST", f"{R}/git/refs", {"ref": f"refs/heads/{name}", "sha": sha}, 201)
    problems = differ("GET ref object.sha", p.sha_of(name), sha)
    listed = {r["ref"]: r["object"]["sha"] for r in p.rest("GET", f"{R}/git/refs")}
    return problems + differ("GET refs entry", listed.get(f"refs/heads/{name}"), sha)


def rest_ref_update(force: bool, p: Probe) -> list[str]:
    name, _ = p.branch({f"rw/{p.fresh('file')}.txt": "x\n"})
    if force:  # back to main's tip: not a fast-forward
        target = p.sha_of("main")
    else:
        target = p.branch({f"rw/{p.fresh('file')}.txt": "y\n"}, start=name)[1]
    p.rest("PATCH", f"{R}/git/refs/heads/{name}", {"sha": target, "force": force})
    problems = differ("GET ref object.sha", p.sha_of(name), target)
    listed = {r["ref"]: r["object"]["sha"] for r in p.rest("GET", f"{R}/git/refs")}
    return problems + differ("GET refs entry", listed.get(f"refs/heads/{name}"), target)


WRITES.append(
    Write(
        "github",
        "PATCH /repos/{owner}/{repo}/git/refs/{ref} -> GET ref, GET refs",
        (
            kit("ReposOwnerRepoGitRefsRefPatchBody.sha", "The SHA1 value to set this reference to"),
            octo(
                "git-refs #2", "PATCH /repos/octokit-fixture-org/git-refs/git/refs/heads/test 200"
            ),
        ),
        partial(rest_ref_update, False),
    )
)
WRITES.append(
    Write(
        "github",
        "PATCH /repos/{owner}/{repo}/git/refs/{ref} (force) -> GET ref, GET refs",
        (
            kit(
                "ReposOwnerRepoGitRefsRefPatchBody.force",
                "Indicates whether to force the update or to make sure the update is a "
                "fast-forward update.",
            ),
        ),
        partial(rest_ref_update, True),
    )
)


@write(
    "github",
    "DELETE /repos/{owner}/{repo}/git/refs/{ref} -> GET ref 404, GET refs",
    gql("Mutation.deleteRef", "Delete a Git Ref."),
    octo("git-refs #4", "DELETE /repos/octokit-fixture-org/git-refs/git/refs/heads/test 204"),
)
def rest_ref_delete(p: Probe) -> list[str]:
    name, _ = p.branch()
    p.rest("DELETE", f"{R}/git/refs/heads/{name}", want=204)
    problems = differ("GET ref status", p.status(f"{R}/git/ref/heads/{name}"), 404)
    if f"refs/heads/{name}" in [r["ref"] for r in p.rest("GET", f"{R}/git/refs")]:
        problems.append("GET refs still lists the deleted ref")
    return problems


@write(
    "github",
    "POST /repos/{owner}/{repo}/statuses/{sha} -> GET statuses, GET combined status",
    kit("ReposOwnerRepoStatusesShaPostBody.context", "A string label to differentiate this"),
    octo("create-status #2", '"context": "example/2"'),
    octo("create-status #3", '"context": "example/1"'),
)
def rest_status(p: Probe) -> list[str]:
    _, sha = p.branch({f"rw/{p.fresh('file')}.txt": "x\n"})
    body = {
        "state": "failure",
        "context": "rw/ci",
        "description": "Read back.",
        "target_url": "https://ci.example.test/1",
    }
    p.rest("POST", f"{R}/statuses/{sha}", body, 201)
    listed = [
        (x["context"], x["state"], x["description"], x["target_url"])
        for x in p.rest("GET", f"{R}/commits/{sha}/statuses")
    ]
    want = ("rw/ci", "failure", "Read back.", "https://ci.example.test/1")
    problems = differ("GET statuses", listed, [want])
    combined = p.rest("GET", f"{R}/commits/{sha}/status")
    problems += differ("GET combined status state", combined["state"], "failure")
    got = [(s["context"], s["state"]) for s in combined["statuses"]]
    return problems + differ("GET combined status statuses", got, [("rw/ci", "failure")])


@write(
    "github",
    "POST /repos/{owner}/{repo}/labels -> GET label, GET labels",
    kit("ReposOwnerRepoLabelsPostBody.color", "The [hexadecimal color code]"),
    octo("labels #2", '"name": "test-label", "color": "663399"'),
)
def rest_label_create(p: Probe) -> list[str]:
    name = p.fresh("label")
    p.rest("POST", f"{R}/labels", {"name": name, "color": "663399", "description": "New."}, 201)
    got = p.rest("GET", f"{R}/labels/{name}")
    problems = differ(
        "GET label", (got["name"], got["color"], got["description"]), (name, "663399", "New.")
    )
    if name not in [lb["name"] for lb in p.rest("GET", f"{R}/labels?per_page=100")]:
        problems.append("GET labels does not list the new label")
    return problems


def rest_label_update(arg: str, p: Probe) -> list[str]:
    name = p.fresh("label")
    p.rest("POST", f"{R}/labels", {"name": name, "color": "663399", "description": "Old."}, 201)
    value = {"new_name": f"{name}-renamed", "color": "bada55", "description": "New."}[arg]
    p.rest("PATCH", f"{R}/labels/{name}", {arg: value})
    if arg != "new_name":
        return differ(f"GET label {arg}", p.rest("GET", f"{R}/labels/{name}")[arg], value)
    problems = differ(
        "GET label (new name) name", p.rest("GET", f"{R}/labels/{value}")["name"], value
    )
    return problems + differ("GET label (old name) status", p.status(f"{R}/labels/{name}"), 404)


_LABEL_PATCH = "ReposOwnerRepoLabelsNamePatchBody"
for _arg, _cites in (
    (
        "new_name",
        (
            kit(f"{_LABEL_PATCH}.new_name", "The new name of the label."),
            octo("labels #3", '"name": "test-label-updated"'),
        ),
    ),
    ("color", (kit(f"{_LABEL_PATCH}.color", "The [hexadecimal color code]"),)),
    ("description", (kit(f"{_LABEL_PATCH}.description", "A short description of the label."),)),
):
    WRITES.append(
        Write(
            "github",
            f"PATCH /repos/{{owner}}/{{repo}}/labels/{{name}} ({_arg}) -> GET label",
            _cites,
            partial(rest_label_update, _arg),
        )
    )


@write(
    "github",
    "DELETE /repos/{owner}/{repo}/labels/{name} -> GET label 404, GET labels",
    gql("Mutation.deleteLabel", "Deletes a label."),
    octo("labels #4", "DELETE /repos/octokit-fixture-org/labels/labels/test-label-updated 204"),
)
def rest_label_delete(p: Probe) -> list[str]:
    name = p.fresh("label")
    p.rest("POST", f"{R}/labels", {"name": name, "color": "663399"}, 201)
    p.rest("DELETE", f"{R}/labels/{name}", want=204)
    problems = differ("GET label status", p.status(f"{R}/labels/{name}"), 404)
    if name in [lb["name"] for lb in p.rest("GET", f"{R}/labels?per_page=100")]:
        problems.append("GET labels still lists the deleted label")
    return problems


@write(
    "github",
    "git push (smart HTTP) -> GET branch, Repository.ref",
    gql("Ref.target", "The object the ref points to."),
    gql("Repository.ref", "Fetch a given ref from the repository"),
)
def git_push(p: Probe) -> list[str]:
    git = p.git()
    name = p.fresh("pushed")
    git("checkout", "-q", "-B", name, "origin/main")
    sha = git.commit({f"rw/{name}.txt": "pushed\n"}, f"{name}: pushed")
    git("push", "-q", "origin", name)
    got = p.rest("GET", f"{R}/branches/{name}")["commit"]["sha"]
    ref = p.gh_ref(f"refs/heads/{name}")
    return differ("GET branch commit.sha", got, sha) + differ(
        "Repository.ref target.oid", ref and ref["target"]["oid"], sha
    )


# ------------------------------------------------------------------ GitHub GraphQL


@write(
    "github",
    "mutation addComment -> Issue.comments, GET comments",
    gql("Mutation.addComment", "Adds a comment to an Issue or Pull Request."),
    gql("Issue.comments", "A list of comments associated with the Issue."),
)
def gql_add_comment(p: Probe) -> list[str]:
    n = p.issue()["number"]
    p.gh_mutate("addComment", {"subjectId": p.gh_id(n), "body": "Said in GraphQL."})
    got = [c["body"] for c in p.gh_thread(n)["comments"]["nodes"]]
    rest = [c["body"] for c in p.rest("GET", f"{R}/issues/{n}/comments")]
    return differ("Issue.comments bodies", got, ["Said in GraphQL."]) + differ(
        "GET comments bodies", rest, ["Said in GraphQL."]
    )


@write(
    "github",
    "mutation addLabelsToLabelable -> Issue.labels",
    gql("Mutation.addLabelsToLabelable", "Adds labels to a labelable object."),
    gql("Issue.labels", "A list of labels associated with the object."),
)
def gql_add_labels(p: Probe) -> list[str]:
    n = p.issue(labels=["bug"])["number"]
    p.gh_mutate(
        "addLabelsToLabelable", {"labelableId": p.gh_id(n), "labelIds": [p.gh_label_id("question")]}
    )
    return differ("Issue.labels", names(p.gh_thread(n)["labels"]["nodes"]), ["bug", "question"])


@write(
    "github",
    "mutation removeLabelsFromLabelable -> Issue.labels",
    gql("Mutation.removeLabelsFromLabelable", "Removes labels from a Labelable object."),
)
def gql_remove_labels(p: Probe) -> list[str]:
    n = p.issue(labels=["bug", "question"])["number"]
    p.gh_mutate(
        "removeLabelsFromLabelable", {"labelableId": p.gh_id(n), "labelIds": [p.gh_label_id("bug")]}
    )
    return differ("Issue.labels", names(p.gh_thread(n)["labels"]["nodes"]), ["question"])


@write(
    "github",
    "mutation addPullRequestReview(event: COMMENT) -> PullRequest.reviews",
    gql("Mutation.addPullRequestReview", "Adds a review to a Pull Request."),
    gql("PullRequestReviewEvent.COMMENT", "Submit general feedback without explicit approval."),
)
def gql_review(p: Probe) -> list[str]:
    n = p.pull()["number"]
    p.gh_mutate(
        "addPullRequestReview", {"pullRequestId": p.gh_id(n), "event": "COMMENT", "body": "Fine."}
    )
    got = [(r["state"], r["body"]) for r in p.gh_thread(n, pull=True)["reviews"]["nodes"]]
    return differ("PullRequest.reviews", got, [("COMMENTED", "Fine.")])


def gql_issue_state(name: str, p: Probe) -> list[str]:
    n = p.issue()["number"]
    node = p.gh_id(n)
    if name == "reopenIssue":
        p.gh_mutate("closeIssue", {"issueId": node})
    input: dict[str, Any] = {"issueId": node}
    if name == "closeIssue(stateReason: NOT_PLANNED)":
        input["stateReason"] = "NOT_PLANNED"
    p.gh_mutate(name.split("(")[0], input)
    got = p.gh_thread(n)
    if name == "reopenIssue":
        return differ("Issue.state", got["state"], "OPEN")
    problems = differ("Issue.state", got["state"], "CLOSED")
    if "NOT_PLANNED" in name:
        problems += differ("Issue.stateReason", got["stateReason"], "NOT_PLANNED")
    return problems


for _name, _cites in (
    (
        "closeIssue",
        (
            gql("Mutation.closeIssue", "Close an issue."),
            gql("IssueState.CLOSED", "An issue that has been closed"),
        ),
    ),
    (
        "closeIssue(stateReason: NOT_PLANNED)",
        (
            gql("CloseIssueInput.stateReason", "The reason the issue is to be closed."),
            gql(
                "IssueClosedStateReason.NOT_PLANNED", "An issue that has been closed as not planned"
            ),
        ),
    ),
    (
        "reopenIssue",
        (
            gql("Mutation.reopenIssue", "Reopen a issue."),
            gql("IssueState.OPEN", "An issue that is still open"),
        ),
    ),
):
    _reads = "Issue.state, Issue.stateReason" if "stateReason" in _name else "Issue.state"
    WRITES.append(
        Write("github", f"mutation {_name} -> {_reads}", _cites, partial(gql_issue_state, _name))
    )


def gql_pull_state(name: str, p: Probe) -> list[str]:
    n = p.pull(draft=name == "markPullRequestReadyForReview")["number"]
    node = p.gh_id(n)
    if name == "reopenPullRequest":
        p.gh_mutate("closePullRequest", {"pullRequestId": node})
    p.gh_mutate(name, {"pullRequestId": node})
    got = p.gh_thread(n, pull=True)
    if name == "convertPullRequestToDraft":
        return differ("PullRequest.isDraft", got["isDraft"], True)
    if name == "markPullRequestReadyForReview":
        return differ("PullRequest.isDraft", got["isDraft"], False)
    state = "CLOSED" if name == "closePullRequest" else "OPEN"
    return differ("PullRequest.state", got["state"], state) + differ(
        "PullRequest.merged", got["merged"], False
    )


for _name, _reads, _cites in (
    (
        "closePullRequest",
        "PullRequest.state",
        (
            gql("Mutation.closePullRequest", "Close a pull request."),
            gql(
                "PullRequestState.CLOSED",
                "A pull request that has been closed without being merged.",
            ),
        ),
    ),
    (
        "reopenPullRequest",
        "PullRequest.state",
        (gql("Mutation.reopenPullRequest", "Reopen a pull request."),),
    ),
    (
        "convertPullRequestToDraft",
        "PullRequest.isDraft",
        (gql("Mutation.convertPullRequestToDraft", "Converts a pull request to draft"),),
    ),
    (
        "markPullRequestReadyForReview",
        "PullRequest.isDraft",
        (gql("Mutation.markPullRequestReadyForReview", "Marks a pull request ready for review."),),
    ),
):
    WRITES.append(
        Write("github", f"mutation {_name} -> {_reads}", _cites, partial(gql_pull_state, _name))
    )


COMMIT_ON_BRANCH = gql(
    "Mutation.createCommitOnBranch",
    "This mutation creates a commit whose parent is the HEAD of the provided branch and also "
    "updates that branch to point to the new commit.",
)


def gql_commit_on_branch(arg: str, p: Probe) -> list[str]:
    path = f"rw/{p.fresh('file')}.txt"
    name, head = p.branch({path: "before\n"})
    changes: dict[str, Any] = (
        {"additions": [{"path": path, "contents": b64("after\n")}]}
        if arg == "additions"
        else {"deletions": [{"path": path}]}
    )
    p.gh_mutate(
        "createCommitOnBranch",
        {
            "branch": {"repositoryNameWithOwner": f"{OWNER}/{NAME}", "branchName": name},
            "expectedHeadOid": head,
            "message": {"headline": f"Commit {arg}"},
            "fileChanges": changes,
        },
    )
    ref = p.gh_ref(f"refs/heads/{name}")
    if ref is None:
        return ["Repository.ref: the branch is gone"]
    parents = [c["oid"] for c in ref["target"]["parents"]["nodes"]]
    problems = differ("Repository.ref target parents", parents, [head])
    problems += differ("Repository.ref target message", ref["target"]["message"], f"Commit {arg}")
    if arg == "additions":
        return problems + differ("GET contents?ref=<branch>", _content(p, path, name), "after\n")
    status = p.status(f"{R}/contents/{path}?ref={name}")
    return problems + differ("GET contents?ref=<branch> status", status, 404)


for _arg, _cite in (
    (
        "additions",
        gql("FileAddition", "A command to add a file at the given path with the given contents"),
    ),
    ("deletions", gql("FileDeletion", "A command to delete the file at the given path")),
):
    WRITES.append(
        Write(
            "github",
            f"mutation createCommitOnBranch(fileChanges.{_arg}) -> Repository.ref, GET contents",
            (COMMIT_ON_BRANCH, _cite),
            partial(gql_commit_on_branch, _arg),
        )
    )


@write(
    "github",
    "mutation createIssue -> Repository.issue, Repository.issues",
    gql("Mutation.createIssue", "Creates a new issue."),
    gql("Repository.issues", "A list of issues that have been opened in the repository."),
)
def gql_create_issue(p: Probe) -> list[str]:
    title = p.fresh("title")
    made = p.gh_mutate(
        "createIssue",
        {
            "repositoryId": p.gh_repo_id(),
            "title": title,
            "body": "From GraphQL.",
            "labelIds": [p.gh_label_id("bug")],
            "assigneeIds": [p.gh_user_id("alice")],
        },
        "issue { number }",
    )
    n = made["issue"]["number"]
    got = p.gh_thread(n)
    problems = differ("Issue.title", got["title"], title) + differ(
        "Issue.body", got["body"], "From GraphQL."
    )
    problems += differ("Issue.labels", names(got["labels"]["nodes"]), ["bug"])
    problems += differ("Issue.assignees", names(got["assignees"]["nodes"], "login"), ["alice"])
    data = p.gh(
        "query($owner: String!, $name: String!) { repository(owner: $owner, name: $name) { "
        "issues(first: 20, orderBy: {field: CREATED_AT, direction: DESC}) { nodes { number } } } }",
        **REPO,
    )
    if n not in [i["number"] for i in data["repository"]["issues"]["nodes"]]:
        problems.append(f"Repository.issues does not list #{n}")
    return problems


@write(
    "github",
    "mutation createPullRequest(draft: true) -> Repository.pullRequest, Repository.pullRequests",
    gql("Mutation.createPullRequest", "Create a new pull request"),
    gql("CreatePullRequestInput.draft", "Indicates whether this pull request should be a draft."),
)
def gql_create_pull(p: Probe) -> list[str]:
    name, _ = p.branch({f"rw/{p.fresh('file')}.txt": "x\n"})
    made = p.gh_mutate(
        "createPullRequest",
        {
            "repositoryId": p.gh_repo_id(),
            "baseRefName": "main",
            "headRefName": name,
            "title": f"From {name}",
            "draft": True,
        },
        "pullRequest { number }",
    )
    n = made["pullRequest"]["number"]
    got = p.gh_thread(n, pull=True)
    problems = differ(
        "PullRequest (title, head, base, isDraft, state)",
        (got["title"], got["headRefName"], got["baseRefName"], got["isDraft"], got["state"]),
        (f"From {name}", name, "main", True, "OPEN"),
    )
    data = p.gh(
        "query($owner: String!, $name: String!) { repository(owner: $owner, name: $name) { "
        "pullRequests(first: 20, states: [OPEN], orderBy: {field: CREATED_AT, direction: DESC}) "
        "{ nodes { number } } } }",
        **REPO,
    )
    if n not in [x["number"] for x in data["repository"]["pullRequests"]["nodes"]]:
        problems.append(f"Repository.pullRequests does not list #{n}")
    return problems


@write(
    "github",
    "mutation createRef -> Repository.ref, GET ref",
    gql("CreateRefInput.oid", "The GitObjectID that the new Ref shall target."),
)
def gql_create_ref(p: Probe) -> list[str]:
    _, sha = p.branch({f"rw/{p.fresh('file')}.txt": "x\n"})
    name = p.fresh("ref")
    p.gh_mutate(
        "createRef", {"repositoryId": p.gh_repo_id(), "name": f"refs/heads/{name}", "oid": sha}
    )
    ref = p.gh_ref(f"refs/heads/{name}")
    return differ("Repository.ref target.oid", ref and ref["target"]["oid"], sha) + differ(
        "GET ref object.sha", p.sha_of(name), sha
    )


@write(
    "github",
    "mutation updateRef -> Repository.ref, GET ref",
    gql("UpdateRefInput.oid", "The GitObjectID that the Ref shall be updated to target."),
)
def gql_update_ref(p: Probe) -> list[str]:
    name, _ = p.branch()
    _, newer = p.branch({f"rw/{p.fresh('file')}.txt": "x\n"}, start=name)
    ref = p.gh_ref(f"refs/heads/{name}")
    if ref is None:
        return ["Repository.ref: no such branch before the update"]
    p.gh_mutate("updateRef", {"refId": ref["id"], "oid": newer})
    after = p.gh_ref(f"refs/heads/{name}")
    return differ("Repository.ref target.oid", after and after["target"]["oid"], newer) + differ(
        "GET ref object.sha", p.sha_of(name), newer
    )


@write(
    "github",
    "mutation deleteRef -> Repository.ref null, GET ref 404",
    gql("Mutation.deleteRef", "Delete a Git Ref."),
    gql("Repository.ref", "Fetch a given ref from the repository"),
)
def gql_delete_ref(p: Probe) -> list[str]:
    name, _ = p.branch()
    ref = p.gh_ref(f"refs/heads/{name}")
    if ref is None:
        return ["Repository.ref: no such branch before the delete"]
    p.gh_mutate("deleteRef", {"refId": ref["id"]})
    return differ("Repository.ref", p.gh_ref(f"refs/heads/{name}"), None) + differ(
        "GET ref status", p.status(f"{R}/git/ref/heads/{name}"), 404
    )


@write(
    "github",
    "mutation updateRefs (create, update, delete) -> Repository.ref, GET refs",
    gql("Mutation.updateRefs", "Creates, updates and/or deletes multiple refs in a repository."),
    gql("RefUpdate.afterOid", "The value this ref should be updated to."),
)
def gql_update_refs(p: Probe) -> list[str]:
    moved, _ = p.branch()
    _, newer = p.branch({f"rw/{p.fresh('file')}.txt": "x\n"}, start=moved)
    doomed, doomed_sha = p.branch()
    made = p.fresh("ref")
    p.gh_mutate(
        "updateRefs",
        {
            "repositoryId": p.gh_repo_id(),
            "refUpdates": [
                {"name": f"refs/heads/{made}", "beforeOid": ZERO, "afterOid": newer},
                {"name": f"refs/heads/{moved}", "afterOid": newer},
                {"name": f"refs/heads/{doomed}", "beforeOid": doomed_sha, "afterOid": ZERO},
            ],
        },
    )
    problems: list[str] = []
    for name, want in ((made, newer), (moved, newer), (doomed, None)):
        ref = p.gh_ref(f"refs/heads/{name}")
        problems += differ(f"Repository.ref {name} target.oid", ref and ref["target"]["oid"], want)
    listed = {r["ref"]: r["object"]["sha"] for r in p.rest("GET", f"{R}/git/refs")}
    got = [listed.get(f"refs/heads/{n}") for n in (made, moved, doomed)]
    return problems + differ(
        "GET refs entries (created, updated, deleted)", got, [newer, newer, None]
    )


def gql_merge(method: str | None, p: Probe) -> list[str]:
    case = p.merge_case()
    made = p.rest(
        "POST",
        f"{R}/pulls",
        {"title": f"Merge by {method}", "head": case.head, "base": case.base},
        201,
    )
    n = made["number"]
    input: dict[str, Any] = {"pullRequestId": p.gh_id(n)}
    if method is not None:
        input["mergeMethod"] = method
    p.gh_mutate("mergePullRequest", input)
    problems = merged_base_problems(p.git(), case, (method or "MERGE").lower())
    got = p.gh_thread(n, pull=True)
    problems += differ("PullRequest.merged", got["merged"], True)
    problems += differ("PullRequest.state", got["state"], "MERGED")
    tip = p.git()("rev-parse", f"origin/{case.base}")
    problems += differ("PullRequest.mergeCommit.oid", (got["mergeCommit"] or {}).get("oid"), tip)
    return problems


for _m in ("MERGE", "SQUASH", "REBASE", None):
    _cites = (
        (
            MERGE_CITES[_m.lower()],
            gql("MergePullRequestInput.mergeMethod", "The merge method to use."),
        )
        if _m
        else (
            gql("MergePullRequestInput.mergeMethod", "If omitted, defaults to 'MERGE'"),
            MERGE_CITES["merge"],
        )
    )
    WRITES.append(
        Write(
            "github",
            f"mutation mergePullRequest(mergeMethod: {_m or 'omitted'}) -> git log of the base, "
            "PullRequest.merged, PullRequest.mergeCommit",
            _cites,
            partial(gql_merge, _m),
        )
    )


@write(
    "github",
    "mutation mergePullRequest(mergeMethod: SQUASH, commitHeadline, commitBody) -> git log",
    gql("MergePullRequestInput.commitHeadline", "Commit headline to use for the merge commit"),
    gql("MergePullRequestInput.commitBody", "Commit body to use for the merge commit"),
)
def gql_merge_message(p: Probe) -> list[str]:
    case = p.merge_case()
    pull = {"title": "Squash with a message", "head": case.head, "base": case.base}
    n = p.rest("POST", f"{R}/pulls", pull, 201)["number"]
    input = {
        "pullRequestId": p.gh_id(n),
        "mergeMethod": "SQUASH",
        "commitHeadline": "Headline",
        "commitBody": "Body.",
    }
    p.gh_mutate("mergePullRequest", input)
    return differ("git log: the new commit's message", _merge_message(p, case), "Headline\n\nBody.")


@write(
    "github",
    "mutation mergePullRequest(expectedHeadOid: not the head's) -> refused, git log, GET pull",
    gql("MergePullRequestInput.expectedHeadOid", "OID that the pull request head ref must match"),
)
def gql_merge_stale(p: Probe) -> list[str]:
    case = p.merge_case()
    pull = {"title": "Merge at a stale head", "head": case.head, "base": case.base}
    n = p.rest("POST", f"{R}/pulls", pull, 201)["number"]
    input = {"pullRequestId": p.gh_id(n), "expectedHeadOid": case.head_commits[0]}
    try:
        p.gh_mutate("mergePullRequest", input)
        problems = ["mergePullRequest answered without an error"]
    except Failed:
        problems = []
    return problems + _unmerged_problems(p, case, n)


def gql_update_thread(pull: bool, arg: str, p: Probe) -> list[str]:
    n = (p.pull() if pull else p.issue(labels=["bug"], assignees=["alice"]))["number"]
    if pull:
        p.rest("POST", f"{R}/issues/{n}/labels", {"labels": ["bug"]})
        p.rest("PATCH", f"{R}/issues/{n}", {"assignees": ["alice"]})
    node = p.gh_id(n)
    base = p.branch()[0] if arg == "baseRefName" else ""
    value: Any = {
        "title": "A new title",
        "body": "A new body.",
        "state": "CLOSED",
        "labelIds": [p.gh_label_id("documentation")] if arg == "labelIds" else None,
        "assigneeIds": [p.gh_user_id("bob")] if arg == "assigneeIds" else None,
        "baseRefName": base,
        "maintainerCanModify": True,
    }[arg]
    key = "pullRequestId" if pull else "id"
    p.gh_mutate("updatePullRequest" if pull else "updateIssue", {key: node, arg: value})
    got = p.gh_thread(n, pull)
    kind = "PullRequest" if pull else "Issue"
    if arg == "labelIds":
        return differ(f"{kind}.labels", names(got["labels"]["nodes"]), ["documentation"])
    if arg == "assigneeIds":
        return differ(f"{kind}.assignees", names(got["assignees"]["nodes"], "login"), ["bob"])
    return differ(f"{kind}.{arg}", got[arg], value)


_UPDATE_ISSUE_ARGS = {
    "title": "The title for the issue.",
    "body": "The body for the issue description.",
    "state": "The desired issue state.",
    "labelIds": "An array of Node IDs of labels for this issue.",
    "assigneeIds": "An array of Node IDs of users for this issue.",
}
_UPDATE_PULL_ARGS = {
    "title": "The title of the pull request.",
    "body": "The contents of the pull request.",
    "state": "The target state of the pull request.",
    "baseRefName": "The name of the branch you want your changes pulled into.",
    "labelIds": "An array of Node IDs of labels for this pull request.",
    "assigneeIds": "An array of Node IDs of users for this pull request.",
    "maintainerCanModify": "Indicates whether maintainers can modify the pull request.",
}
_READ_FIELD = {"labelIds": "labels", "assigneeIds": "assignees"}
for _pull, _args in ((False, _UPDATE_ISSUE_ARGS), (True, _UPDATE_PULL_ARGS)):
    _kind = "PullRequest" if _pull else "Issue"
    _mutation = "updatePullRequest" if _pull else "updateIssue"
    for _arg, _says in _args.items():
        WRITES.append(
            Write(
                "github",
                f"mutation {_mutation}({_arg}) -> {_kind}.{_READ_FIELD.get(_arg, _arg)}",
                (gql(f"Update{_kind}Input.{_arg}", _says),),
                partial(gql_update_thread, _pull, _arg),
            )
        )


# ----------------------------------------------------------------------------- Slack

POSTED = spec("chat.postMessage", "Sends a message to a channel.")
THREAD_TS = spec(
    "chat.postMessage thread_ts",
    "Provide another message's `ts` value to make this message a reply.",
)
BROADCAST = spec(
    "chat.postMessage reply_broadcast",
    "Used in conjunction with `thread_ts` and indicates whether reply should be made visible "
    "to everyone in the channel or conversation. Defaults to `false`.",
)
REPLIES_TS = spec(
    "conversations.replies ts",
    "If there are no replies then just the single message referenced by `ts` will return",
)


BLOCKS = [{"type": "section", "text": {"type": "mrkdwn", "text": "*Before*"}}]


def _blocks_text(message: dict[str, Any]) -> list[str]:
    return [str(b.get("text", {}).get("text")) for b in message.get("blocks") or []]


@write(
    "slack",
    "chat.postMessage -> conversations.history, conversations.replies",
    POSTED,
    spec("conversations.history", "Fetches a conversation's history of messages and events."),
    REPLIES_TS,
)
def slack_post(p: Probe) -> list[str]:
    text = p.fresh("message")
    ts = p.post(text)
    history = p.history()
    problems = differ("conversations.history text", history.get(ts, {}).get("text"), text)
    problems += differ("conversations.replies of it", list(p.replies(ts)), [ts])
    return problems


@write(
    "slack",
    "chat.postMessage (blocks) -> conversations.history",
    spec("chat.postMessage blocks", "A JSON-based array of structured blocks"),
)
def slack_post_blocks(p: Probe) -> list[str]:
    ts = p.post("fallback", blocks=BLOCKS)
    return differ(
        "conversations.history blocks", _blocks_text(p.history().get(ts, {})), ["*Before*"]
    )


@write(
    "slack",
    "chat.postMessage (channel: a name) -> conversations.history",
    spec("chat.postMessage channel", "Can be an encoded ID, or a name."),
)
def slack_post_by_name(p: Probe) -> list[str]:
    info = p.slack("conversations.info", True, channel=p.target.channel)["channel"]
    text = p.fresh("named")
    body = p.slack("chat.postMessage", channel=f"#{info['name']}", text=text)
    problems = differ("the answer's channel", body.get("channel"), p.target.channel)
    got = p.history().get(str(body["ts"]), {}).get("text")
    return problems + differ("conversations.history text", got, text)


@write(
    "slack",
    "chat.postMessage (thread_ts) -> conversations.replies, conversations.history",
    THREAD_TS,
    BROADCAST,
    spec("conversations.replies", "Retrieve a thread of messages posted to a conversation"),
)
def slack_reply(p: Probe) -> list[str]:
    parent = p.post(p.fresh("parent"))
    text = p.fresh("reply")
    ts = p.post(text, thread_ts=parent)
    thread = p.replies(parent)
    problems = differ("conversations.replies of the parent (ts)", list(thread), [parent, ts])
    problems += differ("the reply's thread_ts", thread.get(ts, {}).get("thread_ts"), parent)
    problems += differ("the reply's text", thread.get(ts, {}).get("text"), text)
    if ts in p.history():
        problems.append("conversations.history lists the reply at the top level")
    return problems


@write(
    "slack",
    "chat.postMessage (thread_ts, reply_broadcast) -> conversations.replies, conversations.history",
    BROADCAST,
    THREAD_TS,
)
def slack_broadcast(p: Probe) -> list[str]:
    parent = p.post(p.fresh("parent"))
    ts = p.post(p.fresh("reply"), thread_ts=parent, reply_broadcast=True)
    problems = differ(
        "conversations.replies of the parent (ts)", list(p.replies(parent)), [parent, ts]
    )
    if ts not in p.history():
        problems.append("conversations.history does not list the broadcast reply")
    return problems


@write(
    "slack",
    "chat.update (text) -> conversations.history",
    spec("chat.update text", "New text for the message"),
    spec(
        "chat.update blocks",
        "If you don't include this field, the message's previous `blocks` will be retained.",
    ),
)
def slack_update_text(p: Probe) -> list[str]:
    ts = p.post("before", blocks=BLOCKS)
    p.slack("chat.update", channel=p.target.channel, ts=ts, text="after")
    got = p.history().get(ts, {})
    return differ("conversations.history text", got.get("text"), "after") + differ(
        "conversations.history blocks (kept)", _blocks_text(got), ["*Before*"]
    )


@write(
    "slack",
    "chat.update (blocks) -> conversations.history",
    spec("chat.update blocks", "A JSON-based array of [structured blocks]"),
)
def slack_update_blocks(p: Probe) -> list[str]:
    ts = p.post("text", blocks=BLOCKS)
    after = [{"type": "section", "text": {"type": "mrkdwn", "text": "*After*"}}]
    p.slack("chat.update", channel=p.target.channel, ts=ts, text="text", blocks=after)
    return differ(
        "conversations.history blocks", _blocks_text(p.history().get(ts, {})), ["*After*"]
    )


@write(
    "slack",
    "chat.update (text of a reply) -> conversations.replies",
    spec("chat.update ts", "Timestamp of the message to be updated."),
)
def slack_update_reply(p: Probe) -> list[str]:
    parent = p.post(p.fresh("parent"))
    ts = p.post("before", thread_ts=parent)
    p.slack("chat.update", channel=p.target.channel, ts=ts, text="after")
    return differ("conversations.replies text", p.replies(parent).get(ts, {}).get("text"), "after")


@write(
    "slack",
    "chat.delete -> conversations.history, conversations.replies thread_not_found, "
    "chat.update message_not_found",
    spec("chat.delete", "Deletes a message."),
    spec("conversations.replies ts", "`ts` must be the timestamp of an existing message"),
    spec("chat.update errors", "message_not_found"),
)
def slack_delete(p: Probe) -> list[str]:
    ts = p.post(p.fresh("doomed"))
    p.slack("chat.delete", channel=p.target.channel, ts=ts)
    problems = (
        ["conversations.history still lists the deleted message"] if ts in p.history() else []
    )
    replies = p.slack_call("conversations.replies", True, channel=p.target.channel, ts=ts)
    problems += differ("conversations.replies error", replies.get("error"), "thread_not_found")
    update = p.slack_call("chat.update", channel=p.target.channel, ts=ts, text="again")
    return problems + differ("chat.update error", update.get("error"), "message_not_found")


def _reactions(p: Probe, ts: str) -> dict[str, list[str]]:
    message = p.history().get(ts, {})
    return {r["name"]: sorted(r["users"]) for r in message.get("reactions", [])}


@write(
    "slack",
    "reactions.add -> conversations.history reactions",
    spec("reactions.add", "Adds a reaction to an item."),
    spec("reactions.add name", "Reaction (emoji) name."),
)
def slack_react(p: Probe) -> list[str]:
    ts = p.post(p.fresh("liked"))
    me = str(p.slack("auth.test")["user_id"])
    p.slack("reactions.add", True, channel=p.target.channel, timestamp=ts, name="eyes")
    return differ("conversations.history reactions", _reactions(p, ts), {"eyes": [me]})


@write(
    "slack",
    "reactions.remove -> conversations.history reactions",
    spec("reactions.remove", "Removes a reaction from an item."),
)
def slack_unreact(p: Probe) -> list[str]:
    ts = p.post(p.fresh("unliked"))
    p.slack("reactions.add", True, channel=p.target.channel, timestamp=ts, name="eyes")
    p.slack("reactions.remove", True, channel=p.target.channel, timestamp=ts, name="eyes")
    return differ("conversations.history reactions", _reactions(p, ts), {})


JOIN_CHANNEL = "C04QL3RND"
"""``#random`` of the demo snapshot, which the join check first takes the bot out of."""


@write(
    "slack",
    "conversations.join -> conversations.members, conversations.info is_member",
    spec("conversations.join", "Joins an existing conversation."),
)
def slack_join(p: Probe) -> list[str]:
    from fakes.slack.models import MemberRow

    me = str(p.slack("auth.test")["user_id"])
    with p.served.world.world.session() as s:  # the one step not made through the API
        row = s.get(MemberRow, {"channel_id": JOIN_CHANNEL, "user_id": me})
        if row is not None:
            s.delete(row)
    p.slack("conversations.join", channel=JOIN_CHANNEL)
    members = p.slack("conversations.members", True, channel=JOIN_CHANNEL)["members"]
    problems = [] if me in members else ["conversations.members does not list the bot"]
    info = p.slack("conversations.info", True, channel=JOIN_CHANNEL)["channel"]
    return problems + differ("conversations.info is_member", info.get("is_member"), True)


# ----------------------------------------------------------------------------- Linear

UPDATE_ISSUE = lin("Mutation.issueUpdate", "Updates an issue.")


@write(
    "linear",
    "mutation issueCreate -> Query.issue, Query.issues, Team.issues",
    lin("Mutation.issueCreate", "Creates a new issue."),
    lin("Team.issues", "Issues belonging to the team."),
    lin("Query.issues", "All issues."),
)
def linear_create(p: Probe) -> list[str]:
    title = p.fresh("title")
    made = p.linear_issue(title=title, description="Described.")
    got = p.read_issue(made["id"])
    problems = differ(
        "Issue (title, description, team)",
        (got["title"], got["description"], got["team"]["id"]),
        (title, "Described.", p.team["id"]),
    )
    data = p.linear(
        "query($team: String!) { issues(first: 250) { nodes { id } } team(id: $team) { "
        "issues(first: 250) { nodes { id } } } }",
        team=p.team["id"],
    )
    if made["id"] not in [i["id"] for i in data["issues"]["nodes"]]:
        problems.append("Query.issues does not list the new issue")
    if made["id"] not in [i["id"] for i in data["team"]["issues"]["nodes"]]:
        problems.append("Team.issues does not list the new issue")
    return problems


def _linear_value(p: Probe, arg: str, create: bool) -> Any:
    """The value a check gives ``arg`` (an update's parent by identifier, as documented)."""
    plain = {"title": "A new title", "description": "A new description.", "priority": 2}
    if arg in plain or arg == "estimate":
        return plain.get(arg, 3)
    if arg == "stateId":
        return p.state_id("started")
    if arg == "assigneeId":
        return p.user_ids()[1]
    if arg == "parentId":
        return p.linear_issue()["id" if create else "identifier"]
    return [p.label_ids()["Bug" if arg == "removedLabelIds" else "Feature"]]


def _linear_read(p: Probe, arg: str, got: dict[str, Any], value: Any) -> list[str]:
    labels = {v: k for k, v in p.label_ids().items()}
    if arg in ("title", "description", "priority", "estimate"):
        return differ(f"Issue.{arg}", got[arg], value)
    if arg == "stateId":
        return differ("Issue.state.id", got["state"]["id"], value)
    if arg == "assigneeId":
        return differ("Issue.assignee.id", (got["assignee"] or {}).get("id"), value)
    names_now = sorted(n["name"] for n in got["labels"]["nodes"])
    if arg == "labelIds":
        return differ("Issue.labels", names_now, sorted(labels[i] for i in value))
    if arg == "addedLabelIds":
        return differ("Issue.labels", names_now, ["Bug", "Feature", "Improvement"])
    if arg == "removedLabelIds":
        return differ("Issue.labels", names_now, ["Improvement"])
    parent = p.read_issue(value)
    problems = differ("Issue.parent.id", (got["parent"] or {}).get("id"), parent["id"])
    if got["id"] not in [c["id"] for c in parent["children"]["nodes"]]:
        problems.append("Issue.children of the parent does not list the issue")
    return problems


def linear_create_arg(arg: str, p: Probe) -> list[str]:
    value = _linear_value(p, arg, create=True)
    made = p.linear_issue(**{arg: value})
    return _linear_read(p, arg, p.read_issue(made["id"]), value)


def linear_update_arg(arg: str, p: Probe) -> list[str]:
    labels = p.label_ids()
    made = p.linear_issue(labelIds=[labels["Bug"], labels["Improvement"]])
    value = _linear_value(p, arg, create=False)
    before = p.read_issue(made["id"])["state"]["id"]
    p.linear(
        "mutation($id: String!, $input: IssueUpdateInput!) { issueUpdate(id: $id, input: "
        "$input) { success } }",
        id=made["id"],
        input={arg: value},
    )
    problems = _linear_read(p, arg, p.read_issue(made["id"]), value)
    if arg == "stateId":
        problems += _state_lists(p, made["id"], value, before)
    return problems


def _state_lists(p: Probe, issue: str, now: str, before: str) -> list[str]:
    query = "query($id: String!) { workflowState(id: $id) { issues(first: 250) { nodes { id } } } }"
    problems: list[str] = []
    if issue not in [i["id"] for i in p.linear(query, id=now)["workflowState"]["issues"]["nodes"]]:
        problems.append("WorkflowState.issues of the new state does not list the issue")
    if issue in [i["id"] for i in p.linear(query, id=before)["workflowState"]["issues"]["nodes"]]:
        problems.append("WorkflowState.issues of the old state still lists the issue")
    return problems


_CREATE_ARGS = {
    "stateId": "The team state of the issue.",
    "assigneeId": "The identifier of the user to assign the issue to.",
    "labelIds": "The identifiers of the issue labels associated with this ticket.",
    "parentId": "The identifier of the parent issue.",
    "priority": "0 = No priority, 1 = Urgent, 2 = High, 3 = Medium, 4 = Low.",
    "estimate": "The estimated complexity of the issue.",
}
for _arg, _says in _CREATE_ARGS.items():
    WRITES.append(
        Write(
            "linear",
            f"mutation issueCreate({_arg}) -> Query.issue",
            (lin(f"IssueCreateInput.{_arg}", _says),),
            partial(linear_create_arg, _arg),
        )
    )
_UPDATE_ARGS = {
    "title": "The issue title.",
    "description": "The issue description in markdown format.",
    "priority": "0 = No priority, 1 = Urgent, 2 = High, 3 = Medium, 4 = Low.",
    "estimate": "The estimated complexity of the issue.",
    "stateId": "The team state of the issue.",
    "assigneeId": "The identifier of the user to assign the issue to.",
    "labelIds": "The identifiers of the issue labels associated with this ticket.",
    "addedLabelIds": "The identifiers of the issue labels to be added to this issue.",
    "removedLabelIds": "The identifiers of the issue labels to be removed from this issue.",
    "parentId": "Can be a UUID or issue identifier (e.g., 'LIN-123').",
}
for _arg, _says in _UPDATE_ARGS.items():
    _reads = {
        "stateId": "Issue.state, WorkflowState.issues",
        "parentId": "Issue.parent, Issue.children",
        "assigneeId": "Issue.assignee",
    }.get(_arg, "Issue.labels" if "abel" in _arg else f"Issue.{_arg}")
    WRITES.append(
        Write(
            "linear",
            f"mutation issueUpdate({_arg}) -> {_reads}",
            (lin(f"IssueUpdateInput.{_arg}", _says), UPDATE_ISSUE),
            partial(linear_update_arg, _arg),
        )
    )


@write(
    "linear",
    "mutation issueUpdate(assigneeId: null) -> Issue.assignee",
    lin("IssueUpdateInput", "Setting a field to null (where supported) will clear the value."),
)
def linear_unassign(p: Probe) -> list[str]:
    made = p.linear_issue(assigneeId=p.user_ids()[1])
    p.linear(
        "mutation($id: String!) { issueUpdate(id: $id, input: {assigneeId: null}) { success } }",
        id=made["id"],
    )
    return differ("Issue.assignee", p.read_issue(made["id"])["assignee"], None)


@write(
    "linear",
    "mutation issueBatchUpdate(stateId) -> Issue.state",
    lin("Mutation.issueBatchUpdate", "Updates multiple issues at once."),
    lin("Mutation.issueBatchUpdate(ids:)", "The id's of the issues to update."),
)
def linear_batch(p: Probe) -> list[str]:
    ids = [p.linear_issue()["id"] for _ in range(2)]
    state = p.state_id("completed")
    p.linear(
        "mutation($ids: [UUID!]!, $input: IssueUpdateInput!) { issueBatchUpdate(ids: $ids, "
        "input: $input) { success } }",
        ids=ids,
        input={"stateId": state},
    )
    got = [p.read_issue(i)["state"]["id"] for i in ids]
    return differ("Issue.state.id of each", got, [state, state])


@write(
    "linear",
    "mutation commentCreate -> Issue.comments, Query.comment",
    lin("Mutation.commentCreate", "Creates a new comment."),
    lin("Issue.comments", "Comments associated with the issue"),
    lin("Query.comment", "A specific comment."),
)
def linear_comment(p: Probe) -> list[str]:
    issue = p.linear_issue()
    made = p.linear(
        "mutation($input: CommentCreateInput!) { commentCreate(input: $input) { success "
        "comment { id } } }",
        input={"issueId": issue["id"], "body": "Noted."},
    )["commentCreate"]["comment"]
    got = [(c["id"], c["body"]) for c in p.read_issue(issue["id"])["comments"]["nodes"]]
    problems = differ("Issue.comments", got, [(made["id"], "Noted.")])
    one = p.linear("query($id: String!) { comment(id: $id) { body issue { id } } }", id=made["id"])
    return problems + differ(
        "Query.comment (body, issue)",
        (one["comment"]["body"], one["comment"]["issue"]["id"]),
        ("Noted.", issue["id"]),
    )


@write(
    "linear",
    "mutation issueCreate(id) -> Query.issue",
    lin("IssueCreateInput.id", "The identifier in UUID v4 format."),
)
def linear_create_id(p: Probe) -> list[str]:
    wanted = str(uuid.uuid4())
    made = p.linear_issue(id=wanted)
    return differ("the created issue's id", made["id"], wanted) + differ(
        "Query.issue(id).id", p.read_issue(wanted)["id"], wanted
    )


@write(
    "linear",
    "mutation commentCreate(id) -> Query.comment",
    lin("CommentCreateInput.id", "The identifier in UUID v4 format."),
)
def linear_comment_id(p: Probe) -> list[str]:
    issue = p.linear_issue()
    wanted = str(uuid.uuid4())
    p.linear(
        "mutation($input: CommentCreateInput!) { commentCreate(input: $input) { success } }",
        input={"issueId": issue["id"], "body": "Chosen id.", "id": wanted},
    )
    got = p.linear("query($id: String!) { comment(id: $id) { id body } }", id=wanted)
    return differ("Query.comment(id)", got["comment"], {"id": wanted, "body": "Chosen id."})


@write(
    "linear",
    "mutation commentCreate(issueId: identifier) -> Issue.comments",
    lin("CommentCreateInput.issueId", "Can be a UUID or issue identifier (e.g., 'LIN-123')."),
)
def linear_comment_identifier(p: Probe) -> list[str]:
    issue = p.linear_issue()
    p.linear(
        "mutation($input: CommentCreateInput!) { commentCreate(input: $input) { success } }",
        input={"issueId": issue["identifier"], "body": "By identifier."},
    )
    got = [c["body"] for c in p.read_issue(issue["id"])["comments"]["nodes"]]
    return differ("Issue.comments bodies", got, ["By identifier."])


@write(
    "linear",
    "mutation commentCreate(parentId) -> Comment.parent",
    lin("CommentCreateInput.parentId", "The parent comment under which to nest a current comment."),
    lin("Comment.parent", "The parent comment under which the current comment is nested."),
)
def linear_comment_reply(p: Probe) -> list[str]:
    issue = p.linear_issue()
    query = (
        "mutation($input: CommentCreateInput!) { commentCreate(input: $input) { comment { id } } }"
    )
    first = p.linear(query, input={"issueId": issue["id"], "body": "First."})
    parent = first["commentCreate"]["comment"]["id"]
    second = p.linear(query, input={"issueId": issue["id"], "body": "Reply.", "parentId": parent})
    reply = second["commentCreate"]["comment"]["id"]
    got = {
        c["id"]: (c["parent"] or {}).get("id")
        for c in p.read_issue(issue["id"])["comments"]["nodes"]
    }
    return differ("Issue.comments parents", got, {parent: None, reply: parent})


def linear_label(add: bool, p: Probe) -> list[str]:
    labels = p.label_ids()
    made = p.linear_issue(labelIds=[labels["Bug"]])
    name = "issueAddLabel" if add else "issueRemoveLabel"
    label = labels["Feature" if add else "Bug"]
    p.linear(
        f"mutation($id: String!, $label: String!) {{ {name}(id: $id, labelId: $label) "
        "{ success } }",
        id=made["id"],
        label=label,
    )
    got = sorted(n["name"] for n in p.read_issue(made["id"])["labels"]["nodes"])
    return differ("Issue.labels", got, ["Bug", "Feature"] if add else [])


WRITES.append(
    Write(
        "linear",
        "mutation issueAddLabel -> Issue.labels",
        (
            lin("Mutation.issueAddLabel", "Adds a label to an issue."),
            lin("Issue.labels", "Labels associated with this issue."),
        ),
        partial(linear_label, True),
    )
)
WRITES.append(
    Write(
        "linear",
        "mutation issueRemoveLabel -> Issue.labels",
        (lin("Mutation.issueRemoveLabel", "Removes a label from an issue."),),
        partial(linear_label, False),
    )
)


# ----------------------------------------------------------------------------- running


def run_write(w: Write, probe: Probe) -> Check:
    """One check: its citations held to the evidence, then its write and reads."""
    problems = [p for p in (cite_problem(c) for c in w.cites) if p]
    try:
        found = w.step(probe)
    except Failed as exc:
        found = [str(exc)]
    except (
        httpx.HTTPError,
        subprocess.TimeoutExpired,
        AttributeError,
        KeyError,
        IndexError,
        TypeError,
        ValueError,
    ) as exc:
        found = [f"an answer the reads could not use: {type(exc).__name__}: {exc}"]
    evidence = f" (evidence: {w.cites[0]})" if w.cites else ""
    problems += [f"{p}{evidence}" for p in found]
    return Check(w.subject, tuple(problems))


def run_writes(writes: Iterable[Write], wrap: Wrap | None = None) -> list[tuple[Service, Check]]:
    """Every write in ``writes`` on one fresh world of the demo snapshot (its apps wrapped by
    ``wrap``, as tests break them)."""
    out: list[tuple[Service, Check]] = []
    with (
        tempfile.TemporaryDirectory(prefix="read-your-writes-") as tmp,
        serve_world(wrap=wrap) as served,
    ):
        probe = Probe(served, Path(tmp))
        try:
            for w in writes:
                out.append((w.service, run_write(w, probe)))
        finally:
            probe.close()
    return out


def _mine(gaps: list[KnownGap], checks: list[Check]) -> list[KnownGap]:
    """The gaps of a shared ``gaps.json`` that belong to this family: those whose subject
    pattern names one of its checks."""
    return [g for g in gaps if any(fnmatch.fnmatchcase(c.subject, g.subject) for c in checks)]


def reports(wrap: Wrap | None = None, only: Callable[[Write], bool] | None = None) -> list[Report]:
    """The family's report per service: every write of :data:`WRITES` (or those ``only``
    keeps) made and read back on a fresh fake world whose apps ``wrap`` may break."""
    chosen = [w for w in WRITES if only is None or only(w)]
    found: dict[Service, list[Check]] = {}
    for service, check in run_writes(chosen, wrap):
        found.setdefault(service, []).append(check)
    out: list[Report] = []
    for service in ("github", "slack", "linear"):
        if service not in found:
            continue
        directory = DIRS[service]
        checks = found[service]
        gaps = _mine(load_gaps(directory), checks)
        out.append(apply_gaps(service, FAMILY, load_source(directory), checks, gaps))
    return out
