"""Every route that moves a branch records one ``github.branch.moved``, whatever the route.

Each route is taken with the real clients an agent has (git over smart HTTP; gh 2.23: its
REST ``gh api`` calls, ``gh pr merge`` and ``gh api graphql``), and each records, beside its
own event (``git.push``, ``github.contents.updated``...), the one event a rule about the
branch names (issue 33: the fix written onto the default branch through the contents API
was a ``github.contents.updated`` that ``no-push-to-main``, matching ``git.push``, never saw).
Comments likewise record ``github.comment.posted`` however they are made.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from fakes.github.gitstore import ZERO
from tests.fakes.github.conftest import REPO, GhServed, clone, commit_file, events, gh, git

DEFAULT = "main"


def moves(ghs: GhServed) -> list[dict[str, Any]]:
    return [e["data"] for e in events(ghs.served, "github.branch.moved")]


def kinds(ghs: GhServed) -> list[str]:
    return [e["kind"] for e in events(ghs.served)]


def head(ghs: GhServed, branch: str = DEFAULT) -> str:
    return ghs.served.backend.git.heads(REPO)[f"refs/heads/{branch}"]


def graphql(ghs: GhServed, query: str, *variables: str, ok: bool = True) -> dict[str, Any]:
    """``gh api graphql`` with ``-f``/``-F`` variables; the answer's JSON."""
    args = ["api", "graphql", "-f", f"query={query}"]
    for v in variables:
        args += ["-F" if v.startswith(("force=", "number=")) else "-f", v]
    done = gh(ghs, *args, ok=ok)
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer


def blob(ghs: GhServed, path: str, ref: str = DEFAULT) -> str:
    found = json.loads(gh(ghs, "api", f"repos/{REPO}/contents/{path}?ref={ref}").stdout)
    return str(found["sha"])


def pushed_branch(ghs: GhServed, tmp_path: Path, name: str = "fix-add") -> str:
    """A branch with the fix, pushed with git; its tip."""
    work = clone(ghs.served, tmp_path)
    git(ghs.served, work, "checkout", "-q", "-b", name)
    tip = commit_file(ghs.served, work, "lib.py", "def add(a, b):\n    return a + b\n", "Fix")
    git(ghs.served, work, "push", "-q", "origin", name)
    return tip


def open_pull(ghs: GhServed) -> int:
    """A pull request of ``fix-add`` into main (gh api: ``gh pr create`` wants a clone)."""
    made = gh(
        ghs,
        *("api", "-X", "POST", f"repos/{REPO}/pulls"),
        *("-f", "title=Fix", "-f", "head=fix-add", "-f", "base=main", "-f", "body=Fixes #1"),
    )
    return int(json.loads(made.stdout)["number"])


def moved(
    before: str, after: str, via: str, branch: str = DEFAULT, **flags: bool
) -> dict[str, Any]:
    """The ``github.branch.moved`` data for a move of ``branch``."""
    return {
        "repo": REPO,
        "branch": branch,
        "from": before,
        "to": after,
        "forced": flags.get("forced", False),
        "created": before == ZERO,
        "deleted": after == ZERO,
        "default": branch == DEFAULT,
        "via": via,
    }


def test_git_push_creates_moves_forces_and_deletes_branches(ghs: GhServed, tmp_path: Path) -> None:
    base = head(ghs)
    work = clone(ghs.served, tmp_path)
    first = commit_file(ghs.served, work, "x.txt", "x\n", "X")
    git(ghs.served, work, "push", "-q", "origin", "HEAD:main", "HEAD:refs/heads/side")
    git(ghs.served, work, "reset", "-q", "--hard", base)
    other = commit_file(ghs.served, work, "y.txt", "y\n", "Y")
    git(ghs.served, work, "push", "-q", "--force", "origin", "HEAD:side")
    git(ghs.served, work, "push", "-q", "origin", "--delete", "side")
    assert moves(ghs) == [
        moved(base, first, "push"),
        moved(ZERO, first, "push", "side"),
        moved(first, other, "push", "side", forced=True),
        moved(other, ZERO, "push", "side"),
    ]
    assert kinds(ghs).count("git.push") == 4  # the route's own events stay


