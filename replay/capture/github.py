"""Capturing a GitHub repository's issues, pull requests, comments, reviews and labels as of T.

REST only (the endpoints every GitHub, github.com or Enterprise, has). Items created after T
are dropped, and so are comments and reviews after T. State after T is rolled back from each
thread's issue events (``closed``, ``reopened``, ``labeled``, ``renamed``, ``assigned``...,
undone newest first); where the events API does not answer, the dated fields are rolled back
(``closed_at``/``merged_at`` after T: reopened, unmerged) and the rest is flagged.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, get_args

import httpx

from replay.base.worldstate import GitHubIssueEvent
from replay.capture.common import CaptureError, Ledger, iso, when

API_VERSION = "2022-11-28"


class GitHubReader:
    """A REST client for one GitHub: token auth, Link pagination, errors translated once."""

    def __init__(self, base_url: str, token: str, transport: httpx.BaseTransport | None = None):
        self.base = base_url.rstrip("/")
        self.http = httpx.Client(
            base_url=self.base,
            headers={
                "Authorization": f"Bearer {token}",
                "Accept": "application/vnd.github+json",
                "X-GitHub-Api-Version": API_VERSION,
            },
            timeout=60,
            transport=transport,
        )

    def close(self) -> None:
        self.http.close()

    def get(self, path: str, **params: Any) -> Any:
        response = self.http.get(path, params=params or None)
        if response.status_code >= 400:
            raise CaptureError(f"GitHub GET {path}: {response.status_code} {response.text[:200]}")
        return response.json()

    def maybe(self, path: str) -> list[Any] | None:
        """A paged list, or None when the endpoint does not exist here (404)."""
        response = self.http.get(path, params={"per_page": 100})
        if response.status_code == 404:
            return None
        if response.status_code >= 400:
            raise CaptureError(f"GitHub GET {path}: {response.status_code} {response.text[:200]}")
        return self._rest(response)

    def pages(self, path: str, **params: Any) -> list[Any]:
        response = self.http.get(path, params={"per_page": 100, **params})
        if response.status_code >= 400:
            raise CaptureError(f"GitHub GET {path}: {response.status_code} {response.text[:200]}")
        return self._rest(response)

    def _rest(self, response: httpx.Response) -> list[Any]:
        items: list[Any] = list(response.json())
        while "next" in response.links:
            response = self.http.get(response.links["next"]["url"])
            if response.status_code >= 400:
                raise CaptureError(f"GitHub paging: {response.status_code} {response.text[:200]}")
            items += response.json()
        return items


def _login(user: Any) -> str:
    return str(user["login"]) if isinstance(user, dict) else "ghost"


def undo_events(thread: dict[str, Any], events: list[dict[str, Any]], at: datetime) -> bool:
    """Undo, newest first, every event after T on ``thread`` (a state dict); True if any."""
    later = sorted(
        (e for e in events if when(e["created_at"]) > at),
        key=lambda e: when(e["created_at"]),
        reverse=True,
    )
    closes = sorted(
        when(e["created_at"])
        for e in events
        if e.get("event") == "closed" and when(e["created_at"]) <= at
    )
    for e in later:
        kind = e.get("event")
        if kind == "closed":
            thread.update(state="open", closed_at=None)
            if "state_reason" in thread:
                thread["state_reason"] = None
        elif kind == "reopened":
            thread.update(state="closed", closed_at=iso(closes[-1]) if closes else iso(at))
        elif kind == "merged":
            thread.update(merged_at=None, merge_commit_sha=None, merged_by=None)
        elif kind == "labeled" and e.get("label"):
            thread["labels"] = [n for n in thread["labels"] if n != e["label"]["name"]]
        elif kind == "unlabeled" and e.get("label"):
            thread["labels"] = [*thread["labels"], e["label"]["name"]]
        elif kind == "renamed" and e.get("rename"):
            thread["title"] = e["rename"]["from"]
        elif kind == "assigned" and e.get("assignee"):
            thread["assignees"] = [a for a in thread["assignees"] if a != _login(e["assignee"])]
        elif kind == "unassigned" and e.get("assignee"):
            thread["assignees"] = [*thread["assignees"], _login(e["assignee"])]
    return bool(later)


KEPT_EVENTS = frozenset(get_args(GitHubIssueEvent.model_fields["event"].annotation))
"""The issue events that change a thread's state (the snapshot's kinds); kept when by T."""


def kept_events(events: list[dict[str, Any]], at: datetime) -> list[dict[str, Any]]:
    """The thread's state-changing events at or before T, in the snapshot's shape."""
    kept = []
    for e in events:
        if e.get("event") not in KEPT_EVENTS or when(e["created_at"]) > at:
            continue
        item: dict[str, Any] = {
            "id": e["id"],
            "event": e["event"],
            "actor": _login(e.get("actor")),
            "created_at": e["created_at"],
        }
        if e.get("label"):
            item["label"] = e["label"]["name"]
        if e.get("assignee"):
            item["assignee"] = _login(e["assignee"])
        if e.get("rename"):
            item["rename_from"], item["rename_to"] = e["rename"]["from"], e["rename"]["to"]
        if e.get("commit_id"):
            item["commit_id"] = e["commit_id"]
        if e.get("state_reason"):
            item["state_reason"] = e["state_reason"]
        kept.append(item)
    return sorted(kept, key=lambda e: (when(e["created_at"]), e["id"]))


def _thread(raw: dict[str, Any], repo: str, at: datetime) -> dict[str, Any]:
    return {
        "repo": repo,
        "number": raw["number"],
        "id": raw["id"],
        "title": raw["title"],
        "body": raw.get("body"),
        "state": raw["state"],
        "author": _login(raw.get("user")),
        "labels": [lb["name"] if isinstance(lb, dict) else lb for lb in raw.get("labels") or []],
        "assignees": [_login(a) for a in raw.get("assignees") or []],
        "created_at": raw["created_at"],
        "closed_at": raw.get("closed_at"),
    }


def _comments(
    reader: GitHubReader, repo: str, number: int, at: datetime, led: Ledger, late: list[datetime]
) -> list[Any]:
    """The thread's comments at T; ``late`` gets the times of those after T."""
    kept = []
    for c in reader.pages(f"/repos/{repo}/issues/{number}/comments"):
        if when(c["created_at"]) > at:
            led.dropped["github.comment"] += 1
            late.append(when(c["created_at"]))
            continue
        body = c.get("body") or ""
        if c.get("updated_at") and when(c["updated_at"]) > at:
            led.flag("github", f"{repo}#{number} comment {c['id']}", "edited after T; the "
                     "REST API keeps no edit history, so the text is the edited one")  # fmt: skip
        kept.append(
            {
                "id": c["id"],
                "author": _login(c.get("user")),
                "body": body,
                "created_at": c["created_at"],
                "updated_at": c["created_at"],
            }
        )
    return kept


