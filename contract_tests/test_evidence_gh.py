"""The ``gh documents`` family: the GraphQL documents and REST calls the real gh 2.23 sends,
vendored under ``evidence/gh-cli/`` and executed against the GitHub fake. Every gh command the
project's tests rely on is covered by an executed document that holds to GitHub's schema; the
vendored documents are exactly what the installed gh sends; and a fake whose answers break
the schema (a type, a count, the feature detection gh relies on) is caught."""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from fakes.core.server import ASGIApp, Message, Receive, Scope, Send
from replay.contract.evidence import gh_documents as gh
from replay.contract.targets import Wrap

MERGE_METHODS = {
    "pr merge --merge": "MERGE",
    "pr merge --squash": "SQUASH",
    "pr merge --rebase": "REBASE",
}


@pytest.fixture(scope="module")
def results() -> list[gh.Result]:
    return gh.execute()


# ----------------------------------------------------------------------------- the evidence


def test_the_evidence_names_its_source_and_each_document_its_origin_in_cli() -> None:
    source = gh.load_gh_source()
    assert source.repository == "cli/cli" and source.tag == "v2.23.0"
    assert source.gh.startswith("gh version 2.23.0 ")
    assert (gh.DIRECTORY / "LICENSE").read_text().startswith("MIT License")
    captured = gh.load_captured()
    assert captured.gh == source.gh
    sent = [s for c in captured.commands for s in c.sent]
    documents = {s.document for s in sent if s.document}
    assert {f"documents/{d}" for d in documents} | {"commands.json"} == set(source.files)
    assert {s.built_in for s in sent} == set(source.built_in)
    for s in sent:
        if s.document is None:
            assert s.operation is None and s.path.startswith("/repos/")
            continue
        assert s.operation is not None
        cite = gh.CITES[s.operation.split()[-1]]
        assert cite.file == s.built_in
        assert cite.says in gh.document_text(s.document), (s.document, cite.says)
    for c in captured.commands:
        rest = [s for s in c.sent if s.document is None]
        assert all(s.built_in == gh.REST_CITES[c.covers].file for s in rest)


def test_the_vendored_documents_are_what_the_installed_gh_sends(tmp_path: Path) -> None:
    """Captured afresh with /usr/bin/gh (installed by .ci/system-deps): the same commands
    send the same documents, variables (ids bound to the state made for them), REST calls."""
    (tmp_path / "SOURCE.json").write_bytes((gh.DIRECTORY / "SOURCE.json").read_bytes())
    again = gh.capture(tmp_path)
    vendored = gh.load_captured()
    assert again.gh == vendored.gh

    def comparable(directory: Path, captured: gh.Captured) -> list[Any]:
        out = []
        for c in captured.commands:
            sent = []
            for s in c.sent:
                variables = s.variables
                if variables is not None:
                    placeholders = {n: f"<{n}>" for n in s.bind.values()}
                    variables = gh.bound(variables, s.bind, placeholders)
                text = gh.document_text(s.document, directory) if s.document else None
                sent.append(
                    json.dumps(
                        [s.method, s.path, text, variables, s.body, s.headers, s.follows, s.status]
                    )
                )
            # gh sends some requests concurrently (issue edit's metadata and its mutations)
            out.append((c.argv, sorted(sent)))
        return out

    assert comparable(tmp_path, again) == comparable(gh.DIRECTORY, vendored)


# ----------------------------------------------------------------------------- the family


def test_the_family_passes_on_the_real_fake(results: list[gh.Result]) -> None:
    [report] = gh.reports()
    print("\n".join(report.lines(every=True)))
    assert (report.service, report.family) == ("github", "gh documents")
    assert report.source.repository == "cli/cli"
    assert report.ok and report.total == len(results) >= 50
    assert [r.check.subject for r in results] == [c.subject for c in report.checks]


