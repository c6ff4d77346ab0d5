"""The pagination family: every paginated list the fakes serve walked to its end and held to
what the vendors publish (octokit's recorded ``Link`` headers, GitHub's and Linear's GraphQL
schemas, Slack's spec); and faults a drifting fake could have, planted by wrapping its app,
each caught by this family (and, where the other families run quickly, missed by them).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qsl, urlencode

import pytest

from fakes.core.server import ASGIApp, Message, Receive, Scope, Send
from replay.contract.evidence import Report, graphql_schemas, pagination, slack_spec
from replay.contract.targets import Wrap

Body = Callable[[Any], Any]
"""A JSON body -> the body sent instead."""
Headers = Callable[[list[tuple[bytes, bytes]]], list[tuple[bytes, bytes]]]
Request = Callable[[bytes], bytes]
"""A request's query string or form body -> the one the app sees instead."""


def breaking(
    service: str,
    *,
    body: Body | None = None,
    headers: Headers | None = None,
    query: Request | None = None,
    form: Request | None = None,
) -> Wrap:
    """A wrap of one service's app that rewrites its requests (query string, form body)
    and its responses (headers, JSON body) as a faulty fake would."""

    def wrap(name: str, app: ASGIApp) -> ASGIApp:
        if name != service:
            return app

        async def broken(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] != "http":
                await app(scope, receive, send)
                return
            if query is not None:
                scope = {**scope, "query_string": query(scope.get("query_string", b""))}
            inner = receive
            kind = dict(scope.get("headers", [])).get(b"content-type", b"")
            if form is not None and kind.startswith(b"application/x-www-form-urlencoded"):
                chunks: list[bytes] = []
                while True:
                    message = await receive()
                    chunks.append(message.get("body", b""))
                    if not message.get("more_body"):
                        break
                rewritten = form(b"".join(chunks))
                sent = False

                async def replay_body() -> Message:
                    nonlocal sent
                    if sent:
                        return await receive()
                    sent = True
                    return {"type": "http.request", "body": rewritten, "more_body": False}

                inner = replay_body
                scope = {
                    **scope,
                    "headers": [
                        (k, str(len(rewritten)).encode() if k == b"content-length" else v)
                        for k, v in scope.get("headers", [])
                    ],
                }
            start: Message = {}
            out: list[bytes] = []

            async def capture(message: Message) -> None:
                nonlocal start
                if message["type"] == "http.response.start":
                    start = dict(message)
                    return
                out.append(message.get("body", b""))
                if message.get("more_body"):
                    return
                data = b"".join(out)
                sent_headers = [
                    (k, v) for k, v in start.get("headers", []) if k != b"content-length"
                ]
                if headers is not None:
                    sent_headers = headers(sent_headers)
                if body is not None and b"json" in dict(sent_headers).get(b"content-type", b""):
                    data = json.dumps(body(json.loads(data))).encode()
                sent_headers.append((b"content-length", str(len(data)).encode()))
                await send(
                    {
                        "type": "http.response.start",
                        "status": start["status"],
                        "headers": sent_headers,
                    }
                )
                await send({"type": "http.response.body", "body": data})

            await app(scope, inner, capture)

        return broken

    return wrap


def every(key: str, value: Callable[[Any], Any]) -> Body:
    """Every ``key`` in a JSON body, wherever it is, replaced by ``value(old)``."""

    def walk(data: Any) -> Any:
        if isinstance(data, dict):
            return {k: value(v) if k == key else walk(v) for k, v in data.items()}
        if isinstance(data, list):
            return [walk(v) for v in data]
        return data

    return walk


def without(name: str) -> Request:
    """A query string or form body without the parameter ``name``."""

    def drop(raw: bytes) -> bytes:
        pairs = parse_qsl(raw.decode(), keep_blank_values=True)
        return urlencode([(k, v) for k, v in pairs if k != name]).encode()

    return drop


