"""The world at the end of a run: the world at T with every event of the run applied.

End-state rules (:class:`replay.base.case.EndStateRule`) count the objects the world holds when
the agent hands back. Two sources could tell them: the fakes' state read at hand-back, or the
event log folded over the state at T. The grader takes the second, for three reasons:

- it is evidence the grader already holds and keeps (``events.jsonl`` beside the snapshot), so
  a grade can be recomputed years later from the run's files, and nothing new crosses from the
  world to the runner;
- the log is the one record every write lands in, in the same transaction as the write
  (``fakes/github/backend.py``), and the fakes record each change with what it changed to
  (``changes.{field}.to``, ``to_state``, a branch's ``to``), whatever route made it;
- the vocabulary of the log is closed (``replay/base/eventkinds.py``), so the fold below
  names every kind that changes an object it keeps, and a test holds it to the fakes.

What the fold cannot see it does not invent: a branch other than a default branch that the run
never touched is not in it (its commit at T is in git, not in the snapshot's state), and a
scripted person's reply (``*.human.replied``) is not a message here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from replay.base.endstate import OBJECTS
from replay.base.events import Event
from replay.base.formats import load_model
from replay.base.manifest import MANIFEST, Manifest
from replay.base.worldstate import GitHubState, LinearState, SlackState

ZERO = "0" * 40

Key = tuple[Any, ...]


@dataclass(frozen=True)
class WorldAtT:
    """What the fold starts from: the world's state at T, as the case's snapshot holds it."""

    github: GitHubState | None = None
    """GitHub's issues and pull requests at T."""
    linear: LinearState | None = None
    """Linear's issues and workflow states at T."""
    slack: SlackState | None = None
    """Slack's channels and messages at T."""
    branches: dict[tuple[str, str], str] = field(default_factory=dict)
    """Each repository's default branch at T, at the snapshot's base commit:
    ``(repo, branch) -> sha``."""


def world_at_t(snapshot: Path) -> WorldAtT:
    """The state at T of the snapshot directory ``snapshot``: its manifest and service parts.

    Read as files, not through :func:`replay.base.snapshot.load_snapshot`: the run already
    verified the snapshot (its world was started from it), and the grader needs neither its
    git stores nor its registry.
    """
    manifest = load_model(snapshot / MANIFEST, Manifest)
    parts = manifest.services
    github = load_model(snapshot / parts["github"], GitHubState) if "github" in parts else None
    linear = load_model(snapshot / parts["linear"], LinearState) if "linear" in parts else None
    slack = load_model(snapshot / parts["slack"], SlackState) if "slack" in parts else None
    branches = {(r.name, r.default_branch): r.base_commit for r in manifest.repositories}
    return WorldAtT(github, linear, slack, branches)


@dataclass
class EndState:
    """The world at the end, per type of object (``replay/base/endstate.py``), by identity."""

    objects: dict[str, dict[Key, dict[str, Any]]] = field(default_factory=dict)
    """``{type: {key: object}}``; an object is a dict of the type's fields."""

    def of(self, type_: str) -> list[dict[str, Any]]:
        """The objects of ``type_`` at the end, in the order they were first known."""
        return list(self.objects.get(type_, {}).values())

    def table(self, type_: str) -> dict[Key, dict[str, Any]]:
        return self.objects.setdefault(type_, {})


def end_state(events: Iterable[Event], at_t: WorldAtT | None = None) -> EndState:
    """The world at the end: ``at_t`` (nothing when None) with ``events`` applied in order."""
    state = EndState()
    defaults: set[tuple[str, str]] = set()
    if at_t is not None:
        _seed(state, at_t)
        defaults = set(at_t.branches)
    for e in events:
        apply = _APPLY.get(e.kind)
        if apply is not None:
            apply(state, e)
    # A branch deleted by the end is no longer in the world.
    branches = state.table("github.branch")
    for key in [k for k, b in branches.items() if b["sha"] is None]:
        del branches[key]
    for b in branches.values():
        b["default"] = b["default"] or (b["repo"], b["branch"]) in defaults
    return state


# ---------------------------------------------------------------------------- the state at T


