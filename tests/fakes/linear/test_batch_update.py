"""``issueBatchUpdate``: Linear's other way to move tickets, with ``issueUpdate``'s checks and
events for each issue, all or none (a ticket moved in a batch is the same
``linear.issue.updated`` a rule on the ticket names)."""

from __future__ import annotations

from typing import Any

from tests.fakes.linear.conftest import Served
from tests.fakes.linear.world import ENG_1, ENG_2, IN_REVIEW, OPS_1

BATCH = """mutation($ids: [UUID!]!, $input: IssueUpdateInput!) {
  issueBatchUpdate(ids: $ids, input: $input) {
    success lastSyncId issues { identifier state { name } }
  }
}"""


def batch(served: Served, ids: list[str], **input: Any) -> dict[str, Any]:
    answer: dict[str, Any] = served.post(
        {"query": BATCH, "variables": {"ids": ids, "input": input}}
    ).json()
    return answer


def test_a_batch_moves_each_ticket_as_issue_update_does(served: Served) -> None:
    done = batch(served, [ENG_1, ENG_2], stateId=IN_REVIEW)["data"]["issueBatchUpdate"]
    assert done["success"] is True
    assert done["issues"] == [
        {"identifier": "ENG-1", "state": {"name": "In Review"}},
        {"identifier": "ENG-2", "state": {"name": "In Review"}},
    ]
    moved = [e["data"] for e in served.events() if e["kind"] == "linear.issue.updated"]
    assert [(m["identifier"], m["from_state"], m["to_state"]) for m in moved] == [
        ("ENG-1", "Todo", "In Review"),
        ("ENG-2", "Backlog", "In Review"),
    ]


def test_one_refused_leaves_every_ticket_as_it_was(served: Served) -> None:
    # OPS-1 cannot take an ENG state: the whole batch is refused, ENG-1 included.
    refused = batch(served, [ENG_1, OPS_1], stateId=IN_REVIEW)
    assert refused["data"] is None
    assert refused["errors"][0]["extensions"]["type"] == "invalid input"
    assert served.events() == []
    state = served.post({"query": '{ issue(id: "ENG-1") { state { name } } }'}).json()
    assert state["data"]["issue"]["state"]["name"] == "Todo"


def test_ids_are_uuids_and_at_most_fifty(served: Served) -> None:
    named = served.post({"query": BATCH, "variables": {"ids": ["ENG-1"], "input": {}}})
    assert named.status_code == 400 and "UUID" in named.json()["errors"][0]["message"]
    many = batch(served, [ENG_1] * 51, stateId=IN_REVIEW)
    assert "50" in many["errors"][0]["extensions"]["userPresentableMessage"]
    assert served.events() == []
