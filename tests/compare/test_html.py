"""``render_html``: every section of the report, from every kind of comparison document,
escaped, linked, and with nothing to fetch."""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest

from replay.compare.fmt import ReportSchemaError, all_runs
from replay.compare.html import render_html
from tests.compare.htmltree import FIXTURES, Node, load, parse

SECTIONS = (
    "headline",
    "verdict",
    "difference",
    "aa-floor",
    "mde",
    "gates",
    "rule",
    "arm-summary",
    "case-grid",
    "by-tag",
    "left-out",
    "unhealthy-runs",
    "plot-difference",
    "plot-cost-quality",
    "plot-wire-timeline",
)

HOSTILE = "<script>alert(1)</script>"
HOSTILE_ATTR = "x' onmouseover='alert(2)\" y=\"<img src=x onerror=alert(3)>"


def page(name: str) -> tuple[dict[str, Any], Node]:
    doc = load(name)
    return doc, parse(render_html(doc))


@pytest.mark.parametrize("name", FIXTURES)
def test_every_section_is_there_once(name: str) -> None:
    _, root = page(name)
    for ident in SECTIONS:
        root.by_id(ident)
    svgs = root.find_all("svg")
    assert {svg.attrs["id"] for svg in svgs} == {
        "plot-difference",
        "plot-cost-quality",
        "plot-wire-timeline",
    }
    for svg in svgs:
        titles = [child for child in svg.children if child.tag == "title"]
        assert len(titles) == 1 and titles[0].text().strip(), svg.attrs["id"]
        assert svg.attrs["role"] == "img"


@pytest.mark.parametrize("name", FIXTURES)
def test_the_page_fetches_nothing_and_runs_nothing(name: str) -> None:
    text = render_html(load(name))
    root = parse(text)
    assert not root.find_all("script")
    assert not root.find_all("link") and not root.find_all("img") and not root.find_all("iframe")
    assert not any("src" in node.attrs for node in root.iter())
    # The only URL is the SVG namespace, an identifier that nothing fetches.
    urls = set(re.findall(r"(?:https?|ftp)://[^\s'\"<>]+", text))
    assert urls == {"http://www.w3.org/2000/svg"}, urls
    assert "url(" not in text and "@import" not in text
    csp = [m for m in root.find_all("meta") if m.attrs.get("http-equiv")]
    assert csp and "default-src 'none'" in csp[0].attrs["content"]


@pytest.mark.parametrize(
    ("name", "label", "needed"),
    [
        ("compare-sample", "Ship B", None),
        ("compare-aa-inconclusive", "Inconclusive", "24"),
        ("compare-dont-ship", "Don't ship B", None),
    ],
)
def test_the_headline_says_the_verdict_the_difference_and_the_floor(
    name: str, label: str, needed: str | None
) -> None:
    doc, root = page(name)
    headline = root.by_id("headline")
    assert root.by_id("verdict").text() == label
    assert headline.attrs["data-decision"] == doc["verdict"]["decision"]
    diff = doc["difference"]
    said = " ".join(root.by_id("difference").text().split())
    assert f"{diff['estimate']:+.2f}" in said
    assert f"[{diff['interval'][0]:+.2f}, {diff['interval'][1]:+.2f}]" in said
    assert f"p = {diff['p_value']:.3f}" in said
    assert diff["test"] in said
    floor = " ".join(root.by_id("aa-floor").text().split())
    assert (
        f"[{doc['aa_floor']['interval'][0]:+.2f}, {doc['aa_floor']['interval'][1]:+.2f}]" in floor
    )
    assert root.by_id("mde").text() == f"{doc['aa_floor']['mde']:.2f}"
    if needed is None:
        assert not [n for n in root.iter() if n.attrs.get("id") == "cases-needed"]
    else:
        assert needed in root.by_id("cases-needed").text()
    reasons = [li.text() for li in root.by_id("reasons").find_all("li")]
    assert reasons == doc["verdict"]["reasons"]


