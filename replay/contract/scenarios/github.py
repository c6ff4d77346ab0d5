"""GitHub scenarios with githubkit (REST and GraphQL) and git over smart HTTP.

Every scenario works in the sandbox repository on objects it creates itself (an issue, a
branch), so a recording of the real API and a run of the fake see the same values.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from functools import partial
from typing import Any

from githubkit import GitHub, Response, TokenAuthStrategy, UnauthAuthStrategy
from githubkit.exception import RequestFailed

from replay.base.gitrepo import clean_env
from replay.contract.recording import Raw
from replay.contract.scenarios.base import Ctx, scenario


def client(ctx: Ctx, token: str | None = "default") -> GitHub[Any]:
    """githubkit at the target; the viewer's login (unrecorded ``GET /user``) becomes an alias."""
    tok = ctx.target.github_token if token == "default" else token
    auth = TokenAuthStrategy(tok) if tok else UnauthAuthStrategy()
    gh: GitHub[Any] = GitHub(
        auth, base_url=ctx.target.github_url, http_cache=False, auto_retry=False
    )
    if tok and "<viewer>" not in ctx.norm.aliases.values():
        ctx.norm.alias(gh.rest.users.get_authenticated().parsed_data.login, "viewer")
    return gh


def names(ctx: Ctx) -> tuple[str, str]:
    owner, name = ctx.target.repo.split("/", 1)
    ctx.norm.alias(ctx.target.repo, "repo", in_text=True)
    ctx.norm.alias(owner, "owner")
    ctx.norm.alias(name, "repo-name")
    return owner, name


def call(ctx: Ctx, step: str, operation: str, fn: Callable[[], Response[Any, Any]]) -> Any:
    """Run one githubkit call, record it, and return its JSON (errors recorded, not raised)."""
    try:
        resp = fn()
        model: Any = getattr(resp, "_data_model", None)
    except RequestFailed as exc:
        resp, model = exc.response, None
    body = resp.json() if resp.content else None
    request = resp.raw_request
    ctx.rec.add(
        step,
        request.method,
        request.url.path + (f"?{request.url.query.decode()}" if request.url.query else ""),
        Raw(resp.status_code, dict(resp.headers), body),
        operation=operation,
        model=model,
    )
    return body


def follow(
    ctx: Ctx,
    gh: GitHub[Any],
    step: str,
    operation: str,
    page: Response[Any, Any],
    rel: str = "next",
) -> Any:
    """Fetch the ``rel`` URL of a page's ``Link`` header as a paging client does (Octokit,
    ``gh api --paginate``), parsed with the page's own githubkit model; record it like
    :func:`call`."""
    links = page.raw_response.links
    if rel not in links:
        raise RuntimeError(f"{step}: no rel={rel!r} in the Link header {links}")
    url = links[rel]["url"]
    model: Any = getattr(page, "_data_model", Any)
    return call(ctx, step, operation, lambda: gh.request("GET", url, response_model=model))


def graphql(ctx: Ctx, gh: GitHub[Any], step: str, query: str, variables: dict[str, Any]) -> Any:
    try:
        resp = gh.request("POST", "/graphql", json={"query": query, "variables": variables})
    except RequestFailed as exc:
        resp = exc.response
    body = resp.json()
    ctx.rec.add(
        step,
        "POST",
        resp.raw_request.url.path,
        Raw(resp.status_code, dict(resp.headers), body),
        operation="graphql " + _root_fields(query),
        query=query,
    )
    return body


def _root_fields(query: str) -> str:
    """``query repository`` or ``mutation addComment``: what a GraphQL document calls."""
    from graphql import FieldNode, OperationDefinitionNode, parse

    out = []
    for op in parse(query).definitions:
        if isinstance(op, OperationDefinitionNode):
            selected = op.selection_set.selections
            fields = [s.name.value for s in selected if isinstance(s, FieldNode)]
            out.append(f"{op.operation.value} {','.join(fields)}")
    return "; ".join(out)


def new_issue(ctx: Ctx, gh: GitHub[Any], step: str, title: str) -> Any:
    owner, name = names(ctx)
    return call(
        ctx,
        step,
        "issues.create",
        lambda: gh.rest.issues.create(owner, name, title=title, body="Filed by a contract test."),
    )


