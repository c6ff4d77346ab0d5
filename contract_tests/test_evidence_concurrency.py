"""The invariants-under-concurrency family: every list the pagination family walks, walked
again while other clients write, writes made at once, one object written by many; and faults
a fake can have only under concurrency, planted in the fakes' code (not on the wire: these
faults are in how a fake allocates and pages, which no rewriting of one answer can make),
each caught by this family.
"""

from __future__ import annotations

import base64
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

import pytest

from fakes.core.world import World
from fakes.github.backend_issues import Issues
from fakes.linear.backend import LinearBackend
from fakes.linear.graphql import connections as linear_connections
from fakes.slack import schemas as slack_wire
from fakes.slack.backend import SlackBackend
from replay.contract.evidence import Report, Service, concurrency, pagination


def failures(reports: list[Report]) -> dict[str, tuple[str, ...]]:
    return {c.subject: c.problems for r in reports for c in r.failures}


def run(service: Service, *only: str) -> dict[str, tuple[str, ...]]:
    return failures(concurrency.reports(services=(service,), only=only))


def repeated(problems: tuple[str, ...]) -> bool:
    """A walk by offsets saw an item twice: one there before the walk, or one written during
    it. Which of them depends on how the writes racing a page fall (a page asked while
    writes land may already hold new items, which the next shift then repeats)."""
    said = ("there before the walk seen more than once", "written during the walk seen more")
    return any(s in p for p in problems for s in said)


# --------------------------------------------------------------------------- the real fakes


@pytest.fixture(scope="module")
def real() -> list[Report]:
    return concurrency.reports()


def test_the_fakes_hold_under_concurrency(real: list[Report]) -> None:
    assert [(r.service, r.source.repository) for r in real] == [
        ("github", "octokit/fixtures"),
        ("github", "octokit/graphql-schema"),
        ("linear", "linear/linear"),
        ("slack", "slackapi/slack-api-specs"),
    ]
    lines = [line for r in real for line in r.lines()]
    assert all(r.ok for r in real), "\n".join(lines)
    # Found by this family: the GitHub fake's GraphQL cursors were offsets, so a list that
    # grows ahead of the walk (newest first) repeated items. Its cursors name the node now.
    assert not [c for r in real for c in r.gaps], "\n".join(lines)
    subjects = {c.subject for r in real for c in r.checks}
    many = f"{concurrency.WRITERS}x{concurrency.WRITES}"
    for must in (
        f"GET /repos/{{owner}}/{{repo}}/issues while {many} issue creates",
        f"GET /repos/{{owner}}/{{repo}}/issues (sort=created&direction=asc) while {many} "
        "issue creates",
        f"GET /repos/{{owner}}/{{repo}}/issues/{{issue_number}}/comments while {many} comments",
        f"Repository.issues (orderBy: {{field: CREATED_AT, direction: DESC}}) while {many} "
        "issue creates",
        f"Issue.comments while {many} comments",
        f"Query.issues while {many} issue creates",
        f"conversations.history while {many} messages",
        f"conversations.replies while {many} replies",
        f"users.list while {many} writes elsewhere",
        f"PATCH /repos/{{owner}}/{{repo}}/issues/{{issue_number}} title, {many} at once",
        f"issueUpdate title, {many} at once",
        f"chat.update text, {many} at once",
        f"reactions.add, {many} distinct names at once",
    ):
        assert must in subjects, must


def test_every_list_the_pagination_family_walks_is_walked_here(real: list[Report]) -> None:
    """The walks are the pagination family's own lists, so neither can fall behind."""
    walked = {c.subject.split(" while ")[0] for r in real for c in r.checks}
    world = pagination.build()  # listed, not served: the listings' requests are never made
    clients = pagination.Clients({})
    listed = [lst.subject for lst in pagination.github_rest_listings(clients, world)]
    listed += [lst.subject for lst in pagination.slack_listings(clients)]
    clients.close()
    listed += [c.subject for c in pagination.github_connections(world)]
    listed += [c.subject for c in pagination.linear_connections()]
    assert set(listed) <= walked, sorted(set(listed) - walked)


# --------------------------------------------------------------------------- planted faults


@contextmanager
def unlocked(world: World) -> Iterator[None]:
    """The world's lock let go for a while by the thread holding it (however deep), as a fake
    without the lock would leave its read and its write apart."""
    lock: Any = world._lock
    state = lock._release_save()
    try:
        yield
    finally:
        lock._acquire_restore(state)