def test_the_contents_api_put_and_delete_move_the_branch(ghs: GhServed) -> None:
    base = head(ghs)
    fixed = base64.b64encode(b"def add(a, b):\n    return a + b\n").decode()
    written = json.loads(
        gh(
            ghs,
            *("api", "-X", "PUT", f"repos/{REPO}/contents/lib.py"),
            *("-f", "message=Fix add", "-f", f"content={fixed}"),
            *("-f", f"sha={blob(ghs, 'lib.py')}"),
        ).stdout
    )
    after_put = written["commit"]["sha"]
    assert head(ghs) == after_put
    gone = json.loads(
        gh(
            ghs,
            *("api", "-X", "DELETE", f"repos/{REPO}/contents/lib.py"),
            *("-f", "message=Drop lib", "-f", f"sha={blob(ghs, 'lib.py')}"),
        ).stdout
    )
    assert gone["content"] is None
    assert gone["commit"]["parents"][0]["sha"] == after_put
    assert ghs.served.backend.git.entry(REPO, head(ghs), "lib.py") is None
    assert moves(ghs) == [
        moved(base, after_put, "contents"),
        moved(after_put, gone["commit"]["sha"], "contents"),
    ]
    assert kinds(ghs) == [
        "github.contents.updated",
        "github.branch.moved",
        "github.contents.deleted",
        "github.branch.moved",
    ]


def test_a_contents_delete_is_answered_as_github_answers_it(ghs: GhServed) -> None:
    stale = gh(
        ghs,
        *("api", "-X", "DELETE", f"repos/{REPO}/contents/lib.py"),
        *("-f", "message=Drop", "-f", f"sha={'0' * 40}"),
        ok=False,
    )
    assert "does not match" in stale.stderr and "409" in stale.stderr
    missing = gh(
        ghs,
        *("api", "-X", "DELETE", f"repos/{REPO}/contents/nothing.txt"),
        *("-f", "message=Drop", "-f", f"sha={'0' * 40}"),
        ok=False,
    )
    assert "Not Found" in missing.stderr and "404" in missing.stderr
    assert moves(ghs) == []


def test_merging_through_rest_moves_the_base_and_closes_the_pull_request(
    ghs: GhServed, tmp_path: Path
) -> None:
    base = head(ghs)
    tip = pushed_branch(ghs, tmp_path)
    pr = json.loads(
        gh(
            ghs,
            *("api", "-X", "POST", f"repos/{REPO}/pulls"),
            *("-f", "title=Fix", "-f", "head=fix-add", "-f", "base=main"),
        ).stdout
    )
    merged = json.loads(
        gh(ghs, "api", "-X", "PUT", f"repos/{REPO}/pulls/{pr['number']}/merge").stdout
    )
    assert merged["merged"] is True
    assert moves(ghs) == [
        moved(ZERO, tip, "push", "fix-add"),
        moved(base, merged["sha"], "merge"),
    ]
    (closed,) = [e for e in events(ghs.served, "github.pull_request.updated")]
    assert closed["data"]["changes"] == {"state": {"from": "open", "to": "closed"}}


def test_gh_pr_merge_through_graphql_moves_the_base(ghs: GhServed, tmp_path: Path) -> None:
    base = head(ghs)
    pushed_branch(ghs, tmp_path)
    open_pull(ghs)
    gh(ghs, "pr", "merge", "3", "--squash")
    after = head(ghs)
    assert after != base
    assert moves(ghs)[-1] == moved(base, after, "merge")
    assert kinds(ghs)[-4:] == [
        "github.pull_request.merged",
        "github.pull_request.updated",
        "github.branch.moved",
        "github.issue.updated",  # "Fixes #1" closed the issue
    ]


