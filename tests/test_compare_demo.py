"""Issue 17's must-shows on the demo cases, end to end (Docker, the stub model): ``replay
compare`` says "ship B" for gold over cheat with an interval clear of zero, "inconclusive"
with the minimum detectable effect for gold against itself, a case edited after its
calibration is left out as uncalibrated, and ``replay run --runs 3`` whose first run the wire
spoiled (retried) still prints pass^3. Every run goes through the real gateway, sandbox and
grader."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from xml.etree import ElementTree

import pytest

from tests.cli_helpers import run_cli

ROOT = Path(__file__).resolve().parent.parent
DEMO = [str(p) for p in sorted((ROOT / "cases").glob("demo-*/case.yaml"))]
CARET = ROOT / "cases" / "demo-caret-zero" / "case.yaml"
CHEAT = "name=cheat,stub=cheat"
GOLD = "name=gold,stub=gold"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("compare")


def test_gold_over_cheat_ships_b_then_gold_against_itself_is_inconclusive(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db, out = str(store / "results.db"), str(store / "runs")
    common = ["--db", db, "compare", *DEMO, "--runs", "3", "--out", out]
    first = run_cli(
        capsys, *common, "--a", CHEAT, "--b", GOLD, "--calibrate", "1",
        "--expect", "ship", "--json", str(store / "ab.json"),
        "--html", str(store / "report" / "ab.html"), "--junit", str(store / "ab.xml"),
    )  # fmt: skip
    assert first.code == 0, first.out + first.err
    doc = json.loads((store / "ab.json").read_text())
    assert [c["case_id"] for c in doc["cases"]] == [Path(p).parent.name for p in DEMO]
    assert doc["left_out"] == []
    diff = doc["difference"]
    # In the right direction, with the interval clear of zero (t over 3 cases, 2 df).
    assert diff["estimate"] == 1.0 and diff["interval"][0] > 0.3
    assert "verdict: ship B" in first.out
    assert re.search(r"B - A \(pass@1\): \+1\.00, 95% CI \+0\.3\d\.\.\+1\.00", first.out)
    for arm, passes in (("A", 0), ("B", 9)):
        assert doc["arms"][arm]["healthy_runs"] == 9
        assert doc["arms"][arm]["outcomes"]["pass"] == passes
    assert {c["class"] for c in doc["cases"]} == {"only_b"}
    # Each discordant run is linked to its files, in the HTML relative to the page.
    run = doc["cases"][0]["B"]["runs"][0]
    assert Path(run["transcript"]).is_file() and Path(run["diff"]).is_file()
    html = (store / "report" / "ab.html").read_text()
    assert "id='case-grid'" in html and "Ship B" in html
    link = os.path.relpath(run["diff"], store / "report")
    assert f"href='{link}'" in html
    junit = ElementTree.parse(store / "ab.xml").getroot()
    assert junit.find(".//testcase[@name='verdict']") is not None

    # A/A: gold against the same settings under another name reuses gold's runs (arm A)
    # and runs only the second arm.
    second = run_cli(
        capsys, *common, "--a", GOLD, "--b", "name=gold-again,stub=gold",
        "--expect", "inconclusive", "--json", str(store / "aa.json"),
    )  # fmt: skip
    assert second.code == 0, second.out + second.err
    assert "for arm A" not in second.out, "arm A's runs are the store's"
    assert second.out.count("for arm B") == 3
    aa = json.loads((store / "aa.json").read_text())
    assert aa["difference"]["estimate"] == 0.0
    assert aa["aa_floor"]["mde"] is not None
    assert re.search(r"minimum detectable effect 0\.\d\d over 3 cases", second.out)
    assert "verdict: inconclusive (about" in second.out


def test_a_case_edited_after_calibration_is_left_out(
    store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The same case, its file edited (the title): a new version, calibrated by nothing.
    copy = tmp_path / "demo-caret-zero"
    shutil.copytree(CARET.parent, copy)
    text = CARET.read_text().replace(
        "snapshot: ../../snapshots/demo", f"snapshot: {ROOT}/snapshots/demo"
    )
    (copy / "case.yaml").write_text(text.replace("title: ", "title: (edited) ", 1))
    result = run_cli(
        capsys, "--db", str(store / "results.db"), "compare", str(copy / "case.yaml"),
        "--a", CHEAT, "--b", GOLD, "--no-run",
    )  # fmt: skip
    assert result.code == 0, result.out + result.err
    assert (
        "left out: demo-caret-zero: this case version is not calibrated (the case changed "
        "since its calibration)" in result.out
    )
    report = run_cli(capsys, "--db", str(store / "results.db"), "results", "report")
    assert report.code == 0


def test_runs_3_with_a_retried_transport_failure_prints_pass_hat_3(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The wire resets the first three model calls: the first run's call and the reference
    # harness's two retries. That run is transport_fail and replayed; three healthy remain.
    result = run_cli(
        capsys, "--db", str(tmp_path / "r.db"), "run", str(CARET), "--stub", "gold",
        "--runs", "3", "--fault", "reset=calls:1-3", "--out", str(tmp_path / "runs"),
    )  # fmt: skip
    assert result.code == 0, result.out + result.err
    assert "3/3 healthy runs passed" in result.out
    assert "1 transport_fail" in result.out
    assert "pass@k | pass^k: @1 1.00 @2 1.00 @3 1.00 | ^1 1.00 ^2 1.00 ^3 1.00" in result.out