def test_the_sample_headline_reads_as_a_sentence() -> None:
    _, root = page("compare-sample")
    said = " ".join(root.by_id("difference").text().split())
    assert said.startswith(
        "B \N{MINUS SIGN} A in pass@1: +1.00, 95% CI [+0.33, +1.00], SE 0.156, p = 0.023"
    )


@pytest.mark.parametrize("name", FIXTURES)
def test_the_case_grid_has_a_row_per_case_and_a_cell_per_run(name: str) -> None:
    doc, root = page(name)
    grid = root.by_id("case-grid")
    rows = grid.find_all("tr", "case-row")
    assert [row.attrs["data-case-id"] for row in rows] == [c["case_id"] for c in doc["cases"]]
    labels = {"only_a": "only A", "only_b": "only B", "flaky": "flaky", "both": "both"}
    labels["neither"] = "neither"
    unhealthy = {
        (r["run_id"], r["case_id"]) for arm in doc["arms"].values() for r in arm["unhealthy"]
    }
    for case, row in zip(doc["cases"], rows, strict=True):
        assert row.attrs["data-class"] == case["class"]
        assert row.find_all("td", "class")[0].text() == labels[case["class"]]
        for tag in case["tags"]:
            assert tag in [span.text() for span in row.find_all("span", "tag")]
        cells = row.find_all("td", "run")
        expected = [
            r
            for label in "AB"
            for r in case[label]["runs"]
            + [
                u
                for u in doc["arms"][label]["unhealthy"]
                if u["case_id"] == case["case_id"]
                and u["run_id"] not in {x["run_id"] for x in case[label]["runs"]}
            ]
        ]
        shown = [cell for cell in cells if "none" not in cell.classes]
        assert [cell.attrs["data-run-id"] for cell in shown] == [r["run_id"] for r in expected]
        for cell, run in zip(shown, expected, strict=True):
            # The outcome is in words, not colour alone, and the files are linked.
            words = run["outcome"].replace("_", " ")
            assert cell.find_all("span", "outcome")[0].text().startswith(words)
            assert ("unhealthy" in cell.classes) == ((run["run_id"], run["case_id"]) in unhealthy)
            hrefs = [a.attrs["href"] for a in cell.find_all("a")]
            assert hrefs == [run["transcript"], run["diff"], run["run_dir"]]


def test_unhealthy_runs_are_marked_in_the_grid_and_listed() -> None:
    doc, root = page("compare-dont-ship")
    excluded = [
        cell
        for cell in root.by_id("case-grid").find_all("td", "run")
        if "unhealthy" in cell.classes
    ]
    assert sorted(cell.text().split()[0] for cell in excluded) == ["infra", "transport"]
    assert all("(excluded)" in cell.text() for cell in excluded)
    listed = root.by_id("unhealthy-runs").find_all("tr")[1:]
    assert [row.attrs["data-run-id"] for row in listed] == ["a022", "b019"]
    assert "grader container exited 137" in listed[1].text()
    violated = [
        cell.attrs["data-run-id"]
        for cell in root.by_id("case-grid").find_all("td", "run")
        if "side effects violated" in cell.text()
    ]
    assert violated == [
        r["run_id"] for c in doc["cases"] for r in c["B"]["runs"] if r["side_effects_ok"] is False
    ]
    assert len(violated) == 2


@pytest.mark.parametrize("name", FIXTURES)
def test_the_timeline_has_a_mark_per_run(name: str) -> None:
    doc, root = page(name)
    marks = root.by_id("plot-wire-timeline").find_all("g", "run-mark")
    runs = [r for label in "AB" for r in all_runs(doc, label)]
    assert len(marks) == len(runs)
    bad = sum(len(arm["unhealthy"]) for arm in doc["arms"].values())
    assert len([m for m in marks if "unhealthy" in m.classes]) == bad
    for mark in marks:
        assert mark.find_all("title")[0].text()


