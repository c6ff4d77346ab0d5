"""``case create`` from a merged pull request, read over HTTP from the GitHub fake (a world
cut after the merge, so the PR, its commits and the fix are all there)."""

from __future__ import annotations

import dataclasses
from contextlib import ExitStack
from datetime import datetime
from pathlib import Path

import pytest
import yaml

from fakes.core import build_world
from replay.base import gitrepo
from replay.base.case import load_case
from replay.base.errors import InputError
from replay.capture.common import CaptureError
from replay.capture.github import GitHubReader
from replay.casebuild.casedir import write_case_dir
from replay.casebuild.create import FixSource, create_case, spec_from_fix
from replay.casebuild.frompr import LinearTicket, SlackThread, fix_source_from_pr
from replay.run.runner import RunOptions, run_case
from replay.runtime import get_runtime
from replay.snapshot import build_snapshot, load_snapshot
from replay.snapshot.audit import audit
from replay.validate import validate_case
from tests import worlds
from tests.capture.serving import HostAs, serve
from tests.casebuild.repos import REGISTRY, SETUP, shapes_repo

TOKEN = "ghp_frompr000000000000000000000000000000"


def test_case_from_merged_pr(tmp_path: Path) -> None:
    src = worlds.make_sources(tmp_path)
    later = tmp_path / "later"
    build_snapshot(src, later, datetime.fromisoformat("2026-03-20T00:00:00Z"))
    world = build_world(load_snapshot(later), services=("github",))
    try:
        with serve(HostAs(world, "api.github.com")) as gh:
            reader = GitHubReader(gh, TOKEN)
            try:
                fix = fix_source_from_pr(reader, gh, TOKEN, "acme/tiny", 3, tmp_path / "clone")
                with pytest.raises(CaptureError, match="pulls/1: 404"):  # an issue, not a PR
                    fix_source_from_pr(reader, gh, TOKEN, "acme/tiny", 1, tmp_path / "c2")
            finally:
                reader.close()
    finally:
        world.world.engine.dispose()
    subjects = gitrepo.run(fix.repo, "log", "--format=%s", f"{fix.base}..{fix.fix}")
    assert subjects == "Fix add (#3)"
    # The ticket is the issue the PR's body closes ("Fixes #1"), filed before the work began.
    assert (fix.issue_number, fix.ticket_title) == (1, "add() subtracts")
    assert fix.ticket_created == datetime.fromisoformat("2026-03-10T00:00:00Z")
    assert gitrepo.run(fix.repo, "show", f"{fix.fix}:lib.py").endswith("return a + b")
    # The tiny fix changes no test file: such a PR cannot become a case by itself.
    with pytest.raises(InputError, match="changes no test file"):
        spec_from_fix("tiny-add", fix)


# ------------------------------------------------------------------ a fix that touched services
LINEAR_KEY = "lin_api_0123456789abcdefABCDEF"
SLACK_TOKEN = "xoxb-1-agent"


def _ts(iso: str) -> str:
    return f"{int(datetime.fromisoformat(iso).timestamp())}.000100"


THREAD = _ts("2026-03-11T08:15:00Z")


