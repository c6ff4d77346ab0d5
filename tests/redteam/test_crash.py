"""Voiding a losing run by crashing a fake: one malformed request, then the run is "infra".

Each attempt must get an answer (no dropped connection), below 500, in the vendor's own error
shape (GitHub: ``message``; Linear's GraphQL: ``errors``; Slack: HTTP 200 with ``ok: false``
and an ``error``), and the gateway must record no ``gateway.addon_failed`` (which marks the
run invalid). Afterwards the fake still answers a plain read.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.redteam.conftest import PLACEHOLDER_GH, Agent, World

GH = {"Authorization": f"token {PLACEHOLDER_GH}", "Content-Type": "application/json"}
LINEAR = {"Authorization": "lin_api_replayplaceholder", "Content-Type": "application/json"}
SLACK = {"Authorization": "Bearer xoxb-replay-placeholder"}
SLACK_JSON = {**SLACK, "Content-Type": "application/json; charset=utf-8"}
BIG = "99999999999999999999999"


def _req(
    host: str, method: str, target: str, headers: dict[str, str], body: str | None = None
) -> dict[str, Any]:
    return {
        "mode": "connect",
        "tls": True,
        "host": host,
        "port": 443,
        "method": method,
        "target": target,
        "headers": headers,
        "body": body,
    }


ATTEMPTS: dict[str, tuple[str, dict[str, Any]]] = {
    "github-issue-number-overflow": (
        "github",
        _req("api.github.com", "GET", f"/repos/acme/semverkit/issues/{BIG}", GH),
    ),
    "github-issue-comments-overflow": (
        "github",
        _req("api.github.com", "GET", f"/repos/acme/semverkit/issues/{BIG}/comments", GH),
    ),
    "github-pull-number-overflow": (
        "github",
        _req("api.github.com", "GET", f"/repos/acme/semverkit/pulls/{BIG}", GH),
    ),
    "github-comment-id-overflow": (
        "github",
        _req("api.github.com", "GET", f"/repos/acme/semverkit/issues/comments/{BIG}", GH),
    ),
    "github-bad-utf8-owner": ("github", _req("api.github.com", "GET", "/repos/%ff%fe/x", GH)),
    "github-bad-utf8-raw": (
        "github",
        _req("raw.githubusercontent.com", "GET", "/acme/semverkit/main/%ff%fe", GH),
    ),
    "github-page-overflow": (
        "github-or-page",
        _req(
            "api.github.com", "GET", f"/repos/acme/semverkit/issues?per_page={BIG}&page={BIG}", GH
        ),
    ),
    "github-rest-bad-json": (
        "github",
        _req("api.github.com", "POST", "/repos/acme/semverkit/issues", GH, '{"title": '),
    ),
    "github-rest-wrong-types": (
        "github",
        _req(
            "api.github.com",
            "POST",
            "/repos/acme/semverkit/issues/7/comments",
            GH,
            json.dumps({"body": {"nested": [1, 2]}}),
        ),
    ),
    "github-graphql-bad-json": (
        "github-graphql",
        _req("api.github.com", "POST", "/graphql", GH, '{"query": "{ viewer { login } '),
    ),
    "github-graphql-int-overflow": (
        "github-graphql",
        _req(
            "api.github.com",
            "POST",
            "/graphql",
            GH,
            json.dumps(
                {
                    "query": '{ repository(owner: "acme", name: "semverkit") '
                    f"{{ issue(number: {BIG}) {{ title }} }} }}"
                }
            ),
        ),
    ),
    "github-graphql-wrong-variable-types": (
        "github-graphql",
        _req(
            "api.github.com",
            "POST",
            "/graphql",
            GH,
            json.dumps(
                {
                    "query": 'query($n: Int!) { repository(owner: "acme", name: "semverkit") '
                    "{ issue(number: $n) { title } } }",
                    "variables": {"n": {"not": "an int"}},
                }
            ),
        ),
    ),
    "linear-bad-json": (
        "linear",
        _req("api.linear.app", "POST", "/graphql", LINEAR, '{"query": "{ viewer { id } '),
    ),
    "linear-wrong-variable-types": (
        "linear",
        _req(
            "api.linear.app",
            "POST",
            "/graphql",
            LINEAR,
            json.dumps(
                {
                    "query": "query($first: Int) { issues(first: $first) { nodes { id } } }",
                    "variables": {"first": "many"},
                }
            ),
        ),
    ),
    "linear-int-overflow": (
        "linear",
        _req(
            "api.linear.app",
            "POST",
            "/graphql",
            LINEAR,
            json.dumps({"query": f"{{ issues(first: {BIG}) {{ nodes {{ id }} }} }}"}),
        ),
    ),
    "linear-query-not-a-string": (
        "linear",
        _req("api.linear.app", "POST", "/graphql", LINEAR, json.dumps({"query": ["x"]})),
    ),
    "slack-wrong-types-json": (
        "slack",
        _req(
            "slack.com",
            "POST",
            "/api/chat.postMessage",
            SLACK_JSON,
            json.dumps({"channel": 123, "text": ["x"], "thread_ts": {"a": 1}}),
        ),
    ),
    "slack-bad-json": (
        "slack",
        _req("slack.com", "POST", "/api/chat.postMessage", SLACK_JSON, '{"channel": '),
    ),
    "slack-limit-not-a-number": (
        "slack",
        _req("slack.com", "GET", "/api/conversations.history?channel=C04QL2REL&limit=abc", SLACK),
    ),
    "slack-ts-overflow": (
        "slack",
        _req(
            "slack.com",
            "GET",
            f"/api/conversations.replies?channel=C04QL2REL&ts={BIG}.{BIG}",
            SLACK,
        ),
    ),
    "slack-bad-utf8-channel": (
        "slack",
        _req("slack.com", "GET", "/api/conversations.history?channel=%ff%fe", SLACK),
    ),
}
"""Attack id -> (the vendor's error shape expected, the request)."""


def vendor_shaped(shape: str, status: int, body: str) -> str | None:
    """Why the answer is not the vendor's error, or None if it is."""
    try:
        data = json.loads(body)
    except ValueError:
        return f"not JSON: {body[:200]!r}"
    if shape == "github-or-page":
        # Paging past the end is no error at GitHub: an empty page (or a 4xx) is right.
        if status == 200:
            return None if data == [] else f"a page past the end holds {body[:200]!r}"
        shape = "github"
    if shape == "slack":
        if status != 200 or not isinstance(data, dict) or data.get("ok") is not False:
            return f"Slack answers 200 with ok: false, got {status} {body[:200]!r}"
        return None if isinstance(data.get("error"), str) else f"no error string: {body[:200]!r}"
    if not 400 <= status < 500 and not (shape != "github" and status == 200):
        return f"status {status}"
    if shape == "github":
        return None if isinstance(data.get("message"), str) else f"no message: {body[:200]!r}"
    if (
        shape == "github-graphql"
        and isinstance(data, dict)
        and isinstance(data.get("message"), str)
    ):
        return None  # GitHub refuses an unparseable body as REST does: 400 with a message
    errors = data.get("errors") if isinstance(data, dict) else None
    if not isinstance(errors, list) or not errors:
        return f"no errors list: {body[:200]!r}"
    if status == 200 and "data" in data and data["data"] not in (None, {}):
        return f"an error answered with data: {body[:200]!r}"
    return None


READ = _req("api.github.com", "GET", "/repos/acme/semverkit", GH)


@pytest.mark.parametrize("attack", list(ATTEMPTS))
def test_a_malformed_request_gets_the_vendors_error_and_voids_nothing(
    attack: str, agent: Agent, world: World
) -> None:
    shape, request = ATTEMPTS[attack]
    before = world.last_seq()
    results = agent.probe([{**request, "id": attack}, {**READ, "id": "after"}], [])
    result = results[attack]
    assert result["status"] is not None, f"no answer: {result['error']}"
    assert result["status"] < 500, f"{result['status']} {result['body'][:300]!r}"
    assert vendor_shaped(shape, result["status"], result["body"]) is None, vendor_shaped(
        shape, result["status"], result["body"]
    )
    failed = [
        e
        for e in world.since(before)
        if e["kind"] in ("gateway.addon_failed", "gateway.world_error")
    ]
    assert failed == [], failed
    assert results["after"]["status"] == 200, results["after"]
