"""The ``linear-sdk documents`` family: the Linear SDK's own GraphQL documents, executed
against the Linear fake with variables bound to state made through its API, and held to the
SDK's schema. The documents agents rely on most hold on the real fake; faults planted by
wrapping the fake's app (a page flag that lies, a non-null field answered null, an enum value
the SDK does not know, an update whose ``stateId`` is dropped...) are each caught; and the
report is what ``replay contract run`` prints."""

from __future__ import annotations

import json
import re
from typing import Any

import httpx
import pytest
from graphql import validate
from typer.testing import CliRunner

from contract_tests.test_evidence_pagination import breaking, every
from contract_tests.test_evidence_writes import json_body, rewriting
from contract_tests.test_gap_sources import sourced
from fakes.core.server import Scope
from replay.cli.contract import app as contract_app
from replay.contract.evidence import KnownGap, families
from replay.contract.evidence import linear_documents as ld
from replay.contract.evidence.graphql_schemas import fake_schema
from replay.contract.targets import Served, fake_target

MOST_USED = {
    "issue": "query issue",
    "issues": "query issues",
    "issue search": "query searchIssues",
    "issue search (deprecated)": "query issueSearch",
    "issueCreate": "mutation createIssue",
    "issueUpdate": "mutation updateIssue",
    "commentCreate": "mutation createComment",
    "a team's workflow states": "query team_states",
    "workflow states": "query workflowStates",
}
"""The operations agents use most (field notes §4) -> the SDK document that sends each."""

ROOTS = "{ __schema { queryType { fields { name } } mutationType { fields { name } } } }"


@pytest.fixture(scope="module")
def results() -> list[ld.Result]:
    return ld.execute()


def by_subject(results: list[ld.Result]) -> dict[str, ld.Result]:
    return {r.check.subject: r for r in results}


def problems_of(results: list[ld.Result], subject: str) -> tuple[str, ...]:
    return by_subject(results)[subject].check.problems


def matching(problems: tuple[str, ...], pattern: str) -> list[str]:
    return [p for p in problems if re.search(pattern, p)]


# ----------------------------------------------------------------------------- the documents


def test_the_documents_are_the_sdks_operations_on_what_the_fake_serves(served: Served) -> None:
    """The root fields come from the fake's schema, and the served fake agrees (asked by
    introspection); every SDK operation whose root fields it all serves is a check."""
    target = fake_target(served)
    answer = httpx.post(
        target.linear_url, json={"query": ROOTS}, headers={"Authorization": target.linear_key}
    ).json()["data"]["__schema"]
    introspected = {
        kind: frozenset(f["name"] for f in answer[key]["fields"])
        for kind, key in (("query", "queryType"), ("mutation", "mutationType"))
    }
    assert ld.served_roots() == introspected
    docs = ld.documents()
    subjects = [d.subject for d in docs]
    assert len(subjects) == len(set(subjects)) >= 70
    assert set(MOST_USED.values()) <= set(subjects)
    for op in ld.sdk_operations():
        served_all = all(r in introspected[op.kind] for r in op.roots)
        assert (op in docs) == served_all, op.subject
    assert len(ld.sdk_operations()) - len(docs) > 500  # the rest: not the fake's


# ----------------------------------------------------------------------------- the family


def test_the_family_passes_on_the_real_fake(results: list[ld.Result]) -> None:
    report = ld.report_of(results)
    print("\n".join(report.lines(every=True)))
    assert (report.service, report.family) == ("linear", "linear-sdk documents")
    assert report.source.repository == "linear/linear"
    assert report.ok, report.lines()
    assert [c.subject for c in report.checks] == [d.subject for d in ld.documents()]
    found = by_subject(results)
    for what, subject in MOST_USED.items():
        assert found[subject].check.ok, (what, found[subject].check.problems)
    # Lists are walked page by page; writes are read back through the SDK's own queries.
    assert found["query issues"].requests >= 5
    assert found["query issue_comments"].requests >= 4
    assert found["query team_states"].requests >= 4
    assert found["mutation createIssue"].requests == 2
    assert found["mutation updateIssueBatch"].requests == 3