def _roll_back(
    reader: GitHubReader,
    thread: dict[str, Any],
    raw: dict[str, Any],
    at: datetime,
    led: Ledger,
    late: list[datetime],
) -> None:
    """Undo what happened after T; ``late`` holds the times of later activity already dropped
    (comments, reviews), which explain an ``updated_at`` after T."""
    repo, number = thread["repo"], thread["number"]
    item = f"{repo}#{number}"
    events = reader.maybe(f"/repos/{repo}/issues/{number}/events")
    if events is not None:
        if undo_events(thread, events, at):
            led.rolled_back.append(item)
        thread["events"] = kept_events(events, at)
        updated = when(raw["updated_at"]) if raw.get("updated_at") else None
        explained = {when(e["created_at"]) for e in events} | set(late)
        if updated is not None and updated > at and updated not in explained:
            led.flag(
                "github",
                item,
                f"updated after T ({raw['updated_at']}) by something no issue event or comment "
                "dates (a body edit, a push): body and head are as of capture",
            )
        return
    # No history here: roll back what the object dates itself, flag the rest.
    changed = False
    if thread.get("merged_at") and when(thread["merged_at"]) > at:
        thread.update(merged_at=None, merge_commit_sha=None, merged_by=None)
        changed = True
    if thread.get("closed_at") and when(thread["closed_at"]) > at:
        thread.update(state="open", closed_at=None)
        if "state_reason" in thread:
            thread["state_reason"] = None
        changed = True
    if changed:
        led.rolled_back.append(item)
    if raw.get("updated_at") and when(raw["updated_at"]) > at:
        led.flag(
            "github",
            item,
            f"updated after T ({raw['updated_at']}); GET /repos/{repo}/issues/{number}/events "
            "answered 404, so title, labels, assignees and body are as of capture, not T"
            + (" (closed/merged rolled back from their dates)" if changed else ""),
        )