def test_the_cost_plot_uses_dollars_when_both_arms_have_a_cost_and_tokens_otherwise() -> None:
    _, priced = page("compare-dont-ship")
    plot = priced.by_id("plot-cost-quality")
    assert "cost per solved case (USD)" in plot.text()
    assert len(plot.find_all("g", "point")) == 2
    assert plot.find_all("line", "ceiling")
    _, unpriced = page("compare-sample")
    plot = unpriced.by_id("plot-cost-quality")
    assert "tokens per solved case" in plot.text()
    # A solved nothing: no cost per solved case to place it at, and the plot says so.
    assert [p.attrs["data-arm"] for p in plot.find_all("g", "point")] == ["B"]
    assert "A · cheat: not plotted, no solved case" in plot.text()


def test_by_tag_left_out_gates_and_rule_are_listed() -> None:
    doc, root = page("compare-dont-ship")
    tags = root.by_id("by-tag").find_all("tr")[1:]
    assert [row.attrs["data-tag"] for row in tags] == ["bugfix", "feature"]
    assert "n/a" in tags[1].text()
    left = root.by_id("left-out").find_all("li")
    assert [li.attrs["data-case-id"] for li in left] == [x["case_id"] for x in doc["left_out"]]
    gates = {
        row.attrs["data-gate"]: row.find_all("span", "status")[0].text()
        for row in root.by_id("gates").find_all("tr")[1:]
    }
    assert gates == {"quality": "fail", "side_effects": "fail", "cost": "pass"}
    rule = root.by_id("rule").text()
    assert "2 stored runs started before the rule was fixed" in rule
    assert "90%" in rule and doc["rule"]["digest"] in rule
    _, aa = page("compare-aa-inconclusive")
    assert "pass^3" in aa.by_id("rule").text()
    assert "None: every case was compared." in aa.by_id("left-out").text()
    assert "None: every run's wire and sandbox were healthy." in aa.by_id("unhealthy-runs").text()


def test_the_arm_summary_has_every_figure() -> None:
    doc, root = page("compare-dont-ship")
    rows = {
        row.find_all("th")[0].text(): [td.text() for td in row.find_all("td")]
        for row in root.by_id("arm-summary").find_all("tr")[1:]
    }
    for outcome in ("pass", "model fail", "transport fail", "protocol fail", "infra fail"):
        key = outcome.replace(" ", "_")
        assert rows[outcome] == [str(doc["arms"][x]["outcomes"][key]) for x in "AB"]
    assert rows["pass@3"] == ["0.75", "0.50"] and rows["pass^3"] == ["0.75", "0.25"]
    assert rows["mean pass rate, 90% CI"][1] == "0.33 [0.00, 0.90] (SE 0.240)"
    assert rows["cost per solved case (USD)"] == ["0.5200", "0.2932"]
    assert rows["tokens per solved case"] == ["10400", "14662"]
    assert rows["side-effect violation rate"] == ["0.00", "0.17"]
    assert rows["healthy runs"] == ["12 of 13", "12 of 13"]


def _poison(doc: dict[str, Any], text: str) -> dict[str, Any]:
    doc = copy.deepcopy(doc)
    doc["name"] = text
    doc["arms"]["A"]["name"] = text
    doc["arms"]["B"]["settings"] = {text: text}
    doc["verdict"]["reasons"] = [text]
    doc["gates"][0]["detail"] = text
    doc["difference"]["test"] = text
    doc["aa_floor"]["method"] = text
    doc["left_out"] = [{"case_id": text, "why": text}]
    doc["by_tag"][0]["tag"] = text
    case = doc["cases"][0]
    case["case_id"] = text
    case["tags"] = [text]
    for run in case["A"]["runs"]:
        run["case_id"] = text
        run["reason"] = text
        run["run_id"] = text
    doc["arms"]["A"]["unhealthy"][0]["reason"] = text
    return doc


@pytest.mark.parametrize("text", [HOSTILE, HOSTILE_ATTR])
def test_every_string_from_the_document_is_escaped(text: str) -> None:
    page_text = render_html(_poison(load("compare-sample"), text))
    root = parse(page_text)
    assert not root.find_all("script") and not root.find_all("img")
    assert not any(name.startswith("on") for node in root.iter() for name in node.attrs)
    assert "<script>" not in page_text and "<img" not in page_text
    # ...and the text still reads as written.
    assert root.by_id("reasons").find_all("li")[0].text() == text
    assert root.find_all("tr", "case-row")[0].attrs["data-case-id"] == text