def link_rels(rewrite: Callable[[str], str]) -> Headers:
    def change(headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
        out = []
        for k, v in headers:
            if k.lower() == b"link":
                v = rewrite(v.decode()).encode()
                if not v:
                    continue
            out.append((k, v))
        return out

    return change


def no_next(link: str) -> str:
    return ", ".join(p.strip() for p in link.split(",") if 'rel="next"' not in p)


def endless_next(link: str) -> str:
    """A ``Link`` that always has a next page: on the last page (and past it) the page after
    ``prev``'s next, so the pages go on, empty, for ever."""
    if 'rel="next"' in link:
        return link
    prev = re.search(r'<([^>]*[?&]page=)(\d+)([^>]*)>; rel="prev"', link)
    if prev is None:
        return link
    after = f"{prev.group(1)}{int(prev.group(2)) + 2}{prev.group(3)}"
    return f'{link}, <{after}>; rel="next"'


def failures(reports: list[Report]) -> dict[str, tuple[str, ...]]:
    return {c.subject: c.problems for r in reports for c in r.failures}


# --------------------------------------------------------------------------- the real fakes


@pytest.fixture(scope="module")
def real() -> list[Report]:
    return pagination.reports()


def test_the_fakes_paginate_as_the_vendors_say(real: list[Report]) -> None:
    assert [(r.service, r.family) for r in real] == [
        ("github", "pagination"),
        ("github", "pagination"),
        ("linear", "pagination"),
        ("slack", "pagination"),
    ]
    lines = [line for r in real for line in r.lines()]
    assert all(r.ok for r in real), "\n".join(lines)
    for r in real:
        assert r.total >= 6, r.headline()
    subjects = {r.source.repository: {c.subject for c in r.checks} for r in real}
    assert subjects.keys() == {
        "octokit/fixtures",
        "octokit/graphql-schema",
        "linear/linear",
        "slackapi/slack-api-specs",
    }
    musts = {
        "octokit/fixtures": (
            "GET /repos/{owner}/{repo}/issues",
            "GET /repos/{owner}/{repo}/issues/{issue_number}/comments",
            "GET /repos/{owner}/{repo}/labels",
            "GET /repos/{owner}/{repo}/pulls",
            "GET /repos/{owner}/{repo}/labels (105 labels: per_page default 30, at most 100)",
        ),
        "octokit/graphql-schema": (
            "Repository.issues",
            "Repository.pullRequests",
            "Repository.labels",
            "Issue.comments",
        ),
        "linear/linear": ("Query.issues", "Query.teams", "Issue.comments", "Team.states"),
        "slackapi/slack-api-specs": (
            "conversations.history",
            "conversations.replies",
            "conversations.list",
            "users.list",
        ),
    }
    for source, names in musts.items():
        assert set(names) <= subjects[source], source
    # What GitHub pages inside an object is named on the headline, not silently skipped.
    assert "not walked: GET /repos/{owner}/{repo}/commits/{ref} " in real[0].headline()


# --------------------------------------------------------------------------- planted faults


def run(service: pagination.Service, wrap: Wrap, *only: str) -> dict[str, tuple[str, ...]]:
    return failures(pagination.reports(wrap, services=(service,), only=only or None))


def test_slack_next_cursor_always_empty() -> None:
    def empty(meta: Any) -> Any:
        return {**meta, "next_cursor": ""} if isinstance(meta, dict) else meta

    wrap = breaking("slack", body=every("response_metadata", empty))
    found = run("slack", wrap)
    for method in ("conversations.history", "conversations.list", "users.list"):
        assert method in found, found
        assert any("missing" in p for p in found[method]), found[method]
    assert any(
        "has_more is True but next_cursor is empty" in p for p in found["conversations.history"]
    )
    # Slack's spec allows an empty next_cursor: the spec families do not see it.
    assert all(r.ok for r in slack_spec.reports(wrap))


def test_github_graphql_has_next_page_always_false() -> None:
    wrap = breaking("github", body=every("hasNextPage", lambda _: False))
    found = run("github", wrap, "Repository.*", "Issue.*")
    for subject in ("Repository.issues", "Repository.labels", "Issue.comments"):
        assert any("missing 5 of 7" in p for p in found[subject]), found.get(subject)
    # No other family sees it: GitHub's GraphQL scenario (graphql_issue) asks for no pageInfo.


def test_linear_has_next_page_always_false() -> None:
    wrap = breaking("linear", body=every("hasNextPage", lambda _: False))
    found = run("linear", wrap, "Query.*", "Team.*")
    for subject in ("Query.issues", "Query.teams", "Team.states"):
        assert any("missing" in p for p in found[subject]), found.get(subject)
    assert any("hasNextPage is not true" in p for p in found["Query.issueLabels"])
    # The Linear scenarios that page (their documents ask for pageInfo) still conform.
    paging = ("issue_history", "workflow_states_and_comments")
    exchanges = graphql_schemas.scenario_exchanges("linear", only=paging, wrap=wrap)
    vendor = graphql_schemas.vendor_schema("linear")
    assert exchanges and all(c.ok for c in graphql_schemas.response_checks(vendor, exchanges))


def test_rest_link_never_has_next() -> None:
    wrap = breaking("github", headers=link_rels(no_next))
    found = run("github", wrap, "GET *")
    # Every list, not only the issues octokit's recording pages (which the real interactions
    # family compares, so it would see this one too).
    for subject in (
        "GET /repos/{owner}/{repo}/issues",
        "GET /repos/{owner}/{repo}/labels",
        "GET /repos/{owner}/{repo}/pulls/{pull_number}/reviews",
        "GET /search/issues",
    ):
        assert any("missing" in p for p in found[subject]), found.get(subject)
        assert any('rel="last" on the last page' in p for p in found[subject])


def test_rest_per_page_ignored() -> None:
    wrap = breaking("github", query=without("per_page"))
    found = run("github", wrap, "GET *")
    issues = found["GET /repos/{owner}/{repo}/issues"]
    assert any("13 items, 2 asked for" in p for p in issues), issues
    cap = next(s for s in found if s.startswith("GET /repos/{owner}/{repo}/labels (105"))
    assert any("per_page=100: 30 items" in p for p in found[cap]), found[cap]


def test_slack_limit_ignored() -> None:
    wrap = breaking("slack", form=without("limit"))
    found = run("slack", wrap)
    assert any("items, 2 asked for" in p for p in found["conversations.history"])
    assert any("items, 2 asked for" in p for p in found["users.list"])
    assert all(r.ok for r in slack_spec.reports(wrap))


def test_slack_cursor_that_never_ends() -> None:
    """Every answer hands back the first cursor the fake ever gave, so a client following it
    would loop for ever; the walk stops at the repeat."""
    first: dict[str, str] = {}

    def same(meta: Any) -> Any:
        if isinstance(meta, dict) and meta.get("next_cursor"):
            first.setdefault("cursor", meta["next_cursor"])
        if isinstance(meta, dict) and "cursor" in first:
            return {**meta, "next_cursor": first["cursor"]}
        return meta

    wrap = breaking("slack", body=every("response_metadata", same))
    found = run("slack", wrap, "conversations.history")
    assert any(
        "again (already followed): the pagination never ends" in p
        for p in found["conversations.history"]
    )


def test_rest_link_that_never_ends() -> None:
    """Every page says there is a next one, past the end: the walk stops at its bound."""
    wrap = breaking("github", headers=link_rels(endless_next))
    found = run("github", wrap, "GET /repos/{owner}/{repo}/labels")
    problems = found["GET /repos/{owner}/{repo}/labels"]
    assert any("no last page after 7 pages of 2: the pagination never ends" in p for p in problems)


def test_linear_cursor_that_never_ends() -> None:
    """Every page says there is more and hands back the first endCursor the fake gave."""
    first: dict[str, Any] = {}

    def stuck(info: Any) -> Any:
        if not isinstance(info, dict):
            return info
        first.setdefault("cursor", info.get("endCursor"))
        return {**info, "hasNextPage": True, "endCursor": first["cursor"]}

    wrap = breaking("linear", body=every("pageInfo", stuck))
    found = run("linear", wrap, "Query.teams")
    assert any("the pagination never ends" in p for p in found["Query.teams"])
