"""Capturing a Linear team's issues and comments as of T, through Linear's GraphQL API.

Issues created after T and comments after T are dropped. An issue's workflow state, assignee
and labels at T come from its history (``Issue.history``: ``fromState``/``toState``...,
undone newest first); where the API has no history field, issues updated after T are flagged.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import httpx

from replay.capture.common import CaptureError, Ledger, iso, when

_ISSUE = """
id number title description priority estimate createdAt updatedAt startedAt completedAt
canceledAt state { id } assignee { id } creator { id } parent { id } labels { nodes { id } }
comments(first: 250) { nodes { id body createdAt updatedAt user { id } parent { id } } }
"""
_WORLD = """
query {
  viewer { id }
  organization { id name urlKey }
  teams(first: 250) { nodes { id key name createdAt } }
  users(first: 250) { nodes { id name displayName email active admin createdAt } }
  workflowStates(first: 250) { nodes { id name type position color team { key } } }
  issueLabels(first: 250) { nodes { id name color team { key } } }
}
"""
_HISTORY_PAGE = """history(first: 100, after: $historyAfter) {
  nodes {
    id createdAt actor { id } fromState { id } toState { id } fromAssignee { id }
    toAssignee { id } addedLabelIds removedLabelIds fromTitle toTitle fromPriority toPriority
    fromEstimate toEstimate fromParent { id } toParent { id } updatedDescription
  }
  pageInfo { hasNextPage endCursor }
}"""


def _issues_query(history: bool) -> str:
    """A page of the team's issues, each with its first page of history when ``history``."""
    extra = ", $historyAfter: String" if history else ""
    nodes = _ISSUE + (_HISTORY_PAGE if history else "")
    return (
        f"query($team: String!, $after: String{extra}) {{ issues(first: 50, after: $after, "
        "includeArchived: true, filter: {team: {key: {eq: $team}}}) { nodes { "
        + nodes
        + " } pageInfo { hasNextPage endCursor } } }"
    )


_HISTORY = "query($id: String!, $historyAfter: String) { issue(id: $id) { " + _HISTORY_PAGE + " } }"


class LinearReader:
    def __init__(self, url: str, key: str, transport: httpx.BaseTransport | None = None):
        # Personal API keys go without "Bearer"; OAuth tokens with it.
        auth = key if key.startswith("lin_api_") or " " in key else f"Bearer {key}"
        self.http = httpx.Client(headers={"Authorization": auth}, timeout=60, transport=transport)
        self.url = url

    def close(self) -> None:
        self.http.close()

    def query(self, query: str, **variables: Any) -> tuple[Any, list[Any]]:
        response = self.http.post(self.url, json={"query": query, "variables": variables})
        if response.status_code >= 500 or response.status_code in (401, 403):
            raise CaptureError(f"Linear: {response.status_code} {response.text[:200]}")
        body = response.json()
        return body.get("data"), body.get("errors") or []

    def data(self, query: str, **variables: Any) -> Any:
        data, errors = self.query(query, **variables)
        if errors:
            raise CaptureError(f"Linear: {errors[0].get('message')}")
        return data


def undo_history(issue: dict[str, Any], entries: list[dict[str, Any]], at: datetime) -> bool:
    later = sorted(
        (e for e in entries if when(e["createdAt"]) > at),
        key=lambda e: when(e["createdAt"]),
        reverse=True,
    )
    for e in later:
        if e.get("fromState"):
            issue["state"] = e["fromState"]["id"]
        if "fromAssignee" in e and (e.get("fromAssignee") or e.get("toAssignee")):
            issue["assignee"] = (e.get("fromAssignee") or {}).get("id")
        for label in e.get("addedLabelIds") or []:
            issue["labels"] = [x for x in issue["labels"] if x != label]
        for label in e.get("removedLabelIds") or []:
            issue["labels"] = [*issue["labels"], label]
        if e.get("fromTitle"):
            issue["title"] = e["fromTitle"]
        if e.get("fromPriority") is not None:
            issue["priority"] = e["fromPriority"]
        if e.get("fromEstimate") is not None or e.get("toEstimate") is not None:
            issue["estimate"] = e.get("fromEstimate")
        if e.get("fromParent") or e.get("toParent"):
            issue["parent"] = (e.get("fromParent") or {}).get("id")
    for key in ("started_at", "completed_at", "canceled_at"):
        if issue.get(key) and when(issue[key]) > at:
            issue[key] = None
    return bool(later)


def _rest_of_history(reader: LinearReader, issue_id: str, page: dict[str, Any]) -> list[Any]:
    """The issue's history nodes: the page that came with it, then the pages after it."""
    nodes: list[dict[str, Any]] = list(page["nodes"])
    while page["pageInfo"]["hasNextPage"]:
        data = reader.data(_HISTORY, id=issue_id, historyAfter=page["pageInfo"]["endCursor"])
        page = data["issue"]["history"]
        nodes += page["nodes"]
    return nodes


def kept_history(entries: list[dict[str, Any]], at: datetime) -> list[dict[str, Any]]:
    """The issue's history at or before T, in the snapshot's shape."""
    kept = []
    for e in sorted(entries, key=lambda e: when(e["createdAt"])):
        if when(e["createdAt"]) > at:
            continue
        item: dict[str, Any] = {
            "id": e["id"],
            "actor": (e.get("actor") or {}).get("id"),
            "created_at": e["createdAt"],
        }
        for side in ("from", "to"):
            for key in ("State", "Assignee", "Parent"):
                if e.get(f"{side}{key}"):
                    item[f"{side}_{key.lower()}"] = e[f"{side}{key}"]["id"]
            for key in ("Title", "Priority", "Estimate"):
                if e.get(f"{side}{key}") is not None:
                    item[f"{side}_{key.lower()}"] = e[f"{side}{key}"]
        item["added_labels"] = list(e.get("addedLabelIds") or [])
        item["removed_labels"] = list(e.get("removedLabelIds") or [])
        item["updated_description"] = bool(e.get("updatedDescription"))
        kept.append(item)
    return kept


