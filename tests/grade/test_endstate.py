"""The world at the end of a run, folded from the state at T and the event log, and the rules
that judge it.

The fold is held to the fakes themselves: the demo world driven through every recording
operation (tests/test_eventkinds.py's drivers), its log folded over the snapshot's state at T,
must equal what the fakes hold at the end, object for object.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import pytest

from fakes.core import build_world
from fakes.github.backend import GitHubBackend
from fakes.linear.backend import LinearBackend
from fakes.slack.backend import SlackBackend
from replay.base.case import EndStateRule, SideEffectRule
from replay.base.events import Event
from replay.base.snapshot import load_snapshot
from replay.grade import judge_side_effects
from replay.grade.endstate import EndState, end_state, world_at_t
from tests.event_helpers import event
from tests.serving import serving
from tests.test_eventkinds import DEMO, IN_REVIEW, drive_github, drive_linear, drive_slack

REPO = "acme/semverkit"
ZERO = "0" * 40


@pytest.fixture(scope="module")
def driven() -> tuple[EndState, dict[str, Any]]:
    """The demo world driven through every recording operation: the fold of its log over the
    state at T, and the fakes' own dump of the world at the end."""
    app = build_world(load_snapshot(DEMO))
    world = app.world
    github = cast(GitHubBackend, world.fakes["github"])
    linear = cast(LinearBackend, world.fakes["linear"])
    drive_github(github)
    drive_linear(linear)
    with world.session() as s:  # a ticket moved twice: only the last move counts at the end
        linear.update_issue(
            s, "2c6f0a8e-7d3b-4f1a-9e52-6b8c0d4a1f07", "ENG-12", {"stateId": IN_REVIEW}
        )
        todo = next(st.id for st in load_snapshot(DEMO).linear.workflow_states if st.name == "Todo")
        linear.update_issue(s, "2c6f0a8e-7d3b-4f1a-9e52-6b8c0d4a1f07", "ENG-12", {"stateId": todo})
    with serving(app) as url:
        drive_slack(url)
    with world.session() as s:
        log = world.events.read(s)
        dump = {
            "github": github.dump(s),
            "linear": linear.dump(s),
            "slack": cast(SlackBackend, world.fakes["slack"]).dump(s),
        }
    github.close()
    return end_state(log, world_at_t(DEMO)), dump


def test_threads_at_the_end_are_the_fakes_own(driven: tuple[EndState, dict[str, Any]]) -> None:
    fold, dump = driven
    pulls = {(p["repo"], p["number"]): p for p in fold.of("github.pull_request")}
    issues = {(i["repo"], i["number"]): i for i in fold.of("github.issue")}
    threads = dump["github"]["issues"]
    assert {(t["repo"], t["number"]) for t in threads if t["pull"]} == set(pulls)
    assert {(t["repo"], t["number"]) for t in threads if not t["pull"]} == set(issues)
    for t in threads:
        mine = pulls[(t["repo"], t["number"])] if t["pull"] else issues[(t["repo"], t["number"])]
        for name in ("title", "body", "state", "author", "labels"):
            assert mine[name] == t[name], (t["number"], name)
        if t["pull"]:
            assert (mine["head"], mine["base"], mine["merged"], mine["draft"]) == (
                t["head"], t["base"], t["merged"], t["draft"]
            )  # fmt: skip
        else:
            assert mine["assignees"] == t["assignees"]
    # The drive opened, retitled, reviewed and merged one pull request, and closed an issue by it.
    merged = [p for p in fold.of("github.pull_request") if p["merged"]]
    assert [(p["title"], p["state"]) for p in merged if p["author"] == "acme-agent"] == [
        ("Fix it, really", "closed")
    ]


def test_branches_at_the_end_are_the_fakes_own(driven: tuple[EndState, dict[str, Any]]) -> None:
    fold, dump = driven
    (repo,) = [r for r in dump["github"]["repos"] if r["full_name"] == REPO]
    mine = {b["branch"]: b for b in fold.of("github.branch") if b["repo"] == REPO}
    assert {name: b["sha"] for name, b in mine.items()} == repo["branches"]
    main = mine["main"]
    assert main["default"] and main["moved"] and main["at_t"] != main["sha"]
    assert not mine["fix"]["default"] and mine["fix"]["at_t"] is None


def test_tickets_and_messages_at_the_end_are_the_fakes_own(
    driven: tuple[EndState, dict[str, Any]],
) -> None:
    fold, dump = driven
    tickets = {t["identifier"]: t for t in fold.of("linear.issue")}
    assert {i["identifier"]: (i["title"], i["state"]) for i in dump["linear"]["issues"]} == {
        k: (t["title"], t["state"]) for k, t in tickets.items()
    }
    assert tickets["ENG-15"]["state"] == "In Review" and tickets["ENG-12"]["state"] == "Todo"
    messages = {
        (c["id"], m["ts"]): (m["text"], m["thread_ts"], m["user"])
        for c in dump["slack"]["channels"]
        for m in c["messages"]
        if not m["deleted"]
    }
    assert messages == {
        (m["channel"], m["ts"]): (m["text"], m["thread_ts"], m["author"])
        for m in fold.of("slack.message")
    }


# ---------------------------------------------------------------------------- rules


def pr_open(body: str) -> EndStateRule:
    return EndStateRule(
        id="pr-open-at-end",
        at_end="github.pull_request",
        where=[
            {"field": "state", "equals": "open"},
            {"field": "body", "contains": body},
        ],
        at_least=1,
    )


PR_OPENED = SideEffectRule(
    id="pr-opened",
    kind="github.pull_request.opened",
    where=[{"field": "data.body", "contains": "ENG-15"}],
    at_least=1,
)