def _seed(state: EndState, at_t: WorldAtT) -> None:
    if at_t.github is not None:
        pulls, issues = state.table("github.pull_request"), state.table("github.issue")
        for p in at_t.github.pulls:
            pulls[(p.repo, p.number)] = {
                "repo": p.repo,
                "number": p.number,
                "title": p.title,
                "body": p.body,
                "state": p.state,
                "merged": p.merged_at is not None,
                "draft": p.draft,
                "head": p.head_ref,
                "base": p.base_ref,
                "author": p.author,
                "labels": list(p.labels),
            }
        for i in at_t.github.issues:
            issues[(i.repo, i.number)] = {
                "repo": i.repo,
                "number": i.number,
                "title": i.title,
                "body": i.body,
                "state": i.state,
                "state_reason": i.state_reason,
                "author": i.author,
                "labels": list(i.labels),
                "assignees": list(i.assignees),
            }
    branches = state.table("github.branch")
    for (repo, name), sha in at_t.branches.items():
        branches[(repo, name)] = _branch(repo, name, sha, sha, default=True)
    if at_t.linear is not None:
        names = {s.id: s.name for s in at_t.linear.workflow_states}
        tickets = state.table("linear.issue")
        for t in at_t.linear.issues:
            tickets[(t.identifier,)] = {
                "identifier": t.identifier,
                "title": t.title,
                "state": names.get(t.state),
                "team": t.team,
            }
    if at_t.slack is not None:
        messages = state.table("slack.message")
        for ch in at_t.slack.channels:
            for m in ch.messages:
                messages[(ch.id, m.ts)] = {
                    "channel": ch.id,
                    "channel_name": ch.name,
                    "ts": m.ts,
                    "thread_ts": m.thread_ts,
                    "text": m.text,
                    "author": m.user,
                }


def _branch(
    repo: str, name: str, sha: str | None, at_t: str | None, default: bool
) -> dict[str, Any]:
    return {
        "repo": repo,
        "branch": name,
        "sha": sha,
        "at_t": at_t,
        "moved": sha != at_t,
        "default": default,
    }


# ---------------------------------------------------------------------------- each kind


def _thread(state: EndState, e: Event) -> dict[str, Any] | None:
    """The issue or pull request an event names, wherever it is kept; None when unknown."""
    key = (e.data.get("repo"), e.data.get("number"))
    for type_ in ("github.pull_request", "github.issue"):
        found = state.table(type_).get(key)
        if found is not None:
            return found
    return None


def _known(state: EndState, type_: str, key: Key, **known: Any) -> dict[str, Any]:
    """The object ``key`` of ``type_``; one the fold never saw (it was not at T, or the state
    at T was not given) is made from what the event says, every other field null."""
    table = state.table(type_)
    if key not in table:
        blank: dict[str, Any] = {
            f: [] if f in ("labels", "assignees") else None for f in OBJECTS[type_].fields
        }
        table[key] = blank | known
    return table[key]


def _thread_updated(type_: str) -> Callable[[EndState, Event], None]:
    def apply(state: EndState, e: Event) -> None:
        repo, number = e.data.get("repo"), e.data.get("number")
        thread = _thread(state, e) or _known(state, type_, (repo, number), repo=repo, number=number)
        _changes(thread, e)

    return apply


def _changes(obj: dict[str, Any] | None, e: Event) -> None:
    """Each ``changes.{field}.to`` onto the object's field of the same name (``base`` and
    ``state`` included); changes to fields the end state does not keep are left out."""
    if obj is None:
        return
    for name, change in (e.data.get("changes") or {}).items():
        if name in obj and isinstance(change, dict) and "to" in change:
            obj[name] = change["to"]


def _pull_opened(state: EndState, e: Event) -> None:
    d = e.data
    state.table("github.pull_request")[(d.get("repo"), d.get("number"))] = {
        "repo": d.get("repo"),
        "number": d.get("number"),
        "title": d.get("title"),
        "body": d.get("body"),
        "state": "open",
        "merged": False,
        "draft": bool(d.get("draft")),
        "head": d.get("head"),
        "base": d.get("base"),
        "author": e.actor,
        "labels": [],
    }


def _pull_merged(state: EndState, e: Event) -> None:
    repo, number = e.data.get("repo"), e.data.get("number")
    pull = _known(state, "github.pull_request", (repo, number), repo=repo, number=number)
    pull["merged"], pull["state"] = True, "closed"


