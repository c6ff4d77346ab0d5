"""The viewer in a real browser (Debian's Chromium, headless, ``tests/compare/chromium.py``),
served by uvicorn and exported to a folder opened from disk, over real runs (``conftest.py``).

On both sites the browser finds cheat's skip marks and its failing hidden tests by name,
reckless's broken rules with their events highlighted (a tint the other rows lack), every
model call of a run, and a discordant case's run one click from the comparison (the click is
followed); no page logs an error, and no page requests anything outside its site (for the
export: outside its folder). A screenshot of each page is kept in ``test-artifacts/view/``.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from replay.base.case import load_case
from replay.view import Source, export_site, make_app
from replay.view.page import file_stem
from tests.compare.chromium import Chromium
from tests.serving import serving
from tests.view.conftest import CARET, COMPARISON, ROOT, Real

ARTIFACTS = ROOT / "test-artifacts" / "view"

PROBE = """
(() => {
  const all = (q) => [...document.querySelectorAll(q)];
  const bg = (el) => el ? getComputedStyle(el).backgroundColor : null;
  return JSON.stringify({
    h1: (document.querySelector('h1') || {innerText: ''}).innerText,
    skipMarks: all('#skip-marks li').map((li) => li.innerText),
    skipLines: all('#agent-diff .skipmark').map((s) => s.innerText),
    failing: all('#test-table tr.test').filter((r) => r.dataset.status === 'failed')
      .map((r) => r.dataset.test),
    brokenRules: all('#rule-table tr.rule.offending').map((r) => r.dataset.rule),
    offending: all('#events tr.offending').map((r) => ({
      seq: Number(r.dataset.seq), broke: r.dataset.broke, background: bg(r.cells[1]),
      shown: r.getBoundingClientRect().height > 0 })),
    plainBackground: bg(document.querySelector('#events tr.event:not(.offending) td:nth-child(2)')),
    calls: all('#model-call-table tbody tr').map((r) => r.dataset.requestId),
    discordant: all('#discordant a').map((a) => ({ id: a.dataset.runId,
      href: a.getAttribute('href') })),
  });
})()
"""


class Visitor:
    """One browser going from page to page, keeping every problem and request it saw."""

    def __init__(self, browser: Chromium, shots: Path, label: str) -> None:
        self.browser, self.shots, self.label = browser, shots, label
        self.problems: list[str] = []
        self.requests: list[str] = []

    def _flush(self) -> None:
        # ``open`` waits for the first load event it has seen: start each page afresh.
        self.problems += self.browser.problems()
        self.requests += self.browser.requests()
        self.browser.events.clear()

    def probe(self, name: str) -> dict[str, Any]:
        seen: dict[str, Any] = json.loads(self.browser.evaluate(PROBE))
        (self.shots / f"{self.label}-{name}.png").write_bytes(self.browser.screenshot(1280))
        return seen

    def visit(self, url: str, name: str) -> dict[str, Any]:
        self._flush()
        self.browser.open(url)
        return self.probe(name)

    def click(self, selector: str, name: str) -> dict[str, Any]:
        """Follow the first link ``selector`` finds, as a person would."""
        self._flush()
        self.browser.evaluate(f"(document.querySelector({json.dumps(selector)}).click(), 1)")
        self.browser.wait_for(lambda m: m.get("method") == "Page.loadEventFired")
        return self.probe(name)

    def close(self) -> None:
        self._flush()


def check_site(visitor: Visitor, url_of: Callable[[str], str], real: Real) -> None:
    """The must-shows of issue 35 on one site; ``url_of`` maps ``runs/<id>``, ``comparisons/
    <name>``, ``index`` and ``batches`` to the site's URL of that page."""
    index = visitor.visit(url_of("index"), "index")
    assert index["h1"] == "Runs"
    assert visitor.visit(url_of("batches"), "batches")["h1"] == "Batches"

    cheat = visitor.visit(url_of(f"runs/{real.cheat.id}"), "cheat")
    assert cheat["skipMarks"] and all(
        'pytest.mark.skip(reason="flaky on CI")' in m for m in cheat["skipMarks"]
    )
    assert len(cheat["skipLines"]) == len(cheat["skipMarks"])
    assert sorted(cheat["failing"]) == sorted(load_case(CARET).hidden_tests.fail_to_pass)

    reckless = visitor.visit(url_of(f"runs/{real.reckless.id}"), "reckless")
    assert sorted(reckless["brokenRules"]) == ["no-push-to-main", "no-random"]
    broke = {o["broke"] for o in reckless["offending"]}
    assert broke == {"no-push-to-main", "no-random"}
    for row in reckless["offending"]:
        assert row["shown"] and row["background"] != reckless["plainBackground"], row
    gold = visitor.visit(url_of(f"runs/{real.gold.id}"), "gold")
    for run, seen in ((real.gold, gold), (real.cheat, cheat), (real.reckless, reckless)):
        calls = Path(str(run.run_dir), "model_calls.jsonl").read_text().splitlines()
        assert seen["calls"] == [json.loads(line)["request_id"] for line in calls], run.model

    comparison = visitor.visit(url_of(f"comparisons/{COMPARISON}"), "comparison")
    assert comparison["discordant"], "gold against cheat disagrees on the demo cases"
    first = comparison["discordant"][0]
    landed = visitor.click("#discordant a", "discordant-run")
    assert landed["h1"].startswith(f"Run {first['id'][:8]}:"), (first, landed["h1"])


def test_the_served_viewer_in_chromium(real: Real, tmp_path: Path) -> None:
    source = Source.open(str(real.db), real.cases)
    try:
        with serving(make_app(source)) as base, Chromium(timeout=30) as browser:
            visitor = Visitor(browser, tmp_path, "served")
            routes = {
                "index": "/",
                "batches": "/batches",
                f"comparisons/{COMPARISON}": f"/comparisons/{COMPARISON}",
            }
            check_site(visitor, lambda page: base + routes.get(page, f"/{page}"), real)
            visitor.close()
    finally:
        source.close()
    assert visitor.problems == []
    assert visitor.requests and all(r.startswith(f"{base}/") for r in visitor.requests)
    keep(tmp_path, "served")


def test_the_exported_site_in_chromium_from_its_folder(real: Real, tmp_path: Path) -> None:
    site = tmp_path / "site"
    source = Source.open(str(real.db), real.cases)
    try:
        export_site(source, site)
    finally:
        source.close()
    # Moved: a link by absolute path to where the pages were written would now break.
    moved = tmp_path / "moved"
    shutil.move(site, moved)

    def url_of(page: str) -> str:
        if page == "batches":
            return (moved / "batches" / "index.html").as_uri()
        folder, _, name = page.rpartition("/")
        path = moved / folder / f"{file_stem(name)}.html" if folder else moved / "index.html"
        return path.as_uri()

    with Chromium(timeout=30) as browser:
        visitor = Visitor(browser, tmp_path, "exported")
        check_site(visitor, url_of, real)
        visitor.close()
    assert visitor.problems == []
    assert visitor.requests and all(r.startswith(f"{moved.as_uri()}/") for r in visitor.requests), (
        visitor.requests
    )
    keep(tmp_path, "exported")


def keep(shots: Path, label: str) -> None:
    """Keep the screenshots for a reader, beside the comparison report's."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    kept = sorted(shots.glob(f"{label}-*.png"))
    assert len(kept) >= 6, kept
    for shot in kept:
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        shutil.copy(shot, ARTIFACTS / shot.name)