def capture_github(
    reader: GitHubReader, repo: str, at: datetime, exclude: set[int], led: Ledger
) -> tuple[dict[str, Any], str]:
    """The repository's GitHub state at T, and its default branch."""
    meta = reader.get(f"/repos/{repo}")
    owner, name = repo.split("/")
    # The repository's own default branch (``master`` for many older ones), never a guess.
    branch = meta.get("default_branch")
    if not isinstance(branch, str) or not branch:
        raise CaptureError(f"GitHub GET /repos/{repo}: no default_branch in the answer")
    pushed = meta.get("pushed_at")
    labels = [
        {"name": lb["name"], "color": lb.get("color") or "ededed", "description": lb.get("desc")}
        for lb in (
            {**lb, "desc": lb.get("description")} for lb in reader.pages(f"/repos/{repo}/labels")
        )
    ]
    issues: list[dict[str, Any]] = []
    pulls: list[dict[str, Any]] = []
    for raw in reader.pages(f"/repos/{repo}/issues", state="all"):
        if raw.get("pull_request"):
            continue  # pull requests are read from /pulls
        if when(raw["created_at"]) > at or raw["number"] in exclude:
            led.dropped["github.issue"] += 1
            continue
        thread = _thread(raw, repo, at)
        thread["state_reason"] = raw.get("state_reason")
        late: list[datetime] = []
        thread["comments"] = _comments(reader, repo, raw["number"], at, led, late)
        _roll_back(reader, thread, raw, at, led, late)
        issues.append(thread)
    for raw in reader.pages(f"/repos/{repo}/pulls", state="all"):
        if when(raw["created_at"]) > at or raw["number"] in exclude:
            led.dropped["github.pull"] += 1
            continue
        # The list omits merged_by (as on github.com); the single pull has it.
        raw = reader.get(f"/repos/{repo}/pulls/{raw['number']}")
        thread = _thread(raw, repo, at)
        thread.update(
            head_ref=raw["head"]["ref"],
            base_ref=raw["base"]["ref"],
            head_sha=raw["head"]["sha"],
            base_sha=raw["base"]["sha"],
            draft=bool(raw.get("draft")),
            merged_at=raw.get("merged_at"),
            merge_commit_sha=raw.get("merge_commit_sha") if raw.get("merged_at") else None,
            merged_by=_login(raw["merged_by"]) if raw.get("merged_by") else None,
        )
        late = []
        thread["comments"] = _comments(reader, repo, raw["number"], at, led, late)
        reviews = reader.pages(f"/repos/{repo}/pulls/{raw['number']}/reviews")
        thread["reviews"] = [
            {
                "id": r["id"],
                "author": _login(r.get("user")),
                "state": r["state"],
                "body": r.get("body") or "",
                "commit_id": r["commit_id"],
                "submitted_at": r["submitted_at"],
            }
            for r in reviews
            if r.get("submitted_at") and when(r["submitted_at"]) <= at
        ]
        late += [when(r["submitted_at"]) for r in reviews if r.get("submitted_at")]
        _roll_back(reader, thread, raw, at, led, late)
        if raw.get("merged_at") and thread.get("merged_at") is None and thread["state"] == "open":
            led.flag("github", f"{repo}#{raw['number']}", "head_sha is the PR's last head, "
                     "which may include pushes after T")  # fmt: skip
        pulls.append(thread)
    issues.sort(key=lambda t: int(t["number"]))
    pulls.sort(key=lambda t: int(t["number"]))
    for thread in [*issues, *pulls]:
        stamps = [when(thread["created_at"])]
        stamps += [when(c["created_at"]) for c in thread["comments"]]
        stamps += [when(r["submitted_at"]) for r in thread.get("reviews", [])]
        if thread.get("closed_at"):
            stamps.append(when(thread["closed_at"]))
        thread["updated_at"] = iso(max(stamps))
    logins = {_login(reader.get("/user"))}
    for t in [*issues, *pulls]:
        logins |= {t["author"], *t["assignees"], *(t.get("merged_by") or "").split()}
        logins |= {c["author"] for c in t["comments"]}
        logins |= {r["author"] for r in t.get("reviews", [])}
        logins |= {e["actor"] for e in t.get("events", [])}
        logins |= {e["assignee"] for e in t.get("events", []) if e.get("assignee")}
    users = []
    for login in sorted(logins):
        u = reader.get(f"/users/{login}")
        users.append(
            {
                "login": u["login"],
                "id": u["id"],
                "name": u.get("name"),
                "email": u.get("email"),
                "type": u.get("type", "User"),
                "created_at": min(when(u["created_at"]), at),
            }
        )
    state = {
        "viewer": _login(reader.get("/user")),
        "users": users,
        "repos": [
            {
                "owner": owner,
                "name": name,
                "id": meta["id"],
                "description": meta.get("description"),
                "private": bool(meta.get("private")),
                "default_branch": branch,
                "created_at": meta["created_at"],
                "pushed_at": pushed if pushed and when(pushed) <= at else None,
                "labels": labels,
            }
        ],
        "issues": issues,
        "pulls": pulls,
    }
    return state, branch
