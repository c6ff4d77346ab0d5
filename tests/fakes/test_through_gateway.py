"""The malformed requests of issue 13 through the real gateway (``replay world up``, mitmproxy
in .venv-gateway): each gets its vendor's answer, and none becomes an addon failure, which
would void the run as ``infra_fail``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.gateway.conftest import DEMO, Gateway, start_gateway, stop_gateway

GH = {"Authorization": "token ghp_gateway00000000000000000000000000"}


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    gw = start_gateway(tmp_path_factory.mktemp("malformed"), str(DEMO))
    yield gw
    stop_gateway(gw)


def get(client: httpx.Client, url: str, **kw: object) -> httpx.Response:
    return client.get(httpx.URL(url), **kw)  # type: ignore[arg-type]


def test_malformed_requests_get_vendor_answers_and_void_nothing(
    world: Gateway, tmp_path: Path
) -> None:
    with world.client() as c:
        for path in (
            "/repos/acme/semverkit/issues/99999999999999999999999",
            "/repos/%ff%fe/x",
            "/repos/acme/semverkit/issues/%ff",
        ):
            resp = get(c, f"https://api.github.com{path}", headers=GH)
            assert resp.status_code == 404, (path, resp.text)
            assert resp.json()["message"] == "Not Found", path
        bad_json = c.post(
            "https://api.github.com/repos/acme/semverkit/issues",
            content=b"{",
            headers={**GH, "content-type": "application/json"},
        )
        assert bad_json.status_code == 400
        assert bad_json.json()["message"] == "Problems parsing JSON"
        linear = c.post(
            "https://api.linear.app/graphql",
            json={
                "query": "query($id: String!) { issue(id: $id) { id } }",
                "variables": {"id": []},
            },
            headers={"Authorization": "lin_api_gateway0000000000000000000000"},
        )
        assert linear.status_code == 400
        assert linear.json()["errors"][0]["extensions"]["type"] == "graphql error"
        slack = get(
            c, "https://slack.com/api/%ff%fe", headers={"Authorization": "Bearer xoxb-gw-1"}
        )
        assert slack.status_code == 200
        assert slack.json()["error"] == "unknown_method"
        # The world still serves, and nothing was held against the run.
        ok = get(c, "https://api.github.com/repos/acme/semverkit/issues/3", headers=GH)
        assert ok.status_code == 200
    failed = [e for e in world.events() if e["kind"] == "gateway.addon_failed"]
    assert failed == []
