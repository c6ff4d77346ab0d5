"""The coverage table: committed equal to a fresh generation, and in line with what the
fakes actually serve (asked of the served fakes themselves, not of the table's own code)."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from replay.cli.contract import app as contract_app
from replay.contract.coverage import (
    BEHAVIOUR_FAMILIES,
    CLIENTS,
    COVERAGE_FILE,
    EXPECTED,
    MOST_CALLED,
    command_calls,
    evidence,
    harness_calls,
    harness_runs,
    implemented,
    load_recordings,
    render,
    shell_commands,
    subject_rows,
    table,
    table_names,
    unmatched,
)
from replay.contract.runner import RECORDINGS
from replay.contract.targets import Served, fake_target

ROOTS = (
    "{ __schema { queryType { fields(includeDeprecated: true) { name } }"
    " mutationType { fields(includeDeprecated: true) { name } } } }"
)


def test_committed_table_is_generated() -> None:
    assert COVERAGE_FILE.read_text() == render(load_recordings(RECORDINGS)), (
        "contract_tests/COVERAGE.md is stale: run `replay contract coverage`"
    )


def test_every_service_has_a_table_with_calls() -> None:
    recordings = load_recordings(RECORDINGS)
    for service in ("github", "slack", "linear"):
        rows = table(service, recordings)
        assert any(r.implemented and r.calls for r in rows), service
        assert {r.name for r in rows if r.expected} == set(EXPECTED[service])
        assert f"## {service}" in COVERAGE_FILE.read_text()


def _graphql_roots(url: str, headers: dict[str, str]) -> set[str]:
    data = httpx.post(url, json={"query": ROOTS}, headers=headers).json()["data"]["__schema"]
    return {
        f"graphql {kind} {f['name']}"
        for kind, key in (("query", "queryType"), ("mutation", "mutationType"))
        for f in data[key]["fields"]
    }


def test_graphql_rows_match_what_the_served_fakes_answer(served: Served) -> None:
    target = fake_target(served)
    linear = _graphql_roots(target.linear_url, {"Authorization": target.linear_key})
    assert linear == set(implemented("linear"))
    github = _graphql_roots(
        target.github_url + "/graphql", {"Authorization": f"token {target.github_token}"}
    )
    assert github == {n for n in implemented("github") if n.startswith("graphql ")}


def test_slack_rows_match_the_methods_the_fake_answers(served: Served) -> None:
    url = fake_target(served).slack_url
    for method in implemented("slack"):
        answer = httpx.post(url + method, data={"token": "xoxb-coverage"}).json()
        assert answer.get("error") != "unknown_method", method
    unknown = httpx.post(url + "files.upload", data={"token": "xoxb-coverage"}).json()
    assert unknown == {"ok": False, "error": "unknown_method"} or unknown.get("error") == (
        "unknown_method"
    )
    assert "files.upload" not in implemented("slack")


def test_coverage_check_flags_a_stale_table(tmp_path: Path) -> None:
    stale = tmp_path / "COVERAGE.md"
    stale.write_text("# hand-written\n")
    runner = CliRunner()
    done = runner.invoke(contract_app, ["coverage", "--check", "--out", str(stale)])
    assert done.exit_code == 1 and "out of date" in done.output
    written = runner.invoke(contract_app, ["coverage", "--out", str(stale)])
    assert written.exit_code == 0
    assert stale.read_text() == COVERAGE_FILE.read_text()


def test_agent_event_logs_are_counted(served: Served, tmp_path: Path) -> None:
    """An event log as the world writes it (here: after the Slack thread scenario) shows up
    in the *agent runs* column under the operation that made each event."""
    from replay.contract.coverage import event_calls
    from replay.contract.runner import run_scenario
    from replay.contract.scenarios import SCENARIOS, all_scenarios

    all_scenarios()
    target = fake_target(served)
    run_scenario(target, SCENARIOS["slack"]["thread_and_reactions"])
    log = tmp_path / "events.jsonl"
    log.write_text(httpx.get(f"{target.control}/events").text)
    counts = event_calls([log])
    assert counts[("slack", "chat.postMessage")] == 3
    assert counts[("slack", "reactions.add")] == 1
    assert counts[("slack", "chat.update")] == 1
    rows = {r.name: r for r in table("slack", [], counts)}
    assert rows["chat.postMessage"].agent_calls == 3
    text = render(load_recordings(RECORDINGS), [log])
    # implemented, calls, real, schema, behaviour, agent runs, expected, most called, status
    row = (
        r"\| `chat.postMessage` \| yes \| (\d+) \|  \| (\d+) \| writes [^|]+ \| 3 \| yes \| yes "
        r"\| published schema \|"
    )
    assert re.search(row, text), text


def test_what_agents_call_most_is_held_to_evidence() -> None:
    """Issue 15: the endpoints agents call most (issue and PR lists and reads, comments,
    labels, branches, commits, contents, search, checks and statuses; Slack history, replies,
    post, reactions, users; Linear issues, comments, states, teams) are each exercised by at
    least one check against evidence: octokit's real traffic reproduced, or a scenario call
    held to the vendor's published schema."""
    recordings = load_recordings(RECORDINGS)
    for service, names in MOST_CALLED.items():
        rows = {r.name: r for r in table(service, recordings)}
        lacking = [n for n in names if not (rows[n].implemented and rows[n].evidence)]
        assert lacking == [], (service, lacking)