def test_every_gap_is_a_document_the_fakes_schema_refuses_or_listed_with_its_reason(
    results: list[ld.Result],
) -> None:
    """A document that fails is accepted only as a known gap: the fields it asks for are not
    in the fake's schema (the reason given by ``linear-sdk/gaps.json``, as for the SDK
    documents family), or it is in the family's own :data:`GAPS`, each with its source."""
    report = ld.report_of(results)
    docs = {d.subject: d for d in ld.documents()}
    refused = {s for s, d in docs.items() if validate(fake_schema("linear"), d.ast)}
    for check in report.checks:
        if check.ok:
            assert check.subject not in refused
            continue
        assert check.gap, check
        assert sourced(check.gap), check
        if check.subject not in ld.GAPS:
            assert check.subject in refused, check
    assert {c.subject for c in report.gaps} >= refused
    for subject, gap in ld.GAPS.items():
        assert gap.subject == subject and sourced(gap.why), gap


def test_a_gap_of_this_family_that_matches_nothing_is_stale(
    results: list[ld.Result], monkeypatch: pytest.MonkeyPatch
) -> None:
    stale = KnownGap(subject="query issue", problem="nothing like this", why="made up for a test")
    monkeypatch.setattr(ld, "GAPS", {stale.subject: stale})
    report = ld.report_of(results)
    assert report.unused_gaps == [stale] and not report.ok


