"""Schemathesis over the Linear fake's GraphQL endpoint, from the fake's own SDL: generated
queries (inline arguments) and every root field asked with generated variables; 0 server
errors, and every error in Linear's shape (``extensions.type``, never ``internal error``)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import schemathesis

from fakes.linear.graphql.resolvers import SCHEMA_FILE
from tests.fakes.fuzzing import (
    DEMO,
    Tally,
    caught,
    fuzz,
    fuzz_variables,
    graphql_answered,
    report,
    served_fake,
)

HEADERS = {"Authorization": "lin_api_fuzz0000000000000000000000000000"}
EXAMPLES = 6
"""Generated requests per root field, for each of the two kinds (inline, variables)."""


def known_strings() -> list[str]:
    """Ids, identifiers, keys and names of the demo's Linear world."""
    state = json.loads((DEMO / "linear.json").read_text())
    found = ["ENG-1", "ENG-5", "ENG"]
    for rows in state.values():
        for row in rows if isinstance(rows, list) else []:
            found += [str(row[k]) for k in ("id", "key", "name") if row.get(k)]
    return found


def judge(status: int, body: Any) -> str | None:
    if status >= 500:
        return "server error"
    if not isinstance(body, dict):
        return "not a JSON object"
    errors = body.get("errors", [])
    if not isinstance(errors, list) or not all(isinstance(e, dict) for e in errors):
        return "errors is not a list of objects"
    for error in errors:
        if not isinstance(error.get("message"), str):
            return "an error without message"
        extensions = error.get("extensions")
        if not isinstance(extensions, dict) or not isinstance(extensions.get("type"), str):
            return f"an error without extensions.type: {error}"
        if extensions["type"] == "internal error":
            return f"internal error: {error['message']}"
    if status >= 400 and not errors:
        return f"a {status} without errors"
    if status < 400 and "data" not in body:
        return "no data"
    return None


def test_graphql_fuzz_has_no_server_errors(record_property: Callable[[str, object], None]) -> None:
    sdl = SCHEMA_FILE.read_text()
    with served_fake("linear") as (url, net, _world):
        endpoint = f"{url}/graphql"
        tally = Tally("linear GraphQL", success=graphql_answered)
        schema = schemathesis.graphql.from_file(sdl)
        fuzz(
            tally,
            schema,
            endpoint,
            judge,
            headers=HEADERS,
            examples=EXAMPLES,
        )
        fuzz_variables(
            tally, sdl, endpoint, judge, headers=HEADERS, examples=EXAMPLES, known=known_strings()
        )
        caught(net, tally)
    assert tally.operations >= 30
    record_property("fuzz", tally.line())
    assert not tally.errors, report(tally)
    assert tally.answered >= 30, tally.line()
