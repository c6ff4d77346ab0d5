"""REST details around the objects: GitHub's headers, the Enterprise paths, authentication on
every endpoint, filters, raw files, API versions, merge methods, reset and the state dump.

githubkit drives everything it has a method for; plain httpx is used only where no SDK call
exists (raw files, the control plane, a request without any SDK around it)."""

from __future__ import annotations

import base64
from datetime import datetime
from pathlib import Path

import httpx
import pytest
from githubkit.exception import RequestFailed

from fakes.github.models import CheckRun, CommitStatus, node_id, parse_node_id
from tests.fakes.github.conftest import (
    GITHUB,
    REPO,
    TOKEN,
    Served,
    build,
    checked,
    client,
    clone,
    commit_file,
    events,
    git,
    github_world,
    serve,
)
from tests.serving import LOOPBACK_TIMEOUT

OWNER, NAME = REPO.split("/")
AUTH = {"Authorization": f"token {TOKEN}"}

PROTECTED = [
    ("GET", "/"),
    ("GET", "/user"),
    ("GET", "/users/alice"),
    ("GET", f"/repos/{REPO}"),
    ("GET", f"/repos/{REPO}/readme"),
    ("GET", f"/repos/{REPO}/contents/lib.py"),
    ("PUT", f"/repos/{REPO}/contents/x.txt"),
    ("GET", f"/repos/{REPO}/branches"),
    ("GET", f"/repos/{REPO}/git/ref/heads/main"),
    ("GET", f"/repos/{REPO}/commits"),
    ("GET", f"/repos/{REPO}/issues"),
    ("POST", f"/repos/{REPO}/issues"),
    ("GET", f"/repos/{REPO}/issues/1"),
    ("PATCH", f"/repos/{REPO}/issues/1"),
    ("GET", f"/repos/{REPO}/issues/1/comments"),
    ("POST", f"/repos/{REPO}/issues/1/comments"),
    ("GET", f"/repos/{REPO}/pulls"),
    ("POST", f"/repos/{REPO}/pulls"),
    ("PUT", f"/repos/{REPO}/pulls/1/merge"),
    ("GET", f"/repos/{REPO}/commits/main/status"),
    ("GET", f"/repos/{REPO}/commits/main/check-runs"),
    ("GET", "/search/issues?q=bug"),
    ("GET", f"/api/v3/repos/{REPO}/issues/1"),
    ("GET", f"/raw/{REPO}/main/lib.py"),
]


def test_every_endpoint_needs_a_token(served: Served) -> None:
    with httpx.Client(timeout=LOOPBACK_TIMEOUT, base_url=served.url) as http:
        for method, path in PROTECTED:
            resp = http.request(method, path, json={"title": "x", "body": "x"})
            assert resp.status_code == 401, (method, path)
            assert resp.json() == {
                "message": "Requires authentication",
                "documentation_url": "https://docs.github.com/rest",
                "status": "401",
            }
        git_path = http.get(f"/{REPO}.git/info/refs", params={"service": "git-upload-pack"})
        assert git_path.status_code == 401
        assert git_path.headers["www-authenticate"] == 'Basic realm="GitHub"'
    assert events(served) == []


def test_root_and_headers_as_github_sends_them(served: Served) -> None:
    with client(served) as gh:
        resp = gh.rest.meta.root()
        checked(resp)
    assert resp.headers["x-oauth-scopes"] == "repo, read:org, workflow"
    assert resp.headers["x-github-media-type"] == "github.v3; format=json"
    assert resp.headers["x-github-api-version-selected"] == "2026-03-10"
    assert int(resp.headers["x-ratelimit-limit"]) == 5000
    assert int(resp.headers["x-ratelimit-remaining"]) < 5000
    assert resp.headers["content-type"] == "application/json; charset=utf-8"
    with httpx.Client(timeout=LOOPBACK_TIMEOUT, base_url=served.url, headers=AUTH) as http:
        missing = http.get("/no/such/endpoint")
        assert missing.status_code == 404 and missing.json()["message"] == "Not Found"
        assert missing.headers["x-ratelimit-resource"] == "core"


