"""Schemathesis over the Slack fake: every Web API method it serves, with Slack's documented
arguments, as form and JSON bodies; 0 server errors, and every answer in Slack's shape
(HTTP 200 ``{"ok": ...}``; ``ok: false`` with a string ``error`` that is never
``fatal_error``/``internal_error``; a 429 only for ``ratelimited``).

The fake serves one route, ``/api/{method}``, so the OpenAPI document FastAPI would build says
nothing about arguments. The document is built here instead, one operation per method in
:data:`fakes.slack.METHODS`, from the arguments Slack documents for it (api.slack.com/methods).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import schemathesis

from fakes.slack import METHODS
from tests.fakes.fuzzing import DEMO, Tally, caught, fuzz, report, served_fake

HEADERS = {"Authorization": "Bearer xoxp-fuzz-0000000000-0000000000"}
EXAMPLES = 10
"""Valid generated requests per method."""
NEGATIVE = 6
"""Invalid generated requests per method (schemathesis' negative mode)."""

TEXT: dict[str, Any] = {"type": "string"}
INT: dict[str, Any] = {"type": "integer"}
BOOL: dict[str, Any] = {"type": "boolean"}

ARGS: dict[str, dict[str, dict[str, Any]]] = {
    "api.test": {"error": TEXT, "foo": TEXT},
    "auth.test": {},
    "chat.postMessage": {
        "channel": TEXT,
        "text": TEXT,
        "blocks": TEXT,
        "thread_ts": TEXT,
        "reply_broadcast": BOOL,
    },
    "chat.update": {"channel": TEXT, "ts": TEXT, "text": TEXT, "blocks": TEXT},
    "chat.delete": {"channel": TEXT, "ts": TEXT},
    "chat.getPermalink": {"channel": TEXT, "message_ts": TEXT},
    "conversations.list": {
        "types": TEXT,
        "exclude_archived": BOOL,
        "limit": INT,
        "cursor": TEXT,
    },
    "conversations.info": {"channel": TEXT, "include_num_members": BOOL},
    "conversations.history": {
        "channel": TEXT,
        "oldest": TEXT,
        "latest": TEXT,
        "inclusive": BOOL,
        "limit": INT,
        "cursor": TEXT,
    },
    "conversations.replies": {
        "channel": TEXT,
        "ts": TEXT,
        "oldest": TEXT,
        "latest": TEXT,
        "inclusive": BOOL,
        "limit": INT,
        "cursor": TEXT,
    },
    "conversations.members": {"channel": TEXT, "limit": INT, "cursor": TEXT},
    "conversations.join": {"channel": TEXT},
    "users.list": {"limit": INT, "cursor": TEXT},
    "users.info": {"user": TEXT},
    "reactions.add": {"channel": TEXT, "timestamp": TEXT, "name": TEXT},
    "reactions.remove": {"channel": TEXT, "timestamp": TEXT, "name": TEXT},
    "search.messages": {"query": TEXT, "count": INT, "page": INT, "sort_dir": TEXT},
}
"""Each method's arguments as Slack documents them (the ones the fake reads)."""


def hints() -> dict[str, list[str]]:
    """Real channel ids, timestamps and user ids of the demo workspace, per argument."""
    state = json.loads((DEMO / "slack.json").read_text())
    stamps = [m["ts"] for c in state["channels"] for m in c.get("messages", [])]
    return {
        "channel": [c["id"] for c in state["channels"]],
        "ts": stamps,
        "timestamp": stamps,
        "message_ts": stamps,
        "thread_ts": stamps,
        "user": [u["id"] for u in state["users"]],
        "name": ["eyes", "white_check_mark"],
    }


def document() -> dict[str, Any]:
    """An OpenAPI document of the fake's methods: POST, form or JSON body, every arg optional
    (Slack answers a missing one itself); known ids offered beside arbitrary strings."""
    known = hints()
    paths: dict[str, Any] = {}
    for method, args in ARGS.items():
        properties = {
            name: {"anyOf": [{"enum": known[name]}, schema]} if name in known else schema
            for name, schema in args.items()
        }
        body = {"type": "object", "properties": properties, "additionalProperties": False}
        paths[f"/api/{method}"] = {
            "post": {
                "operationId": method,
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/x-www-form-urlencoded": {"schema": body},
                        "application/json": {"schema": body},
                    },
                },
                "responses": {"200": {"description": "ok or an error"}},
            }
        }
    return {
        "openapi": "3.0.3",
        "info": {"title": "Slack Web API (the fake's methods)", "version": "1"},
        "paths": paths,
    }


def judge(status: int, body: Any) -> str | None:
    if status >= 500:
        return "server error"
    if not isinstance(body, dict) or not isinstance(body.get("ok"), bool):
        return "not a Slack answer"
    if body["ok"]:
        return None if status == 200 else f"ok with status {status}"
    error = body.get("error")
    if not isinstance(error, str) or not error:
        return "ok: false without an error"
    if error in ("fatal_error", "internal_error"):
        return f"Slack-side failure: {error}"
    if status == 429:
        return None if error == "ratelimited" else f"429 with {error}"
    return None if status == 200 else f"an error with status {status}"


def test_the_table_covers_every_method() -> None:
    assert set(ARGS) == set(METHODS)


def test_web_api_fuzz_has_no_server_errors(record_property: Callable[[str, object], None]) -> None:
    with served_fake("slack") as (url, net, _world):
        schema = schemathesis.openapi.from_dict(document())
        tally = Tally(
            "slack Web API",
            success=lambda status, body: isinstance(body, dict) and body.get("ok") is True,
        )
        fuzz(tally, schema, url, judge, headers=HEADERS, examples=EXAMPLES, negative=NEGATIVE)
        caught(net, tally)
    assert tally.operations == len(METHODS)
    record_property("fuzz", tally.line())
    assert not tally.errors, report(tally)
    assert tally.answered >= 20, tally.line()
