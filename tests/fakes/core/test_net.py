"""The fakes' last resort (fakes.core.net): what each fake answers for a path that is not text,
as the gateway hands it on, and for a bug of its own, and that such a bug leaves no trace.

Requests are driven in-process with the scope :mod:`replay.gateway.asgi` builds (the path
decoded with ``surrogateescape``, so ``%ff`` arrives as a lone surrogate), which no HTTP
server on loopback produces; the bug cases also go over HTTP on 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import unquote_to_bytes

import httpx
import pytest
from starlette.responses import JSONResponse

import fakes.github.render
import fakes.linear.routes
import fakes.slack.routes
from fakes.core.events import EventLog
from fakes.core.net import Net, readable
from fakes.core.world import World
from tests.fakes.fuzzing import served_fake

GH = [(b"authorization", b"token ghp_net0000000000000000000000000000000")]


def call(
    app: Any, method: str, raw: bytes, body: bytes = b"", headers: list[tuple[bytes, bytes]] = GH
) -> tuple[int, bytes]:
    """One request through ``app`` with the gateway's scope; the status and the whole body."""
    path, _, query = raw.partition(b"?")
    scope = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": method,
        "scheme": "https",
        "path": unquote_to_bytes(path).decode("utf-8", "surrogateescape"),
        "raw_path": path,
        "root_path": "",
        "query_string": query,
        "headers": [(b"host", b"fake.test"), (b"content-type", b"application/json"), *headers],
        "client": ("127.0.0.1", 1),
        "server": ("fake.test", 443),
    }
    messages: list[dict[str, Any]] = []
    sent = False

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        messages.append(message)

    asyncio.run(app(scope, receive, send))
    starts = [m for m in messages if m["type"] == "http.response.start"]
    assert len(starts) == 1, messages
    bodies = [m for m in messages if m["type"] == "http.response.body"]
    assert bodies and not bodies[-1].get("more_body", False), messages
    return int(starts[0]["status"]), b"".join(m.get("body", b"") for m in bodies)


@pytest.fixture()
def github() -> Iterator[tuple[str, Net, World]]:
    with served_fake("github") as served:
        yield served


@pytest.fixture()
def linear() -> Iterator[tuple[str, Net, World]]:
    with served_fake("linear") as served:
        yield served


@pytest.fixture()
def slack() -> Iterator[tuple[str, Net, World]]:
    with served_fake("slack") as served:
        yield served


def test_readable() -> None:
    assert readable("/repos/acme/café")
    assert not readable("/repos/\udcff\udcfe/x")
    assert not readable("/repos/a\x00b")


@pytest.mark.parametrize(
    "raw", [b"/repos/%ff%fe/x", b"/repos/acme/semverkit/issues/%ff", b"/graphql/%c3", b"/a%00b"]
)
def test_github_paths_that_are_not_text_are_404(github: tuple[str, Net, World], raw: bytes) -> None:
    _url, net, _world = github
    status, body = call(net, "GET", raw)
    assert status == 404
    assert json.loads(body) == {
        "message": "Not Found",
        "documentation_url": "https://docs.github.com/rest",
        "status": "404",
    }
    assert net.failures == []


def test_the_issue_13_paths_through_the_gateway_scope(github: tuple[str, Net, World]) -> None:
    _url, net, _world = github
    status, body = call(net, "GET", b"/repos/acme/semverkit/issues/99999999999999999999999")
    assert (status, json.loads(body)["message"]) == (404, "Not Found")
    status, _ = call(net, "GET", b"/repos/acme/semverkit/issues/3")
    assert status == 200
    assert net.failures == []


def test_linear_paths_that_are_not_text_are_404(linear: tuple[str, Net, World]) -> None:
    _url, net, _world = linear
    status, body = call(net, "POST", b"/graphql%ff", b'{"query": "{ viewer { id } }"}')
    assert status == 404
    assert json.loads(body)["errors"][0]["message"] == "Not Found"
    assert net.failures == []


def test_slack_method_names_that_are_not_text_are_unknown(slack: tuple[str, Net, World]) -> None:
    _url, net, _world = slack
    status, body = call(net, "POST", b"/api/chat.%ffpostMessage")
    assert status == 200
    answer = json.loads(body)
    assert answer["ok"] is False and answer["error"] == "unknown_method"
    assert net.failures == []


# ----------------------------------------------------------------------- a bug of the fake's