def test_enterprise_paths_serve_the_same_world(served: Served) -> None:
    gh = client(served)
    ghe = gh.__class__(gh.auth, base_url=f"{served.url}/api/v3/", http_cache=False)
    with gh, ghe:
        root = checked(ghe.rest.meta.root())
        assert root.current_user_url == f"{served.url}/api/v3/user"
        comment = checked(ghe.rest.issues.create_comment(OWNER, NAME, 2, body="via GHE paths"))
        seen = checked(gh.rest.issues.list_comments(OWNER, NAME, 2))
        assert [c.id for c in seen] == [comment.id]
        assert checked(ghe.rest.users.get_authenticated()).login == "agent"


def test_api_versions_choose_the_field_set(served: Served) -> None:
    with httpx.Client(timeout=LOOPBACK_TIMEOUT, base_url=served.url, headers=AUTH) as http:
        old = http.get(f"/repos/{REPO}/issues/2")
        new = http.get(f"/repos/{REPO}/issues/2", headers={"X-GitHub-Api-Version": "2026-03-10"})
    assert old.headers["x-github-api-version-selected"] == "2022-11-28"
    assert old.json()["assignee"]["login"] == "alice"
    assert "assignee" not in new.json()
    assert [u["login"] for u in new.json()["assignees"]] == ["alice"]


def test_issue_list_filters(served: Served) -> None:
    with client(served) as gh:
        checked(gh.rest.issues.create(OWNER, NAME, title="Third", labels=["bug", "docs"]))

        def numbers(**filters: object) -> list[int]:
            resp = gh.rest.issues.list_for_repo(OWNER, NAME, **filters)  # type: ignore[arg-type]
            return [i.number for i in checked(resp)]

        assert numbers() == [3, 2, 1]
        assert numbers(direction="asc") == [1, 2, 3]
        assert numbers(labels="docs") == [3, 2]
        assert numbers(labels="bug,docs") == [3]
        assert numbers(assignee="alice") == [2]
        assert numbers(assignee="none") == [3, 1]
        assert numbers(creator="bob") == [2]
        assert numbers(creator="agent") == [3]
        assert numbers(since=datetime.fromisoformat("2026-03-11T01:00:00+00:00")) == [3, 2]
        assert numbers(state="closed") == []
        with pytest.raises(RequestFailed) as bad:
            gh.rest.issues.list_for_repo(OWNER, NAME, state="weird")  # type: ignore[arg-type]
        assert bad.value.response.status_code == 422
        found = checked(gh.rest.search.issues_and_pull_requests(q="author:bob is:open README"))
        assert [i.number for i in found.items] == [2]


def test_raw_files_on_their_host_and_under_raw(served: Served) -> None:
    with httpx.Client(timeout=LOOPBACK_TIMEOUT, base_url=served.url, headers=AUTH) as http:
        on_host = http.get(f"/{REPO}/main/lib.py", headers={"Host": "raw.githubusercontent.com"})
        assert on_host.status_code == 200 and on_host.text.endswith("return a - b\n")
        enterprise = http.get(f"/raw/{REPO}/main/test_lib.py")
        assert enterprise.status_code == 200 and "def test_zero" in enterprise.text
        assert http.get(f"/raw/{REPO}/main/nope.py").status_code == 404


def test_merge_methods_and_conflicts(served: Served, tmp_path: Path) -> None:
    work = clone(served, tmp_path)
    git(served, work, "checkout", "-q", "-b", "one")
    commit_file(served, work, "lib.py", "def add(a, b):\n    return a + b\n", "Fix add")
    commit_file(served, work, "more.txt", "m\n", "More")
    git(served, work, "push", "-q", "origin", "one")
    git(served, work, "checkout", "-q", "-b", "two", "origin/main")
    commit_file(served, work, "lib.py", "def add(a, b):\n    return b + a\n", "Other fix")
    git(served, work, "push", "-q", "origin", "two")
    with client(served) as gh:
        first = checked(gh.rest.pulls.create(OWNER, NAME, title="one", head="one", base="main"))
        second = checked(gh.rest.pulls.create(OWNER, NAME, title="two", head="two", base="main"))
        merged = checked(gh.rest.pulls.merge(OWNER, NAME, first.number, merge_method="rebase"))
        log = checked(gh.rest.repos.list_commits(OWNER, NAME, per_page=3))
        assert [c.commit.message for c in log] == ["More", "Fix add", "Add tests"]
        assert log[0].sha == merged.sha and len(log[0].parents) == 1
        view = checked(gh.rest.pulls.get(OWNER, NAME, second.number))
        assert view.mergeable is False and view.mergeable_state == "dirty"
        with pytest.raises(RequestFailed) as conflict:
            gh.rest.pulls.merge(OWNER, NAME, second.number)
        assert conflict.value.response.status_code == 405
        assert conflict.value.response.json()["message"] == "Pull Request is not mergeable"
        with pytest.raises(RequestFailed) as stale:
            gh.rest.pulls.merge(OWNER, NAME, second.number, sha="0" * 40)
        assert stale.value.response.status_code == 409
        closed = checked(gh.rest.pulls.update(OWNER, NAME, second.number, state="closed"))
        assert closed.state == "closed" and not closed.merged
    merges = events(served, "github.pull_request.merged")
    assert [(m["data"]["number"], m["data"]["method"]) for m in merges] == [(3, "rebase")]


