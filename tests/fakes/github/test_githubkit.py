"""githubkit (sync) against the fake: reads and writes of issues, pull requests, comments,
contents; every response validated by githubkit's own models (generated from GitHub's
OpenAPI description) and checked strictly; writes visible in later reads and in the event
log; everything dated on the frozen clock; nothing from after T served."""

from __future__ import annotations

import base64
from datetime import datetime
from pathlib import Path

import pytest
from githubkit.exception import RequestFailed

from replay.base.eventkinds import SEMANTIC
from tests.fakes.github.conftest import (
    REPO,
    Served,
    T,
    checked,
    client,
    clone,
    commit_file,
    events,
    git,
)

OWNER, NAME = REPO.split("/")
AT = datetime.fromisoformat(T.replace("Z", "+00:00"))


def after_t(value: datetime | None) -> bool:
    return value is not None and value > AT


def test_reads_validate_against_githubkit_models(served: Served) -> None:
    gh = client(served)
    with gh:
        root = checked(gh.rest.meta.root())
        assert root.current_user_url.endswith("/user")
        me = checked(gh.rest.users.get_authenticated())
        assert me.login == "agent"
        alice = checked(gh.rest.users.get_by_username("alice"))
        assert alice.name == "Alice Liddell"
        repo = checked(gh.rest.repos.get(OWNER, NAME))
        assert (repo.full_name, repo.default_branch, repo.open_issues_count) == (REPO, "main", 2)
        issue = checked(gh.rest.issues.get(OWNER, NAME, 2))
        assert [lb.name for lb in issue.labels] == ["docs"]
        assert [u.login for u in issue.assignees] == ["alice"]
        assert issue.html_url == "https://github.com/acme/tiny/issues/2"
        comments = checked(gh.rest.issues.list_comments(OWNER, NAME, 1))
        assert [c.body for c in comments] == ["still broken"]
        checked(gh.rest.issues.list_labels_for_repo(OWNER, NAME))
        assert checked(gh.rest.issues.get_label(OWNER, NAME, "docs")).description == "Docs"
        assert checked(gh.rest.issues.get_comment(OWNER, NAME, 1001)).body == "still broken"
        assert [lb.name for lb in checked(gh.rest.issues.list_labels_on_issue(OWNER, NAME, 1))] == [
            "bug"
        ]
        checked(gh.rest.pulls.list(OWNER, NAME, state="all"))
        found = checked(
            gh.rest.search.issues_and_pull_requests(q=f"repo:{REPO} is:issue label:docs")
        )
        assert [i.number for i in found.items] == [2]
        content = checked(gh.rest.repos.get_content(OWNER, NAME, "lib.py"))
        assert base64.b64decode(content.content).decode().endswith("return a - b\n")
        listing = checked(gh.rest.repos.get_content(OWNER, NAME, ""))
        assert sorted(item.name for item in listing) == ["lib.py", "test_lib.py"]
        branches = checked(gh.rest.repos.list_branches(OWNER, NAME))
        assert [b.name for b in branches] == ["main"]
        branch = checked(gh.rest.repos.get_branch(OWNER, NAME, "main"))
        assert branch.commit.sha == branches[0].commit.sha
        ref = checked(gh.rest.git.get_ref(OWNER, NAME, "heads/main"))
        assert ref.object_.sha == branch.commit.sha
        checked(gh.rest.git.list_matching_refs(OWNER, NAME, "heads/"))
        commits = checked(gh.rest.repos.list_commits(OWNER, NAME))
        assert [c.commit.message for c in commits] == ["Add tests", "Initial commit"]
        assert commits[0].author is not None and commits[0].author.login == "alice"
        one = checked(gh.rest.repos.get_commit(OWNER, NAME, commits[0].sha))
        assert one.files and one.files[0].filename == "test_lib.py"
        status = checked(gh.rest.repos.get_combined_status_for_ref(OWNER, NAME, "main"))
        assert status.total_count == 0
        checked(gh.rest.repos.list_commit_statuses_for_ref(OWNER, NAME, "main"))
        runs = checked(gh.rest.checks.list_for_ref(OWNER, NAME, "main"))
        assert runs.total_count == 0


