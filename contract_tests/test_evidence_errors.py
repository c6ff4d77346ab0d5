"""The "errors" family: each error the fakes can be made to answer, held to what the vendors
publish about it. It passes on the real fakes; each planted fault (an error answered in the
wrong status or without its envelope, rewritten on the way out of the fake's app) is caught
by it, and, where the other families run quickly enough to show it, not by them."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from fakes.core.server import ASGIApp, Message, Receive, Scope, Send
from replay.contract.evidence import (
    KnownGap,
    Report,
    errors,
    graphql_schemas,
    octokit,
    slack_spec,
)
from replay.contract.evidence.octokit import DIR as OCTOKIT_DIR
from replay.contract.evidence.octokit import SCENARIOS as OCTOKIT_SCENARIOS
from replay.contract.evidence.octokit import load_interactions
from replay.contract.targets import Wrap

Headers = list[tuple[bytes, bytes]]
Rewrite = Callable[[int, Headers, bytes], tuple[int, Headers, bytes] | None]
"""An answer (status, headers, body) -> the one sent instead, or None to leave it."""


def answering(services: set[str], rewrite: Rewrite) -> Wrap:
    """A wrap that rewrites the answers of ``services``' apps as a faulty fake would."""

    def wrap(name: str, app: ASGIApp) -> ASGIApp:
        if name not in services:
            return app

        async def broken(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] != "http":
                await app(scope, receive, send)
                return
            start: Message = {}
            chunks: list[bytes] = []

            async def hold(message: Message) -> None:
                nonlocal start
                if message["type"] == "http.response.start":
                    start = dict(message)
                    return
                chunks.append(message.get("body", b""))
                if message.get("more_body"):
                    return
                status = int(start["status"])
                headers = [(k, v) for k, v in start.get("headers", []) if k != b"content-length"]
                body = b"".join(chunks)
                changed = rewrite(status, headers, body)
                if changed is not None:
                    status, headers, body = changed
                headers = [*headers, (b"content-length", str(len(body)).encode())]
                await send({"type": "http.response.start", "status": status, "headers": headers})
                await send({"type": "http.response.body", "body": body})

            await app(scope, receive, hold)

        return broken

    return wrap


def json_of(body: bytes) -> Any:
    try:
        return json.loads(body)
    except ValueError:
        return None


def failures(reports: list[Report]) -> dict[str, tuple[str, ...]]:
    return {c.subject: c.problems for r in reports for c in r.failures}


def subjects(*patterns: str) -> list[str]:
    """The family's subjects that match the patterns."""
    from fnmatch import fnmatchcase

    return [p.subject for p in errors.CHECKS if any(fnmatchcase(p.subject, x) for x in patterns)]


NOT_FOUND = "* -> 404"


# ----------------------------------------------------------------------------- the family


def test_every_citation_is_in_the_evidence() -> None:
    assert errors.CHECKS
    # Linear's parse error rests on the GraphQL parser alone: no vendor text speaks of it.
    uncited = [p.subject for p in errors.CHECKS if not p.cites]
    assert uncited == ["document that does not parse -> errors, no data"]
    for p in errors.CHECKS:
        for cite in p.cites:
            assert errors.cite_problem(cite) is None, (p.subject, cite)
    names = [p.subject for p in errors.CHECKS]
    assert len(names) == len(set(names))


def test_a_citation_the_evidence_does_not_hold_is_a_problem() -> None:
    wrong = errors.op("pulls/merge", "418: Teapot")
    assert "no longer says" in (errors.cite_problem(wrong) or "")
    missing = errors.op("pulls/no-such-operation", "404: BasicError")
    assert "not found" in (errors.cite_problem(missing) or "")
    source = errors.src("slack_sdk.no_such_module:Thing", "anything")
    assert "not found" in (errors.cite_problem(source) or "")


@pytest.fixture(scope="module")
def real() -> list[Report]:
    return errors.reports()


