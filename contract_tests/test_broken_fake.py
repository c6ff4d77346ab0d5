"""A deliberately broken fake must fail the contract suite.

Each case wraps one service's ASGI app in a middleware that mutates its responses the way a
drifting fake would (a renamed field, a wrong status, a wrong error envelope) and checks that
the comparison with the recordings, or the schema check, catches it at the right place.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from fakes.core.server import ASGIApp, Message, Receive, Scope, Send
from replay.contract.scenarios import SCENARIOS, all_scenarios
from replay.contract.suite import Outcome, check
from replay.contract.targets import Wrap, fake_target, serve_world

Mutation = Callable[[int, Any], tuple[int, Any]]
"""(status, JSON body) -> (status, JSON body)."""


def mutating(service: str, mutate: Mutation) -> Wrap:
    """A wrap that rewrites every JSON response of ``service``."""

    def wrap(name: str, app: ASGIApp) -> ASGIApp:
        if name != service:
            return app

        async def broken(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] != "http":
                await app(scope, receive, send)
                return
            start: Message = {}
            chunks: list[bytes] = []

            async def capture(message: Message) -> None:
                nonlocal start
                if message["type"] == "http.response.start":
                    start = dict(message)
                    return
                chunks.append(message.get("body", b""))
                if message.get("more_body"):
                    return
                body = b"".join(chunks)
                headers = [(k, v) for k, v in start.get("headers", []) if k != b"content-length"]
                status = int(start["status"])
                if b"json" in dict(headers).get(b"content-type", b""):
                    status, data = mutate(status, json.loads(body))
                    body = json.dumps(data).encode()
                headers.append((b"content-length", str(len(body)).encode()))
                await send({"type": "http.response.start", "status": status, "headers": headers})
                await send({"type": "http.response.body", "body": body})

            await app(scope, receive, capture)

        return broken

    return wrap


def rename(old: str, new: str) -> Mutation:
    def walk(data: Any) -> Any:
        if isinstance(data, dict):
            return {(new if k == old else k): walk(v) for k, v in data.items()}
        if isinstance(data, list):
            return [walk(v) for v in data]
        return data

    return lambda status, body: (status, walk(body))


def status(old: int, new: int) -> Mutation:
    return lambda s, body: (new if s == old else s, body)


def envelope(status_code: int, make: Callable[[Any], Any]) -> Mutation:
    return lambda s, body: (s, make(body) if s == status_code else body)


def slack_error_as_http_error(s: int, body: Any) -> tuple[int, Any]:
    """Slack answers errors with HTTP 200 and ``ok: false``; a fake sending 400 is wrong."""
    if isinstance(body, dict) and body.get("ok") is False and s == 200:
        return 400, body
    return s, body


def linear_errors_without_extensions(s: int, body: Any) -> tuple[int, Any]:
    if isinstance(body, dict) and "errors" in body:
        return s, {
            "errors": [{"message": e["message"]} for e in body["errors"]],
            "data": body.get("data"),
        }
    return s, body


CASES: dict[str, tuple[str, str, Mutation, str]] = {
    # name: (service, scenario, mutation, where the difference must show)
    "github renamed field": (
        "github",
        "issue_read_and_comment",
        rename("title", "titel"),
        "get issue.body.titel",
    ),
    "github wrong status": (
        "github",
        "issue_read_and_comment",
        status(201, 200),
        "create issue.status",
    ),
    "github wrong error envelope": (
        "github",
        "errors",
        envelope(404, lambda b: {"error": "Not Found"}),
        "unknown issue.body.error",
    ),
    "slack renamed field": (
        "slack",
        "thread_and_reactions",
        rename("thread_ts", "threadTs"),
        "reply.body.message.thread_ts",
    ),
    "slack wrong status": ("slack", "errors", slack_error_as_http_error, "unknown channel.status"),
    "slack 429 lost": ("slack", "scope_and_rate_limit", status(429, 200), "rate limited.status"),
    "linear renamed field": (
        "linear",
        "issue_read_move_comment",
        rename("identifier", "ident"),
        "create issue.body.data.issueCreate.issue.identifier",
    ),
    "linear wrong error envelope": (
        "linear",
        "errors",
        linear_errors_without_extensions,
        "unknown issue.body.errors[0].extensions",
    ),
}


@pytest.fixture(params=sorted(CASES))
def broken(request: pytest.FixtureRequest) -> Iterator[tuple[str, Outcome]]:
    service, name, mutate, where = CASES[request.param]
    with serve_world(wrap=mutating(service, mutate)) as served:
        all_scenarios()
        scenario = SCENARIOS[service][name]
        yield where, check(fake_target(served), scenario, gaps=[])


def test_a_broken_fake_fails_the_suite(broken: tuple[str, Outcome]) -> None:
    where, outcome = broken
    print("\n".join(outcome.lines()))
    assert not outcome.ok
    assert any(d.where == where for d in outcome.differences), [
        d.where for d in outcome.differences
    ]


def test_the_schema_check_alone_catches_a_renamed_github_field() -> None:
    """Without any recording, githubkit's models flag the renamed field both ways."""
    with serve_world(wrap=mutating("github", rename("title", "titel"))) as served:
        all_scenarios()
        outcome = check(fake_target(served), SCENARIOS["github"]["issue_read_and_comment"], gaps=[])
    wheres = [d.where for d in outcome.schema]
    assert "get issue.schema $.titel: not a field of Issue" in wheres
    assert "get issue.schema $.title: required by Issue but missing" in wheres