def test_errors_have_githubs_shape(served: Served) -> None:
    with client(served) as gh:
        with pytest.raises(RequestFailed) as missing:
            gh.rest.issues.get(OWNER, NAME, 99)
        assert missing.value.response.status_code == 404
        assert missing.value.response.json() == {
            "message": "Not Found",
            "documentation_url": "https://docs.github.com/rest",
            "status": "404",
        }
        with pytest.raises(RequestFailed) as readme:
            gh.rest.repos.get_readme(OWNER, NAME)  # the repository has none
        assert readme.value.response.status_code == 404
        with pytest.raises(RequestFailed) as invalid:
            gh.rest.issues.create(OWNER, NAME, title="")
        assert invalid.value.response.status_code == 422
        body = invalid.value.response.json()
        assert body["message"] == "Validation Failed"
        assert body["errors"] == [{"resource": "Issue", "code": "missing_field", "field": "title"}]
        with pytest.raises(RequestFailed) as nohead:
            gh.rest.pulls.create(OWNER, NAME, title="x", head="nope", base="main")
        assert nohead.value.response.json()["errors"] == [
            {"resource": "PullRequest", "code": "invalid", "field": "head"}
        ]
    with client(served, token=None) as anon:
        with pytest.raises(RequestFailed) as unauth:
            anon.rest.issues.get(OWNER, NAME, 1)
        assert unauth.value.response.status_code == 401
        assert unauth.value.response.json()["message"] == "Requires authentication"
    assert events(served) == []


def test_pagination_follows_link_headers(served: Served) -> None:
    with client(served) as gh:
        first = gh.rest.issues.list_for_repo(OWNER, NAME, state="all", per_page=1)
        assert 'rel="next"' in first.headers["link"]
        assert first.headers["link"].startswith(f"<{served.url}/")
        numbers = [
            i.number
            for i in gh.rest.paginate(
                gh.rest.issues.list_for_repo, owner=OWNER, repo=NAME, state="all", per_page=1
            )
        ]
    assert numbers == [2, 1]


def test_issue_writes_show_in_reads_and_the_event_log(served: Served) -> None:
    with client(served) as gh:
        created = checked(
            gh.rest.issues.create(
                OWNER,
                NAME,
                title="Agent found a bug",
                body="details",
                labels=["bug"],
                assignees=["bob"],
            )
        )
        assert created.number == 3  # after #1, #2 (issues) and nothing else at T
        assert after_t(created.created_at) and created.created_at == created.updated_at
        assert created.user is not None and created.user.login == "agent"
        comment = checked(gh.rest.issues.create_comment(OWNER, NAME, 3, body="on it"))
        assert after_t(comment.created_at)
        closed = checked(
            gh.rest.issues.update(OWNER, NAME, 3, state="closed", state_reason="not_planned")
        )
        assert closed.state == "closed" and closed.state_reason == "not_planned"
        assert after_t(closed.closed_at)
        labels = checked(gh.rest.issues.add_labels(OWNER, NAME, 3, labels=["docs"]))
        assert sorted(lb.name for lb in labels) == ["bug", "docs"]
        checked(gh.rest.issues.remove_label(OWNER, NAME, 3, "bug"))

        again = checked(gh.rest.issues.get(OWNER, NAME, 3))
        assert (again.state, again.comments, [lb.name for lb in again.labels]) == (
            "closed",
            1,
            ["docs"],
        )
        listed = checked(gh.rest.issues.list_comments(OWNER, NAME, 3))
        assert [c.body for c in listed] == ["on it"]
        closed_list = checked(gh.rest.issues.list_for_repo(OWNER, NAME, state="closed"))
        assert [i.number for i in closed_list] == [3]
        found = checked(gh.rest.search.issues_and_pull_requests(q="repo:acme/tiny is:closed bug"))
        assert [i.number for i in found.items] == [3]

    # The route's own events (github.comment.posted beside the comment: test_branch_moves.py).
    log = [e for e in events(served) if e["kind"] not in SEMANTIC]
    assert [e["kind"] for e in log] == [
        "github.issue.opened",
        "github.issue_comment.created",
        "github.issue.updated",
        "github.label.added",
        "github.label.removed",
    ]
    assert log[0]["data"] == {
        "repo": REPO,
        "number": 3,
        "title": "Agent found a bug",
        "body": "details",
        "labels": ["bug"],
        "assignees": ["bob"],
    }
    assert log[1]["data"]["comment_id"] == comment.id and log[1]["object"]["id"].startswith(
        "acme/tiny#3"
    )
    assert log[2]["data"]["changes"]["state"] == {"from": "open", "to": "closed"}
    assert all(e["actor"] == "agent" and e["at"] > "2026-03-12T09:00:00" for e in log)
    assert [e["seq"] for e in log] == sorted(e["seq"] for e in log)