def test_the_family_passes_on_the_real_fakes(real: list[Report]) -> None:
    for report in real:
        print("\n".join(report.lines()))
    assert [(r.service, r.family) for r in real] == [
        ("github", "errors"),
        ("linear", "errors"),
        ("slack", "errors"),
    ]
    assert [r.source.repository for r in real] == [
        "octokit/fixtures",
        "linear/linear",
        "slackapi/slack-api-specs",
    ]
    for report in real:
        assert report.ok, "\n".join(report.lines())
        assert not report.failures
    by_service = {r.service: {c.subject for c in r.checks} for r in real}
    assert {
        "GET /user (no token) -> 401",
        "GET /repos/{owner}/{repo}/issues/{issue_number} (no such number) -> 404",
        "POST /repos/{owner}/{repo}/labels (invalid color, as octokit recorded) -> 422",
        "POST /repos/{owner}/{repo}/pulls (no commits between the branches) -> 422",
        "PUT /repos/{owner}/{repo}/pulls/{pull_number}/merge (sha not the head) -> 409",
        "PUT /repos/{owner}/{repo}/pulls/{pull_number}/merge (already merged) -> 405",
        "POST /repos/{owner}/{repo}/issues (not JSON, sent as curl -d sends it) -> 400",
        "GraphQL query repository.issue (no such number) -> NOT_FOUND, data.repository.issue null",
        "GraphQL document that does not parse -> errors, no data",
    } <= by_service["github"]
    assert {
        "query issue (no such id) -> errors[].path [issue], data null",
        "mutation issueCreate (no teamId) -> errors, no data",
        "query viewer (no Authorization) -> errors, no data",
    } <= by_service["linear"]
    assert {
        "conversations.history channel_not_found",
        "conversations.replies thread_not_found",
        "chat.update message_not_found",
        "conversations.history not_authed",
        "conversations.history invalid_auth",
        "conversations.history missing_scope",
        "conversations.list ratelimited",
    } <= by_service["slack"]
    assert all(r.total >= least for r, least in zip(real, (30, 9, 12), strict=True))
    # The known gaps, each with its reason: nothing else differs.
    gapped = {r.service: {c.subject for c in r.gaps} for r in real}
    assert "GET /user (a token GitHub never issued) -> 401" in gapped["github"]
    assert all(
        "not a field of" in p or "401" in c.subject for c in real[0].gaps for p in c.problems
    )
    assert gapped["linear"] == {
        "query viewer (a well-formed key Linear never issued) -> errors, no data",
        errors.LINEAR_ENVELOPE,
    }
    assert gapped["slack"] == {
        "chat.postMessage thread_not_found",
        "conversations.list ratelimited",
        "conversations.history invalid_auth (a well-formed bot token Slack never issued)",
    }
    assert "not modelled: 403" in real[0].headline()


def test_an_own_gap_that_matches_nothing_is_stale(monkeypatch: pytest.MonkeyPatch) -> None:
    [no_token] = [p for p in errors.CHECKS if p.subject == "GET /user (no token) -> 401"]
    monkeypatch.setattr(errors, "CHECKS", [no_token])
    extra = KnownGap(subject=no_token.subject, why="never happens: the fake refuses it")
    monkeypatch.setitem(errors.GAPS, "github", (*errors.GAPS["github"], extra))
    [report] = errors.reports()
    assert report.passed == report.total == 1
    assert extra in report.unused_gaps
    assert not report.ok


# ----------------------------------------------------------------------------- planted faults


def no_404_recorded() -> bool:
    """octokit's recordings, which the real interactions family replays, hold no 404: no
    fault of a 404 can reach that family."""
    return all(
        it.status != 404
        for scenario in OCTOKIT_SCENARIOS
        for it in load_interactions(OCTOKIT_DIR, scenario)
    )


def test_a_404_answered_200_with_an_empty_body_is_caught() -> None:
    def empty(status: int, headers: Headers, body: bytes) -> tuple[int, Headers, bytes] | None:
        return (200, headers, b"") if status == 404 else None

    found = failures(errors.reports(answering({"github"}, empty), only=[NOT_FOUND]))
    assert set(found) == set(subjects(NOT_FOUND)) and len(found) >= 10
    for problems in found.values():
        assert any(p.startswith("status 200, expected 404") for p in problems), problems
    assert no_404_recorded()


