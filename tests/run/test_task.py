"""The task text a harness is given asks only for what the case's world has a place for
(issue 35: every case was told to move a ticket and answer a thread, a case with neither too)."""

from __future__ import annotations

from pathlib import Path

from replay.base.case import Ticket, load_case
from replay.run.task import render_task, threads_naming
from replay.snapshot import load_snapshot

ROOT = Path(__file__).resolve().parents[2]


def _task(name: str, ticket: Ticket | None = None) -> str:
    case = load_case(ROOT / "cases" / name / "case.yaml")
    if ticket is not None:
        case = case.model_copy(update={"ticket": ticket})
    return render_task(case, load_snapshot(case.snapshot))


def test_a_github_ticket_with_no_thread_is_not_told_to_move_it_or_answer_anywhere() -> None:
    task = _task("demo-caret-zero")
    assert "open a pull request that references the ticket." in task
    assert "move the ticket" not in task and "thread" not in task.lower()
    assert "Ask on the ticket if something is unclear." in task


def test_a_linear_ticket_discussed_in_slack_is_moved_and_the_thread_answered() -> None:
    task = _task("demo-prerelease-order")
    assert "move the ticket to review" in task
    assert "answer in the Slack thread where it was discussed (#eng)" in task
    case = load_case(ROOT / "cases" / "demo-prerelease-order" / "case.yaml")
    assert threads_naming(case, load_snapshot(case.snapshot)) == ["eng"]


def test_a_slack_ticket_is_answered_in_its_thread_and_nothing_is_moved() -> None:
    case = load_case(ROOT / "cases" / "demo-prerelease-order" / "case.yaml")
    snapshot = load_snapshot(case.snapshot)
    eng = next(c for c in snapshot.slack.channels if c.name == "eng")
    first = next(m for m in eng.messages if "ENG-12" in (m.text or ""))
    task = _task(
        "demo-prerelease-order", Ticket(service="slack", ref=f"#eng/{first.thread_ts or first.ts}")
    )
    assert "answer in the thread" in task and "move the ticket" not in task
    assert "Ask in the thread if something is unclear." in task