def capture_linear(
    reader: LinearReader, team_key: str, at: datetime, exclude: set[str], led: Ledger
) -> dict[str, Any]:
    world = reader.data(_WORLD)
    team = next((t for t in world["teams"]["nodes"] if t["key"] == team_key), None)
    if team is None:
        raise CaptureError(f"Linear: no team with key {team_key!r}")
    issues: list[dict[str, Any]] = []
    after: str | None = None
    history_missing: str | None = None
    while True:
        data, errors = reader.query(
            _issues_query(history_missing is None), team=team_key, after=after
        )
        if errors and history_missing is None and "history" in str(errors[0].get("message")):
            # This Linear serves no Issue.history: read without it, and say so per issue.
            history_missing = str(errors[0].get("message"))
            continue
        if errors:
            raise CaptureError(f"Linear: {errors[0].get('message')}")
        page = data["issues"]
        for raw in page["nodes"]:
            identifier = f"{team_key}-{int(raw['number'])}"
            if when(raw["createdAt"]) > at or identifier in exclude:
                led.dropped["linear.issue"] += 1
                continue
            comments = []
            for c in raw["comments"]["nodes"]:
                if when(c["createdAt"]) > at:
                    led.dropped["linear.comment"] += 1
                    continue
                if when(c["updatedAt"]) > at:
                    led.flag("linear", identifier, f"comment {c['id']} edited after T")
                comments.append(
                    {
                        "id": c["id"],
                        "user": (c.get("user") or {}).get("id") or world["viewer"]["id"],
                        "body": c["body"],
                        "parent": (c.get("parent") or {}).get("id"),
                        "created_at": c["createdAt"],
                        "updated_at": c["createdAt"],
                    }
                )
            issue = {
                "id": raw["id"],
                "team": team_key,
                "number": int(raw["number"]),
                "title": raw["title"],
                "description": raw.get("description"),
                "state": raw["state"]["id"],
                "priority": raw.get("priority") or 0,
                "estimate": raw.get("estimate"),
                "assignee": (raw.get("assignee") or {}).get("id"),
                "creator": (raw.get("creator") or {}).get("id") or world["viewer"]["id"],
                "labels": [lb["id"] for lb in raw["labels"]["nodes"]],
                "parent": (raw.get("parent") or {}).get("id"),
                "comments": comments,
                "created_at": raw["createdAt"],
                "started_at": raw.get("startedAt"),
                "completed_at": raw.get("completedAt"),
                "canceled_at": raw.get("canceledAt"),
            }
            if history_missing is not None:
                if when(raw["updatedAt"]) > at:
                    undo_history(issue, [], at)
                    led.flag(
                        "linear",
                        identifier,
                        f"updated after T ({raw['updatedAt']}) but Issue.history is not "
                        f"served ({history_missing}): state, assignee, labels and title are "
                        "as of capture (dates after T cleared)",
                    )
            else:
                entries = _rest_of_history(reader, raw["id"], raw["history"])
                if undo_history(issue, entries, at):
                    led.rolled_back.append(identifier)
                issue["history"] = kept_history(entries, at)
                edits = [e for e in entries if e.get("updatedDescription")]
                if any(when(e["createdAt"]) > at for e in edits):
                    led.flag("linear", identifier, "description edited after T; Linear keeps "
                             "no earlier text, so it is the edited one")  # fmt: skip
            stamps = [when(issue["created_at"])] + [when(c["created_at"]) for c in comments]
            stamps += [when(issue[k]) for k in ("started_at", "completed_at", "canceled_at")
                       if issue.get(k)]  # fmt: skip
            issue["updated_at"] = iso(max(stamps))
            issues.append(issue)
        if not page["pageInfo"]["hasNextPage"]:
            break
        after = page["pageInfo"]["endCursor"]
    return {
        "viewer": world["viewer"]["id"],
        "organization": {
            "id": world["organization"]["id"],
            "name": world["organization"]["name"],
            "url_key": world["organization"]["urlKey"],
        },
        "teams": [
            {"id": t["id"], "key": t["key"], "name": t["name"], "created_at": t["createdAt"]}
            for t in world["teams"]["nodes"]
            if t["key"] == team_key
        ],
        "users": [
            {
                "id": u["id"],
                "name": u["name"],
                "display_name": u["displayName"],
                "email": u["email"],
                "active": u.get("active", True),
                "admin": u.get("admin", False),
                "created_at": min(when(u["createdAt"]), at),
            }
            for u in world["users"]["nodes"]
        ],
        "workflow_states": [
            {
                "id": s["id"],
                "team": s["team"]["key"],
                "name": s["name"],
                "type": s["type"],
                "position": s["position"],
                "color": s.get("color") or "#95a2b3",
            }
            for s in world["workflowStates"]["nodes"]
            if s["team"]["key"] == team_key
        ],
        "labels": [
            {
                "id": lb["id"],
                "name": lb["name"],
                "color": lb.get("color") or "#95a2b3",
                "team": (lb.get("team") or {}).get("key"),
            }
            for lb in world["issueLabels"]["nodes"]
            if (lb.get("team") or {}).get("key") in (None, team_key)
        ],
        "issues": issues,
    }
