"""Malformed requests an agent can send, over HTTP on 127.0.0.1, each answered the way the
vendor answers it: the inputs of issue 13 and every crash the fuzz tests found.

Each fake is its ``install`` app (with its safety net) served by uvicorn; every test also
checks that the net caught nothing, so the answer is the fake's own, not the last resort's.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from fakes.core.net import Net
from tests.fakes.fuzzing import served_fake

GH = {"Authorization": "token ghp_malformed000000000000000000000000"}
LINEAR = {"Authorization": "lin_api_malformed00000000000000000000"}
SLACK = {"Authorization": "Bearer xoxp-malformed-0000000000"}
NOT_FOUND = {
    "message": "Not Found",
    "documentation_url": "https://docs.github.com/rest",
    "status": "404",
}


class Fake:
    def __init__(self, url: str, net: Net) -> None:
        self.url = url
        self.net = net
        self.http = httpx.Client(base_url=url, timeout=30)

    def get(self, raw_path: str, headers: dict[str, str]) -> httpx.Response:
        # httpx.URL keeps the escapes as written (%ff stays %ff on the wire).
        return self.http.get(httpx.URL(self.url + raw_path), headers=headers)


def served(service: str) -> Iterator[Fake]:
    with served_fake(service) as (url, net, _world):
        fake = Fake(url, net)
        yield fake
        fake.http.close()
        assert net.failures == [], net.failures


@pytest.fixture(scope="module")
def github() -> Iterator[Fake]:
    yield from served("github")


@pytest.fixture(scope="module")
def linear() -> Iterator[Fake]:
    yield from served("linear")


@pytest.fixture(scope="module")
def slack() -> Iterator[Fake]:
    yield from served("slack")


# ----------------------------------------------------------------------- GitHub REST


@pytest.mark.parametrize(
    "path",
    [
        "/repos/acme/semverkit/issues/99999999999999999999999",
        "/repos/acme/semverkit/issues/9223372036854775808",
        "/repos/acme/semverkit/issues/-1",
        "/repos/acme/semverkit/issues/abc",
        "/repos/acme/semverkit/issues/99999999999999999999999/comments",
        "/repos/acme/semverkit/issues/comments/99999999999999999999999",
        "/repos/acme/semverkit/issues/events/99999999999999999999999",
        "/repos/acme/semverkit/pulls/99999999999999999999999/reviews/1",
        "/repos/acme/semverkit/pulls/1/reviews/99999999999999999999999",
        "/repositories/99999999999999999999999",
        "/repos/%ff%fe/x",
        "/repos/acme/%ff%fe/issues",
        "/repos/acme/semverkit/issues/%ff",
        "/api/v3/repos/acme/semverkit/issues/99999999999999999999999",
    ],
)
def test_github_paths_that_name_nothing_are_404(github: Fake, path: str) -> None:
    resp = github.get(path, GH)
    assert resp.status_code == 404, resp.text
    assert resp.json() == NOT_FOUND


def test_github_the_largest_int64_is_a_number_that_names_nothing(github: Fake) -> None:
    resp = github.get("/repos/acme/semverkit/issues/9223372036854775807", GH)
    assert resp.status_code == 404
    assert resp.json()["message"] == "Not Found"


def test_github_huge_per_page_is_clamped_to_100(github: Fake) -> None:
    resp = github.get("/repos/acme/semverkit/issues?per_page=99999999999999999999999", GH)
    assert resp.status_code == 200
    assert 0 < len(resp.json()) <= 100


def test_github_commit_pages_past_git_counting_are_empty(github: Fake) -> None:
    # (page - 1) * per_page beyond a C int made `git rev-list --skip` fail (found by fuzzing).
    resp = github.get("/repos/acme/semverkit/commits?per_page=100&page=15386251601", GH)
    assert resp.status_code == 200, resp.text
    assert resp.json() == []
    first = github.get("/repos/acme/semverkit/commits?per_page=1", GH)
    assert first.status_code == 200 and len(first.json()) == 1


@pytest.mark.parametrize("body", [b"{not json", b"\xff\xfe", b'{"title": "x"'])
def test_github_a_body_that_is_not_json_is_400(github: Fake, body: bytes) -> None:
    resp = github.http.post(
        "/repos/acme/semverkit/issues",
        content=body,
        headers={**GH, "content-type": "application/json"},
    )
    assert resp.status_code == 400, resp.text
    assert resp.json() == {
        "message": "Problems parsing JSON",
        "documentation_url": "https://docs.github.com/rest",
        "status": "400",
    }


def test_github_a_file_with_a_non_ascii_name_is_written_and_read(github: Fake) -> None:
    # git quoted the name in ls-tree's output, so the fake lost the file it had just written
    # and failed an assertion (found by fuzzing: a path with U+0083).
    path = "/repos/acme/semverkit/contents/docs/caf%C3%A9%C2%83.md"
    body = {"message": "Add a note", "content": base64.b64encode(b"note\n").decode()}
    put = github.http.put(path, json=body, headers=GH)
    assert put.status_code == 201, put.text
    assert put.json()["content"]["path"] == "docs/café\u0083.md"
    got = github.get(path, GH)
    assert got.status_code == 200, got.text
    assert base64.b64decode(got.json()["content"]) == b"note\n"


# ----------------------------------------------------------------------- GitHub GraphQL


def gql(fake: Fake, headers: dict[str, str], query: str, variables: Any = None) -> httpx.Response:
    return fake.http.post(
        "/graphql", json={"query": query, "variables": variables}, headers=headers
    )


def test_github_graphql_a_scalar_of_the_wrong_kind_is_an_invalid_variable(github: Fake) -> None:
    # A list as a GitObjectID reached SQLite (found by fuzzing).
    ids = gql(
        github,
        GH,
        '{ repository(owner: "acme", name: "semverkit") { pullRequests(first: 1) '
        "{ nodes { id } } } }",
    ).json()
    pull_id = ids["data"]["repository"]["pullRequests"]["nodes"][0]["id"]
    query = (
        "mutation($input: AddPullRequestReviewInput!) "
        "{ addPullRequestReview(input: $input) { clientMutationId } }"
    )
    variables = {"input": {"pullRequestId": pull_id, "event": "COMMENT", "commitOID": [-1806]}}
    resp = gql(github, GH, query, variables)
    assert resp.status_code == 200
    body = resp.json()
    assert "data" not in body
    (error,) = body["errors"]
    assert error["message"].startswith(
        "Variable $input of type AddPullRequestReviewInput! was provided invalid value"
    )
    assert error["extensions"]["problems"][0]["path"] == ["commitOID"]


@pytest.mark.parametrize(
    "after",
    [
        base64.b64encode(b"cursor:v2:" + b"9" * 40).decode(),
        base64.b64encode(b"cursor:v2:-99999999999999999999").decode(),
        base64.b64encode(b"cursor:v2:" + b"9" * 5000).decode(),
        "%ff%fe",
    ],
)
def test_github_graphql_oversized_cursors_are_answered(github: Fake, after: str) -> None:
    query = (
        'query($after: String) { repository(owner: "acme", name: "semverkit") '
        "{ issues(first: 5, after: $after) { nodes { number } } } }"
    )
    resp = gql(github, GH, query, {"after": after})
    assert resp.status_code == 200
    body = resp.json()
    if "errors" not in body:  # a cursor past the end: an empty page
        assert body["data"]["repository"]["issues"]["nodes"] == []
    else:
        (error,) = body["errors"]
        assert error["type"] == "INVALID_CURSOR_ARGUMENTS", error
        assert error["message"] == f"`{after}` does not appear to be a valid cursor."


def test_github_graphql_a_body_that_is_not_json_is_400(github: Fake) -> None:
    resp = github.http.post("/graphql", content=b"{", headers=GH)
    assert resp.status_code == 400
    assert resp.json()["message"] == "Problems parsing JSON"


# ----------------------------------------------------------------------- Linear


def test_linear_a_variable_of_the_wrong_type_is_a_graphql_error(linear: Fake) -> None:
    # It was reported as Linear's "internal error" (found by fuzzing).
    resp = gql(linear, LINEAR, "query($id: String!) { issue(id: $id) { id } }", {"id": [1]})
    assert resp.status_code == 400
    (error,) = resp.json()["errors"]
    assert error["extensions"]["type"] == "graphql error"
    assert error["extensions"]["userError"] is True
    assert 'Variable "$id" has invalid value' in error["message"]


def test_linear_an_int_past_32_bits_is_a_graphql_error(linear: Fake) -> None:
    resp = gql(linear, LINEAR, "{ issues(first: 99999999999999999999) { nodes { id } } }")
    assert resp.status_code == 400
    (error,) = resp.json()["errors"]
    assert error["extensions"]["type"] == "graphql error"


@pytest.mark.parametrize("after", ["9" * 400, "%ff", "\x00", ""])
def test_linear_odd_cursors_are_answered(linear: Fake, after: str) -> None:
    resp = gql(
        linear,
        LINEAR,
        "query($a: String) { issues(first: 2, after: $a) { nodes { id } } }",
        {"a": after},
    )
    assert resp.status_code in (200, 400), resp.text
    for error in resp.json().get("errors", []):
        assert error["extensions"]["type"] != "internal error", error


def test_linear_a_body_that_is_not_json_is_400(linear: Fake) -> None:
    resp = linear.http.post("/graphql", content=b"\xff{", headers=LINEAR)
    assert resp.status_code == 400
    assert resp.json()["errors"][0]["message"] == "Must provide query string."


@pytest.mark.parametrize("path", ["/nope", "/%ff%fe", "/graphql/x"])
def test_linear_paths_it_does_not_serve_are_404_in_its_shape(linear: Fake, path: str) -> None:
    resp = linear.get(path, LINEAR)
    assert resp.status_code == 404
    (error,) = resp.json()["errors"]
    assert error["message"] == "Not Found"
    assert error["extensions"]["statusCode"] == 404


# ----------------------------------------------------------------------- Slack


def test_slack_a_method_name_that_is_not_text_is_unknown(slack: Fake) -> None:
    resp = slack.get("/api/%ff%fe", SLACK)
    assert resp.status_code == 200
    body = resp.json()
    assert body["ok"] is False and body["error"] == "unknown_method"


def test_slack_paths_outside_the_api_are_404(slack: Fake) -> None:
    resp = slack.get("/nope", SLACK)
    assert resp.status_code == 404


def test_slack_a_json_body_that_does_not_parse_is_invalid_json(slack: Fake) -> None:
    resp = slack.http.post(
        "/api/chat.postMessage",
        content=b'{"channel": "C04QL1ENG", "text": ',
        headers={**SLACK, "content-type": "application/json"},
    )
    assert resp.status_code == 200
    assert resp.json()["error"] == "invalid_json"


@pytest.mark.parametrize("limit", ["99999999999999999999999", "-99999999999999999999999"])
def test_slack_huge_limits_are_answered(slack: Fake, limit: str) -> None:
    resp = slack.http.post(
        "/api/conversations.history",
        data={"channel": "C04QL1ENG", "limit": limit},
        headers=SLACK,
    )
    assert resp.status_code == 200
    assert resp.json()["ok"] is True