def test_every_listed_command_is_covered_by_an_executed_document_that_holds(
    results: list[gh.Result],
) -> None:
    covered = gh.coverage(results)
    for name in gh.LISTED:
        cover = covered[name]
        assert cover.ok, (name, [c for c in cover.checks if not c.ok])
        assert any(c.ok for c in cover.checks), name
        if name != "api":
            assert cover.documents, name
    for name, method in MERGE_METHODS.items():
        merges = [
            r
            for r in results
            if r.command.covers == name and r.sent.operation == "mutation PullRequestMerge"
        ]
        assert [r.sent.variables["input"]["mergeMethod"] for r in merges if r.sent.variables] == [
            method
        ]
        assert all(r.check.ok for r in merges)
    api = covered["api"]
    assert api.rest == (
        "GET /repos/{owner}/{repo}/issues",
        "POST /repos/{owner}/{repo}/issues",
        "PATCH /repos/{owner}/{repo}/issues/{number}",
    )
    assert "paginate-issues #0" in api.octokit  # octokit's real GET .../issues, replayed there
    assert "PullRequest_fields.graphql" in covered["pr merge --merge"].documents
    assert covered["pr checkout"].documents == ("PullRequestByNumber.4.graphql",)


def test_the_coverage_section_names_every_command_and_the_root_fields_it_reaches(
    results: list[gh.Result],
) -> None:
    lines = gh.coverage_lines(results)
    for name in gh.LISTED:
        [row] = [line for line in lines if line.startswith(f"| `gh {name}` |")]
        assert row.endswith("| executed, holds |"), row
    reached = gh.root_fields(results)
    assert reached["graphql mutation mergePullRequest"] == 3
    assert reached["graphql query repository"] >= 20
    assert reached["GET /repos/{}/{}/issues"] == 4  # one plain, three pages


# ----------------------------------------------------------------------------- planted faults

Edit = Callable[[Scope, Any], Any]


def answering(edit: Edit, drop: bytes = b"") -> Wrap:
    """A wrap that rewrites the GitHub fake's JSON answers with ``edit`` (and leaves out the
    header ``drop``)."""

    def wrap(name: str, app: ASGIApp) -> ASGIApp:
        if name != "github":
            return app

        async def broken(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] != "http":
                await app(scope, receive, send)
                return
            start: Message = {}
            chunks: list[bytes] = []

            async def keep(message: Message) -> None:
                nonlocal start
                if message["type"] == "http.response.start":
                    start = message
                    return
                chunks.append(message.get("body", b""))
                if message.get("more_body"):
                    return
                body = b"".join(chunks)
                with contextlib.suppress(ValueError):
                    body = json.dumps(edit(scope, json.loads(body))).encode()
                headers = [
                    (k, v) for k, v in start["headers"] if k not in (b"content-length", drop)
                ]
                await send({**start, "headers": [*headers, (b"content-length", b"%d" % len(body))]})
                await send({"type": "http.response.body", "body": body})

            await app(scope, receive, keep)

        return broken

    return wrap


DROP = object()


def _walk(value: Any, change: Callable[[str, Any], Any]) -> Any:
    if isinstance(value, dict):
        changed = {k: change(k, _walk(v, change)) for k, v in value.items()}
        return {k: v for k, v in changed.items() if v is not DROP}
    if isinstance(value, list):
        return [_walk(v, change) for v in value]
    return value


def problems_of(results: list[gh.Result], pattern: str) -> list[str]:
    found = [
        r.check.subject for r in results if any(re.search(pattern, p) for p in r.check.problems)
    ]
    return found