def _issue_opened(state: EndState, e: Event) -> None:
    d = e.data
    state.table("github.issue")[(d.get("repo"), d.get("number"))] = {
        "repo": d.get("repo"),
        "number": d.get("number"),
        "title": d.get("title"),
        "body": d.get("body"),
        "state": "open",
        "state_reason": None,
        "author": e.actor,
        "labels": list(d.get("labels") or []),
        "assignees": list(d.get("assignees") or []),
    }


def _label_added(state: EndState, e: Event) -> None:
    thread = _thread(state, e)
    if thread is not None and e.data.get("label") not in thread["labels"]:
        thread["labels"] = [*thread["labels"], e.data.get("label")]


def _label_removed(state: EndState, e: Event) -> None:
    thread = _thread(state, e)
    if thread is not None:
        thread["labels"] = [x for x in thread["labels"] if x != e.data.get("label")]


def _label_renamed(state: EndState, e: Event) -> None:
    change = (e.data.get("changes") or {}).get("name")
    if not isinstance(change, dict):
        return
    for type_ in ("github.pull_request", "github.issue"):
        for thread in state.table(type_).values():
            if thread["repo"] == e.data.get("repo"):
                thread["labels"] = [change.get("to") if x == change.get("from") else x
                                    for x in thread["labels"]]  # fmt: skip


def _label_deleted(state: EndState, e: Event) -> None:
    for type_ in ("github.pull_request", "github.issue"):
        for thread in state.table(type_).values():
            if thread["repo"] == e.data.get("repo"):
                thread["labels"] = [x for x in thread["labels"] if x != e.data.get("name")]


def _branch_moved(state: EndState, e: Event) -> None:
    d = e.data
    key = (str(d.get("repo")), str(d.get("branch")))
    branches = state.table("github.branch")
    after = None if d.get("deleted") or d.get("to") == ZERO else d.get("to")
    known = branches.get(key)
    if known is None:
        # First seen now: where it was at T is where this move started from.
        before = None if d.get("created") or d.get("from") == ZERO else d.get("from")
        known = branches[key] = _branch(key[0], key[1], after, before, bool(d.get("default")))
    known["sha"] = after
    known["moved"] = after != known["at_t"]
    known["default"] = known["default"] or bool(d.get("default"))


def _ticket_created(state: EndState, e: Event) -> None:
    d = e.data
    state.table("linear.issue")[(d.get("identifier"),)] = {
        "identifier": d.get("identifier"),
        "title": d.get("title"),
        "state": d.get("state"),
        "team": d.get("team"),
    }


def _ticket_updated(state: EndState, e: Event) -> None:
    identifier = e.data.get("identifier")
    ticket = _known(state, "linear.issue", (identifier,), identifier=identifier)
    _changes(ticket, e)
    if e.data.get("to_state") is not None:
        ticket["state"] = e.data["to_state"]


def _message_posted(state: EndState, e: Event) -> None:
    d = e.data
    state.table("slack.message")[(d.get("channel"), d.get("ts"))] = {
        "channel": d.get("channel"),
        "channel_name": d.get("channel_name"),
        "ts": d.get("ts"),
        "thread_ts": d.get("thread_ts"),
        "text": d.get("text"),
        "author": e.actor,
    }


def _message_updated(state: EndState, e: Event) -> None:
    message = state.table("slack.message").get((e.data.get("channel"), e.data.get("ts")))
    if message is not None:
        message["text"] = e.data.get("text")


def _message_deleted(state: EndState, e: Event) -> None:
    state.table("slack.message").pop((e.data.get("channel"), e.data.get("ts")), None)


_APPLY = {
    "github.pull_request.opened": _pull_opened,
    "github.pull_request.updated": _thread_updated("github.pull_request"),
    "github.pull_request.merged": _pull_merged,
    "github.issue.opened": _issue_opened,
    "github.issue.updated": _thread_updated("github.issue"),
    "github.label.added": _label_added,
    "github.label.removed": _label_removed,
    "github.label.updated": _label_renamed,
    "github.label.deleted": _label_deleted,
    "github.branch.moved": _branch_moved,
    "linear.issue.created": _ticket_created,
    "linear.issue.updated": _ticket_updated,
    "slack.message.posted": _message_posted,
    "slack.message.updated": _message_updated,
    "slack.message.deleted": _message_deleted,
}
"""What each kind of event does to the end state; kinds not here change nothing it keeps."""