@scenario("github")
def issue_read_and_comment(ctx: Ctx) -> None:
    """Read a ticket and comment on it; list comments one per page (Link pagination); close."""
    owner, name = names(ctx)
    with client(ctx) as gh:
        issue = new_issue(ctx, gh, "create issue", "Contract: caret ranges on 0.x")
        number = issue["number"]
        call(ctx, "get issue", "issues.get", lambda: gh.rest.issues.get(owner, name, number))
        for i in (1, 2):
            call(
                ctx,
                f"comment {i}",
                "issues.create_comment",
                partial(gh.rest.issues.create_comment, owner, name, number, body=f"note {i}"),
            )
        call(
            ctx,
            "list comments page 1",
            "issues.list_comments",
            lambda: gh.rest.issues.list_comments(owner, name, number, per_page=1),
        )
        call(
            ctx,
            "close issue",
            "issues.update",
            lambda: gh.rest.issues.update(owner, name, number, state="closed"),
        )


def push_branch(ctx: Ctx, branch: str) -> None:
    """Clone the sandbox and push a branch with one new file, as an agent does with git."""
    token = ctx.target.github_token
    helper = f"!f() {{ echo username=x-access-token; echo password={token}; }}; f"
    base = ["git", "-c", f"credential.helper={helper}"]
    base += ["-c", "user.name=Contract", "-c", "user.email=contract@example.test"]
    env = clean_env({"GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "", "SSH_ASKPASS": ""})
    work = ctx.workdir / "clone"
    url = f"{ctx.target.git_url}/{ctx.target.repo}.git"

    def git(*args: str, cwd: str | None = None) -> None:
        done = subprocess.run(
            [*base, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
        )
        if done.returncode != 0:
            raise RuntimeError(f"git {args[0]} failed: {done.stderr.strip()}")

    git("clone", "-q", url, str(work))
    (work / f"contract-{ctx.run_id}.txt").write_text("pushed by a contract test\n")
    git("checkout", "-q", "-b", branch, cwd=str(work))
    git("add", ".", cwd=str(work))
    git("commit", "-q", "-m", "Contract test change", cwd=str(work))
    git("push", "-q", "origin", branch, cwd=str(work))


@scenario("github")
def pull_request_review_merge(ctx: Ctx) -> None:
    """Open a PR from a pushed branch, review it, merge it, read it back."""
    owner, name = names(ctx)
    branch = f"contract-{ctx.run_id}"
    ctx.norm.alias(branch, "branch", in_text=True)
    ctx.norm.alias(f"contract-{ctx.run_id}.txt", "file", in_text=True)
    push_branch(ctx, branch)
    with client(ctx) as gh:
        call(
            ctx,
            "get ref",
            "git.get_ref",
            lambda: gh.rest.git.get_ref(owner, name, f"heads/{branch}"),
        )
        pr = call(
            ctx,
            "create pull request",
            "pulls.create",
            lambda: gh.rest.pulls.create(
                owner, name, title="Contract: a change", head=branch, base="main", body="Test."
            ),
        )
        number = pr["number"]
        call(ctx, "get pull request", "pulls.get", lambda: gh.rest.pulls.get(owner, name, number))
        call(
            ctx,
            "list files",
            "pulls.list_files",
            lambda: gh.rest.pulls.list_files(owner, name, number),
        )
        call(
            ctx,
            "review",
            "pulls.create_review",
            lambda: gh.rest.pulls.create_review(
                owner, name, number, event="COMMENT", body="Looks fine."
            ),
        )
        call(
            ctx,
            "list reviews",
            "pulls.list_reviews",
            lambda: gh.rest.pulls.list_reviews(owner, name, number),
        )
        call(
            ctx,
            "merge",
            "pulls.merge",
            lambda: gh.rest.pulls.merge(owner, name, number, merge_method="squash"),
        )
        call(ctx, "get merged", "pulls.get", lambda: gh.rest.pulls.get(owner, name, number))


@scenario("github")
def search_issues(ctx: Ctx) -> None:
    """Search issues by a word in the title (the real index lags: poll on a live target)."""
    with client(ctx) as gh:
        word = f"zq{ctx.run_id}"
        ctx.norm.alias(word, "word", in_text=True)
        new_issue(ctx, gh, "create issue", f"Contract search {word}")
        q = f"repo:{ctx.target.repo} is:issue in:title {word}"
        deadline = time.monotonic() + (90 if ctx.target.kind == "real" else 0)
        while True:
            found = gh.rest.search.issues_and_pull_requests(q=q)
            if found.parsed_data.total_count or time.monotonic() > deadline:
                break
            time.sleep(5)
        call(
            ctx,
            "search",
            "search.issues_and_pull_requests",
            lambda: gh.rest.search.issues_and_pull_requests(q=q),
        )


ISSUE_QUERY = """
query($owner: String!, $name: String!, $number: Int!) {
  repository(owner: $owner, name: $name) {
    hasIssuesEnabled
    issue(number: $number) {
      id number title state body
      author { login }
      labels(first: 10) { nodes { name } }
      comments(first: 10) { totalCount nodes { body } }
    }
  }
}
"""

ADD_COMMENT = """
mutation($subject: ID!, $body: String!) {
  addComment(input: {subjectId: $subject, body: $body}) {
    commentEdge { node { body author { login } } }
  }
}
"""


@scenario("github")
def graphql_issue(ctx: Ctx) -> None:
    """gh-style GraphQL: read an issue, comment through addComment, ask for a missing repo."""
    owner, name = names(ctx)
    with client(ctx) as gh:
        issue = new_issue(ctx, gh, "create issue", "Contract: GraphQL read")
        found = graphql(
            ctx,
            gh,
            "read issue",
            ISSUE_QUERY,
            {"owner": owner, "name": name, "number": issue["number"]},
        )
        node = found["data"]["repository"]["issue"]["id"]
        graphql(ctx, gh, "add comment", ADD_COMMENT, {"subject": node, "body": "via GraphQL"})
        graphql(
            ctx,
            gh,
            "unknown repository",
            ISSUE_QUERY,
            {"owner": owner, "name": "no-such-repo-contract", "number": 1},
        )


@scenario("github")
def errors(ctx: Ctx) -> None:
    """Unknown object (404), validation error (422), no credentials (401), the rate limit."""
    owner, name = names(ctx)
    ctx.norm.alias(f"no-such-branch-{ctx.run_id}", "missing-branch", in_text=True)
    with client(ctx) as gh:
        call(ctx, "unknown issue", "issues.get", lambda: gh.rest.issues.get(owner, name, 987654))
        call(
            ctx,
            "empty title",
            "issues.create",
            lambda: gh.rest.issues.create(owner, name, title=""),
        )
        call(
            ctx,
            "unknown head",
            "pulls.create",
            lambda: gh.rest.pulls.create(
                owner, name, title="x", head=f"no-such-branch-{ctx.run_id}", base="main"
            ),
        )
        call(ctx, "rate limit", "rate_limit.get", lambda: gh.rest.rate_limit.get())
    with client(ctx, token=None) as anon:
        call(
            ctx,
            "no credentials",
            "users.get_authenticated",
            lambda: anon.rest.users.get_authenticated(),
        )


@scenario("github")
def issue_history(ctx: Ctx) -> None:
    """An issue's history: label, rename, close, reopen; then its events (a page of two, the
    next page through the first's ``Link`` header, then all), its timeline, one event by id,
    and the repository's newest events.

    ``bug`` is one of the labels GitHub gives every new repository (and the demo snapshot's
    repository has it); adding a missing label would create it anyway. The ``last`` page in
    the repository list's ``Link`` counts the repository's whole history: a real sandbox's
    differs from the demo snapshot's, so a live recording needs a ``Gap`` for it."""
    owner, name = names(ctx)
    with client(ctx) as gh:
        issue = new_issue(ctx, gh, "create issue", "Contract: history")
        number = issue["number"]
        call(
            ctx,
            "add label",
            "issues.add_labels",
            lambda: gh.rest.issues.add_labels(owner, name, number, labels=["bug"]),
        )
        call(
            ctx,
            "rename",
            "issues.update",
            lambda: gh.rest.issues.update(owner, name, number, title="Contract: history, renamed"),
        )
        call(
            ctx,
            "close",
            "issues.update",
            lambda: gh.rest.issues.update(
                owner, name, number, state="closed", state_reason="not_planned"
            ),
        )
        call(
            ctx,
            "reopen",
            "issues.update",
            lambda: gh.rest.issues.update(owner, name, number, state="open"),
        )
        pages: list[Response[Any, Any]] = []

        def events_page_1() -> Response[Any, Any]:
            pages.append(gh.rest.issues.list_events(owner, name, number, per_page=2))
            return pages[0]

        first = call(ctx, "list events page 1", "issues.list_events", events_page_1)
        follow(ctx, gh, "list events page 2", "issues.list_events", pages[0])
        call(
            ctx,
            "list all events",
            "issues.list_events",
            lambda: gh.rest.issues.list_events(owner, name, number),
        )
        call(
            ctx,
            "timeline",
            "issues.list_events_for_timeline",
            lambda: gh.rest.issues.list_events_for_timeline(owner, name, number),
        )
        renamed = next(e for e in first if e["event"] == "renamed")
        call(
            ctx,
            "get event",
            "issues.get_event",
            lambda: gh.rest.issues.get_event(owner, name, renamed["id"]),
        )
        call(
            ctx,
            "list repository events",
            "issues.list_events_for_repo",
            lambda: gh.rest.issues.list_events_for_repo(owner, name, per_page=3),
        )


@scenario("github")
def repository_reads(ctx: Ctx) -> None:
    """What agents read most besides issues: the repository, its branches and commits, a
    file's contents, the pull request and issue lists, labels, and a commit's checks and
    statuses (after setting one, as CI does).

    The scenario pushes its own branch, so the file, its commit and the status it sets are
    its own on any target; the lists ask for one item per page (their ``Link`` headers are
    checked, not their length)."""
    owner, name = names(ctx)
    branch = f"contract-reads-{ctx.run_id}"
    ctx.norm.alias(branch, "branch", in_text=True)
    ctx.norm.alias(f"contract-{ctx.run_id}.txt", "file", in_text=True)
    push_branch(ctx, branch)
    with client(ctx) as gh:
        call(ctx, "get repository", "repos.get", lambda: gh.rest.repos.get(owner, name))
        call(
            ctx,
            "list branches",
            "repos.list_branches",
            lambda: gh.rest.repos.list_branches(owner, name, per_page=1),
        )
        head = call(
            ctx,
            "get branch",
            "repos.get_branch",
            lambda: gh.rest.repos.get_branch(owner, name, branch),
        )
        sha = head["commit"]["sha"]
        call(
            ctx,
            "list commits",
            "repos.list_commits",
            lambda: gh.rest.repos.list_commits(owner, name, sha=branch, per_page=1),
        )
        call(
            ctx,
            "get commit",
            "repos.get_commit",
            lambda: gh.rest.repos.get_commit(owner, name, sha),
        )
        call(
            ctx,
            "get contents",
            "repos.get_content",
            lambda: gh.rest.repos.get_content(
                owner, name, f"contract-{ctx.run_id}.txt", ref=branch
            ),
        )
        call(
            ctx,
            "list pull requests",
            "pulls.list",
            lambda: gh.rest.pulls.list(owner, name, state="all", per_page=1),
        )
        call(
            ctx,
            "list issues",
            "issues.list_for_repo",
            lambda: gh.rest.issues.list_for_repo(owner, name, state="all", per_page=1),
        )
        call(
            ctx,
            "list labels",
            "issues.list_labels_for_repo",
            lambda: gh.rest.issues.list_labels_for_repo(owner, name, per_page=1),
        )
        call(
            ctx,
            "create status",
            "repos.create_commit_status",
            lambda: gh.rest.repos.create_commit_status(
                owner, name, sha, state="success", context="contract/ci", description="ok"
            ),
        )
        call(
            ctx,
            "list statuses",
            "repos.list_commit_statuses_for_ref",
            lambda: gh.rest.repos.list_commit_statuses_for_ref(owner, name, sha),
        )
        call(
            ctx,
            "combined status",
            "repos.get_combined_status_for_ref",
            lambda: gh.rest.repos.get_combined_status_for_ref(owner, name, sha),
        )
        call(
            ctx,
            "list check runs",
            "checks.list_for_ref",
            lambda: gh.rest.checks.list_for_ref(owner, name, sha),
        )
