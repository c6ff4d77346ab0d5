"""A Slack workspace for the fake's tests, with a timeline that runs past T.

T is 2026-03-12T09:00:00Z (epoch 1773306000). Everything dated after it (a reply, a message,
a reaction, a whole channel) must be invisible to every client.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from replay.base.case import ScriptedReply
from replay.snapshot import build_snapshot
from tests import worlds

T_EPOCH = 1773306000

PARENT = "1773187200.000100"
"""#eng: Alice's report (2026-03-11), the ticket's thread."""
REPLY = "1773190800.000200"
"""#eng: Bob's reply in that thread, before T."""
QUESTION = "1773273600.000300"
"""#eng: a top-level message of Alice's with no replies."""
LATE_REPLY = "1773360000.000100"
LATE_MESSAGE = "1773370000.000400"
RANDOM = "1773100000.000100"
OPS = "1773200000.000100"


def slack() -> dict[str, Any]:
    return {
        "team": {"id": "T0ACME", "name": "Acme", "domain": "acme"},
        "bot_user": "U0BOT",
        "users": [
            {"id": "U0BOT", "name": "agent", "real_name": "Agent", "is_bot": True},
            {"id": "U0ALICE", "name": "alice", "real_name": "Alice Liddell", "tz": "Europe/Paris"},
            {"id": "U0BOB", "name": "bob", "real_name": "Bob Builder"},
            {"id": "U0CAROL", "name": "carol", "real_name": "Carol", "deleted": True},
        ],
        "channels": [
            {
                "id": "C0ENG",
                "name": "eng",
                "created": 1700000000,
                "creator": "U0ALICE",
                "topic": "Engineering",
                "members": ["U0BOT", "U0ALICE", "U0BOB"],
                "messages": [
                    {
                        "ts": PARENT,
                        "user": "U0ALICE",
                        "text": "semverkit add() is broken",
                        "reactions": [
                            {"name": "eyes", "users": ["U0BOB"], "at": "2026-03-11T01:00:00Z"},
                            {"name": "tada", "users": ["U0ALICE"], "at": "2026-03-14T00:00:00Z"},
                        ],
                    },
                    {
                        "ts": REPLY,
                        "user": "U0BOB",
                        "text": "I can reproduce it",
                        "thread_ts": PARENT,
                    },
                    {"ts": QUESTION, "user": "U0ALICE", "text": "anyone on the parser?"},
                    {
                        "ts": LATE_REPLY,
                        "user": "U0ALICE",
                        "text": "fixed in #3",
                        "thread_ts": PARENT,
                    },
                    {"ts": LATE_MESSAGE, "user": "U0BOB", "text": "release cut with the fix"},
                ],
            },
            {
                "id": "C0RANDOM",
                "name": "random",
                "created": 1700000100,
                "creator": "U0BOB",
                "members": ["U0ALICE", "U0BOB"],
                "messages": [{"ts": RANDOM, "user": "U0BOB", "text": "lunch? semverkit talk"}],
            },
            {
                "id": "G0SECRET",
                "name": "secret",
                "is_private": True,
                "created": 1700000200,
                "creator": "U0ALICE",
                "members": ["U0ALICE"],
                "messages": [
                    {"ts": "1773000000.000100", "user": "U0ALICE", "text": "semverkit secret"}
                ],
            },
            {
                "id": "G0OPS",
                "name": "ops",
                "is_private": True,
                "created": 1700000300,
                "creator": "U0ALICE",
                "members": ["U0BOT", "U0ALICE"],
                "messages": [{"ts": OPS, "user": "U0ALICE", "text": "deploy at five"}],
            },
            {
                "id": "C0LATE",
                "name": "postmortem",
                "created": 1773400000,
                "creator": "U0ALICE",
                "members": ["U0BOT", "U0ALICE"],
                "messages": [],
            },
        ],
    }


HUMANS = [
    ScriptedReply(
        person="U0ALICE",
        service="slack",
        thread=f"#eng/{PARENT}",
        trigger="asks_in_thread",
        text="Try parse(strict=False) first, that is what I did",
    ),
    ScriptedReply(
        person="U0BOB",
        service="slack",
        thread=f"#eng/{QUESTION}",
        trigger="mentions_person",
        text="I'm on the parser, see branch parser-fix",
    ),
    ScriptedReply(person="U0ALICE", service="github", thread="acme/tiny#1", text="not for slack"),
]


def build(root: Path) -> Path:
    """Sources with this workspace (the tiny world otherwise), built into a snapshot."""
    src = root / "sources"
    src.mkdir(parents=True)
    worlds.write_history(src / "history")
    data = worlds.world()
    data["slack"] = slack()
    (src / "world.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    out = root / "snapshot"
    build_snapshot(src, out)
    return out
