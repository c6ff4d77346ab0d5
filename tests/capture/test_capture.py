"""Capture end to end against the project's own fakes, over HTTP.

The fakes serve a world cut at a LATER time than the capture's T, so they hold activity after
T (a new issue, the fix pull request, late comments, a ticket closed, a Linear issue moved to
Done, a late thread reply, a late reaction). The captured snapshot must hold exactly what
existed at T: the same items as the same sources cut at T, with state rolled back where the
API keeps its history (GitHub's issue events, Linear's Issue.history, both served by the
fakes) and flags in capture.json where it does not (a server that answers neither, below)."""

from __future__ import annotations

import json
from contextlib import ExitStack
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from fakes.core import build_world
from replay.base import gitrepo
from replay.capture.github import undo_events
from replay.capture.linear import undo_history
from replay.capture.snapshot import (
    CaptureConfig,
    GitHubSource,
    LinearSource,
    SlackSource,
    capture_snapshot,
)
from replay.snapshot import build_snapshot, load_snapshot
from replay.snapshot.audit import audit
from tests import worlds
from tests.capture.serving import HostAs, serve

T = datetime.fromisoformat(worlds.T)
LATER = datetime.fromisoformat("2026-03-20T00:00:00Z")
GH_TOKEN = "ghp_capturetoken0000000000000000000000"
SLACK_TOKEN = "xoxb-1-agent"
LINEAR_KEY = "lin_api_0123456789abcdefABCDEF"


def _world() -> dict[str, Any]:
    w = worlds.world()
    gh = w["github"]
    gh["users"].append({"login": "bob", "id": 4, "created_at": "2021-01-01T00:00:00Z"})
    gh["issues"] += [
        {
            "repo": "acme/tiny", "number": 2, "id": 102, "title": "Document add()",
            "body": "say what it does", "state": "open", "author": "bob",
            "labels": ["bug"], "created_at": "2026-03-11T08:00:00Z",
            "history": [
                {"at": "2026-03-11T10:00:00Z", "by": "alice", "set": {"assignees": ["alice"]}},
                {"at": "2026-03-13T00:00:00Z", "by": "bob",
                 "set": {"labels": [], "title": "Docs: add()", "assignees": []}},
                {"at": "2026-03-13T05:00:00Z", "by": "bob", "set": {"body": "edited later"}},
            ],
        },
        {
            "repo": "acme/tiny", "number": 4, "id": 104, "title": "Filed after T",
            "state": "open", "author": "bob", "created_at": "2026-03-14T00:00:00Z",
        },
    ]  # fmt: skip
    gh["pulls"].append(
        {
            "repo": "acme/tiny", "number": 5, "id": 105, "title": "Add tests", "body": "",
            "state": "closed", "author": "bob", "head_ref": "tests", "base_ref": "main",
            "head_sha": "@commit:Add tests", "base_sha": "@commit:Initial commit",
            "merged_at": "2026-03-05T10:00:00Z", "closed_at": "2026-03-05T10:00:00Z",
            "merged_by": "alice", "created_at": "2026-03-04T10:00:00Z",
            "reviews": [
                {"id": 501, "author": "alice", "state": "APPROVED",
                 "commit_id": "@commit:Add tests", "submitted_at": "2026-03-04T12:00:00Z"},
            ],
        }
    )  # fmt: skip
    lin = w["linear"]
    lin["workflow_states"].append(
        {"id": "s-doing", "team": "ENG", "name": "In Progress", "type": "started", "position": 3}
    )
    lin["issues"][0]["history"].insert(
        0, {"at": "2026-03-11T06:00:00Z", "by": "u-agent", "set": {"state": "s-doing"}}
    )
    lin["issues"][0]["history"].append(
        {"at": "2026-03-13T11:00:00Z", "by": "u-agent", "set": {"description": "edited later"}}
    )
    lin["issues"][0]["comments"] = [
        {"id": "c-1", "user": "u-agent", "body": "looking", "created_at": "2026-03-11T00:00:00Z"},
        {"id": "c-2", "user": "u-agent", "body": "done", "created_at": "2026-03-13T00:00:00Z"},
    ]
    lin["issues"].append(
        {
            "id": "i-2", "team": "ENG", "number": 2, "title": "later", "state": "s-todo",
            "creator": "u-agent", "created_at": "2026-03-15T00:00:00Z",
        }
    )  # fmt: skip
    return w


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> Path:
    src = tmp_path_factory.mktemp("capture") / "sources"
    src.mkdir()
    worlds.write_history(src / "history")
    (src / "world.yaml").write_text(yaml.safe_dump(_world(), sort_keys=False))
    return src