class Collide:
    """Read, then wait (the world unlocked) until a second writer has read too, then write:
    the first two allocations that meet read the same number. Later ones let others in
    between their read and their write without waiting for them."""

    def __init__(self) -> None:
        self.readers = 0
        self.cond = threading.Condition()

    def between(self, world: World) -> None:
        with self.cond:
            self.readers += 1
            first = self.readers == 1
            self.cond.notify_all()
        with unlocked(world):
            if first:
                with self.cond:
                    self.cond.wait_for(lambda: self.readers >= 2, timeout=30)


def test_github_issue_numbers_allocated_read_then_write(monkeypatch: pytest.MonkeyPatch) -> None:
    collide = Collide()
    allocate: Callable[..., int] = Issues.next_number

    def racy(self: Issues, s: Any, repo: Any) -> int:
        number = allocate(self, s, repo)
        collide.between(self.state.world)
        return number

    monkeypatch.setattr(Issues, "next_number", racy)
    subject = "GET /repos/{owner}/{repo}/issues while 3x5 issue creates"
    problems = run("github", subject)[subject]
    # Two creates read the same number: the fake's (repository, number) key refuses the
    # second insert, answered 500, and that issue is never made (without the key, both would
    # be made with one number: "two writes answered the same key").
    assert collide.readers >= 2
    assert any("(issue creates): POST issues: HTTP 500" in p for p in problems), problems


def test_linear_issue_numbers_allocated_read_then_write(monkeypatch: pytest.MonkeyPatch) -> None:
    collide = Collide()
    mint: Callable[..., str] = LinearBackend._fresh_id

    def racy(self: LinearBackend, s: Any, model: Any, wanted: str | None) -> str:
        # Called after the issue's number is read and before the row is written (its id
        # minted after the pause, so that only the numbers meet).
        collide.between(self.world)
        return mint(self, s, model, wanted)

    monkeypatch.setattr(LinearBackend, "_fresh_id", racy)
    subject = "Query.issues while 3x5 issue creates"
    problems = run("linear", subject)[subject]
    assert any("two writes answered the same key: [ENG-" in p for p in problems), problems
    # The list afterwards has both issues of one identifier.
    assert any("the list afterwards holds item(s) twice" in p for p in problems), problems


def test_linear_cursor_that_is_an_offset(monkeypatch: pytest.MonkeyPatch) -> None:
    """Linear's cursors (node ids) made offsets: its issues come newest first, so each issue
    created during the walk shifts the rest and the next page repeats the last."""

    def cursor(index: int, node: Any) -> str:
        return str(index)

    def index(value: str, items: Any) -> int:
        return int(value)

    monkeypatch.setattr(
        linear_connections, "PAGING", replace(linear_connections.PAGING, cursor=cursor, index=index)
    )
    subject = "Query.issues while 3x5 issue creates"
    problems = run("linear", subject)[subject]
    assert repeated(problems), problems


def test_slack_history_cursor_that_is_an_offset(monkeypatch: pytest.MonkeyPatch) -> None:
    """``conversations.history`` paged by an offset (base64 of a number) instead of the
    newest message's ``ts``: the history is newest first, so each message posted during the
    walk shifts the rest and the next page repeats the last."""
    history = SlackBackend.history

    def offset(
        self: SlackBackend, caller: Any, channel: Any, window: Any, limit: int, cursor: str | None
    ) -> slack_wire.History:
        start = int(base64.b64decode(cursor).decode()) if cursor else 0
        whole = history(self, caller, channel, window, 1000, None)
        more = len(whole.messages) > start + limit
        nxt = base64.b64encode(str(start + limit).encode()).decode() if more else ""
        return whole.model_copy(
            update={
                "messages": whole.messages[start : start + limit],
                "has_more": more,
                "response_metadata": slack_wire.ResponseMetadata(next_cursor=nxt),
            }
        )

    monkeypatch.setattr(SlackBackend, "history", offset)
    subject = "conversations.history while 3x5 messages"
    problems = run("slack", subject)[subject]
    assert repeated(problems), problems


def test_github_cursor_that_is_an_offset(monkeypatch: pytest.MonkeyPatch) -> None:
    """The GitHub fake's GraphQL cursors as they were before this family found them: an
    offset alone (``cursor:v2:<offset>``). ``Repository.issues`` newest first puts each issue
    created during the walk ahead of it, so the next page repeats the last."""
    from fakes.github.graphql import connections as github_connections

    monkeypatch.setattr(
        github_connections,
        "_row_key",
        lambda node: None,  # no node named: the cursor is the offset and nothing else
    )
    subject = (
        "Repository.issues (orderBy: {field: CREATED_AT, direction: DESC}) while 3x5 issue creates"
    )
    problems = run("github", subject)[subject]
    assert repeated(problems), problems