def _shapes_world(tmp_path: Path) -> tuple[Path, str, str]:
    """Sources for acme/shapes cut after the merge: PR #2 (fix area) closes #1; alice, who
    wrote it, commented on #1, moved ENG-7 to In Progress then In Review, and answered the
    Slack thread before the merge; afterwards Done (an automation) and thanks."""
    repo, base, fix = shapes_repo(tmp_path / "upstream")
    head = gitrepo.run(repo, "rev-parse", f"{fix}^2")
    src = tmp_path / "sources"
    src.mkdir()
    gitrepo.bundle_create(repo, src / "repo.bundle", "main", "main")
    merged = {"state": "closed", "closed_at": "2026-03-11T15:00:00Z"}
    world = {
        "at": "2026-03-20T00:00:00Z",
        "repository": {"name": "acme/shapes", "default_branch": "main", "bundle": "repo.bundle"},
        "github": {
            "viewer": "agent",
            "users": [
                {"login": "acme", "id": 1, "type": "Organization",
                 "created_at": "2020-01-01T00:00:00Z"},
                {"login": "alice", "id": 2, "created_at": "2020-01-01T00:00:00Z"},
                {"login": "bob", "id": 3, "created_at": "2020-01-01T00:00:00Z"},
                {"login": "agent", "id": 4, "type": "Bot", "created_at": "2020-01-01T00:00:00Z"},
            ],
            "repos": [
                {"owner": "acme", "name": "shapes", "id": 10, "created_at": "2026-03-01T00:00:00Z",
                 "labels": [{"name": "bug", "color": "d73a4a"}]},
            ],
            "issues": [
                {
                    "repo": "acme/shapes", "number": 1, "id": 101, "title": "area() adds the sides",
                    "body": "area(2, 3) returns 5, it should be 6.", "state": "open",
                    "author": "bob", "created_at": "2026-03-11T09:00:00Z",
                    "comments": [
                        {"id": 1001, "author": "alice", "body": "On it: fix and a test in #2.",
                         "created_at": "2026-03-11T12:00:00Z"},
                        {"id": 1002, "author": "bob", "body": "thanks!",
                         "created_at": "2026-03-11T16:00:00Z"},
                    ],
                    "history": [{"at": "2026-03-11T15:00:00Z", "by": "alice",
                                 "set": {**merged, "state_reason": "completed"}}],
                },
            ],
            "pulls": [
                {
                    "repo": "acme/shapes", "number": 2, "id": 102,
                    "title": "Fix area: multiply the sides", "body": "Fixes #1 (ENG-7)",
                    "state": "open", "author": "alice", "head_ref": "fix-area",
                    "base_ref": "main", "head_sha": head, "base_sha": base,
                    "created_at": "2026-03-11T11:00:00Z",
                    "history": [{"at": "2026-03-11T15:00:00Z", "set": {
                        **merged, "merged_at": "2026-03-11T15:00:00Z", "merge_commit_sha": fix,
                        "merged_by": "alice"}}],
                },
            ],
        },
        "linear": {
            "viewer": "u-agent",
            "organization": {"id": "org-1", "name": "Acme", "url_key": "acme"},
            "teams": [{"id": "t-1", "key": "ENG", "name": "Engineering",
                       "created_at": "2025-01-01T00:00:00Z"}],
            "users": [
                {"id": "u-agent", "name": "Agent", "display_name": "agent",
                 "email": "agent@acme.test", "created_at": "2025-01-01T00:00:00Z"},
                {"id": "u-alice", "name": "Alice", "display_name": "alice",
                 "email": "alice@acme.test", "created_at": "2025-01-01T00:00:00Z"},
            ],
            "workflow_states": [
                {"id": "s-todo", "team": "ENG", "name": "Todo", "type": "unstarted", "position": 1},
                {"id": "s-doing", "team": "ENG", "name": "In Progress", "type": "started",
                 "position": 2},
                {"id": "s-review", "team": "ENG", "name": "In Review", "type": "started",
                 "position": 3},
                {"id": "s-done", "team": "ENG", "name": "Done", "type": "completed", "position": 4},
            ],
            "issues": [
                {
                    "id": "i-7", "team": "ENG", "number": 7, "title": "area() is wrong",
                    "description": "area(2, 3) gives 5", "state": "s-todo", "creator": "u-alice",
                    "created_at": "2026-03-11T08:30:00Z",
                    "history": [
                        {"at": "2026-03-11T10:30:00Z", "by": "u-alice",
                         "set": {"state": "s-doing", "started_at": "2026-03-11T10:30:00Z"}},
                        {"at": "2026-03-11T13:00:00Z", "by": "u-alice",
                         "set": {"state": "s-review"}},
                        {"at": "2026-03-11T15:00:00Z",
                         "set": {"state": "s-done", "completed_at": "2026-03-11T15:00:00Z"}},
                    ],
                },
            ],
        },
        "slack": {
            "team": {"id": "T01", "name": "Acme", "domain": "acme"},
            "bot_user": "U0BOT",
            "users": [
                {"id": "U0BOT", "name": "agent", "real_name": "Agent", "is_bot": True},
                {"id": "U0ALICE", "name": "alice", "real_name": "Alice"},
                {"id": "U0BOB", "name": "bob", "real_name": "Bob"},
            ],
            "channels": [
                {
                    "id": "C0ENG", "name": "eng", "created": 1700000000, "creator": "U0ALICE",
                    "members": ["U0BOT", "U0ALICE", "U0BOB"],
                    "messages": [
                        {"ts": THREAD, "user": "U0BOB", "text": "area() is off, see ENG-7"},
                        {"ts": _ts("2026-03-11T14:00:00Z"), "user": "U0ALICE",
                         "text": "PR is up: https://github.com/acme/shapes/pull/2",
                         "thread_ts": THREAD},
                        {"ts": _ts("2026-03-11T16:00:00Z"), "user": "U0BOB", "text": "merged, ty",
                         "thread_ts": THREAD},
                    ],
                },
            ],
        },
    }  # fmt: skip
    (src / "world.yaml").write_text(yaml.safe_dump(world, sort_keys=False))
    return src, base, fix