def test_the_rest_refs_api_creates_moves_and_deletes(ghs: GhServed, tmp_path: Path) -> None:
    base = head(ghs)
    tip = pushed_branch(ghs, tmp_path)
    gh(
        ghs,
        "api",
        "-X",
        "POST",
        f"repos/{REPO}/git/refs",
        "-f",
        "ref=refs/heads/x",
        "-f",
        f"sha={tip}",
    )
    gh(ghs, "api", "-X", "PATCH", f"repos/{REPO}/git/refs/heads/main", "-f", f"sha={tip}")
    gh(ghs, "api", "-X", "DELETE", f"repos/{REPO}/git/refs/heads/x")
    assert moves(ghs)[1:] == [
        moved(ZERO, tip, "refs", "x"),
        moved(base, tip, "refs"),
        moved(tip, ZERO, "refs", "x"),
    ]


REPOSITORY = """query { repository(owner: "acme", name: "tiny") {
  id ref(qualifiedName: "refs/heads/main") { id target { oid } } } }"""
COMMIT = """mutation(
  $branch: String!, $head: GitObjectID!, $path: String!, $contents: Base64String!
) {
  createCommitOnBranch(input: {
    branch: {repositoryNameWithOwner: "acme/tiny", branchName: $branch},
    expectedHeadOid: $head,
    message: {headline: "Fix add", body: "Straight onto the branch."},
    fileChanges: {
      additions: [{path: $path, contents: $contents}], deletions: [{path: "test_lib.py"}]
    }
  }) { commit { oid messageHeadline } ref { name target { oid } } } }"""


def test_create_commit_on_branch_moves_the_branch(ghs: GhServed) -> None:
    base = head(ghs)
    fixed = base64.b64encode(b"def add(a, b):\n    return a + b\n").decode()
    answer = graphql(ghs, COMMIT, "branch=main", f"head={base}", "path=lib.py", f"contents={fixed}")
    made = answer["data"]["createCommitOnBranch"]
    sha = made["commit"]["oid"]
    assert made["commit"]["messageHeadline"] == "Fix add"
    assert made["ref"] == {"name": "main", "target": {"oid": sha}}
    git = ghs.served.backend.git
    assert git.read_file(REPO, sha, "lib.py") == b"def add(a, b):\n    return a + b\n"
    assert git.entry(REPO, sha, "test_lib.py") is None
    assert git.commit(REPO, sha).parents == [base]
    assert moves(ghs) == [moved(base, sha, "commit")]
    (created,) = events(ghs.served, "github.commit.created")
    assert created["data"]["added"] == ["lib.py"] and created["data"]["deleted"] == ["test_lib.py"]


def test_create_commit_on_branch_refuses_a_stale_head_and_a_missing_deletion(
    ghs: GhServed,
) -> None:
    stale = "1" * 40
    answer = graphql(ghs, COMMIT, "branch=main", f"head={stale}", "path=a", "contents=", ok=False)
    (error,) = answer["errors"]
    assert error["type"] == "STALE_DATA"
    assert error["message"] == (
        f'Expected branch to point to "{stale}" but it did not.  Pull and try again.'
    )
    base = head(ghs)
    gh(ghs, "api", "-X", "DELETE", f"repos/{REPO}/contents/test_lib.py", "-f", "message=x",
       "-f", f"sha={blob(ghs, 'test_lib.py')}")  # fmt: skip
    now = head(ghs)
    answer = graphql(ghs, COMMIT, "branch=main", f"head={now}", "path=a", "contents=", ok=False)
    (error,) = answer["errors"]
    assert error["type"] == "UNPROCESSABLE"
    assert error["message"] == (
        f"A path was requested for deletion which does not exist as of commit oid `{now}`."
    )
    assert head(ghs) == now != base
    assert [m["via"] for m in moves(ghs)] == ["contents"]