def test_a_github_bug_after_a_mutation_answers_server_error_and_keeps_nothing(
    github: tuple[str, Net, World], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, net, world = github

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("a bug in rendering")

    # The issue and its github.issue.opened event are written; then rendering fails.
    monkeypatch.setattr(fakes.github.render, "issue", broken)
    with world.session() as s:
        before = len(EventLog.read(s))
    headers = dict((k.decode(), v.decode()) for k, v in GH)
    resp = httpx.post(
        f"{url}/repos/acme/semverkit/issues", json={"title": "never kept"}, headers=headers
    )
    assert resp.status_code == 500
    assert resp.json() == {
        "message": "Server Error",
        "documentation_url": "https://docs.github.com/rest",
        "status": "500",
    }
    assert resp.headers["x-github-request-id"]
    assert len(net.failures) == 1 and "RuntimeError: a bug in rendering" in net.failures[0]
    with world.session() as s:
        assert len(EventLog.read(s)) == before
    monkeypatch.undo()
    titles = [
        i["title"]
        for i in httpx.get(
            f"{url}/repos/acme/semverkit/issues?state=all&per_page=100", headers=headers
        ).json()
    ]
    assert "never kept" not in titles


def test_a_github_graphql_bug_answers_githubs_words(
    github: tuple[str, Net, World], monkeypatch: pytest.MonkeyPatch
) -> None:
    _url, net, _world = github
    import fakes.github.graphql.routes as routes

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("a bug")

    monkeypatch.setattr(routes, "run", broken)
    status, body = call(net, "POST", b"/graphql", b'{"query": "{ viewer { login } }"}')
    assert status == 500
    answer = json.loads(body)
    assert answer["data"] is None
    assert answer["errors"][0]["message"].startswith(
        "Something went wrong while executing your query."
    )
    assert len(net.failures) == 1


def test_a_linear_bug_answers_an_internal_error(
    linear: tuple[str, Net, World], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, net, _world = linear

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("a bug")

    monkeypatch.setattr(fakes.linear.routes, "_execute", broken)
    resp = httpx.post(
        f"{url}/graphql",
        json={"query": "{ viewer { id } }"},
        headers={"Authorization": "lin_api_net00000000000000000000000000"},
    )
    assert resp.status_code == 500
    (error,) = resp.json()["errors"]
    assert error["extensions"]["type"] == "internal error"
    assert error["extensions"]["statusCode"] == 500
    assert len(net.failures) == 1


def test_a_slack_bug_answers_fatal_error(
    slack: tuple[str, Net, World], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, net, _world = slack
    original = fakes.slack.routes.METHODS["auth.test"]

    def broken(*args: Any) -> Any:
        raise RuntimeError("a bug")

    monkeypatch.setitem(
        fakes.slack.routes.METHODS,
        "auth.test",
        fakes.slack.routes.Method(broken, original.scopes),
    )
    resp = httpx.post(f"{url}/api/auth.test", headers={"Authorization": "Bearer xoxb-net-1"})
    assert resp.status_code == 200
    assert resp.json() == {"ok": False, "error": "fatal_error"}
    assert len(net.failures) == 1


# ----------------------------------------------------------------------- the net alone


def failure(scope: Any) -> JSONResponse:
    return JSONResponse({"vendor": "failure"}, status_code=500)


def not_found(scope: Any) -> JSONResponse:
    return JSONResponse({"vendor": "not found"}, status_code=404)


def test_a_bug_after_the_headers_went_out_still_ends_the_response() -> None:
    async def app(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"[1,", "more_body": True})
        raise RuntimeError("mid-stream")

    net = Net(app, "toy", not_found, failure)
    status, body = call(net, "GET", b"/x")
    assert (status, body) == (200, b"[1,")
    assert len(net.failures) == 1


def test_a_server_error_the_app_means_goes_through() -> None:
    async def app(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 503, "headers": []})
        await send({"type": "http.response.body", "body": b"busy", "more_body": True})
        await send({"type": "http.response.body", "body": b"!", "more_body": False})

    net = Net(app, "toy", not_found, failure)
    assert call(net, "GET", b"/x") == (503, b"busy!")
    assert net.failures == []


def test_starlettes_plain_text_500_is_replaced() -> None:
    from fastapi import FastAPI

    app = FastAPI()

    @app.get("/x")
    def boom() -> None:
        raise RuntimeError("a bug")

    net = Net(app, "toy", not_found, failure)
    assert call(net, "GET", b"/x") == (500, b'{"vendor":"failure"}')
    assert len(net.failures) == 1