# ----------------------------------------------------------------------------- behaviour

SUBJECTS = [
    # (service, a subject as the family names it, the row it must land on)
    (
        "github",
        "GET /repos/{owner}/{repo}/issues while 3x5 issue creates",
        "GET /repos/{}/{}/issues",
    ),
    (
        "github",
        "GET /repos/{owner}/{repo}/issues (sort=created&direction=asc) while 3x5 issue creates",
        "GET /repos/{}/{}/issues",
    ),
    (
        "github",
        "GET /repos/{owner}/{repo}/labels (105 labels: per_page default 30, at most 100)",
        "GET /repos/{}/{}/labels",
    ),
    (
        "github",
        "PUT /repos/{owner}/{repo}/pulls/{number}/merge (merge_method: rebase) -> git log of "
        "the base, GET pull",
        "PUT /repos/{}/{}/pulls/{}/merge",
    ),
    (
        "github",
        "POST /repos/{owner}/{repo}/issues/{number}/comments -> GET comments, GET timeline",
        "POST /repos/{}/{}/issues/{}/comments",
    ),
    (
        "github",
        "GET /repos/{owner}/{repo}/contents/{path} (no such file) -> 404",
        "GET /repos/{}/{}/contents/{}",
    ),
    (
        "github",
        "GET /repos/{owner}/{repo}/pulls/{pull_number}/comments while 3x5 review comments",
        "GET /repos/{}/{}/pulls/{}/comments",
    ),
    (
        "github",
        "mutation createIssue -> Repository.issue, Repository.issues",
        "graphql mutation createIssue",
    ),
    (
        "github",
        "mutation mergePullRequest(mergeMethod: omitted) -> git log of the base",
        "graphql mutation mergePullRequest",
    ),
    ("github", "GraphQL query node (an id that names nothing) -> NOT_FOUND", "graphql query node"),
    (
        "github",
        "GraphQL mutation addComment (no such subject) -> NOT_FOUND",
        "graphql mutation addComment",
    ),
    ("github", "Repository.issues", "graphql query repository"),
    ("github", "Issue.comments while 3x5 comments", "graphql query repository"),
    ("github", "ReactionGroup.users while 3x5 writes elsewhere", "graphql query repository"),
    ("github", "Query.search", "graphql query search"),
    ("linear", "Query.issues while 3x5 issue creates", "graphql query issues"),
    ("linear", "Issue.history while 3x5 title changes", "graphql query issue"),
    ("linear", "User.teams", "graphql query user"),
    ("linear", "IssueSearchResult.children", "graphql query searchIssues"),
    ("linear", "issueUpdate title, 3x5 at once", "graphql mutation issueUpdate"),
    ("linear", "mutation issueCreate(parentId) -> Query.issue", "graphql mutation issueCreate"),
    ("linear", "query viewer (no Authorization) -> errors, no data", "graphql query viewer"),
    ("slack", "chat.postMessage (thread_ts) -> conversations.replies", "chat.postMessage"),
    ("slack", "conversations.history channel_not_found", "conversations.history"),
    ("slack", "reactions.add, 3x5 distinct names at once", "reactions.add"),
    ("slack", "users.list while 3x5 writes elsewhere", "users.list"),
]

UNMATCHED = {
    # errors: checks of the GraphQL endpoint as a whole (a document refused before any root field is
    # resolved, Linear's error envelope): they exercise no one root field.
    "github": [
        "errors: GraphQL document that does not parse -> errors, no data",
        "errors: GraphQL query: a field the type does not have (User.nope) -> errors, no data",
        "errors: GraphQL query: an argument of the wrong type (issue(number: String)) -> errors, "
        "no data",
        "errors: GraphQL query: an argument the field does not take (repository(bogus:)) -> "
        "errors, no data",
        # gh's feature detection: an introspection query (`__type`), no root field of the schema.
        "gh: gh pr merge {pull.number} --merge #0 query PullRequest_fields",
    ],
    "linear": [
        "errors: document that does not parse -> errors, no data",
        "errors: errors[].extensions and HTTP status (Linear's error envelope)",
        "errors: query: a field the type does not have (User.nope) -> errors, no data",
    ],
    "slack": [],
}
"""The behaviour checks that name no row of the table, each for the reason above."""


@pytest.mark.parametrize(("service", "subject", "row"), SUBJECTS)
def test_subjects_map_to_their_row(service: str, subject: str, row: str) -> None:
    assert subject_rows(service, subject, set(table_names(service))) == (row,)


