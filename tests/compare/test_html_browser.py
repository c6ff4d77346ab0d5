"""The HTML report in a real browser: Debian's Chromium, headless, driven over the DevTools
Protocol (``tests/compare/chromium.py``). The rendered page shows the headline, a case grid
row per case and the three plots at a visible size, logs no console error, and requests
nothing but its own file. A screenshot of each page is kept in ``test-artifacts/``."""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import pytest

from replay.compare.html import render_html
from tests.compare.chromium import Chromium
from tests.compare.htmltree import FIXTURES, load

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"

# What the test reads from the rendered page: text as laid out (innerText), and sizes.
PROBE = """
(() => {
  const box = (el) => { const r = el.getBoundingClientRect(); return [r.width, r.height]; };
  return JSON.stringify({
    verdict: document.getElementById('verdict').innerText,
    difference: document.getElementById('difference').innerText,
    headline: box(document.getElementById('headline')),
    rows: [...document.querySelectorAll('#case-grid tr.case-row')].map((row) => ({
      id: row.dataset.caseId,
      size: box(row),
      runs: [...row.querySelectorAll('td.run[data-run-id]')].map((td) => ({
        id: td.dataset.runId,
        outcome: td.querySelector('.outcome').innerText,
        background: getComputedStyle(td).backgroundColor,
        links: [...td.querySelectorAll('a')].map((a) => a.getAttribute('href')),
      })),
    })),
    plots: Object.fromEntries([...document.querySelectorAll('svg.plot')].map(
      (svg) => [svg.id, { size: box(svg), title: svg.querySelector('title').textContent,
                          marks: svg.querySelectorAll('circle, rect, line').length }])),
  });
})()
"""


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


@pytest.mark.parametrize("name", FIXTURES)
def test_the_report_renders_in_chromium(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = load(name)
    page = tmp_path / f"{name}.html"
    page.write_text(render_html(doc), encoding="utf-8")
    url = page.as_uri()
    with Chromium(timeout=30) as browser:
        browser.open(url)
        seen: dict[str, Any] = json.loads(browser.evaluate(PROBE))
        shot = browser.screenshot(width=1280)
        problems = browser.problems()
        requests = browser.requests()

    assert problems == []
    assert requests == [url]

    labels = {"ship": "Ship B", "dont_ship": "Don't ship B", "inconclusive": "Inconclusive"}
    assert seen["verdict"] == labels[doc["verdict"]["decision"]]
    diff = doc["difference"]
    assert f"{diff['estimate']:+.2f}" in seen["difference"]
    assert f"[{diff['interval'][0]:+.2f}, {diff['interval'][1]:+.2f}]" in seen["difference"]
    assert min(seen["headline"]) > 50

    assert [row["id"] for row in seen["rows"]] == [case["case_id"] for case in doc["cases"]]
    for row, case in zip(seen["rows"], doc["cases"], strict=True):
        assert min(row["size"]) > 10
        healthy = {run["run_id"]: run for label in "AB" for run in case[label]["runs"]}
        for cell in row["runs"]:
            if cell["id"] in healthy:
                run = healthy[cell["id"]]
                assert cell["outcome"].startswith(run["outcome"].replace("_", " "))
                assert cell["links"] == [run["transcript"], run["diff"], run["run_dir"]]
            # Each outcome is tinted (the colour backs up the words, never replaces them).
            assert cell["background"] not in ("rgba(0, 0, 0, 0)", "rgb(255, 255, 255)")
    outcomes_drawn = {
        (cell["outcome"].split(" (")[0], cell["background"])
        for row in seen["rows"]
        for cell in row["runs"]
    }
    # One colour per outcome: two outcomes never share a tint.
    assert len({bg for _, bg in outcomes_drawn}) == len({o for o, _ in outcomes_drawn})

    assert set(seen["plots"]) == {"plot-difference", "plot-cost-quality", "plot-wire-timeline"}
    for ident, plot in seen["plots"].items():
        width, height = plot["size"]
        assert width > 300 and height > 100, (ident, plot)
        assert plot["title"] and plot["marks"] > 3, (ident, plot)

    width, height = png_size(shot)
    assert width == 1280 and height > 1500
    ARTIFACTS.mkdir(exist_ok=True)
    kept = ARTIFACTS / f"{name}.png"
    kept.write_bytes(shot)
    (ARTIFACTS / f"{name}.html").write_text(page.read_text(encoding="utf-8"), encoding="utf-8")
    with capsys.disabled():
        print(f"\n  screenshot of the {name} report: {kept}")


def test_the_checks_see_console_errors_exceptions_and_requests(tmp_path: Path) -> None:
    """The same checks on a page that misbehaves find each misdeed (so their silence on the
    report means something)."""
    page = tmp_path / "bad.html"
    page.write_text(
        "<!DOCTYPE html><html><body><p>bad</p>"
        "<script>console.error('from the page'); null.boom;</script>"
        # Port 9 (discard) on loopback: refused at once, and nothing leaves the machine.
        "<img src='http://127.0.0.1:9/pixel.png'></body></html>"
    )
    with Chromium(timeout=30) as browser:
        browser.open(page.as_uri())
        problems = browser.problems()
        requests = browser.requests()
    assert any("console.error" in p and "from the page" in p for p in problems), problems
    assert any(p.startswith("exception:") for p in problems), problems
    assert "http://127.0.0.1:9/pixel.png" in requests
