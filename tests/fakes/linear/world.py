"""A Linear workspace for the fake's tests, with a timeline that runs past T.

T is 2026-03-12T09:00:00Z. After T: ENG-1 is moved to Done and gets a comment, ENG-4 is
filed, a user joins. None of it may reach a client.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from replay.base.case import ScriptedReply
from replay.snapshot import build_snapshot
from tests import worlds

ORG = "8a1d0f3e-0000-4000-8000-00000000a0c3"
ENG = "8a1d0f3e-0000-4000-8000-0000000e0e01"
OPS = "8a1d0f3e-0000-4000-8000-0000000e0e02"
AGENT = "8a1d0f3e-0000-4000-8000-00000000a9e7"
ALICE = "8a1d0f3e-0000-4000-8000-0000000a11ce"
BOB = "8a1d0f3e-0000-4000-8000-000000000b0b"
LATE_USER = "8a1d0f3e-0000-4000-8000-0000000001a7"

BACKLOG = "8a1d0f3e-0000-4000-8000-00000005a001"
TODO = "8a1d0f3e-0000-4000-8000-00000005a002"
IN_PROGRESS = "8a1d0f3e-0000-4000-8000-00000005a003"
IN_REVIEW = "8a1d0f3e-0000-4000-8000-00000005a004"
DONE = "8a1d0f3e-0000-4000-8000-00000005a005"
CANCELED = "8a1d0f3e-0000-4000-8000-00000005a006"
OPS_TODO = "8a1d0f3e-0000-4000-8000-00000005b001"

BUG = "8a1d0f3e-0000-4000-8000-0000000ab001"
FRONTEND = "8a1d0f3e-0000-4000-8000-0000000ab002"
OPS_LABEL = "8a1d0f3e-0000-4000-8000-0000000ab003"

ENG_1 = "8a1d0f3e-0000-4000-8000-000000155001"
ENG_2 = "8a1d0f3e-0000-4000-8000-000000155002"
ENG_3 = "8a1d0f3e-0000-4000-8000-000000155003"
ENG_4 = "8a1d0f3e-0000-4000-8000-000000155004"
OPS_1 = "8a1d0f3e-0000-4000-8000-000000155101"

HINT = "Check lib.py: add() uses the wrong operator."
MENTION_REPLY = "Bob here: the ops runbook says restart twice."

HUMANS = [
    ScriptedReply(person=ALICE, service="linear", thread="ENG-1", text=HINT),
    ScriptedReply(
        person=BOB,
        service="linear",
        thread="ENG-2",
        trigger="mentions_person",
        text=MENTION_REPLY,
    ),
]


def _state(sid: str, team: str, name: str, kind: str, pos: float) -> dict[str, Any]:
    return {"id": sid, "team": team, "name": name, "type": kind, "position": pos}


def _user(uid: str, name: str, display: str, when: str = "2025-01-01T00:00:00Z") -> dict[str, Any]:
    return {
        "id": uid,
        "name": name,
        "display_name": display,
        "email": f"{display}@acme.test",
        "created_at": when,
    }


def linear() -> dict[str, Any]:
    return {
        "viewer": AGENT,
        "organization": {"id": ORG, "name": "Acme", "url_key": "acme"},
        "teams": [
            {"id": ENG, "key": "ENG", "name": "Engineering", "created_at": "2025-01-01T00:00:00Z"},
            {"id": OPS, "key": "OPS", "name": "Operations", "created_at": "2025-02-01T00:00:00Z"},
        ],
        "users": [
            _user(AGENT, "Agent", "agent"),
            _user(ALICE, "Alice Liddell", "alice"),
            _user(BOB, "Bob Builder", "bob"),
            _user(LATE_USER, "Late Comer", "late", "2026-03-13T00:00:00Z"),
        ],
        "workflow_states": [
            _state(BACKLOG, "ENG", "Backlog", "backlog", 0),
            _state(TODO, "ENG", "Todo", "unstarted", 1),
            _state(IN_PROGRESS, "ENG", "In Progress", "started", 2),
            _state(IN_REVIEW, "ENG", "In Review", "started", 3),
            _state(DONE, "ENG", "Done", "completed", 4),
            _state(CANCELED, "ENG", "Canceled", "canceled", 5),
            _state(OPS_TODO, "OPS", "Todo", "unstarted", 1),
        ],
        "labels": [
            {"id": BUG, "name": "Bug", "color": "#eb5757"},
            {"id": FRONTEND, "name": "Frontend", "team": "ENG"},
            {"id": OPS_LABEL, "name": "Oncall", "team": "OPS"},
        ],
        "issues": [
            {
                "id": ENG_1,
                "team": "ENG",
                "number": 1,
                "title": "add() subtracts instead of adding",
                "description": "1 + 1 gives 0 in lib.py",
                "state": TODO,
                "priority": 2,
                "creator": ALICE,
                "assignee": AGENT,
                "labels": [BUG],
                "created_at": "2026-03-10T00:00:00Z",
                "comments": [
                    {
                        "id": "8a1d0f3e-0000-4000-8000-00000c000001",
                        "user": ALICE,
                        "body": "Still broken on main.",
                        "created_at": "2026-03-11T00:00:00Z",
                    },
                    {
                        "id": "8a1d0f3e-0000-4000-8000-00000c000002",
                        "user": ALICE,
                        "body": "Fixed by the PR, thanks!",
                        "created_at": "2026-03-13T12:00:00Z",
                    },
                ],
                "history": [
                    {
                        "at": "2026-03-13T10:00:00Z",
                        "set": {"state": DONE, "completed_at": "2026-03-13T10:00:00Z"},
                    }
                ],
            },
            {
                "id": ENG_2,
                "team": "ENG",
                "number": 2,
                "title": "Flaky deploy on Fridays",
                "description": "The deploy job fails one run in three.",
                "state": BACKLOG,
                "priority": 4,
                "creator": BOB,
                "parent": ENG_1,
                "labels": [FRONTEND],
                "created_at": "2026-03-09T00:00:00Z",
            },
            {
                "id": ENG_3,
                "team": "ENG",
                "number": 3,
                "title": "Old crash in the parser",
                "state": DONE,
                "priority": 1,
                "creator": BOB,
                "assignee": BOB,
                "created_at": "2026-02-01T00:00:00Z",
                "started_at": "2026-02-02T00:00:00Z",
                "completed_at": "2026-02-03T00:00:00Z",
            },
            {
                "id": ENG_4,
                "team": "ENG",
                "number": 4,
                "title": "Filed after T: add() regression test",
                "state": TODO,
                "creator": ALICE,
                "created_at": "2026-03-14T00:00:00Z",
            },
            {
                "id": OPS_1,
                "team": "OPS",
                "number": 1,
                "title": "Rotate the deploy keys",
                "state": OPS_TODO,
                "creator": BOB,
                "labels": [OPS_LABEL],
                "created_at": "2026-03-01T00:00:00Z",
            },
        ],
    }


def build(root: Path) -> Path:
    """Write the sources (the tiny world with this Linear) and cut a snapshot at T."""
    src = root / "sources"
    src.mkdir(parents=True)
    worlds.write_history(src / "history")
    world = worlds.world()
    world["linear"] = linear()
    (src / "world.yaml").write_text(yaml.safe_dump(world, sort_keys=False))
    out = root / "snapshot"
    build_snapshot(src, out)
    return out