class NoHistory:
    """A server like an old GitHub Enterprise and a Linear without ``Issue.history``: the
    events endpoint is missing (404) and a query for history is a validation error."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"].endswith("/events"):
            await _answer(send, 404, {"message": "Not Found"})
            return
        if scope["type"] == "http" and scope["path"].endswith("/graphql"):
            body = b""
            while True:
                message = await receive()
                body += message.get("body", b"")
                if not message.get("more_body"):
                    break
            if b"history(" in body:
                error = 'Cannot query field "history" on type "Issue".'
                await _answer(send, 400, {"errors": [{"message": error}]})
                return
            sent = False

            async def replay_body() -> Any:
                nonlocal sent
                if sent:
                    return {"type": "http.disconnect"}
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}

            await self.app(scope, replay_body, send)
            return
        await self.app(scope, receive, send)


async def _answer(send: Any, status: int, payload: Any) -> None:
    data = json.dumps(payload).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": data})


def _capture(sources: Path, root: Path, wrap: Any = None) -> Path:
    later = root / "later"
    build_snapshot(sources, later, LATER)
    world = build_world(load_snapshot(later))
    app = wrap(world) if wrap is not None else world
    out = root / "captured"
    with ExitStack() as stack:
        gh = stack.enter_context(serve(HostAs(app, "api.github.com")))
        slack = stack.enter_context(serve(HostAs(app, "slack.com")))
        linear = stack.enter_context(serve(HostAs(app, "api.linear.app")))
        config = CaptureConfig(
            at=T,
            github=GitHubSource(
                "acme/tiny", GH_TOKEN, api_url=gh, git_url=gh, exclude=frozenset({3})
            ),
            linear=LinearSource("ENG", LINEAR_KEY, url=f"{linear}/graphql"),
            slack=SlackSource(SLACK_TOKEN, url=f"{slack}/api/"),
        )
        capture_snapshot(config, out)
    for fake in world.world.fakes.values():
        close = getattr(fake, "close", None)
        if close is not None:
            close()
    world.world.engine.dispose()
    return out


@pytest.fixture(scope="module")
def captured(sources: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _capture(sources, tmp_path_factory.mktemp("served"))


@pytest.fixture(scope="module")
def expected(sources: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("expected") / "at-t"
    build_snapshot(sources, out, T)
    return out


def test_captured_holds_exactly_the_items_of_t(captured: Path, expected: Path) -> None:
    got, want = load_snapshot(captured), load_snapshot(expected)
    assert got.manifest.source.kind == "captured" and got.at == T
    assert [i.number for i in got.github.issues] == [i.number for i in want.github.issues]
    assert sorted(p.number for p in got.github.pulls) == sorted(p.number for p in want.github.pulls)
    for g, w in zip(
        sorted(got.github.issues, key=lambda i: i.number),
        sorted(want.github.issues, key=lambda i: i.number),
        strict=True,
    ):
        assert [c.id for c in g.comments] == [c.id for c in w.comments]
        assert (g.state, g.closed_at, g.title, g.labels, g.assignees) == (
            w.state,
            w.closed_at,
            w.title,
            w.labels,
            w.assignees,
        )
        # The history the services keep is kept too, up to T: the same events, same ids.
        assert g.events == w.events
    (pr,) = got.github.pulls
    assert [r.id for r in pr.reviews] == [501] and pr.merged_by == "alice"
    assert [i.identifier for i in got.linear.issues] == ["ENG-1"]
    assert [c.id for c in got.linear.issues[0].comments] == ["c-1"]
    assert got.linear.issues[0].state == want.linear.issues[0].state == "s-doing"
    assert got.linear.issues[0].history == want.linear.issues[0].history != []
    (eng,) = got.slack.channels
    assert [m.ts for m in eng.messages] == [m.ts for m in want.slack.channels[0].messages]
    # The repository is cut at the base commit: one ref, and that commit is T's. Its history
    # is in the shared git store (by default), not in a bundle of the snapshot's own.
    part = got.manifest.repositories[0]
    assert part.base_commit == want.manifest.repositories[0].base_commit
    assert (part.objects, part.bundle) == ("git/acme/tiny.git", None)
    assert gitrepo.bundle_heads(got.bundle(part.name)) == {"refs/heads/main": part.base_commit}
    assert audit(got) == []


def test_state_rolled_back_from_the_services_history(captured: Path) -> None:
    got = load_snapshot(captured)
    issue = next(i for i in got.github.issues if i.number == 1)
    assert issue.state == "open" and issue.closed_at is None  # closed after T: rolled back
    assert issue.events == []
    docs = next(i for i in got.github.issues if i.number == 2)
    # Assigned before T (kept), relabelled, renamed and unassigned after T (undone).
    assert (docs.title, docs.labels, docs.assignees) == ("Document add()", ["bug"], ["alice"])
    assert [(e.event, e.actor, e.assignee) for e in docs.events] == [("assigned", "alice", "alice")]
    report = json.loads((captured / "capture.json").read_text())
    assert {"acme/tiny#1", "acme/tiny#2", "ENG-1"} <= set(report["rolled_back"])
    # Linear: moved to Done after T, rolled back to where it stood at T.
    (eng1,) = got.linear.issues
    assert eng1.state == "s-doing" and eng1.completed_at is None
    # Flagged is only what no API dates: Slack reactions and membership, and edits of a
    # GitHub body (no issue event) and a Linear description (history keeps no old text).
    flags = {(f["service"], f["item"]): f["problem"] for f in report["flags"]}
    assert {k for k in flags if k[0] != "slack"} == {
        ("github", "acme/tiny#2"),
        ("linear", "ENG-1"),
    }
    assert "body edit" in flags[("github", "acme/tiny#2")]
    assert "description edited after T" in flags[("linear", "ENG-1")]
    assert docs.body == "edited later"  # as flagged: the API keeps no earlier body
    assert any("reactions" in f["problem"] for f in report["flags"])
    assert any("members are as of capture" in f["problem"] for f in report["flags"])
    assert report["dropped"] == {
        "github.comment": 1,
        "github.issue": 1,
        "github.pull": 1,
        "linear.comment": 1,
        "linear.issue": 1,
        "slack.message": 1,
    }


def test_without_history_dated_fields_are_rolled_back_and_the_rest_flagged(
    sources: Path, tmp_path: Path
) -> None:
    captured = _capture(sources, tmp_path, wrap=NoHistory)
    got = load_snapshot(captured)
    issue = next(i for i in got.github.issues if i.number == 1)
    assert issue.state == "open" and issue.closed_at is None  # closed_at is dated: rolled back
    docs = next(i for i in got.github.issues if i.number == 2)
    assert docs.title == "Docs: add()" and docs.events == []  # as of capture, and flagged
    report = json.loads((captured / "capture.json").read_text())
    flags = {(f["service"], f["item"]): f["problem"] for f in report["flags"]}
    assert "issues/1/events answered 404" in flags[("github", "acme/tiny#1")]
    assert "issues/2/events answered 404" in flags[("github", "acme/tiny#2")]
    assert "Issue.history is not served" in flags[("linear", "ENG-1")]
    assert got.linear.issues[0].completed_at is None
    assert got.linear.issues[0].history == []


def test_undo_events_rolls_back_labels_titles_and_state() -> None:
    thread: dict[str, Any] = {
        "title": "new", "labels": ["bug", "late"], "assignees": ["bob"], "state": "closed",
        "closed_at": "2026-03-13T00:00:00Z", "state_reason": "completed",
    }  # fmt: skip
    events = [
        {"event": "labeled", "label": {"name": "bug"}, "created_at": "2026-03-01T00:00:00Z"},
        {"event": "labeled", "label": {"name": "late"}, "created_at": "2026-03-13T00:00:00Z"},
        {"event": "renamed", "rename": {"from": "old", "to": "new"},
         "created_at": "2026-03-13T01:00:00Z"},
        {"event": "assigned", "assignee": {"login": "bob"}, "created_at": "2026-03-14T00:00:00Z"},
        {"event": "closed", "created_at": "2026-03-13T00:00:00Z"},
    ]  # fmt: skip
    assert undo_events(thread, events, T)
    assert thread == {
        "title": "old", "labels": ["bug"], "assignees": [], "state": "open",
        "closed_at": None, "state_reason": None,
    }  # fmt: skip


def test_undo_history_restores_the_linear_state() -> None:
    issue: dict[str, Any] = {
        "state": "s-done", "assignee": "u-2", "labels": ["l-1"], "title": "t",
        "completed_at": "2026-03-13T00:00:00Z", "started_at": "2026-03-11T00:00:00Z",
    }  # fmt: skip
    history = [
        {"createdAt": "2026-03-11T00:00:00Z", "fromState": {"id": "s-todo"},
         "toState": {"id": "s-doing"}},
        {"createdAt": "2026-03-13T00:00:00Z", "fromState": {"id": "s-doing"},
         "toState": {"id": "s-done"}, "addedLabelIds": ["l-1"]},
    ]  # fmt: skip
    assert undo_history(issue, history, T)
    assert issue["state"] == "s-doing" and issue["labels"] == [] and issue["completed_at"] is None
    assert issue["started_at"] == "2026-03-11T00:00:00Z"


def test_cli_capture_github_only(
    sources: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from replay.cli.snapshot import app

    later = tmp_path / "later"
    build_snapshot(sources, later, LATER)
    world = build_world(load_snapshot(later), services=("github",))
    monkeypatch.setenv("GITHUB_TOKEN", GH_TOKEN)
    try:
        with serve(HostAs(world, "api.github.com")) as gh:
            args = [
                "capture", str(tmp_path / "snap"), "--at", worlds.T, "--repo", "acme/tiny",
                "--exclude", "3", "--github-api", gh, "--github-git", gh,
            ]  # fmt: skip
            result = CliRunner().invoke(app, args)
    finally:
        world.world.engine.dispose()
    assert result.exit_code == 0, result.output
    assert "rolled back 2" in result.output and "1 flags" in result.output
    assert "FLAG  github acme/tiny#2: updated after T" in result.output
    snap = load_snapshot(tmp_path / "snap")
    assert [i.number for i in snap.github.issues] == [1, 2] and snap.slack.channels == []
    assert snap.github.issues[0].state == "open"
    monkeypatch.delenv("GITHUB_TOKEN")
    assert CliRunner().invoke(app, args).exit_code != 0


def test_the_default_branch_is_the_repositorys(tmp_path: Path) -> None:
    """A repository whose default branch is ``master`` (GitHub's ``default_branch`` field):
    the capture clones that branch, and the snapshot's repository and GitHub both say so."""
    src = tmp_path / "sources"
    src.mkdir()
    worlds.write_history(src / "history")
    world = json.loads(json.dumps(worlds.world()).replace('"main"', '"master"'))
    world["repository"]["default_branch"] = "master"
    world["github"]["repos"][0]["default_branch"] = "master"
    (src / "world.yaml").write_text(yaml.safe_dump(world, sort_keys=False))
    later = tmp_path / "later"
    build_snapshot(src, later, LATER)
    served = build_world(load_snapshot(later), services=("github",))
    try:
        with serve(HostAs(served, "api.github.com")) as gh:
            source = GitHubSource("acme/tiny", GH_TOKEN, api_url=gh, git_url=gh)
            capture_snapshot(CaptureConfig(at=T, github=source), tmp_path / "snap")
    finally:
        served.world.engine.dispose()
    snap = load_snapshot(tmp_path / "snap")
    (repo,) = snap.manifest.repositories
    assert repo.default_branch == "master"
    assert [r.default_branch for r in snap.github.repos] == ["master"]
    assert list(gitrepo.bundle_heads(snap.bundle("acme/tiny"))) == ["refs/heads/master"]


def test_an_answer_without_a_default_branch_is_refused() -> None:
    """The branch is never guessed: a server that names none stops the capture."""
    import httpx

    from replay.capture.common import CaptureError, Ledger
    from replay.capture.github import GitHubReader, capture_github

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"id": 10, "created_at": "2026-03-01T00:00:00Z"})

    reader = GitHubReader("https://api.github.test", GH_TOKEN, httpx.MockTransport(answer))
    with pytest.raises(CaptureError, match="no default_branch"):
        capture_github(reader, "acme/tiny", T, set(), Ledger())
