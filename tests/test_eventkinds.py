"""The event vocabulary (replay/base/eventkinds.py) is exactly what the world records.

One direction holds by construction: the event log refuses a kind, service or data key the
vocabulary lacks (tests/fakes/core/test_events.py), so every event any test makes is in it.
These tests hold the other direction, so that no dead entry lingers, which would let a case's
rule name something that never happens:

- the fakes, driven through every operation that records (real slack_sdk calls for Slack, the
  backends' operations for GitHub, git and Linear), emit every kind of theirs, each with every
  data key it declares and the object type it declares;
- the gateway's kinds are recorded by its source, with the data keys its dict literals name,
  and ``model.call`` carries exactly the fields of a ``ModelCall``.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest
from slack_sdk import WebClient
from sqlalchemy import delete

from fakes.core import build_world
from fakes.github.backend import GitHubBackend
from fakes.github.backend_refs import RefUpdate
from fakes.linear.backend import LinearBackend
from fakes.slack.models import MemberRow
from replay.base.case import ScriptedReply
from replay.base.endstate import OBJECTS as END_OBJECTS
from replay.base.eventkinds import KINDS
from replay.base.snapshot import load_snapshot
from replay.gateway.modelcalls import ModelCall
from tests.serving import serving

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "snapshots" / "demo"
FAKE_SERVICES = {"github", "git", "linear", "slack"}
GATEWAY_SOURCES = [
    *sorted((ROOT / "replay" / "gateway").glob("*.py")),
    ROOT / "replay/docs/cache.py",
]
ZERO = "0" * 40

# Demo world ids (snapshots/demo): the agent in each service, a Linear state, Slack places.
GH_AGENT, REPO = "acme-agent", "acme/semverkit"
LINEAR_AGENT, LINEAR_DANA = (
    "2c6f0a8e-7d3b-4f1a-9e52-6b8c0d4a1f07",
    "3c7e5d94-6fb0-41c2-94e5-af6a8b9c1d23",
)
ENG_TEAM = "b7e2c1d4-5a6f-4b8c-9d0e-1f2a3b4c5d6e"
IN_REVIEW = "5d1e7f20-8a3b-4c4d-9e5f-0a1b2c3d4e05"
SLACK_AGENT, RANDOM, RELEASES = "U07AGT3NT", "C04QL3RND", "C04QL2REL"
RELEASE_THREAD = "1773246000.000500"

CONSUMERS = [
    *(ROOT / "replay" / d for d in ("grade", "run", "casebuild")),
    ROOT / "replay/contract/coverage.py",
    ROOT / "replay/snapshot/audit.py",
]
"""Code that reads the log by kind: the grader, the runner, case building, the coverage table."""
KIND_LIKE = re.compile(r"(github|git|linear|slack|egress|docs|model|gateway)(\.[a-z_]+)+")
HOST_LIKE = re.compile(r".*\.(com|app|io|org|dev|net)")
"""A host name the red-team corpus sends to ("slack.com"), not a kind."""


def drive_github(github: GitHubBackend) -> None:
    with github.world.session() as s:
        base = github.repos.branch(s, REPO, "main")
        assert base is not None
        # What git-receive-pack does to the repository, then what the fake makes of it.
        github.git.git(REPO, "update-ref", "refs/heads/fix", base.sha)
        github.refs.apply_push(s, GH_AGENT, REPO, [RefUpdate("refs/heads/fix", ZERO, base.sha)])
        issue = github.issues.create(s, GH_AGENT, REPO, "Found while fixing", "body", ["bug"])
        github.issues.update(s, GH_AGENT, REPO, issue.number, title="Found while fixing it")
        github.issues.add_labels(s, GH_AGENT, REPO, issue.number, ["ranges"])
        github.issues.remove_label(s, GH_AGENT, REPO, issue.number, "ranges")
        comment = github.issues.add_comment(s, GH_AGENT, REPO, issue.number, "on it")
        github.issues.edit_comment(s, GH_AGENT, REPO, comment.id, "on it now")
        github.issues.delete_comment(s, GH_AGENT, REPO, comment.id)
        github.refs.put_contents(s, GH_AGENT, REPO, "NOTES.md", b"fixed\n", "Add notes", "fix")
        tip = github.repos.branch(s, REPO, "fix")
        assert tip is not None
        done = github.refs.commit_on_branch(
            s, GH_AGENT, tip.repo, "fix", tip.sha, {"TODO.md": b"more\n"}, [], "Add todo"
        )
        todo = github.git.entry(REPO, done, "TODO.md")
        assert todo is not None
        github.refs.delete_contents(s, GH_AGENT, REPO, "TODO.md", "Drop todo", todo.sha, "fix")
        pr = github.pulls.create(
            s, GH_AGENT, REPO, "Fix it", f"Fixes #{issue.number}", head="fix", base="main"
        )
        github.pulls.update(s, GH_AGENT, REPO, pr.number, title="Fix it, really")
        github.pulls.submit_review(s, GH_AGENT, REPO, pr.number, "COMMENT", "looks right")
        github.pulls.add_review_comment(s, GH_AGENT, REPO, pr.number, "why?", "NOTES.md", 1)
        github.pulls.merge(s, GH_AGENT, REPO, pr.number)
        github.labels.create(s, GH_AGENT, REPO, "triage", "fbca04", "Needs a look")
        github.labels.update(s, GH_AGENT, REPO, "triage", new_name="triaged", color="0e8a16")
        github.issues.add_labels(s, GH_AGENT, REPO, issue.number, ["triaged"])
        github.labels.delete(s, GH_AGENT, REPO, "triaged")
        github.labels.create_status(
            s, GH_AGENT, REPO, base.sha, "success", context="ci", target_url="https://ci.test/1"
        )


def drive_linear(linear: LinearBackend) -> None:
    with linear.world.session() as s:
        linear.create_issue(s, LINEAR_AGENT, {"teamId": ENG_TEAM, "title": "Follow-up"})
        linear.update_issue(s, LINEAR_AGENT, "ENG-15", {"stateId": IN_REVIEW})
        linear.create_comment(s, LINEAR_AGENT, {"issueId": "ENG-15", "body": "Which order?"})


def drive_slack(url: str) -> None:
    client = WebClient(token="xoxb-1-agent", base_url=url + "/api/", headers={"Host": "slack.com"})
    client.conversations_join(channel=RANDOM)
    posted = client.chat_postMessage(channel=RANDOM, text="hello")
    ts = str(posted["ts"])
    client.chat_update(channel=RANDOM, ts=ts, text="hello again")
    client.reactions_add(channel=RANDOM, timestamp=ts, name="eyes")
    client.reactions_remove(channel=RANDOM, timestamp=ts, name="eyes")
    client.chat_delete(channel=RANDOM, ts=ts)
    client.chat_postMessage(channel=RELEASES, thread_ts=RELEASE_THREAD, text="which order?")


@pytest.fixture(scope="module")
def emitted() -> Iterator[list[dict[str, Any]]]:
    """Every event of a demo world driven through every recording operation of the fakes."""
    humans = [
        ScriptedReply(
            person="U04QKADNA",
            service="slack",
            thread=f"#releases/{RELEASE_THREAD}",
            text="build metadata, identifier by identifier",
        ),
        ScriptedReply(person=LINEAR_DANA, service="linear", thread="ENG-15", text="ask Dana"),
    ]
    app = build_world(load_snapshot(DEMO), humans=humans)
    world = app.world
    with world.session() as s:  # so that joining #random is a change, and is recorded
        s.execute(
            delete(MemberRow).where(
                MemberRow.channel_id == RANDOM, MemberRow.user_id == SLACK_AGENT
            )
        )
    drive_github(cast(GitHubBackend, world.fakes["github"]))
    drive_linear(cast(LinearBackend, world.fakes["linear"]))
    with serving(app) as url:
        drive_slack(url)
    with world.session() as s:
        yield [e.model_dump(mode="json", by_alias=True) for e in world.events.read(s)]


def test_the_fakes_emit_every_kind_of_theirs(emitted: list[dict[str, Any]]) -> None:
    theirs = {name for name, k in KINDS.items() if k.service in FAKE_SERVICES}
    assert {e["kind"] for e in emitted} == theirs


def test_each_fake_kind_uses_every_data_key_and_its_object_type(
    emitted: list[dict[str, Any]],
) -> None:
    keys: dict[str, set[str]] = {}
    for event in emitted:
        kind = KINDS[event["kind"]]
        assert event["service"] == kind.service
        assert event["object"]["type"] == kind.object_type, event
        keys.setdefault(kind.name, set()).update(event["data"])
    for name, seen in keys.items():
        assert seen == set(KINDS[name].data), name


def gateway_records() -> dict[str, set[str] | None]:
    """Each kind the gateway's source records, with the data keys its dict literal names
    (None when one of its calls passes a dict built elsewhere)."""
    found: dict[str, set[str] | None] = {}
    for source in GATEWAY_SOURCES:
        for node in ast.walk(ast.parse(source.read_text(), str(source))):
            if not isinstance(node, ast.Call):
                continue
            args = [*node.args, *(k.value for k in node.keywords)]
            names = [
                a.value
                for a in args
                if isinstance(a, ast.Constant) and isinstance(a.value, str) and a.value in KINDS
            ]
            for name in names:
                dicts = [a for a in args if isinstance(a, ast.Dict)]
                known = found.setdefault(name, set())
                if not dicts or known is None:
                    found[name] = None
                    continue
                for d in dicts:
                    for key in d.keys:
                        assert isinstance(key, ast.Constant), f"{source}: a computed data key"
                        known.add(str(key.value))
    return found


def test_the_gateway_records_every_kind_of_its_own_and_no_other() -> None:
    found = gateway_records()
    theirs = {name for name, k in KINDS.items() if k.service not in FAKE_SERVICES}
    assert set(found) == theirs


def test_the_gateway_kinds_declare_exactly_the_keys_it_sends() -> None:
    for name, keys in gateway_records().items():
        if keys is None:
            continue  # built elsewhere: the log's own check still refuses an undeclared key
        assert keys == set(KINDS[name].data), name


def test_a_model_call_event_is_a_whole_model_call() -> None:
    assert gateway_records()["model.call"] is None  # the gateway dumps a ModelCall
    assert set(KINDS["model.call"].data) == set(ModelCall.model_fields)
    assert KINDS["model.call"].nested == {"usage"}


def test_code_that_reads_the_log_names_only_recorded_kinds() -> None:
    # A misspelt kind in the grader ("gateway.addon_faild") fails as silently as one in a case.
    files = [f for c in CONSUMERS for f in ([c] if c.is_file() else sorted(c.rglob("*.py")))]
    named = {
        (str(f.relative_to(ROOT)), node.value)
        for f in files
        for node in ast.walk(ast.parse(f.read_text(), str(f)))
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and KIND_LIKE.fullmatch(node.value)
        and not HOST_LIKE.fullmatch(node.value)
    }
    assert {kind for _, kind in named} >= {"model.call", "git.push", "egress.denied"}
    # Or an object type of the end state, the other closed vocabulary (replay/base/endstate.py).
    unknown = [(f, k) for f, k in sorted(named) if k not in KINDS and k not in END_OBJECTS]
    assert unknown == []
