"""``replay view --export DIR`` over a store with batches (``batched.py``): the batches page
and each batch's runs are pages of the folder, linked like every other; and the export's
progress, a plain ``wrote N of M pages`` line now and then off a terminal and a bar on one
(told by a clock the test turns, not by the time it takes)."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from rich.console import Console

import replay.cli.view as view_cli
from replay.cli.view import PageCount
from replay.view.page import file_stem
from tests.cli_helpers import run_cli
from tests.compare.htmltree import parse
from tests.view.batched import Batched, make_store
from tests.view.sitelinks import check_links


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Batched:
    return make_store(tmp_path_factory.mktemp("view-export-batches"))


def export(capsys: pytest.CaptureFixture[str], made: Batched, out: Path) -> str:
    cases = [arg for c in made.cases for arg in ("--cases", str(c))]
    result = run_cli(capsys, "--db", str(made.db), "view", *cases, "--export", str(out))
    assert result.code == 0, result.out + result.err
    return result.out


def test_the_batches_and_each_batchs_runs_are_pages_of_the_export(
    tmp_path: Path, made: Batched, capsys: pytest.CaptureFixture[str]
) -> None:
    site = tmp_path / "site"
    said = export(capsys, made, site)
    assert "wrote 9 run page(s), 0 comparison page(s) and 2 batch page(s)" in said
    pages = check_links(site)
    assert len(pages) == 3 + 9 + 2
    index = parse((site / "index.html").read_text(encoding="utf-8"))
    nav = {a.text(): a.attrs["href"] for a in index.find_all("nav")[0].find_all("a")}
    assert nav["Batches"] == "batches/index.html"

    listing = parse((site / "batches" / "index.html").read_text(encoding="utf-8"))
    rows = listing.by_id("batch-list").find_all("tr", "batch")
    assert [r.attrs["data-batch"] for r in rows] == ["weekly", "nightly"]
    for row in rows:
        name = row.attrs["data-batch"]
        href = row.find_all("a")[0].attrs["href"]
        target = (site / "batches" / href).resolve()
        assert target == (site / "batches" / "runs" / f"{file_stem(name)}.html").resolve()
        runs = parse(target.read_text(encoding="utf-8"))
        listed = {r.attrs["data-run-id"] for r in runs.by_id("runs").find_all("tr", "run")}
        assert listed == made.ids[name]
        assert f"The runs of batch {name}" in runs.find_all("main")[0].text()
        assert runs.find_all("form") == []
        for link in runs.by_id("runs").find_all("a"):
            assert re.fullmatch(r"\.\./\.\./runs/[0-9a-f]{32}\.html", link.attrs["href"])


def test_an_export_off_a_terminal_says_how_far_it_is_in_plain_lines(
    tmp_path: Path,
    made: Batched,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Every page past the quiet start gets its line once both periods are nothing.
    monkeypatch.setattr(view_cli, "QUIET_FOR", 0.0)
    monkeypatch.setattr(view_cli, "PLAIN_EVERY", 0.0)
    said = export(capsys, made, tmp_path / "site").splitlines()
    assert said[:-1] == [f"wrote {n} of 14 pages" for n in range(1, 15)]
    assert said[-1].startswith("wrote 9 run page(s)")


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_plain_progress_waits_then_prints_a_line_every_period() -> None:
    sink = io.StringIO()
    clock = Clock()
    with PageCount(Console(file=sink), quiet_for=3, every=5, clock=clock) as count:
        for done, at in enumerate([1, 2.9, 3, 4, 7.9, 8, 9, 13.5], start=1):
            clock.now = 100.0 + at
            count(done, 10)
    assert sink.getvalue().splitlines() == [
        "wrote 3 of 10 pages",  # three seconds in
        "wrote 6 of 10 pages",  # five after that
        "wrote 8 of 10 pages",  # and five more
    ]


def test_on_a_terminal_the_progress_is_a_bar() -> None:
    sink = io.StringIO()
    clock = Clock()
    console = Console(file=sink, force_terminal=True, width=100)
    with PageCount(console, quiet_for=3, every=5, clock=clock) as count:
        count(1, 10)
        assert sink.getvalue() == ""  # quiet at first
        clock.now += 4
        for done in range(2, 11):
            count(done, 10)
    drawn = sink.getvalue()
    assert "export" in drawn and "/10" in drawn and "pages" in drawn
    assert "wrote" not in drawn