def test_reset_and_state_dump(served: Served) -> None:
    with client(served) as gh:
        checked(gh.rest.issues.create(OWNER, NAME, title="temporary"))
        content = base64.b64encode(b"x\n").decode()
        checked(
            gh.rest.repos.create_or_update_file_contents(
                OWNER, NAME, "x.txt", message="x", content=content
            )
        )
    with httpx.Client(timeout=LOOPBACK_TIMEOUT, base_url=served.url) as http:
        state = http.get("/_replay/state").json()["github"]
        assert [i["title"] for i in state["issues"]][-1] == "temporary"
        # The issue, the file, and main moved by the file's commit.
        assert [e["kind"] for e in events(served)] == [
            "github.issue.opened",
            "github.contents.updated",
            "github.branch.moved",
        ]
        assert http.post("/_replay/reset").json() == {"ok": True}
        after = http.get("/_replay/state").json()["github"]
    assert [i["number"] for i in after["issues"]] == [1, 2]
    assert events(served) == []
    with client(served) as gh:
        with pytest.raises(RequestFailed):
            gh.rest.issues.get(OWNER, NAME, 3)
        with pytest.raises(RequestFailed):
            gh.rest.repos.get_content(OWNER, NAME, "x.txt")
        again = checked(gh.rest.issues.create(OWNER, NAME, title="numbering restarts"))
        assert again.number == 3


