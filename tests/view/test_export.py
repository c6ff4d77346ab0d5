"""``replay view --export DIR`` over a store filled by hand (no Docker): a page for every run
and comparison, every link relative and landing on a file inside DIR, nothing fetched; a
target that is a file is refused with exit status 2 and one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli_helpers import assert_one_line_error, run_cli
from tests.compare.htmltree import parse
from tests.view.sitelinks import check_links
from tests.view.synthetic import BARE, FULL, SKIP_LINE, Filled, fill


@pytest.fixture(scope="module")
def filled(tmp_path_factory: pytest.TempPathFactory) -> Filled:
    return fill(tmp_path_factory.mktemp("view-export"))


def export(capsys: pytest.CaptureFixture[str], filled: Filled, out: Path) -> str:
    cases = [arg for c in filled.cases for arg in ("--cases", str(c.path))]
    result = run_cli(capsys, "--db", str(filled.db), "view", *cases, "--export", str(out))
    assert result.code == 0, result.out + result.err
    return result.out


def test_the_export_is_a_folder_whose_links_all_land_inside_it(
    tmp_path: Path, filled: Filled, capsys: pytest.CaptureFixture[str]
) -> None:
    site = tmp_path / "site"
    said = export(capsys, filled, site)
    assert (
        "wrote 12 run page(s), 2 comparison page(s) and 0 batch page(s): "
        f"open {site / 'index.html'}"
    ) in said
    pages = check_links(site)
    assert {p.relative_to(site).as_posix() for p in pages} >= {
        "index.html",
        f"runs/{FULL}.html",
        f"runs/{BARE}.html",
        "comparisons/index.html",
        "comparisons/cheat-vs-gold.html",
        "comparisons/idle-vs-gold.html",
        "batches/index.html",
    }
    assert len(pages) == 12 + 2 + 2 + 1


def test_exported_pages_show_what_the_server_shows(
    tmp_path: Path, filled: Filled, capsys: pytest.CaptureFixture[str]
) -> None:
    site = tmp_path / "site"
    export(capsys, filled, site)
    run = parse((site / "runs" / f"{FULL}.html").read_text(encoding="utf-8"))
    assert SKIP_LINE in run.by_id("skip-marks").text()
    assert [r.attrs["data-seq"] for r in run.by_id("events").find_all("tr", "offending")] == ["2"]
    assert run.find_all("nav")[0].find_all("a")[0].attrs["href"] == "../index.html"
    index = parse((site / "index.html").read_text(encoding="utf-8"))
    assert index.find_all("form") == []  # a static page cannot filter
    row = next(
        r for r in index.by_id("runs").find_all("tr", "run") if r.attrs["data-run-id"] == FULL
    )
    assert row.find_all("a")[0].attrs["href"] == f"runs/{FULL}.html"
    comparison = parse((site / "comparisons" / "cheat-vs-gold.html").read_text(encoding="utf-8"))
    hrefs = [a.attrs["href"] for a in comparison.by_id("discordant").find_all("a")]
    assert hrefs and all(h.startswith("../runs/") and h.endswith(".html") for h in hrefs)

    # Exported again into the same folder: the pages are replaced, nothing else is touched.
    (site / "mine.txt").write_text("kept")
    export(capsys, filled, site)
    assert (site / "mine.txt").read_text() == "kept"


def test_an_export_target_that_is_a_file_is_refused_in_one_line(
    tmp_path: Path, filled: Filled, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "report.html"
    target.write_text("not a folder")
    result = run_cli(capsys, "--db", str(filled.db), "view", "--export", str(target))
    assert_one_line_error(result, str(target), "is a file", "--export")
    assert target.read_text() == "not a folder"
    inside = run_cli(capsys, "--db", str(filled.db), "view", "--export", str(target / "x"))
    assert_one_line_error(inside, str(target / "x"), "cannot make the folder")