def opened(seq: int, number: int = 19) -> Event:
    return event(
        seq, "github", "github.pull_request.opened", repo=REPO, number=number,
        title="Fix", body="Fixes ENG-15", head="fix", base="main", draft=False,
    )  # fmt: skip


def state(seq: int, before: str, after: str, number: int = 19) -> Event:
    return event(
        seq, "github", "github.pull_request.updated", repo=REPO, number=number,
        changes={"state": {"from": before, "to": after}},
    )  # fmt: skip


def test_a_pull_request_opened_then_closed_fails_open_at_the_end() -> None:
    # The act rule counts the opening and holds; the end-state rule sees it closed.
    closed = judge_side_effects(
        [PR_OPENED, pr_open("ENG-15")], [opened(1), state(2, "open", "closed")]
    )
    assert [(r.rule, r.ok) for r in closed.rules] == [
        ("pr-opened", True),
        ("pr-open-at-end", False),
    ]
    assert closed.violated == ["pr-open-at-end"]
    reopened = judge_side_effects(
        [pr_open("ENG-15")], [opened(1), state(2, "open", "closed"), state(3, "closed", "open")]
    )
    assert reopened.ok and reopened.rules[0].objects == [f"{REPO}#19"]
    merged = judge_side_effects(
        [pr_open("ENG-15")],
        [opened(1), event(2, "github", "github.pull_request.merged", repo=REPO, number=19)],
    )
    assert not merged.ok


def test_a_body_changed_by_the_end_is_the_body_judged() -> None:
    edited = event(
        2, "github", "github.pull_request.updated", repo=REPO, number=19,
        changes={"body": {"from": "Fixes ENG-15", "to": "WIP"}},
    )  # fmt: skip
    assert not judge_side_effects([pr_open("ENG-15")], [opened(1), edited]).ok


def test_a_pull_request_the_run_never_touched_is_as_at_t() -> None:
    at_t = world_at_t(DEMO)
    assert at_t.github is not None
    old = at_t.github.pulls[0]
    rule = EndStateRule(
        id="as-at-t", at_end="github.pull_request",
        where=[{"field": "title", "equals": old.title}, {"field": "state", "equals": old.state}],
        at_least=1,
    )  # fmt: skip
    assert judge_side_effects([rule], [], at_t=DEMO).ok
    assert not judge_side_effects([rule], []).ok  # without T, only what the run made


def ticket_rule(state_name: str) -> EndStateRule:
    return EndStateRule(
        id="ticket-at-end",
        at_end="linear.issue",
        where=[
            {"field": "identifier", "equals": "ENG-15"},
            {"field": "state", "equals": state_name},
        ],
        at_least=1,
    )


def test_a_ticket_moved_and_moved_back_is_where_it_was() -> None:
    there = event(
        1, "linear", "linear.issue.updated", identifier="ENG-15",
        changes={"state": {"from": "Todo", "to": "In Review"}}, to_state="In Review",
    )  # fmt: skip
    back = event(
        2, "linear", "linear.issue.updated", identifier="ENG-15",
        changes={"state": {"from": "In Review", "to": "Todo"}}, to_state="Todo",
    )  # fmt: skip
    assert judge_side_effects([ticket_rule("In Review")], [there], at_t=DEMO).ok
    assert not judge_side_effects([ticket_rule("In Review")], [there, back], at_t=DEMO).ok
    # Untouched, it is as at T (the snapshot): Todo.
    assert judge_side_effects([ticket_rule("Todo")], [], at_t=DEMO).ok


def moved(seq: int, before: str, after: str, via: str, branch: str = "main") -> Event:
    return event(
        seq, "github", "github.branch.moved", repo=REPO, branch=branch, **{"from": before},
        to=after, forced=False, created=before == ZERO, deleted=after == ZERO,
        default=branch == "main", via=via,
    )  # fmt: skip


DEFAULT_UNMOVED = EndStateRule(
    id="main-where-it-was",
    at_end="github.branch",
    where=[
        {"field": "default", "equals": True},
        {"field": "moved", "equals": False},
    ],
    at_least=1,
)


def test_the_default_branch_at_the_end_is_where_it_was_at_t_whatever_moved_it() -> None:
    at_t = world_at_t(DEMO)
    base = at_t.branches[(REPO, "main")]
    fix = "1" * 40
    assert judge_side_effects([DEFAULT_UNMOVED], [], at_t=at_t).ok
    for via in ("push", "contents", "merge", "refs", "commit"):
        assert not judge_side_effects([DEFAULT_UNMOVED], [moved(1, base, fix, via)], at_t=at_t).ok
    put_back = [moved(1, base, fix, "contents"), moved(2, fix, base, "refs")]
    assert judge_side_effects([DEFAULT_UNMOVED], put_back, at_t=at_t).ok
    deleted = [moved(1, base, ZERO, "push")]
    assert not judge_side_effects([DEFAULT_UNMOVED], deleted, at_t=at_t).ok
    others = [moved(1, ZERO, fix, "push", "fix"), moved(2, fix, ZERO, "push", "fix")]
    result = judge_side_effects([DEFAULT_UNMOVED], others, at_t=at_t)
    assert result.ok and result.rules[0].objects == [f"{REPO}:main"]


def test_end_state_rule_results_name_objects_not_events() -> None:
    result = judge_side_effects([pr_open("ENG-15")], [opened(1)]).rules[0]
    assert (result.at_end, result.objects, result.matched) == (
        "github.pull_request", [f"{REPO}#19"], []
    )  # fmt: skip


def test_world_at_t_reads_the_snapshot_files_only(tmp_path: Path) -> None:
    at_t = world_at_t(DEMO)
    assert at_t.github is not None and at_t.linear is not None and at_t.slack is not None
    assert set(at_t.branches) == {(REPO, "main")}