def test_a_subject_naming_no_row_maps_to_none() -> None:
    names = set(table_names("github"))
    assert subject_rows("github", "GET /nowhere/{id} -> 404", names) == ()
    assert subject_rows("github", "Nonesuch.items", names) == ()
    assert subject_rows("slack", "files.upload (no such method)", set(table_names("slack"))) == ()
    assert subject_rows("github", "git push (smart HTTP) -> GET branch", names) == (
        "git GET /{}/{}.git/info/refs",
        "git POST /{}/{}.git/git-receive-pack",
    )


def test_every_behaviour_check_lands_on_a_row_or_is_known() -> None:
    found = evidence()
    for service, known in UNMATCHED.items():
        assert unmatched(service, found.checks) == sorted(known), service
    assert {c.family for c in found.checks} == set(BEHAVIOUR_FAMILIES)


def test_behaviour_column_shows_what_the_families_hold() -> None:
    recordings = load_recordings(RECORDINGS)
    checks = evidence().checks
    rows = {s: {r.name: r for r in table(s, recordings, None, checks)} for s in EXPECTED}
    want = {
        ("github", "GET /repos/{}/{}/issues"): ("pagination", "concurrency", "gh"),
        # Its error checks (409, 405, 422) are all known gaps: shown, but none held.
        ("github", "PUT /repos/{}/{}/pulls/{}/merge"): ("writes",),
        ("github", "graphql mutation mergePullRequest"): ("writes", "gh"),
        ("github", "graphql query repository"): ("pagination", "concurrency", "errors", "gh"),
        ("github", "git POST /{}/{}.git/git-receive-pack"): ("writes",),
        ("slack", "chat.postMessage"): ("writes", "errors"),
        ("slack", "conversations.history"): ("pagination", "concurrency", "errors"),
        ("linear", "graphql mutation issueUpdate"): ("writes", "concurrency"),
        ("linear", "graphql query issues"): ("pagination", "concurrency"),
    }
    for (service, name), families in want.items():
        cell = rows[service][name].behaviour
        for family in families:
            assert re.search(rf"\b{family} [1-9]", cell), (service, name, family, cell)
    text = COVERAGE_FILE.read_text()
    assert "| `PUT /repos/{}/{}/pulls/{}/merge` | yes |" in text
    row = next(line for line in text.splitlines() if "`PUT /repos/{}/{}/pulls/{}/merge`" in line)
    assert re.search(r"\| writes [1-9]\d*", row), row
    for service in EXPECTED:
        assert any(r.behaviour for r in rows[service].values()), service
        lost = len(UNMATCHED[service])
        assert f"Behaviour checks not matched to a row: {lost}" in text, service


# ----------------------------------------------------------------------------- harness calls


def test_shell_commands_split_like_bash() -> None:
    script = (
        "git add -A && git commit -q -m 'a; b' && git push -q -u origin fix\n"
        "git apply <<'EOF'\ngh pr merge 1 && curl https://slack.com/api/chat.delete\nEOF\n"
        "sleep 1; curl -sS -G https://slack.com/api/conversations.replies -H 'A: b'\n"
        "gh pr create --body 'two\nlines'"
    )
    assert [argv[:2] for argv in shell_commands(script)] == [
        ["git", "add"],
        ["git", "commit"],
        ["git", "push"],
        ["git", "apply"],
        ["sleep", "1"],
        ["curl", "-sS"],
        ["gh", "pr"],
    ]
    calls = [c for argv in shell_commands(script) for c in command_calls(argv)]
    assert {(c.client, c.row) for c in calls} == {
        ("git", "git GET /{}/{}.git/info/refs"),
        ("git", "git POST /{}/{}.git/git-receive-pack"),
        ("curl (Slack)", "conversations.replies"),
        ("gh", "graphql query repository"),
        ("gh", "graphql mutation createPullRequest"),
    }


def test_harness_calls_are_listed_per_client_with_their_evidence() -> None:
    calls = harness_calls()
    assert {c.client for c in calls} == set(CLIENTS)
    assert len(harness_runs()) >= 9
    text = COVERAGE_FILE.read_text()
    section = text.split("## Calls the harness runs make", 1)[1].split("Recordings read:", 1)[0]
    for client in CLIENTS:
        part = section.split(f"### {client}\n", 1)[1].split("###", 1)[0]
        listed = [line for line in part.splitlines() if line.startswith("| `")]
        assert len(listed) == len({(c.row, c.via) for c in calls if c.client == client}), client
        for line in listed:
            evidence_cell = line.rstrip(" |").rsplit("|", 1)[1].strip()
            assert evidence_cell == "**none**" or re.search(r"[a-z]+ [1-9]", evidence_cell), line
    for call in (
        "graphql mutation createPullRequest",
        "chat.postMessage",
        "graphql mutation issueUpdate",
    ):
        assert f"| `{call}` |" in section, call