def test_pull_request_lifecycle(served: Served, tmp_path: Path) -> None:
    work = clone(served, tmp_path)
    git(served, work, "checkout", "-q", "-b", "fix-add")
    head = commit_file(served, work, "lib.py", "def add(a, b):\n    return a + b\n", "Fix add")
    git(served, work, "push", "-q", "origin", "fix-add")

    with client(served) as gh:
        pr = checked(
            gh.rest.pulls.create(
                OWNER, NAME, title="Fix add", body="Fixes #1", head="fix-add", base="main"
            )
        )
        assert pr.number == 3 and pr.head.sha == head and pr.head.ref == "fix-add"
        assert pr.mergeable is True and pr.changed_files == 1 and pr.commits == 1
        assert after_t(pr.created_at)
        with pytest.raises(RequestFailed) as dup:
            gh.rest.pulls.create(OWNER, NAME, title="again", head="fix-add", base="main")
        assert dup.value.response.status_code == 422
        assert "already exists" in dup.value.response.json()["errors"][0]["message"]

        listed = checked(gh.rest.pulls.list(OWNER, NAME))
        assert [p.number for p in listed] == [3]
        as_issue = checked(gh.rest.issues.get(OWNER, NAME, 3))
        assert as_issue.pull_request is not None
        files = checked(gh.rest.pulls.list_files(OWNER, NAME, 3))
        assert [(f.filename, f.status, f.additions, f.deletions) for f in files] == [
            ("lib.py", "modified", 1, 1)
        ]
        assert files[0].patch is not None and "+    return a + b" in files[0].patch
        commits = checked(gh.rest.pulls.list_commits(OWNER, NAME, 3))
        assert [c.sha for c in commits] == [head]
        diff = gh.rest.pulls.get(
            OWNER, NAME, 3, headers={"Accept": "application/vnd.github.v3.diff"}
        )
        assert diff.text.startswith("diff --git a/lib.py b/lib.py")
        patch = gh.rest.pulls.get(
            OWNER, NAME, 3, headers={"Accept": "application/vnd.github.v3.patch"}
        )
        assert "Subject: [PATCH] Fix add" in patch.text

        with pytest.raises(RequestFailed) as own:
            gh.rest.pulls.create_review(OWNER, NAME, 3, event="APPROVE")
        assert own.value.response.status_code == 422
        review = checked(gh.rest.pulls.create_review(OWNER, NAME, 3, event="COMMENT", body="LGTM?"))
        assert review.state == "COMMENTED"
        checked(gh.rest.pulls.list_reviews(OWNER, NAME, 3))
        rc = checked(
            gh.rest.pulls.create_review_comment(
                OWNER, NAME, 3, body="nice", commit_id=head, path="lib.py", line=2
            )
        )
        assert rc.path == "lib.py" and rc.line == 2 and "@@" in rc.diff_hunk
        assert checked(gh.rest.pulls.get_review_comment(OWNER, NAME, rc.id)).body == "nice"
        reply = checked(
            gh.rest.pulls.create_reply_for_review_comment(OWNER, NAME, 3, rc.id, body="agreed")
        )
        assert reply.in_reply_to_id == rc.id and reply.path == "lib.py"
        threads = checked(gh.rest.pulls.list_review_comments(OWNER, NAME, 3))
        assert [c.id for c in threads] == [rc.id, reply.id]
        checked(gh.rest.issues.create_comment(OWNER, NAME, 3, body="conversation comment"))
        edited = checked(gh.rest.pulls.update(OWNER, NAME, 3, title="Fix add()"))
        assert edited.title == "Fix add()"

        # A push to the head branch moves the pull request's head.
        second = commit_file(served, work, "notes.txt", "n\n", "Notes")
        git(served, work, "push", "-q", "origin", "fix-add")
        assert checked(gh.rest.pulls.get(OWNER, NAME, 3)).head.sha == second

        merged = checked(gh.rest.pulls.merge(OWNER, NAME, 3, merge_method="squash"))
        assert merged.merged is True
        after = checked(gh.rest.pulls.get(OWNER, NAME, 3))
        assert after.merged and after.state == "closed" and after_t(after.merged_at)
        assert gh.rest.pulls.check_if_merged(OWNER, NAME, 3).status_code == 204
        kept = checked(gh.rest.pulls.list_files(OWNER, NAME, 3))
        assert sorted(f.filename for f in kept) == ["lib.py", "notes.txt"]
        main = checked(gh.rest.repos.get_branch(OWNER, NAME, "main"))
        assert main.commit.sha == merged.sha
        assert main.commit.commit.message == "Fix add() (#3)"
        with pytest.raises(RequestFailed) as twice:
            gh.rest.pulls.merge(OWNER, NAME, 3)
        assert twice.value.response.status_code == 405

    git(served, work, "fetch", "-q", "origin")
    assert git(served, work, "show", "origin/main:lib.py").stdout.endswith("a + b\n")
    kinds = [e["kind"] for e in events(served) if e["kind"] not in SEMANTIC]
    moved = [(e["data"]["branch"], e["data"]["via"]) for e in events(served, "github.branch.moved")]
    assert moved == [("fix-add", "push"), ("fix-add", "push"), ("main", "merge")]
    assert kinds == [
        "git.push",
        "github.pull_request.opened",
        "github.pull_request_review.submitted",
        "github.review_comment.created",
        "github.review_comment.created",
        "github.issue_comment.created",
        "github.pull_request.updated",
        "git.push",
        "github.pull_request.merged",
        "github.pull_request.updated",  # the merge closes it
        "github.issue.updated",  # "Fixes #1": the merge into main closes #1, as on GitHub
    ]
    assert checked_issue_closed(served, 1)
    opened = events(served, "github.pull_request.opened")[0]["data"]
    assert opened == {
        "repo": REPO,
        "number": 3,
        "title": "Fix add",
        "body": "Fixes #1",
        "head": "fix-add",
        "base": "main",
        "draft": False,
    }
    assert events(served, "github.pull_request.merged")[0]["data"]["method"] == "squash"