def test_graphql_ref_mutations_move_branches(ghs: GhServed, tmp_path: Path) -> None:
    base = head(ghs)
    tip = pushed_branch(ghs, tmp_path)
    repo = graphql(ghs, REPOSITORY)["data"]["repository"]
    created = graphql(
        ghs,
        "mutation($repo: ID!, $oid: GitObjectID!) { createRef(input: {repositoryId: $repo,"
        ' name: "refs/heads/x", oid: $oid}) { ref { id name } } }',
        f"repo={repo['id']}",
        f"oid={tip}",
    )["data"]["createRef"]["ref"]
    assert created["name"] == "x"
    graphql(
        ghs,
        "mutation($ref: ID!, $oid: GitObjectID!) { updateRef(input: {refId: $ref, oid: $oid})"
        " { ref { target { oid } } } }",
        f"ref={repo['ref']['id']}",
        f"oid={tip}",
    )
    graphql(
        ghs,
        "mutation($ref: ID!) { deleteRef(input: {refId: $ref}) { clientMutationId } }",
        f"ref={created['id']}",
    )
    graphql(
        ghs,
        "mutation($repo: ID!, $base: GitObjectID!, $tip: GitObjectID!) { updateRefs(input: {"
        ' repositoryId: $repo, refUpdates: [{name: "refs/heads/main", beforeOid: $tip,'
        ' afterOid: $base, force: true}, {name: "refs/heads/y", afterOid: $tip}]})'
        " { clientMutationId } }",
        f"repo={repo['id']}",
        f"base={base}",
        f"tip={tip}",
    )
    assert moves(ghs)[1:] == [
        moved(ZERO, tip, "refs", "x"),
        moved(base, tip, "refs"),
        moved(tip, ZERO, "refs", "x"),
        moved(tip, base, "refs", forced=True),
        moved(ZERO, tip, "refs", "y"),
    ]


def test_update_refs_is_all_or_nothing(ghs: GhServed, tmp_path: Path) -> None:
    base = head(ghs)
    tip = pushed_branch(ghs, tmp_path)
    repo = graphql(ghs, REPOSITORY)["data"]["repository"]
    refused = graphql(
        ghs,
        "mutation($repo: ID!, $base: GitObjectID!, $tip: GitObjectID!) { updateRefs(input: {"
        ' repositoryId: $repo, refUpdates: [{name: "refs/heads/main", afterOid: $tip},'
        ' {name: "refs/heads/fix-add", beforeOid: $base, afterOid: $base}]})'
        " { clientMutationId } }",
        f"repo={repo['id']}",
        f"base={base}",
        f"tip={tip}",
        ok=False,
    )
    assert refused["errors"][0]["type"] == "STALE_DATA"
    assert head(ghs) == base
    assert [m["via"] for m in moves(ghs)] == ["push"]


def test_every_way_to_comment_records_one_comment_posted(ghs: GhServed, tmp_path: Path) -> None:
    pushed_branch(ghs, tmp_path)
    open_pull(ghs)
    gh(ghs, "issue", "comment", "1", "--body", "via graphql")
    gh(ghs, "api", "-X", "POST", f"repos/{REPO}/issues/1/comments", "-f", "body=via rest")
    gh(ghs, "pr", "review", "3", "--comment", "--body", "via a review")
    gh(
        ghs,
        *("api", "-X", "POST", f"repos/{REPO}/pulls/3/comments", "-f", "body=on a line"),
        *("-f", "path=lib.py", "-F", "line=2", "-f", "side=RIGHT"),
        *("-f", f"commit_id={head(ghs, 'fix-add')}"),
    )
    posted = [
        (e["data"]["number"], e["data"]["body"], e["data"]["via"], e["data"]["pull_request"])
        for e in events(ghs.served, "github.comment.posted")
    ]
    assert posted == [
        (1, "via graphql", "issue_comment", False),
        (1, "via rest", "issue_comment", False),
        (3, "via a review", "review", True),
        (3, "on a line", "review_comment", True),
    ]
