"""The viewer's pages through FastAPI's test client over a store filled by hand (no Docker):
what each page shows, that everything from the store and the run's files is escaped, the
filters, and the one-line 404 pages."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from replay.view import Source, make_app
from replay.view.page import file_stem
from tests.compare.htmltree import Node, parse
from tests.view.synthetic import BARE, CALLS, F2P, FULL, HOSTILE, SKIP_LINE, Filled, fill


@pytest.fixture(scope="module")
def filled(tmp_path_factory: pytest.TempPathFactory) -> Filled:
    return fill(tmp_path_factory.mktemp("view"))


@pytest.fixture(scope="module")
def client(filled: Filled) -> Iterator[TestClient]:
    source = Source.open(str(filled.db), [c.path for c in filled.cases])
    try:
        with TestClient(make_app(source)) as client:
            yield client
    finally:
        source.close()


def page(client: TestClient, url: str) -> Node:
    answer = client.get(url)
    assert answer.status_code == 200, (url, answer.status_code, answer.text)
    assert answer.headers["content-type"].startswith("text/html")
    assert HOSTILE not in answer.text, "unescaped text from the store or a run's files"
    return parse(answer.text)


def run_ids(tree: Node) -> list[str]:
    return [row.attrs["data-run-id"] for row in tree.by_id("runs").find_all("tr", "run")]


def test_the_runs_page_lists_every_run_newest_first_and_filters(client: TestClient) -> None:
    every = run_ids(page(client, "/"))
    assert len(every) == 2 + 8 + 2 and every[-1] == BARE
    tree = page(client, "/")
    row = next(r for r in tree.find_all("tr", "run") if r.attrs["data-run-id"] == FULL)
    text = row.text()
    assert "model fail" in text and "hidden tests not resolved" in text
    assert "42 s" in text and "$0.0123" in text and "2026-12-01 10:00" in text
    assert row.find_all("a")[0].attrs["href"] == f"/runs/{FULL}"
    listed = [a.attrs["href"] for a in tree.find_all("a")]
    assert "/comparisons/cheat-vs-gold" in listed

    assert run_ids(page(client, "/?case=another-case")) == [BARE]
    assert run_ids(page(client, "/?outcome=infra_fail")) == [BARE]
    compared = run_ids(page(client, "/?comparison=idle-vs-gold"))
    assert sorted(compared) == ["gold2-demo-caret-zero-1", "idle-demo-caret-zero-1"]
    both = run_ids(page(client, "/?case=demo-caret-zero&outcome=pass&comparison=cheat-vs-gold"))
    assert sorted(both) == ["gold-demo-caret-zero-1", "gold-demo-caret-zero-2"]


def test_a_bad_filter_or_an_unknown_run_or_comparison_is_a_one_line_page(
    client: TestClient,
) -> None:
    for url, status, said in (
        ("/?outcome=won", 400, "outcome 'won' is not one of pass, model_fail"),
        ("/?comparison=nope", 404, "no comparison 'nope'"),
        ("/runs/0000dead", 404, "no run '0000dead' in the results store"),
        ("/runs/not-an-id", 404, "no run 'not-an-id'"),
        (f"/runs/{HOSTILE}", 404, "Not Found: /runs/<script>"),
        ("/nowhere", 404, "Not Found: /nowhere"),
        ("/comparisons/nope", 404, "no comparison 'nope' in the results store"),
    ):
        answer = client.get(url)
        assert answer.status_code == status, url
        assert HOSTILE not in answer.text
        body = parse(answer.text).find_all("body")[0]
        assert [n.tag for n in body.children] == ["p"], url
        assert said in body.text() and "\n" not in body.text().strip()


def test_a_run_page_shows_the_verdict_tests_rules_events_transcript_diff_and_calls(
    client: TestClient, filled: Filled
) -> None:
    tree = page(client, f"/runs/{FULL[:8]}")  # the short id results list shows
    assert not tree.find_all("ul", "note"), tree.by_id("notes").text()  # every file read
    verdict = tree.by_id("verdict")
    assert "model fail" in verdict.text() and "hidden tests not resolved" in verdict.text()
    assert SKIP_LINE in tree.by_id("skip-marks").text()
    assert "tests/test_a.py" in tree.by_id("skip-marks").text()
    assert "no-push-to-main" in tree.by_id("findings").text()

    tests = {r.attrs["data-test"]: r for r in tree.by_id("test-table").find_all("tr", "test")}
    assert set(tests) == {*F2P, "tests/test_b.py::test_three"}
    for name, status in F2P.items():
        assert tests[name].attrs["data-status"] == status
    assert "assert 1 == 2" in tests["tests/test_a.py::test_one"].text()
    assert "<b>not bold</b>" in tests["tests/test_a.py::test_one"].text()
    assert "boom in setup" in tests["tests/test_a.py::TestK::test_two"].text()

    rules = {r.attrs["data-rule"]: r for r in tree.by_id("rule-table").find_all("tr", "rule")}
    assert "offending" in rules["no-push-to-main"].classes
    assert "offending" not in rules["pr-opened"].classes
    assert [a.attrs["href"] for a in rules["no-push-to-main"].find_all("a")] == ["#event-2"]
    events = {r.attrs["data-seq"]: r for r in tree.by_id("events").find_all("tr", "event")}
    assert [s for s, r in events.items() if "offending" in r.classes] == ["2"]
    assert events["2"].attrs["data-broke"] == "no-push-to-main"
    assert HOSTILE in events["2"].text()  # shown as text, escaped in the page
    assert "counts for pr-opened" in events["3"].text()

    turns = tree.by_id("transcript").find_all("section", "turn")
    assert [t.attrs["id"] for t in turns] == ["turn-0", "turn-1", "turn-2"]
    assert "Fix the bug.\nIt is in ranges.py." in turns[0].text()  # newlines, not "\\n"
    assert f"cat <<EOF\n{HOSTILE}\nEOF" in turns[1].find_all("pre", "command")[0].text()
    assert "tool output" in turns[2].text() and "line one\nline two" in turns[2].text()

    agent = tree.by_id("agent-diff")
    marked = [s.text() for s in agent.find_all("span", "skipmark")]
    assert marked == [f"+{SKIP_LINE}"]
    gold = filled.cases[0].case.gold.patch.read_text().splitlines()[0]
    assert gold in tree.by_id("gold-diff").text()

    calls = tree.by_id("model-call-table").find_all("tbody")[0].find_all("tr")
    assert [c.attrs["data-request-id"] for c in calls] == [c.request_id for c in CALLS]
    cells = [td.text() for td in calls[1].find_all("td")]
    assert cells[3:7] == ["503", "transport_fail", "12", "250"]
    assert f"http_5xx: upstream {HOSTILE} overloaded" in cells[10]
    assert "offending" in calls[1].classes and "offending" not in calls[0].classes
    assert [td.text() for td in calls[2].find_all("td")][7:9] == ["102", "7"]
    assert "$0.0123" in tree.by_id("cost").text()


def test_a_run_without_a_directory_or_a_readable_grade_says_so(client: TestClient) -> None:
    tree = page(client, f"/runs/{BARE}")
    assert "infra fail" in tree.by_id("verdict").text()
    assert tree.by_id("reason").text() == "the sandbox broke"  # the store's, unparsed grade
    notes = tree.by_id("notes").text()
    assert "grade not readable" in notes and "has no directory recorded" in notes
    assert "no case file of another-case was given" in tree.by_id("diff").text()
    assert "not run" in tree.by_id("tests").text()


def test_a_comparison_page_is_the_report_with_each_discordant_run_one_click_away(
    client: TestClient, filled: Filled
) -> None:
    listed = page(client, "/comparisons")
    names = [r.attrs["data-comparison"] for r in listed.by_id("comparison-list").find_all("tr")[1:]]
    assert names == ["cheat-vs-gold", "idle-vs-gold"]

    tree = page(client, "/comparisons/cheat-vs-gold")
    assert tree.by_id("verdict").text()  # the report's own headline
    assert tree.by_id("case-grid") and tree.by_id("plot-difference")
    rows = tree.by_id("discordant").find_all("tr", "discordant-case")
    assert [r.attrs["data-case-id"] for r in rows] == [c.id for c in filled.cases]
    linked = {
        a.attrs["data-run-id"]: a.attrs["href"] for a in tree.by_id("discordant").find_all("a")
    }
    assert sorted(linked) == sorted(filled.comparison_runs["cheat-vs-gold"])
    assert all(href == f"/runs/{run}" for run, href in linked.items())
    # The report's own cells link to the viewer's run pages, not to the run's files.
    cell = tree.by_id("case-grid").find_all("td", "run")[0]
    hrefs = [a.attrs["href"] for a in cell.find_all("a")]
    run = cell.attrs["data-run-id"]
    assert hrefs == [f"/runs/{run}#transcript", f"/runs/{run}#diff", f"/runs/{run}"]
    for href in linked.values():
        assert client.get(href).status_code == 200

    # One paired case: the engine gives no difference and the viewer says what it can.
    single = page(client, "/comparisons/idle-vs-gold")
    assert "Inconclusive" in single.by_id("verdict").text()
    ids = {a.attrs["data-run-id"] for a in single.by_id("discordant").find_all("a")}
    assert ids == set(filled.comparison_runs["idle-vs-gold"])


def test_file_names_of_the_exported_site_are_plain_distinct_and_stay_in_their_folder() -> None:
    assert file_stem(FULL) == FULL
    odd = ["../x", "a/b", "a b", "..", ".", "a%2Fb", "", "x" * 300, "index"]
    stems = [file_stem(name) for name in odd]
    assert len(set(stems)) == len(stems)
    for stem in stems:
        assert stem and "/" not in stem and not stem.startswith(".") and len(stem) < 120
    # A comparison named "index" would have overwritten the comparisons' own list.
    assert file_stem("index") != "index"


def test_each_run_and_compared_case_shows_its_case_versions_strength(
    client: TestClient, filled: Filled
) -> None:
    """Issue 37, point 3: the strength recorded for the case version a run replayed
    (demo-caret-zero 96%, demo-prerelease-order 90%, both shipped), beside each run, on the
    run's page and beside each discordant case of a comparison; a run whose case file was not
    given shows none."""
    tree = page(client, "/")
    head = [th.text() for th in tree.by_id("runs").find_all("th")]
    assert head[3] == "strength"
    shown = {
        row.attrs["data-run-id"]: row.find_all("td", "strength")[0].text()
        for row in tree.by_id("runs").find_all("tr", "run")
    }
    assert shown[FULL] == "96%" and shown[BARE] == ""
    assert {shown[r] for r in filled.comparison_runs["cheat-vs-gold"]} == {"96%", "90%"}
    run = page(client, f"/runs/{FULL}")
    assert run.by_id("case-strength").text().startswith("case strength 96% (")
    bare = page(client, f"/runs/{BARE}")
    assert [n for n in bare.iter() if n.attrs.get("id") == "case-strength"] == []
    compared = page(client, "/comparisons/cheat-vs-gold")
    cells = {
        row.attrs["data-case-id"]: row.find_all("td", "strength")[0].text()
        for row in compared.by_id("discordant").find_all("tr", "discordant-case")
    }
    assert cells == {"demo-caret-zero": "96%", "demo-prerelease-order": "90%"}