def test_the_counts_are_what_replay_contract_run_prints(
    results: list[ld.Result], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``replay contract run`` (its other families left out to keep this quick) prints the
    family's headline, N/M and every known gap with its reason, as the report has them."""
    report = ld.report_of(results)
    monkeypatch.setattr(families, "FAMILIES", (ld.reports,))
    ran = CliRunner().invoke(contract_app, ["run", "--service", "linear", "--no-mutants"])
    assert ran.exit_code == 0, ran.output
    printed = ran.output.splitlines()
    [start] = [i for i, line in enumerate(printed) if line.startswith("linear linear-sdk ")]
    figures = re.match(
        r"^linear linear-sdk documents: (\d+)/(\d+) \((\d+) known gaps, 0 failures\) against "
        r"linear/linear@8335e09a17dd; \d+ requests; (\d+) more SDK operations",
        printed[start],
    )
    assert figures is not None, printed[start]
    passed, total, gaps, unserved = (int(g) for g in figures.groups())
    assert (passed, total, gaps) == (report.passed, len(results), len(report.gaps))
    assert passed + gaps == total == len(ld.documents())
    assert unserved == len(ld.sdk_operations()) - total
    assert printed[start : start + 1 + gaps] == report.lines()
    assert all(" -- " in line for line in printed[start + 1 : start + 1 + gaps])  # reasons


# ----------------------------------------------------------------------------- planted faults


def test_has_next_page_false_while_items_remain_is_caught() -> None:
    wrap = breaking("linear", body=every("hasNextPage", lambda _: False))
    found = ld.execute(wrap, only=["issues", "issue_comments", "team_states"])
    for subject, where in (
        ("query issues", r"data\.issues"),
        ("query issue_comments", r"data\.issue\.comments"),
        ("query team_states", r"data\.team\.states"),
    ):
        problems = problems_of(found, subject)
        assert matching(
            problems,
            rf"^page 1 \(first 2\): {where}\.pageInfo\.hasNextPage: False with \d+ of \d+ items "
            "left out$",
        ), problems
        assert matching(problems, rf"^{where}: the pages of 2 give 2 items, one page of 250 \d+"), (
            problems
        )


def test_a_non_null_field_answered_null_is_caught() -> None:
    wrap = breaking("linear", body=every("title", lambda _: None))
    found = ld.execute(wrap, only=["issue", "issues", "createIssue"])
    issue = problems_of(found, "query issue")
    assert "data.issue.title: null for the non-null String!" in issue, issue
    assert matching(problems_of(found, "query issues"), r"data\.issues\.nodes\[0\]\.title: null")
    create = problems_of(found, "mutation createIssue")
    assert "read back by query issue: data.issue.title: null for the non-null String!" in create
    assert matching(create, r"^read back by query issue: title: None, the mutation set 'Range")


def test_an_enum_value_outside_the_sdks_schema_is_caught() -> None:
    wrap = breaking(
        "linear", body=every("visibility", lambda v: v.upper() if isinstance(v, str) else v)
    )
    found = ld.execute(wrap, only=["team", "teams"])
    assert "data.team.visibility: 'PUBLIC' is not a value of the vendor's enum TeamVisibility" in (
        problems_of(found, "query team")
    )
    assert matching(
        problems_of(found, "query teams"),
        r"data\.teams\.nodes\[0\]\.visibility: 'PUBLIC' is not a value of the vendor's enum",
    )


def _sdk_request(body: bytes, operation: str) -> dict[str, Any] | None:
    payload = json_body(body)
    if isinstance(payload, dict) and f"{operation}(" in str(payload.get("query", "")):
        return payload
    return None


def test_an_update_whose_state_id_is_ignored_is_caught(results: list[ld.Result]) -> None:
    """Read back through the SDK's own ``issue`` document."""

    def stateless(scope: Scope, body: bytes) -> bytes | None:
        payload = _sdk_request(body, "mutation updateIssue")
        if payload is None:
            return None
        payload["variables"]["input"].pop("stateId", None)
        return json.dumps(payload).encode()

    assert by_subject(results)["mutation updateIssue"].check.ok
    found = ld.execute(rewriting("linear", stateless), only=["updateIssue", "issue"])
    problems = problems_of(found, "mutation updateIssue")
    assert len(problems) == 1, problems
    assert re.fullmatch(
        r"read back by query issue: state\.id: '[\w-]+', the mutation set '[\w-]+'", problems[0]
    )
    assert problems_of(found, "query issue") == ()


def test_a_connection_that_ignores_first_is_caught() -> None:
    def unbounded(scope: Scope, body: bytes) -> bytes | None:
        payload = _sdk_request(body, "query issues")
        if payload is None or "first" not in payload.get("variables", {}):
            return None
        payload["variables"]["first"] = None
        return json.dumps(payload).encode()

    found = ld.execute(rewriting("linear", unbounded), only=["issues"])
    problems = problems_of(found, "query issues")
    assert matching(problems, r"^page 1 \(first 2\): data\.issues: \d+ nodes for first 2$"), (
        problems
    )


def test_has_next_page_without_an_end_cursor_is_caught() -> None:
    wrap = breaking("linear", body=every("endCursor", lambda _: None))
    found = ld.execute(wrap, only=["issues"])
    problems = problems_of(found, "query issues")
    assert "page 1 (first 2): data.issues.pageInfo: hasNextPage without an endCursor" in problems


def test_a_write_that_does_not_succeed_is_caught() -> None:
    wrap = breaking("linear", body=every("success", lambda _: False))
    found = ld.execute(wrap, only=["createComment", "issueAddLabel"])
    assert "data.commentCreate.success: False, not true" in problems_of(
        found, "mutation createComment"
    )
    assert "data.issueAddLabel.success: False, not true" in problems_of(
        found, "mutation issueAddLabel"
    )


def test_a_required_variable_nothing_binds_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    """Not a silent skip: the document is a failing check until bound or listed in GAPS."""
    monkeypatch.setattr(ld, "ID_OF_ROOT", {k: v for k, v in ld.ID_OF_ROOT.items() if k != "team"})
    found = ld.execute(only=["team", "issue"])
    assert problems_of(found, "query team") == (
        "variables: no realistic value bound to $id: String!",
    )
    assert problems_of(found, "query issue") == ()
    report = ld.report_of(found)
    assert [c.subject for c in report.failures] == ["query team"]