def test_a_404_answered_500_is_caught() -> None:
    def failing(status: int, headers: Headers, body: bytes) -> tuple[int, Headers, bytes] | None:
        if status != 404:
            return None
        return 500, headers, b'{"message": "Server Error"}'

    found = failures(errors.reports(answering({"github"}, failing), only=[NOT_FOUND]))
    assert set(found) == set(subjects(NOT_FOUND))
    assert all(any("status 500, expected 404" in p for p in ps) for ps in found.values())
    assert no_404_recorded()


def test_an_error_body_without_message_or_documentation_url_is_caught() -> None:
    def bare(status: int, headers: Headers, body: bytes) -> tuple[int, Headers, bytes] | None:
        data = json_of(body)
        if status < 400 or not isinstance(data, dict):
            return None
        data.pop("message", None)
        data.pop("documentation_url", None)
        return status, headers, json.dumps(data).encode()

    wrap = answering({"github"}, bare)
    found = failures(errors.reports(wrap, only=["GET /*", "DELETE /*"]))
    refused = [s for s in subjects("GET /*", "DELETE /*") if "never issued" not in s]
    assert set(found) == set(refused) and len(found) >= 11
    for problems in found.values():
        assert any(p.startswith("$.message is None") for p in problems), problems
        assert any(p.startswith("$.documentation_url is None") for p in problems), problems
    # BasicError makes both optional: githubkit's model alone would let this through, and
    # octokit's recordings (one error, a 422) hold no 4xx of these operations.
    assert no_404_recorded()


def test_a_422_answered_400_is_caught() -> None:
    def as_400(status: int, headers: Headers, body: bytes) -> tuple[int, Headers, bytes] | None:
        data = json_of(body)
        if status != 422 or not isinstance(data, dict):
            return None
        data["status"] = "400"
        return 400, headers, json.dumps(data).encode()

    found = failures(errors.reports(answering({"github"}, as_400), only=["* -> 422"]))
    assert set(found) == set(subjects("* -> 422")) and len(found) >= 7
    for problems in found.values():
        assert any(p.startswith("status 400, expected 422") for p in problems), problems
    # (octokit's real interactions family sees it too, on its one recorded 422.)


def test_graphql_errors_without_type_or_path_are_caught() -> None:
    def stripped(status: int, headers: Headers, body: bytes) -> tuple[int, Headers, bytes] | None:
        data = json_of(body)
        if not isinstance(data, dict) or not isinstance(data.get("errors"), list):
            return None
        for error in data["errors"]:
            if isinstance(error, dict):
                error.pop("type", None)
                error.pop("path", None)
        return status, headers, json.dumps(data).encode()

    wrap = answering({"github", "linear"}, stripped)
    reports = errors.reports(wrap, only=["GraphQL *", "query issue *", "mutation issueCreate *"])
    found = failures(reports)
    missing = subjects("GraphQL * -> NOT_FOUND*", "query issue *", "mutation issueCreate (no such*")
    assert set(found) == set(missing) and len(found) == 6
    for problems in found.values():
        assert any(p.startswith("no error with path") for p in problems), problems
    # GitHub's GraphQL scenario meets a NOT_FOUND (an unknown repository): the response
    # conformance family holds its data to the schema, not its errors.
    exchanges = graphql_schemas.scenario_exchanges("github", wrap=wrap)
    vendor = graphql_schemas.vendor_schema("github")
    assert exchanges and all(c.ok for c in graphql_schemas.response_checks(vendor, exchanges))


def test_graphql_errors_answered_500_are_caught() -> None:
    def failing(status: int, headers: Headers, body: bytes) -> tuple[int, Headers, bytes] | None:
        data = json_of(body)
        if not isinstance(data, dict) or not data.get("errors") or status >= 500:
            return None
        return 500, headers, body

    wrap = answering({"github", "linear"}, failing)
    found = failures(
        errors.reports(wrap, only=["GraphQL *", "query *", "mutation *", "document *"])
    )
    graphql = subjects("GraphQL *")
    linear = [s for s in subjects("query *", "mutation *", "document *") if s not in graphql]
    for subject in graphql:
        assert any("status 500, expected 200" in p for p in found[subject]), found.get(subject)
    for subject in linear:
        if "never issued" in subject:
            continue  # the fake answers it with data, no errors (a known gap): not rewritten
        assert any("status 500: a server failure" in p for p in found[subject]), subject
    # GitHub's GraphQL scenario meets an error (an unknown repository); the response
    # conformance family holds the answer's data to the schema, not its status.
    exchanges = graphql_schemas.scenario_exchanges("github", wrap=wrap)
    vendor = graphql_schemas.vendor_schema("github")
    assert exchanges and all(c.ok for c in graphql_schemas.response_checks(vendor, exchanges))