def test_a_link_that_is_not_a_path_is_not_linked() -> None:
    doc = copy.deepcopy(load("compare-sample"))
    run = doc["cases"][0]["B"]["runs"][0]
    run["transcript"] = "javascript:alert(1)"
    run["diff"] = "https://example.invalid/diff"
    run["run_dir"] = None
    root = parse(render_html(doc))
    cell = next(
        c for c in root.find_all("td", "run") if c.attrs.get("data-run-id") == run["run_id"]
    )
    assert not cell.find_all("a")
    assert "transcript" in cell.text() and "diff" in cell.text()


def test_missing_figures_render_as_not_available() -> None:
    doc = copy.deepcopy(load("compare-sample"))
    doc["aa_floor"] = {
        "method": "not available: one run per case",
        "estimate": None,
        "interval": None,
        "se": None,
        "mde": None,
        "cases": 3,
    }
    doc["difference"]["bootstrap_interval"] = None
    for arm in doc["arms"].values():
        arm["tokens_per_solved"] = None
        arm["pass_hat"] = arm["pass_hat"][:1]
    root = parse(render_html(doc))
    assert "not available" in root.by_id("plot-difference").text()
    assert root.by_id("mde").text() == "n/a"
    assert not root.by_id("plot-cost-quality").find_all("g", "point")


def test_another_schema_is_refused() -> None:
    doc = load("compare-sample")
    doc["schema"] = "replay.compare/2"
    with pytest.raises(ReportSchemaError, match=r"replay\.compare/2"):
        render_html(doc)


def test_a_comparison_with_no_paired_case_still_renders() -> None:
    doc = copy.deepcopy(load("compare-sample"))
    doc["cases"], doc["by_tag"] = [], []
    for arm in doc["arms"].values():
        arm["unhealthy"] = []
        arm["mean"]["interval"] = None
    root = parse(render_html(doc))
    assert not root.by_id("case-grid").find_all("tr", "case-row")
    assert not root.by_id("plot-wire-timeline").find_all("g", "run-mark")
    assert root.by_id("left-out").find_all("li")


def test_a_comparison_of_fewer_than_two_paired_cases_renders() -> None:
    """Found while building the viewer: with one paired case the engine has no difference
    (None), and the report and the JUnit document crashed on it (``'NoneType' object is not
    subscriptable``), so ``compare --html`` of a one-case comparison failed."""
    from replay.compare.junit import render_junit

    doc = copy.deepcopy(load("compare-sample"))
    doc["difference"] = None
    doc["aa_floor"] = {
        "method": "not available: 1 paired case(s)",
        "estimate": None,
        "interval": None,
        "se": None,
        "mde": None,
        "cases": 1,
    }
    root = parse(render_html(doc))
    said = " ".join(root.by_id("difference").text().split())
    assert said.startswith("B \u2212 A: not available (not available: 1 paired case(s)")
    junit = render_junit(doc)
    assert "not available (not available: 1 paired case(s))" in junit


def test_a_comparison_with_no_calibrated_case_renders_every_report() -> None:
    """Found by the README's quickstart test: ``compare --html`` on a case never calibrated
    has no run in either arm, so no mean pass rate (None), and the report crashed on it
    (``'NoneType' object is not subscriptable``) after the terminal had printed the verdict."""
    from replay.compare.junit import render_junit

    doc = copy.deepcopy(load("compare-sample"))
    doc["cases"], doc["by_tag"], doc["difference"] = [], [], None
    for arm in doc["arms"].values():
        arm["mean"], arm["unhealthy"], arm["pass_at"], arm["pass_hat"] = None, [], [], []
    root = parse(render_html(doc))
    rows = [" ".join(tr.text().split()) for tr in root.by_id("arm-summary").find_all("tr")]
    assert any(r.startswith("mean pass rate") and r.endswith("n/an/a") for r in rows), rows
    assert "testsuite" in render_junit(doc)
