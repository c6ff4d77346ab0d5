"""The viewer over real runs (Docker, the stub model; see ``conftest.py``), through FastAPI's
test client: cheat's page shows the skip marks its diff added and its failing hidden tests by
name; reckless's page highlights the events that broke its rules; every model call of each
run is listed; the comparison page shows ``replay compare``'s own figures and links each
discordant case's runs. What is expected is read from the run's own files and the case, not
from the viewer."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from replay.base.case import load_case
from replay.view import Source, make_app
from tests.compare.htmltree import Node, parse
from tests.view.conftest import CARET, COMPARISON, Real


@pytest.fixture(scope="module")
def client(real: Real) -> Iterator[TestClient]:
    source = Source.open(str(real.db), real.cases)
    try:
        with TestClient(make_app(source)) as client:
            yield client
    finally:
        source.close()


def page(client: TestClient, url: str) -> Node:
    answer = client.get(url)
    assert answer.status_code == 200, (url, answer.text)
    return parse(answer.text)


def grade_json(run_dir: str | None) -> dict:  # type: ignore[type-arg]
    assert run_dir is not None
    return json.loads((Path(run_dir) / "grade.json").read_text())  # type: ignore[no-any-return]


def test_cheat_shows_its_skip_marks_and_its_failing_hidden_tests_by_name(
    client: TestClient, real: Real
) -> None:
    tree = page(client, f"/runs/{real.cheat.id}")
    assert "model fail" in tree.by_id("verdict").text()
    diff = (Path(str(real.cheat.run_dir)) / "diff.patch").read_text()
    added = [line[1:] for line in diff.splitlines() if "pytest.mark.skip" in line]
    assert added, "the cheat trajectory adds skip marks"
    marks = tree.by_id("skip-marks").find_all("li")[1:]  # [0] is the finding itself
    assert len(marks) == len(added)
    assert all('pytest.mark.skip(reason="flaky on CI")' in m.text() for m in marks)
    outlined = tree.by_id("agent-diff").find_all("span", "skipmark")
    assert [s.text()[1:] for s in outlined] == added

    rows = {r.attrs["data-test"]: r for r in tree.by_id("test-table").find_all("tr", "test")}
    f2p = load_case(CARET).hidden_tests.fail_to_pass
    assert set(f2p) <= set(rows)
    for name in f2p:
        assert rows[name].attrs["data-status"] == "failed", name
        assert "AssertionError" in rows[name].text(), name  # its report, from the JUnit XML
    assert "restored" in tree.by_id("findings").text()


def test_reckless_highlights_the_events_that_broke_its_rules(
    client: TestClient, real: Real
) -> None:
    grade = grade_json(real.reckless.run_dir)
    broken = [r for r in grade["side_effects"]["rules"] if not r["ok"]]
    assert {r["rule"] for r in broken} == {"no-push-to-main", "no-random"}
    tree = page(client, f"/runs/{real.reckless.id}")
    rules = {r.attrs["data-rule"]: r for r in tree.by_id("rule-table").find_all("tr", "rule")}
    assert {name for name, row in rules.items() if "offending" in row.classes} == {
        r["rule"] for r in broken
    }
    events = tree.by_id("events").find_all("tr", "event")
    offending = {int(r.attrs["data-seq"]): r for r in events if "offending" in r.classes}
    assert sorted(offending) == sorted(seq for r in broken for seq in r["matched"])
    for rule in broken:
        for seq in rule["matched"]:
            assert rule["rule"] in offending[seq].attrs["data-broke"].split()
    kinds = {offending[seq].find_all("td")[2].text() for seq in offending}
    assert kinds == {"github.branch.moved", "slack.message.posted"}
    assert len(events) == len(
        (Path(str(real.reckless.run_dir)) / "events.jsonl").read_text().splitlines()
    )


def test_every_model_call_of_each_run_is_listed(client: TestClient, real: Real) -> None:
    for run in (real.gold, real.cheat, real.reckless):
        lines = (Path(str(run.run_dir)) / "model_calls.jsonl").read_text().splitlines()
        calls = [json.loads(line) for line in lines]
        tree = page(client, f"/runs/{run.id}")
        rows = tree.by_id("model-call-table").find_all("tbody")[0].find_all("tr")
        assert [r.attrs["data-request-id"] for r in rows] == [c["request_id"] for c in calls]
        for row, call in zip(rows, calls, strict=True):
            cells = [td.text() for td in row.find_all("td")]
            assert cells[3] == str(call["status"]) and cells[4] == call["verdict"]
            assert cells[5] == f"{call['ttfb_ms']:.0f}" and cells[6] == f"{call['total_ms']:.0f}"
            assert cells[7] == str(call["usage"]["input_tokens"])
            assert cells[8] == str(call["usage"]["output_tokens"])


def test_the_comparison_page_has_compares_figures_and_its_discordant_runs_one_click_away(
    client: TestClient, real: Real
) -> None:
    doc = real.doc
    tree = page(client, f"/comparisons/{COMPARISON}")
    # The engine's figures, as replay compare printed them (only generated_at differs).
    estimate = doc["difference"]["estimate"]
    assert f"{estimate:+.2f}" in tree.by_id("difference").text()
    shown = tree.by_id("headline").attrs["data-decision"]
    assert shown == doc["verdict"]["decision"]
    discordant = [c for c in doc["cases"] if c["class"] in ("only_a", "only_b", "flaky")]
    assert discordant, "gold against cheat disagrees on the demo cases"
    rows = tree.by_id("discordant").find_all("tr", "discordant-case")
    assert [r.attrs["data-case-id"] for r in rows] == [c["case_id"] for c in discordant]
    for row, case in zip(rows, discordant, strict=True):
        want = [run["run_id"] for label in "AB" for run in case[label]["runs"]]
        links = row.find_all("a")
        assert [a.attrs["data-run-id"] for a in links] == want
        for link in links:
            target = page(client, link.attrs["href"])
            assert f"Run {link.attrs['data-run-id'][:8]}:" in target.find_all("h1")[0].text()


def test_gold_passes_with_nothing_highlighted(client: TestClient, real: Real) -> None:
    tree = page(client, f"/runs/{real.gold.id}")
    assert "pass" in tree.by_id("verdict").text()
    assert not [n for n in tree.iter() if n.attrs.get("id") == "skip-marks"]
    assert tree.by_id("events").find_all("tr", "offending") == []
    gold_patch = load_case(CARET).gold.patch.read_text().splitlines()
    assert gold_patch[0] in tree.by_id("gold-diff").text()
    # Gold's diff is the gold patch: the two columns show the same changes.
    agent = [s.text() for s in tree.by_id("agent-diff").find_all("span", "add")]
    gold = [s.text() for s in tree.by_id("gold-diff").find_all("span", "add")]
    assert agent == gold and agent