def _from_served_pr(tmp_path: Path, **services: bool) -> FixSource:
    src, _, _ = _shapes_world(tmp_path)
    build_snapshot(src, tmp_path / "later")
    world = build_world(load_snapshot(tmp_path / "later"))
    try:
        with ExitStack() as stack:
            gh = stack.enter_context(serve(HostAs(world, "api.github.com")))
            lin = stack.enter_context(serve(HostAs(world, "api.linear.app")))
            sl = stack.enter_context(serve(HostAs(world, "slack.com")))
            reader = GitHubReader(gh, TOKEN)
            try:
                return fix_source_from_pr(
                    reader, gh, TOKEN, "acme/shapes", 2, tmp_path / "clone",
                    linear=LinearTicket("ENG-7", LINEAR_KEY, f"{lin}/graphql")
                    if services.get("linear") else None,
                    slack=SlackThread("C0ENG", THREAD, SLACK_TOKEN, f"{sl}/api/")
                    if services.get("slack") else None,
                )  # fmt: skip
            finally:
                reader.close()
    finally:
        world.world.engine.dispose()


def test_pr_with_a_github_ticket_proposes_the_answer_on_it(tmp_path: Path) -> None:
    fix = _from_served_pr(tmp_path)
    # T: the ticket's creation (09:00), before the first fix commit (10:00).
    assert fix.at == datetime.fromisoformat("2026-03-11T09:00:00Z")
    (answered,) = fix.effects
    assert (answered.id, answered.kind) == ("ticket-answered", "github.issue_comment.created")
    assert answered.where == [{"field": "data.number", "equals": 1}]
    assert answered.gold["body"] == "On it: fix and a test in #2."  # not bob's, not after merge
    spec = spec_from_fix("shapes-area", fix)
    path, _ = write_case_dir(spec, tmp_path / "case")
    case = load_case(path)
    assert case.ticket.ref == "acme/shapes#1"
    assert "ticket-answered" in {r.id for r in case.side_effects}
    assert [e.kind for e in case.gold.side_effects] == [
        "github.pull_request.opened",
        "github.issue_comment.created",
    ]
    snap = load_snapshot(case.snapshot)
    (issue,) = snap.github.issues
    assert issue.comments == [] and issue.state == "open"
    assert audit(snap, case) == []


def test_pr_with_linear_and_slack_yields_a_case_that_calibrates(tmp_path: Path) -> None:
    fix = _from_served_pr(tmp_path, linear=True, slack=True)
    # The Linear ticket (08:30) is older than the GitHub issue: T is its creation.
    assert fix.at == datetime.fromisoformat("2026-03-11T08:30:00Z")
    assert (fix.ticket_service, fix.ticket_identifier) == ("linear", "ENG-7")
    effects = {e.id: e for e in fix.effects}
    assert set(effects) == {"ticket-moved", "thread-answered"}
    # Moved to In Review before the merge; Done came with the merge and is not proposed.
    assert effects["ticket-moved"].gold == {
        "identifier": "ENG-7", "from_state": "In Progress", "to_state": "In Review",
    }  # fmt: skip
    assert effects["thread-answered"].gold["text"].startswith("PR is up")
    fix = dataclasses.replace(fix, setup=SETUP, registry_index=REGISTRY)
    runtime = get_runtime("docker")
    try:
        path, lists = create_case("shapes-area", fix, tmp_path / "case", runtime)
    finally:
        runtime.close()
    assert lists.fail_to_pass == ["tests/test_shapes.py::test_area_multiplies"]
    case = load_case(path)
    assert (case.ticket.service, case.ticket.ref) == ("linear", "ENG-7")
    validate_case(path)
    snap = load_snapshot(case.snapshot)
    assert audit(snap, case) == []
    # The world as it stood at T: ENG-7 in Todo, no history yet; the thread without replies.
    (eng7,) = snap.linear.issues
    assert (eng7.state, eng7.history) == ("s-todo", [])
    assert [m.ts for m in snap.slack.channels[0].messages] == [THREAD]
    assert snap.github.issues == [] and snap.github.pulls == []
    opts = {"out": tmp_path / "runs", "db": str(tmp_path / "results.db")}
    (gold,) = run_case(path, RunOptions(stub="gold", **opts))  # type: ignore[arg-type]
    assert gold.outcome == "pass", gold.reason
    (idle,) = run_case(path, RunOptions(stub="idle", **opts))  # type: ignore[arg-type]
    assert idle.outcome == "model_fail", idle.reason


@pytest.mark.parametrize(
    ("extra", "env", "fragment"),
    [
        (["--repo", ".", "--fix", "HEAD", "--name", "a/b", "--title", "t",
          "--linear-issue", "ENG-7"], {}, "need --pr"),
        (["--pr", "acme/shapes#2", "--linear-issue", "ENG-7"], {}, "LINEAR_API_KEY"),
        (["--pr", "acme/shapes#2", "--slack-thread", "C0ENG"], {"SLACK_TOKEN": "x"},
         "CHANNEL/TS"),
    ],
)  # fmt: skip
def test_cli_refuses_incomplete_service_options(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    extra: list[str],
    env: dict[str, str],
    fragment: str,
) -> None:
    from tests.cli_helpers import assert_one_line_error, run_cli

    monkeypatch.delenv("LINEAR_API_KEY", raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    assert_one_line_error(run_cli(capsys, "case", "create", "x", *extra), fragment)