def test_slack_ok_false_answered_with_a_4xx_is_caught() -> None:
    def as_404(status: int, headers: Headers, body: bytes) -> tuple[int, Headers, bytes] | None:
        data = json_of(body)
        if status != 200 or not isinstance(data, dict) or data.get("ok") is not False:
            return None
        return 404, headers, body

    wrap = answering({"slack"}, as_404)
    [report] = errors.reports(wrap, only=["*_not_found", "* not_authed", "* invalid_auth"])
    found = failures([report])
    assert len(found) == report.total == 9
    for problems in found.values():
        assert any(p.startswith("status 404, expected 200") for p in problems), problems
    # Slack's spec family validates an error's body, not its HTTP status.
    assert all(r.ok for r in slack_spec.reports(wrap))


def test_slack_an_undocumented_error_code_is_caught() -> None:
    def renamed(status: int, headers: Headers, body: bytes) -> tuple[int, Headers, bytes] | None:
        data = json_of(body)
        if not isinstance(data, dict) or data.get("error") != "channel_not_found":
            return None
        data["error"] = "no_such_channel"
        return status, headers, json.dumps(data).encode()

    [report] = errors.reports(answering({"slack"}, renamed), only=["* channel_not_found"])
    found = failures([report])
    assert set(found) == {
        "conversations.history channel_not_found",
        "chat.postMessage channel_not_found",
    }
    for method in ("conversations.history", "chat.postMessage"):
        problems = found[f"{method} channel_not_found"]
        assert f"not an error the spec lists for {method}" in problems
        assert any("error 'no_such_channel', expected 'channel_not_found'" in p for p in problems)


def test_a_rate_limit_header_missing_is_caught() -> None:
    def unlimited(status: int, headers: Headers, body: bytes) -> tuple[int, Headers, bytes] | None:
        if status < 400:
            return None
        return status, [(k, v) for k, v in headers if k != b"x-ratelimit-remaining"], body

    wrap = answering({"github"}, unlimited)
    [report] = errors.reports(wrap, only=["* -> 4??"])
    found = failures([report])
    rest = [s for s in subjects("* -> 4??") if "never issued" not in s]
    assert set(found) == set(rest)
    for problems in found.values():
        assert any(p.startswith("header x-ratelimit-remaining missing") for p in problems)


def test_a_slack_rate_limit_without_retry_after_is_caught() -> None:
    def no_retry(status: int, headers: Headers, body: bytes) -> tuple[int, Headers, bytes] | None:
        if status != 429:
            return None
        return status, [(k, v) for k, v in headers if k.lower() != b"retry-after"], body

    [report] = errors.reports(answering({"slack"}, no_retry), only=["* ratelimited"])
    found = failures([report])
    assert set(found) == {"conversations.list ratelimited"}
    assert (
        "Retry-After is None, expected whole seconds (evidence: installed source "
        "slack_sdk.http_retry.builtin_handlers:RateLimitErrorRetryHandler)"
    ) in found["conversations.list ratelimited"]


def test_octokit_replays_nothing_this_family_provokes_but_its_one_422() -> None:
    """Why the planted faults above mostly escape the real interactions family: of its
    recorded requests only ``errors`` #0 is an error (the family replays it, too)."""
    statuses = {
        (scenario, i): it.status
        for scenario in OCTOKIT_SCENARIOS
        for i, it in enumerate(load_interactions(OCTOKIT_DIR, scenario))
        if it.status >= 400
    }
    assert statuses == {("errors", 0): 422}
    assert octokit.SCENARIOS == OCTOKIT_SCENARIOS