@pytest.fixture(scope="module")
def broken() -> Iterator[list[gh.Result]]:
    """One run with every answer broken: ``number`` a string, ``url`` a number, ``state`` a
    value GitHub's enums do not have, ``title`` null, ``hasIssuesEnabled`` left out, every
    ``totalCount`` one too many, the feature detection of PullRequest without
    ``isInMergeQueue``, and no ``Link`` header."""

    def edit(scope: Scope, body: Any) -> Any:
        def change(key: str, value: Any) -> Any:
            if key == "number" and isinstance(value, int):
                return str(value)
            if key == "totalCount" and isinstance(value, int):
                return value + 1
            if key == "fields" and isinstance(value, list):
                return [f for f in value if f != {"name": "isInMergeQueue"}]
            if key == "state" and value == "OPEN":
                return "opened"
            if key == "url" and isinstance(value, str):
                return len(value)
            if key == "title" and isinstance(value, str):
                return None
            return DROP if key == "hasIssuesEnabled" else value

        return _walk(body, change)

    yield gh.execute(answering(edit, drop=b"link"))


def test_a_scalar_of_the_wrong_type_is_caught(broken: list[gh.Result]) -> None:
    subjects = problems_of(broken, r"\.number: a string '\d+' for the vendor's Int")
    assert "gh issue view 7 #0 query IssueByNumber" in subjects
    assert "gh pr list --state all --json number #0 query PullRequestList" in subjects
    rest = problems_of(broken, r"^\$\.0\.number: Input should be a valid integer")
    assert "gh api repos/acme/semverkit/issues #0 GET /repos/acme/semverkit/issues" in rest


def test_a_value_outside_the_vendors_enum_is_caught(broken: list[gh.Result]) -> None:
    subjects = problems_of(broken, r"'opened' is not a value of the vendor's enum IssueState")
    assert "gh issue view 7 #0 query IssueByNumber" in subjects


def test_a_null_or_missing_non_null_field_is_caught(broken: list[gh.Result]) -> None:
    null = problems_of(broken, r"issue\.title: null for the non-null String!")
    missing = problems_of(broken, r"^data\.repository\.hasIssuesEnabled: missing$")
    assert "gh issue view 7 #0 query IssueByNumber" in set(null) & set(missing)


def test_a_page_gh_follows_that_the_fake_does_not_link_is_caught(broken: list[gh.Result]) -> None:
    subjects = problems_of(broken, r"gh followed Link rel=next to .*page=2; the fake's is None")
    assert subjects == [
        "gh api --paginate 'repos/acme/semverkit/issues?state=all&per_page=5' #1 "
        "GET /repos/acme/semverkit/issues?state=all&per_page=5&page=2"
    ]


def test_a_connection_that_miscounts_is_caught(broken: list[gh.Result]) -> None:
    subjects = problems_of(broken, r"labels: \d+ items on a first page of 100 of \d+")
    assert "gh issue view 7 #0 query IssueByNumber" in subjects


def test_a_feature_detection_without_a_field_gh_looks_for_is_caught(
    broken: list[gh.Result],
) -> None:
    subjects = problems_of(broken, r"lacks \['isInMergeQueue'\]")
    assert subjects == ["gh pr merge {pull.number} --merge #0 query PullRequest_fields"]


def test_every_command_is_caught_by_some_fault(broken: list[gh.Result]) -> None:
    failing = {r.command.covers for r in broken if not r.check.ok}
    assert set(gh.LISTED) <= failing
    assert not [r for r in broken if any(p.startswith("setup:") for p in r.check.problems)]
    url = problems_of(broken, r"\.url: a number \d+ for the vendor's URI")
    assert "gh pr create --title 'Fix caret' --body 'Fixes #7' #2 mutation PullRequestCreate" in url


def test_an_answer_with_errors_is_caught() -> None:
    def refuse(scope: Scope, body: Any) -> Any:
        if isinstance(body, dict) and "mergePullRequest" in json.dumps(body):
            return {"data": {"mergePullRequest": None}, "errors": [{"message": "refused"}]}
        return body

    results = gh.execute(answering(refuse))
    failing = {r.check.subject: r.check.problems for r in results if not r.check.ok}
    merges = [s for s in failing if "PullRequestMerge" in s]
    assert len(merges) == 3
    assert all("errors: refused" in failing[s] for s in merges)
    assert all("data.mergePullRequest: null where gh reads an answer" in failing[s] for s in merges)