@pytest.fixture(scope="module")
def open_pr_snapshot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The test world plus a pull request open at T, reviewed before and after T."""
    world = github_world()
    world["github"]["pulls"].append(
        {
            "repo": REPO,
            "number": 5,
            "id": 105,
            "title": "Test add()",
            "body": "Adds a test",
            "state": "open",
            "author": "bob",
            "head_ref": "add-tests",
            "base_ref": "main",
            "head_sha": "@commit:Add tests",
            "base_sha": "@commit:Initial commit",
            "created_at": "2026-03-06T00:00:00Z",
            "reviews": [
                {
                    "id": 501,
                    "author": "alice",
                    "state": "APPROVED",
                    "commit_id": "@commit:Add tests",
                    "submitted_at": "2026-03-07T00:00:00Z",
                },
                {
                    "id": 502,
                    "author": "alice",
                    "state": "COMMENTED",
                    "body": "after T",
                    "commit_id": "@commit:Add tests",
                    "submitted_at": "2026-03-13T00:00:00Z",
                },
            ],
        }
    )
    return build(world, tmp_path_factory.mktemp("open-pr"))


def test_a_pull_request_open_at_t_has_its_branch(open_pr_snapshot: Path, tmp_path: Path) -> None:
    with serve(open_pr_snapshot) as served, client(served) as gh:
        pr = checked(gh.rest.pulls.get(OWNER, NAME, 5))
        branch = checked(gh.rest.repos.get_branch(OWNER, NAME, "add-tests"))
        assert pr.head.sha == branch.commit.sha and pr.mergeable is True
        assert pr.commits == 1 and pr.changed_files == 1
        assert [f.filename for f in checked(gh.rest.pulls.list_files(OWNER, NAME, 5))] == [
            "test_lib.py"
        ]
        reviews = checked(gh.rest.pulls.list_reviews(OWNER, NAME, 5))
        assert [(r.id, r.state) for r in reviews] == [(501, "APPROVED")]
        refs = git(served, tmp_path, "ls-remote", f"{GITHUB}{REPO}.git").stdout
        assert f"{pr.head.sha}\trefs/heads/add-tests" in refs
        assert checked(gh.rest.issues.create(OWNER, NAME, title="next")).number == 6


def test_global_ids_are_githubs_legacy_format() -> None:
    # Known IDs from github.com: user 1 (mojombo), and the legacy shapes of issues and PRs.
    assert node_id("User", 1) == "MDQ6VXNlcjE="
    assert node_id("Issue", 1) == "MDU6SXNzdWUx"
    assert node_id("PullRequest", 1) == "MDExOlB1bGxSZXF1ZXN0MQ=="
    for kind, n in [("IssueComment", 1001), ("Repository", 10), ("PullRequestReview", 7)]:
        assert parse_node_id(node_id(kind, n)) == (kind, n)
    for bad in ["", "not base64!", "MDQ6VXNlcg==", node_id("User", 1)[:-2]]:
        with pytest.raises(ValueError):
            parse_node_id(bad)


def test_statuses_and_check_runs_read_as_github_shapes(served: Served) -> None:
    # Snapshots carry no CI results yet; rows put straight into the state stand in for them.
    at = datetime.fromisoformat("2026-03-11T10:00:00+00:00")
    with served.world.session() as s:
        repo = served.backend.repos.get(s, REPO)
        sha = served.backend.repos.resolve(s, repo, "main")
        alice = served.backend.repos.user(s, "alice")
        s.add_all(
            [
                CommitStatus(repo_id=repo.id, sha=sha, state="pending", context="ci/test",
                             creator=alice, created_at=at, updated_at=at),
                CommitStatus(repo_id=repo.id, sha=sha, state="success", context="ci/test",
                             target_url="https://ci.example/1", creator=alice,
                             created_at=at, updated_at=at),
                CommitStatus(repo_id=repo.id, sha=sha, state="success", context="lint",
                             creator=alice, created_at=at, updated_at=at),
                CheckRun(repo_id=repo.id, head_sha=sha, name="tests", status="completed",
                         conclusion="failure", started_at=at, completed_at=at),
            ]
        )  # fmt: skip
    with client(served) as gh:
        combined = checked(gh.rest.repos.get_combined_status_for_ref(OWNER, NAME, "main"))
        assert combined.state == "success" and combined.total_count == 2
        assert {st.context: st.state for st in combined.statuses} == {
            "ci/test": "success",
            "lint": "success",
        }
        every = checked(gh.rest.repos.list_commit_statuses_for_ref(OWNER, NAME, sha))
        assert len(every) == 3
        runs = checked(gh.rest.checks.list_for_ref(OWNER, NAME, "main"))
        assert [(r.name, r.conclusion) for r in runs.check_runs] == [("tests", "failure")]
    assert events(served) == []


def test_commit_pages_link_to_the_next(served: Served) -> None:
    with client(served) as gh:
        first = gh.rest.repos.list_commits(OWNER, NAME, per_page=1)
        assert 'rel="next"' in first.headers["link"] and 'rel="last"' not in first.headers["link"]
        messages = [
            c.commit.message
            for c in gh.rest.paginate(
                gh.rest.repos.list_commits, owner=OWNER, repo=NAME, per_page=1
            )
        ]
    assert messages == ["Add tests", "Initial commit"]


def test_paging_keeps_githubs_limits_and_errors(served: Served) -> None:
    with httpx.Client(timeout=LOOPBACK_TIMEOUT, base_url=served.url, headers=AUTH) as http:
        capped = http.get(
            f"/repos/{REPO}/issues", params={"state": "all", "per_page": 500, "page": 9}
        )
        zero = http.get(f"/repos/{REPO}/issues", params={"per_page": 0})
        word = http.get(f"/repos/{REPO}/issues/1/comments", params={"page": "two"})
        # A number that is not one names nothing, whatever the paging says.
        both = http.get(f"/repos/{REPO}/issues/one/events", params={"per_page": 0})
    assert capped.status_code == 200 and capped.json() == []
    first = f"{served.url}/repos/{REPO}/issues?state=all&per_page=100&page="
    assert capped.headers["link"] == f'<{first}8>; rel="prev", <{first}1>; rel="first"'
    for resp, field in ((zero, "per_page"), (word, "page")):
        assert resp.status_code == 422
        assert resp.json() == {
            "message": "Validation Failed",
            "errors": [{"resource": "Query", "code": "invalid", "field": field}],
            "documentation_url": "https://docs.github.com/rest",
            "status": "422",
        }
    assert both.status_code == 404 and both.json()["message"] == "Not Found"


def test_refs_through_the_api_count_as_pushes(served: Served, tmp_path: Path) -> None:
    with client(served) as gh:
        commits = checked(gh.rest.repos.list_commits(OWNER, NAME))
        tip, older = commits[0].sha, commits[1].sha
        made = checked(gh.rest.git.create_ref(OWNER, NAME, ref="refs/heads/topic", sha=older))
        assert made.ref == "refs/heads/topic" and made.object_.sha == older
        with pytest.raises(RequestFailed) as exists:
            gh.rest.git.create_ref(OWNER, NAME, ref="refs/heads/topic", sha=tip)
        assert exists.value.response.status_code == 422
        assert exists.value.response.json()["message"] == "Reference already exists"
        checked(gh.rest.git.update_ref(OWNER, NAME, "heads/topic", sha=tip))
        with pytest.raises(RequestFailed) as back:
            gh.rest.git.update_ref(OWNER, NAME, "heads/topic", sha=older)
        assert back.value.response.json()["message"] == "Update is not a fast forward"
        checked(gh.rest.git.update_ref(OWNER, NAME, "heads/topic", sha=older, force=True))
        assert [b.name for b in checked(gh.rest.repos.list_branches(OWNER, NAME))] == [
            "main",
            "topic",
        ]
        assert gh.rest.git.delete_ref(OWNER, NAME, "heads/topic").status_code == 204
        with pytest.raises(RequestFailed) as main:
            gh.rest.git.delete_ref(OWNER, NAME, "heads/main")
        assert main.value.response.status_code == 422
    pushes = [e["data"] for e in events(served, "git.push")]
    assert [(p["created"], p["forced"], p["deleted"]) for p in pushes] == [
        (True, False, False),
        (False, False, False),
        (False, True, False),
        (False, False, True),
    ]
    assert "topic" not in git(served, tmp_path, "ls-remote", f"{GITHUB}{REPO}.git").stdout


def test_comments_can_be_edited_and_deleted_and_both_are_logged(served: Served) -> None:
    with client(served) as gh:
        mine = checked(gh.rest.issues.create_comment(OWNER, NAME, 1, body="first try"))
        edited = checked(gh.rest.issues.update_comment(OWNER, NAME, mine.id, body="second try"))
        assert edited.body == "second try" and edited.updated_at >= edited.created_at
        assert gh.rest.issues.delete_comment(OWNER, NAME, mine.id).status_code == 204
        with pytest.raises(RequestFailed) as gone:
            gh.rest.issues.get_comment(OWNER, NAME, mine.id)
        assert gone.value.response.status_code == 404
        assert [c.body for c in checked(gh.rest.issues.list_comments(OWNER, NAME, 1))] == [
            "still broken"
        ]
    log = [e for e in events(served) if e["kind"] != "github.comment.posted"]
    assert [e["kind"] for e in log] == [
        "github.issue_comment.created",
        "github.issue_comment.updated",
        "github.issue_comment.deleted",
    ]
    assert log[1]["data"]["previous_body"] == "first try"
    assert log[2]["data"]["body"] == "second try"


def test_a_single_review_reads_back(served: Served, tmp_path: Path) -> None:
    work = clone(served, tmp_path)
    git(served, work, "checkout", "-q", "-b", "r")
    commit_file(served, work, "r.txt", "r\n", "R")
    git(served, work, "push", "-q", "origin", "r")
    with client(served) as gh:
        pr = checked(gh.rest.pulls.create(OWNER, NAME, title="r", head="r", base="main"))
        review = checked(gh.rest.pulls.create_review(OWNER, NAME, pr.number, body="hmm"))
        assert review.state == "PENDING" and review.submitted_at is None
        again = checked(gh.rest.pulls.get_review(OWNER, NAME, pr.number, review.id))
        assert again.id == review.id and again.body == "hmm"
        with pytest.raises(RequestFailed):
            gh.rest.pulls.get_review(OWNER, NAME, pr.number, review.id + 100)


def test_code_search_reads_the_default_branch_at_t(served: Served) -> None:
    with client(served) as gh:

        def paths(q: str) -> list[str]:
            return sorted(item.path for item in checked(gh.rest.search.code(q=q)).items)

        assert paths("add repo:acme/tiny extension:py") == ["lib.py", "test_lib.py"]
        assert paths("def add") == ["lib.py"]
        assert paths("ADD filename:test_lib.py") == ["test_lib.py"]
        assert paths("return a + b") == []  # the fix exists only after T
        with pytest.raises(RequestFailed) as bare:
            gh.rest.search.code(q="repo:acme/tiny")
        assert bare.value.response.status_code == 422
        content = base64.b64encode(b"def sub(a, b):\n    return a - b\n").decode()
        checked(
            gh.rest.repos.create_or_update_file_contents(
                OWNER, NAME, "pkg/sub.py", message="sub", content=content
            )
        )
        assert paths("return a - b path:pkg") == ["pkg/sub.py"]


def test_what_octokits_recordings_showed(served: Served) -> None:
    """Behaviours octokit/fixtures' recordings of api.github.com pinned (see
    contract_tests/test_evidence_octokit.py): plain issues without ``pull_request`` or
    ``draft``, ``closed_by`` only on an issue read alone, search on its own rate limit,
    ``/repositories/{id}/...`` paths, raw file contents, locking, and contents commits made
    by the token's user."""
    with httpx.Client(timeout=LOOPBACK_TIMEOUT, base_url=served.url, headers=AUTH) as http:
        one = http.get(f"/repos/{REPO}/issues/1").json()
        assert "pull_request" not in one and "draft" not in one and "closed_by" in one
        listed = http.get(f"/repos/{REPO}/issues", params={"state": "all"}).json()
        assert listed and all("closed_by" not in i for i in listed)
        assert all(("pull_request" in i) == ("draft" in i) for i in listed)
        found = http.get("/search/issues", params={"q": f"repo:{REPO} add"})
        assert found.headers["x-ratelimit-resource"] == "search"
        assert found.headers["x-ratelimit-limit"] == "30"
        repo_id = http.get(f"/repos/{REPO}").json()["id"]
        by_id = http.get(f"/repositories/{repo_id}/issues", params={"state": "all"})
        assert [i["number"] for i in by_id.json()] == [i["number"] for i in listed]
        raw = http.get(
            f"/repos/{REPO}/contents/lib.py", headers={"Accept": "application/vnd.github.v3.raw"}
        )
        assert raw.headers["content-type"] == "application/vnd.github.v3.raw; charset=utf-8"
        assert raw.text == served.backend.git.read_file(REPO, "main", "lib.py").decode()
        assert http.get("/orgs/alice").status_code == 404  # a user, not an organisation
        assert http.put(f"/repos/{REPO}/issues/1/lock").status_code == 204
        assert http.get(f"/repos/{REPO}/issues/1").json()["locked"] is True
        bad = http.put(f"/repos/{REPO}/issues/1/lock", json={"lock_reason": "bored"})
        assert bad.status_code == 422
        assert http.delete(f"/repos/{REPO}/issues/1/lock").status_code == 204
        assert http.get(f"/repos/{REPO}/issues/1").json()["locked"] is False
        put = http.put(
            f"/repos/{REPO}/contents/new.txt",
            json={"message": "add", "content": base64.b64encode(b"hi").decode()},
        ).json()
        assert put["commit"]["committer"]["name"] == put["commit"]["author"]["name"] != "GitHub"
    changes = [e["data"]["changes"] for e in events(served, "github.issue.updated")]
    assert changes == [
        {"locked": {"from": False, "to": True}},
        {"locked": {"from": True, "to": False}},
    ]


def test_a_created_issue_answers_as_it_reads_back(served: Served) -> None:
    """A create writes its rows with plain statements and answers from the values it wrote
    (no flush, no read back): that answer must be what reading the issue gives, labels,
    assignees, dates and counts included, and the events must be those of any create."""
    with httpx.Client(timeout=LOOPBACK_TIMEOUT, base_url=served.url, headers=AUTH) as http:
        made = http.post(
            f"/repos/{REPO}/issues",
            json={"title": "Both", "body": "b", "labels": ["bug", "docs"], "assignees": ["alice"]},
        )
        assert made.status_code == 201, made.text
        number = made.json()["number"]
        again = http.get(f"/repos/{REPO}/issues/{number}")
        listed = http.get(f"/repos/{REPO}/issues/{number}/events")
    assert made.json() == again.json()
    assert [lb["name"] for lb in made.json()["labels"]] == ["bug", "docs"]
    assert made.json()["comments"] == 0 and made.json()["closed_by"] is None
    assert [(e["event"], (e.get("label") or {}).get("name")) for e in listed.json()] == [
        ("labeled", "bug"),
        ("labeled", "docs"),
        ("assigned", None),
    ]
