"""The coverage table: committed equal to a fresh generation, and in line with what the
fakes actually serve (asked of the served fakes themselves, not of the table's own code)."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
from typer.testing import CliRunner

from replay.cli.contract import app as contract_app
from replay.contract.coverage import (
    COVERAGE_FILE,
    EXPECTED,
    MOST_CALLED,
    implemented,
    load_recordings,
    render,
    table,
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
    # implemented, calls, real, schema, agent runs, expected, most called, status
    row = (
        r"\| `chat.postMessage` \| yes \| (\d+) \|  \| (\d+) \| 3 \| yes \| yes "
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