def test_contents_put_is_a_real_commit(served: Served, tmp_path: Path) -> None:
    with client(served) as gh:
        made = checked(
            gh.rest.repos.create_or_update_file_contents(
                OWNER,
                NAME,
                "docs/add.md",
                message="Document add",
                content=base64.b64encode(b"# add\n").decode(),
            )
        )
        assert made.content is not None and made.commit.sha is not None
        old = checked(gh.rest.repos.get_content(OWNER, NAME, "docs/add.md"))
        with pytest.raises(RequestFailed) as stale:
            gh.rest.repos.create_or_update_file_contents(
                OWNER, NAME, "docs/add.md", message="x", content="eA==", sha="0" * 40
            )
        assert stale.value.response.status_code == 409
        checked(
            gh.rest.repos.create_or_update_file_contents(
                OWNER,
                NAME,
                "docs/add.md",
                message="Document add better",
                content=base64.b64encode(b"# add(a, b)\n").decode(),
                sha=old.sha,
            )
        )
        now = checked(gh.rest.repos.get_content(OWNER, NAME, "docs/add.md"))
        assert base64.b64decode(now.content) == b"# add(a, b)\n"
        top = checked(gh.rest.repos.list_commits(OWNER, NAME, per_page=1))[0]
        assert top.commit.message == "Document add better"
        assert top.commit.author is not None and after_t(top.commit.author.date)
        checked(
            gh.rest.repos.create_or_update_file_contents(
                OWNER, NAME, "README.md", message="Readme",
                content=base64.b64encode(b"# tiny\n").decode(),
            )
        )  # fmt: skip
        readme = checked(gh.rest.repos.get_readme(OWNER, NAME))
        assert readme.path == "README.md" and base64.b64decode(readme.content) == b"# tiny\n"
    work = clone(served, tmp_path)
    assert (work / "docs" / "add.md").read_text() == "# add(a, b)\n"
    updated = events(served, "github.contents.updated")
    assert [e["data"]["path"] for e in updated] == ["docs/add.md", "docs/add.md", "README.md"]
    assert updated[1]["data"]["sha"] == top.sha and updated[1]["data"]["branch"] == "main"


def test_nothing_after_t_is_served(served: Served, fix_commit: str) -> None:
    with client(served) as gh:
        issues = checked(gh.rest.issues.list_for_repo(OWNER, NAME, state="all"))
        assert sorted(i.number for i in issues) == [1, 2]
        one = checked(gh.rest.issues.get(OWNER, NAME, 1))
        # Closed, and commented on, only after T.
        assert one.state == "open" and one.closed_at is None and one.comments == 1
        everything = [
            *issues,
            *checked(gh.rest.issues.list_comments(OWNER, NAME, 1)),
            *checked(gh.rest.issues.list_comments(OWNER, NAME, 2)),
        ]
        for item in everything:
            assert item.created_at <= AT and item.updated_at <= AT
        for number in (3, 4):
            with pytest.raises(RequestFailed) as gone:
                gh.rest.issues.get(OWNER, NAME, number)
            assert gone.value.response.status_code == 404
        with pytest.raises(RequestFailed):
            gh.rest.pulls.get(OWNER, NAME, 3)
        with pytest.raises(RequestFailed):
            gh.rest.users.get_by_username("late")
        with pytest.raises(RequestFailed) as commit:
            gh.rest.repos.get_commit(OWNER, NAME, fix_commit)
        assert commit.value.response.status_code == 404
        assert checked(gh.rest.search.issues_and_pull_requests(q="fixed")).total_count == 0
        assert checked(gh.rest.search.issues_and_pull_requests(q="repo:acme/tiny")).total_count == 2
        for c in checked(gh.rest.repos.list_commits(OWNER, NAME)):
            assert c.commit.committer is not None and c.commit.committer.date <= AT
        repo = checked(gh.rest.repos.get(OWNER, NAME))
        assert repo.pushed_at is not None and repo.pushed_at <= AT


def checked_issue_closed(served: Served, number: int) -> bool:
    with client(served) as gh:
        issue = checked(gh.rest.issues.get(OWNER, NAME, number))
    return bool(issue.state == "closed" and issue.state_reason == "completed")
