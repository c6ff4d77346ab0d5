"""``Issue.history`` on the Linear fake: seeded from the snapshot, appended to by every
``issueUpdate``, paged like Linear's other connections, dumped in the snapshot's form; read
with gql, with the SDK's ``issue_history`` document, and with the capture tool's own query."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from gql import Client, GraphQLRequest, gql
from gql.transport.httpx import HTTPXTransport

from replay.base.worldstate import LinearHistoryEntry, LinearState
from replay.capture.common import Ledger
from replay.capture.linear import LinearReader, capture_linear
from replay.snapshot import build_snapshot, load_snapshot
from tests import worlds
from tests.fakes.linear import sdk_documents as sdk
from tests.fakes.linear import world as w
from tests.fakes.linear.conftest import API_KEY, HOST, Served, serve

T = datetime(2026, 3, 12, 9, tzinfo=UTC)
RETITLED = "Flaky deploy on Fridays and Mondays"
FIRST = "2026-03-10T12:00:00.000Z"
SECOND = "2026-03-11T08:00:00.000Z"

HISTORY = gql(
    """
    query History($id: String!, $first: Int, $after: String, $last: Int, $before: String,
                  $orderBy: PaginationOrderBy) {
      issue(id: $id) {
        history(first: $first, after: $after, last: $last, before: $before,
                orderBy: $orderBy, includeArchived: true) {
          nodes {
            id createdAt updatedAt archivedAt actorId actor { id displayName }
            issue { identifier }
            fromStateId toStateId fromState { name } toState { name }
            fromAssigneeId toAssigneeId fromAssignee { displayName } toAssignee { displayName }
            fromTitle toTitle fromPriority toPriority fromEstimate toEstimate
            fromParentId toParentId fromParent { identifier } toParent { identifier }
            addedLabelIds removedLabelIds addedLabels { name } removedLabels { name }
            updatedDescription descriptionUpdatedBy { id }
            fromTeam { id } fromCycle { id } toProject { id } fromDueDate botActor { name }
          }
          edges { cursor node { id } }
          pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
        }
      }
    }
    """
)

UPDATE = gql(
    """
    mutation Update($id: String!, $input: IssueUpdateInput!) {
      issueUpdate(id: $id, input: $input) { success issue { updatedAt } }
    }
    """
)


def _eng2_timeline(issue: dict[str, Any]) -> None:
    """ENG-2 at T: Alice moved it to Todo and gave it to Bob, then Bob retitled it, raised its
    priority and labelled it Bug; a move after T never reaches the snapshot."""
    issue["history"] = [
        {"at": "2026-03-10T12:00:00Z", "by": w.ALICE, "set": {"state": w.TODO, "assignee": w.BOB}},
        {
            "at": "2026-03-11T08:00:00Z",
            "by": w.BOB,
            "set": {"title": RETITLED, "priority": 2, "labels": [w.FRONTEND, w.BUG]},
        },
        {"at": "2026-03-13T08:00:00Z", "by": w.BOB, "set": {"state": w.IN_PROGRESS}},
    ]


@pytest.fixture(scope="module")
def history_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("linear-history")
    src = root / "sources"
    src.mkdir()
    worlds.write_history(src / "history")
    world = worlds.world()
    world["linear"] = w.linear()
    _eng2_timeline(next(i for i in world["linear"]["issues"] if i["id"] == w.ENG_2))
    (src / "world.yaml").write_text(yaml.safe_dump(world, sort_keys=False))
    build_snapshot(src, root / "snapshot")
    return root / "snapshot"


@pytest.fixture()
def served(history_dir: Path) -> Iterator[Served]:
    with serve(history_dir) as s:
        yield s


@pytest.fixture()
def client(served: Served) -> Client:
    transport = HTTPXTransport(url=served.graphql_url, headers={**HOST, "Authorization": API_KEY})
    return Client(transport=transport, fetch_schema_from_transport=True)


def run(client: Client, request: GraphQLRequest, **variables: Any) -> dict[str, Any]:
    with client as session:
        result: dict[str, Any] = session.execute(GraphQLRequest(request, variable_values=variables))
        return result


def history(client: Client, ref: str, **kw: Any) -> dict[str, Any]:
    got: dict[str, Any] = run(client, HISTORY, id=ref, **kw)["issue"]["history"]
    return got


def when(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def test_seeded_history_is_served_newest_first_and_nothing_after_t(client: Client) -> None:
    got = history(client, "ENG-2")
    labelled, moved = got["nodes"]
    assert [moved["createdAt"], labelled["createdAt"]] == [FIRST, SECOND]
    assert moved == {
        "id": moved["id"],
        "createdAt": FIRST,
        "updatedAt": FIRST,
        "archivedAt": None,
        "actorId": w.ALICE,
        "actor": {"id": w.ALICE, "displayName": "alice"},
        "issue": {"identifier": "ENG-2"},
        "fromStateId": w.BACKLOG,
        "toStateId": w.TODO,
        "fromState": {"name": "Backlog"},
        "toState": {"name": "Todo"},
        "fromAssigneeId": None,
        "toAssigneeId": w.BOB,
        "fromAssignee": None,
        "toAssignee": {"displayName": "bob"},
        "fromTitle": None,
        "toTitle": None,
        "fromPriority": None,
        "toPriority": None,
        "fromEstimate": None,
        "toEstimate": None,
        "fromParentId": None,
        "toParentId": None,
        "fromParent": None,
        "toParent": None,
        "addedLabelIds": None,
        "removedLabelIds": None,
        "addedLabels": None,
        "removedLabels": None,
        "updatedDescription": None,
        "descriptionUpdatedBy": None,
        "fromTeam": None,
        "fromCycle": None,
        "toProject": None,
        "fromDueDate": None,
        "botActor": None,
    }
    assert labelled["actorId"] == w.BOB
    assert (labelled["fromTitle"], labelled["toTitle"]) == ("Flaky deploy on Fridays", RETITLED)
    assert (labelled["fromPriority"], labelled["toPriority"]) == (4, 2)
    assert (labelled["addedLabelIds"], labelled["removedLabelIds"]) == ([w.BUG], [])
    assert (labelled["addedLabels"], labelled["removedLabels"]) == ([{"name": "Bug"}], [])
    assert labelled["fromStateId"] is None and labelled["toAssignee"] is None
    assert [e["cursor"] for e in got["edges"]] == [labelled["id"], moved["id"]]
    assert got["pageInfo"] == {
        "hasNextPage": False,
        "hasPreviousPage": False,
        "startCursor": labelled["id"],
        "endCursor": moved["id"],
    }
    # ENG-1 was moved to Done after T: that change is not part of the world at T.
    assert history(client, "ENG-1")["nodes"] == []
    assert history(client, "ENG-1")["pageInfo"]["endCursor"] is None


def test_each_issue_update_appends_one_node_by_the_viewer(client: Client, served: Served) -> None:
    moved = run(
        client,
        UPDATE,
        id="ENG-2",
        input={"stateId": w.IN_REVIEW, "assigneeId": w.AGENT, "removedLabelIds": [w.FRONTEND]},
    )["issueUpdate"]
    now = moved["issue"]["updatedAt"]
    assert when(now) > T
    newest = history(client, "ENG-2")["nodes"][0]
    assert newest["createdAt"] == newest["updatedAt"] == now
    assert newest["actorId"] == w.AGENT and newest["actor"]["displayName"] == "agent"
    assert (newest["fromStateId"], newest["toStateId"]) == (w.TODO, w.IN_REVIEW)
    assert (newest["fromState"], newest["toState"]) == ({"name": "Todo"}, {"name": "In Review"})
    assert (newest["fromAssigneeId"], newest["toAssigneeId"]) == (w.BOB, w.AGENT)
    assert (newest["addedLabelIds"], newest["removedLabelIds"]) == ([], [w.FRONTEND])
    assert newest["removedLabels"] == [{"name": "Frontend"}]
    assert newest["fromTitle"] is None and newest["fromPriority"] is None

    run(client, UPDATE, id=w.ENG_2, input={"title": "Deploys flake", "addedLabelIds": [w.FRONTEND]})
    run(client, UPDATE, id="ENG-2", input={"priority": 1, "estimate": 3, "parentId": None})
    run(client, UPDATE, id="ENG-2", input={"description": "Seen on Mondays too."})
    # Changing nothing records nothing, as it changes neither updatedAt nor the event log.
    run(client, UPDATE, id="ENG-2", input={"title": "Deploys flake", "stateId": w.IN_REVIEW})
    nodes = history(client, "ENG-2")["nodes"]
    assert len(nodes) == 6
    described, planned, retitled = nodes[0], nodes[1], nodes[2]
    assert (retitled["fromTitle"], retitled["toTitle"]) == (RETITLED, "Deploys flake")
    assert (retitled["addedLabelIds"], retitled["removedLabelIds"]) == ([w.FRONTEND], [])
    assert retitled["fromStateId"] is None and retitled["updatedDescription"] is None
    assert (planned["fromPriority"], planned["toPriority"]) == (2, 1)
    assert (planned["fromEstimate"], planned["toEstimate"]) == (None, 3)
    assert (planned["fromParentId"], planned["toParentId"]) == (w.ENG_1, None)
    assert planned["fromParent"] == {"identifier": "ENG-1"} and planned["toParent"] is None
    assert planned["addedLabelIds"] is None
    assert described["updatedDescription"] is True
    assert described["descriptionUpdatedBy"] == [{"id": w.AGENT}]
    assert described["fromTitle"] is None and described["toTitle"] is None
    stamps = [when(n["createdAt"]) for n in nodes]
    assert stamps == sorted(stamps, reverse=True)
    assert len({n["id"] for n in nodes}) == 6
    assert [e["kind"] for e in served.events()] == ["linear.issue.updated"] * 4


def test_pages_forward_and_backward(client: Client) -> None:
    for title in ("one", "two", "three"):
        run(client, UPDATE, id="ENG-2", input={"title": title})
    everything = [n["id"] for n in history(client, "ENG-2")["nodes"]]
    assert len(everything) == 5

    seen: list[str] = []
    after = None
    while True:
        page = history(client, "ENG-2", first=2, after=after)
        seen += [n["id"] for n in page["nodes"]]
        if not page["pageInfo"]["hasNextPage"]:
            break
        assert page["pageInfo"]["endCursor"] == page["nodes"][-1]["id"]
        after = page["pageInfo"]["endCursor"]
    assert seen == everything

    tail = history(client, "ENG-2", last=2)
    assert [n["id"] for n in tail["nodes"]] == everything[-2:]
    assert tail["pageInfo"]["hasPreviousPage"] is True and tail["pageInfo"]["hasNextPage"] is False
    before = history(client, "ENG-2", last=2, before=everything[2])
    assert [n["id"] for n in before["nodes"]] == everything[:2]
    middle = history(client, "ENG-2", first=1, after=everything[1])
    assert [n["toTitle"] for n in middle["nodes"]] == ["one"]
    assert [n["id"] for n in history(client, "ENG-2", orderBy="updatedAt")["nodes"]] == everything


def test_the_sdk_issue_history_document(served: Served) -> None:
    # linearClient.issue("ENG-2").then(issue => issue.history())
    served.post({"query": sdk.UPDATE_ISSUE, "variables": {"id": "ENG-2", "input": {"priority": 3}}})
    resp = served.post({"query": sdk.ISSUE_HISTORY, "variables": {"id": "ENG-2", "first": 50}})
    body = resp.json()
    assert resp.status_code == 200 and "errors" not in body, body
    conn = body["data"]["issue"]["history"]
    assert conn["__typename"] == "IssueHistoryConnection"
    newest, labelled, moved = conn["nodes"]
    assert newest["__typename"] == "IssueHistory" and newest["issue"] == {"id": w.ENG_2}
    assert (newest["fromPriority"], newest["toPriority"]) == (2, 3)
    assert newest["actor"] == {"id": w.AGENT} and newest["actors"][0]["isMe"] is True
    assert (
        labelled["addedLabels"][0]["name"] == "Bug"
        and labelled["addedLabels"][0]["isGroup"] is False
    )
    assert moved["fromState"] == {"id": w.BACKLOG} and moved["toAssignee"] == {"id": w.BOB}
    assert moved["relationChanges"] is None and moved["issueImport"] is None
    assert conn["pageInfo"]["hasNextPage"] is False


def _capture(served: Served, at: datetime) -> tuple[dict[str, Any], Ledger]:
    reader = LinearReader(served.graphql_url, API_KEY)
    reader.http.headers["Host"] = HOST["Host"]
    led = Ledger()
    try:
        return capture_linear(reader, "ENG", at, set(), led), led
    finally:
        reader.close()


def test_the_capture_tool_rolls_the_run_back_to_t(client: Client, served: Served) -> None:
    """What replay/capture/linear.py reads history for: changes dated after its T are undone,
    newest first, through the history that comes with each page of issues."""
    run(
        client,
        UPDATE,
        id="ENG-2",
        input={"stateId": w.DONE, "assigneeId": None, "labelIds": [w.FRONTEND]},
    )
    run(client, UPDATE, id="ENG-2", input={"title": "Fixed: deploys no longer flake"})

    got, led = _capture(served, T)
    assert led.flags == [] and led.rolled_back == ["ENG-2"]
    eng2 = next(i for i in got["issues"] if i["number"] == 2)
    assert eng2["state"] == w.TODO and eng2["assignee"] == w.BOB
    assert eng2["title"] == RETITLED and sorted(eng2["labels"]) == sorted([w.FRONTEND, w.BUG])
    assert eng2["completed_at"] is None

    # Further back, through the seeded history too: ENG-2 as Bob filed it.
    got, led = _capture(served, datetime(2026, 3, 9, 12, tzinfo=UTC))
    (filed,) = [i for i in got["issues"] if i["number"] == 2]
    assert filed["state"] == w.BACKLOG and filed["assignee"] is None
    assert filed["labels"] == [w.FRONTEND] and filed["title"] == "Flaky deploy on Fridays"
    assert "ENG-2" in led.rolled_back


def test_dump_round_trips_through_the_snapshot_model(served: Served, history_dir: Path) -> None:
    snapshot = load_snapshot(history_dir)
    seeded = {i.id: [h.model_dump(mode="json") for h in i.history] for i in snapshot.linear.issues}
    assert len(seeded[w.ENG_2]) == 2

    def dumped() -> dict[str, list[dict[str, Any]]]:
        state = httpx.get(served.url + "/_replay/state", headers=HOST).json()["linear"]
        return {i["id"]: i["history"] for i in state["issues"]}

    first = dumped()
    assert {k: [LinearHistoryEntry.model_validate(h) for h in v] for k, v in first.items()} == {
        k: [LinearHistoryEntry.model_validate(h) for h in v] for k, v in seeded.items()
    }
    served.post(
        {
            "query": sdk.UPDATE_ISSUE,
            "variables": {"id": "ENG-2", "input": {"stateId": w.DONE, "addedLabelIds": [w.BUG]}},
        }
    )
    after = dumped()[w.ENG_2]
    assert after[:2] == first[w.ENG_2]
    entry = LinearHistoryEntry.model_validate(after[2])
    assert (entry.actor, entry.from_state, entry.to_state) == (w.AGENT, w.TODO, w.DONE)
    assert entry.created_at > T and entry.added_labels == [] and entry.removed_labels == []

    # The whole world, its history replaced by the dump's, is still a valid LinearState.
    raw = snapshot.linear.model_dump(mode="json")
    for issue in raw["issues"]:
        issue["history"] = dumped()[issue["id"]]
    again = LinearState.model_validate(raw)
    eng2 = next(i for i in again.issues if i.id == w.ENG_2)
    assert [h.to_state for h in eng2.history] == [w.TODO, None, w.DONE]


def test_the_capture_tool_reads_history_past_its_first_page(client: Client, served: Served) -> None:
    """An issue changed more often than one page of history holds: the capture follows the
    history's cursor and still rolls every change after T back."""
    for n in range(105):
        run(client, UPDATE, id="ENG-2", input={"title": f"retitled {n}"})
    got, led = _capture(served, T)
    eng2 = next(i for i in got["issues"] if i["number"] == 2)
    assert eng2["title"] == RETITLED and led.rolled_back == ["ENG-2"]
    assert len(eng2["history"]) == 2  # the seeded changes before T, nothing after
