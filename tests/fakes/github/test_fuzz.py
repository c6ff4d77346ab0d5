"""Schemathesis over the GitHub fake: REST from the OpenAPI document FastAPI builds from its
routes, GraphQL from the fake's SDL; 0 server errors, and every 4xx in GitHub's shape.

The document is produced here from the app (the fake serves none: GitHub has no such route).
Path parameters that name the demo's repository get its real names as well as arbitrary
strings, so generated requests reach the handlers behind the repository lookup.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import requests
import schemathesis
from hypothesis import strategies as st
from schemathesis.graphql import nodes

from fakes.core.net import Net
from fakes.github.graphql.errors import INTERNAL
from fakes.github.routes import GitHubHeaders
from tests.fakes.fuzzing import (
    Tally,
    caught,
    fuzz,
    fuzz_variables,
    graphql_answered,
    report,
    served_fake,
)

HEADERS = {"Authorization": "token ghp_fuzz000000000000000000000000000000"}
EXAMPLES = 6
"""Valid generated requests per operation (and per GraphQL root field, with variables)."""
NEGATIVE = 3
"""Invalid generated requests per REST operation (schemathesis' negative mode)."""

KNOWN = {"owner": "acme", "repo": "semverkit"}
HINTS: dict[str, list[Any]] = {
    "number": [3, 7, 10, 15],
    "login": ["alice", "acme-agent"],
    "branch": ["main"],
    "ref": ["heads/main", "main"],
    "path": ["README.md", "semverkit/__init__.py"],
}


# GitHub's custom scalars that inputs require (createCommitOnBranch, createRef, updateRefs):
# schemathesis draws only what it has a strategy for. Object ids of the demo's history now and
# then, so that some requests get past the lookups.
_OIDS = st.sampled_from(["0" * 40, "f" * 40]) | st.text("0123456789abcdef", max_size=41)
schemathesis.graphql.scalar("GitObjectID", _OIDS.map(nodes.String))
schemathesis.graphql.scalar(
    "GitRefname", st.sampled_from(["refs/heads/main", "refs/heads/x", "main"]).map(nodes.String)
)
schemathesis.graphql.scalar(
    "Base64String", (st.sampled_from(["aGk=", ""]) | st.text(max_size=12)).map(nodes.String)
)


def rest_document(net: Net) -> dict[str, Any]:
    """The REST routes' OpenAPI document (root paths only: /api/v3 serves the same routes)."""
    rest = net.app.rest  # type: ignore[attr-defined]
    assert isinstance(rest, GitHubHeaders)
    doc = copy.deepcopy(rest.app.openapi())  # type: ignore[attr-defined]
    doc["paths"] = {p: v for p, v in doc["paths"].items() if not p.startswith("/api/v3")}
    for item in doc["paths"].values():
        for operation in item.values():
            for param in operation.get("parameters", []):
                hints = HINTS.get(param["name"])
                if param["in"] == "path" and hints is not None:
                    param["schema"] = {"anyOf": [{"enum": hints}, param["schema"]]}
    return doc


IDS_QUERY = """{ repository(owner: "acme", name: "semverkit") { id
  issues(first: 20) { nodes { id comments(first: 3) { nodes { id } } } }
  pullRequests(first: 20) { nodes { id headRefName } }
  labels(first: 20) { nodes { id name } } } }"""


def known_strings(endpoint: str) -> list[str]:
    """Names and global ids of the demo world, for generated variables to hit real objects."""
    data = requests.post(endpoint, json={"query": IDS_QUERY}, headers=HEADERS, timeout=20).json()
    found: list[str] = ["acme", "semverkit", "main", "alice"]

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)
        elif isinstance(value, str):
            found.append(value)

    walk(data["data"])
    assert len(found) > 10, data
    return found


def rest_judge(status: int, body: Any) -> str | None:
    if status >= 500:
        return "server error"
    if status >= 400:
        if not isinstance(body, dict):
            return f"a {status} that is not a JSON object"
        if not isinstance(body.get("message"), str):
            return "no message"
        if not isinstance(body.get("documentation_url"), str):
            return "no documentation_url"
        if status == 422 and "errors" in body and not isinstance(body["errors"], list):
            return "errors is not a list"
    return None


def graphql_judge(status: int, body: Any) -> str | None:
    if status >= 500:
        return "server error"
    if not isinstance(body, dict):
        return "not a JSON object"
    if status >= 400:
        return None if isinstance(body.get("message"), str) else "no message"
    errors = body.get("errors", [])
    if not isinstance(errors, list) or not all(isinstance(e, dict) for e in errors):
        return "errors is not a list of objects"
    for error in errors:
        if not isinstance(error.get("message"), str):
            return "an error without message"
        if error["message"].startswith(INTERNAL):
            return f"internal error: {error['message']}"
    if "data" not in body and not errors:
        return "neither data nor errors"
    return None


def test_rest_fuzz_has_no_server_errors(record_property: Callable[[str, object], None]) -> None:
    with served_fake("github") as (url, net, _world):
        schema = schemathesis.openapi.from_dict(rest_document(net))
        tally = Tally("github REST")
        fuzz(
            tally,
            schema,
            url,
            rest_judge,
            headers=HEADERS,
            examples=EXAMPLES,
            negative=NEGATIVE,
            known=KNOWN,
        )
        caught(net, tally)
    assert tally.operations >= 60
    record_property("fuzz", tally.line())
    assert not tally.errors, report(tally)
    # The requests reached the handlers, not only the lookups and validation.
    assert tally.answered >= 30, tally.line()


def test_graphql_fuzz_has_no_server_errors(record_property: Callable[[str, object], None]) -> None:
    from fakes.github.graphql.resolvers import SCHEMA_PATH

    sdl = SCHEMA_PATH.read_text()
    with served_fake("github") as (url, net, _world):
        schema = schemathesis.graphql.from_file(sdl)
        tally = Tally("github GraphQL", success=graphql_answered)
        endpoint = f"{url}/graphql"
        fuzz(
            tally,
            schema,
            endpoint,
            graphql_judge,
            headers=HEADERS,
            examples=EXAMPLES,
        )
        known = known_strings(endpoint)
        fuzz_variables(
            tally, sdl, endpoint, graphql_judge, headers=HEADERS, examples=EXAMPLES, known=known
        )
        caught(net, tally)
    assert tally.operations >= 40
    record_property("fuzz", tally.line())
    assert not tally.errors, report(tally)
    # Most generated arguments name nothing; some resolve to objects.
    assert tally.answered >= 10, tally.line()
