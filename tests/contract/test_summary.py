"""``replay contract run``'s per-service block: evidence reports first, live recordings
counted as evidence, self-recorded ones only as regression snapshots."""

from __future__ import annotations

from replay.contract.evidence import Check, KnownGap, Source, apply_gaps
from replay.contract.normalise import Normaliser
from replay.contract.recording import Difference, Recorder, Recording
from replay.contract.runner import Run
from replay.contract.scenarios import Scenario
from replay.contract.suite import Outcome
from replay.contract.summary import service_lines

SOURCE = Source(
    repository="octokit/fixtures",
    commit="cb8bc9dafc55a3837be4434ff4ba7acf3d9cadde",
    files=["scenarios/api.github.com/labels/normalized-fixture.json"],
    license="MIT",
    retrieved="2026-12-01",
)


def outcome(name: str, against: str, differences: list[Difference] | None = None) -> Outcome:
    rec = Recording(
        service="github",
        scenario=name,
        recorded_against="self",
        target_url="http://127.0.0.1",
        exchanges=[],
    )
    return Outcome(
        Scenario("github", name, lambda ctx: None, ""),
        run=Run(rec, Recorder(Normaliser())),
        differences=differences or [],
        recorded_against=against,
    )


def test_evidence_first_then_recordings_by_provenance() -> None:
    checks = [
        Check("labels #1 GET /repos/{owner}/{repo}/labels"),
        Check("labels #2 POST /repos/{owner}/{repo}/labels", ("status: recorded 201, fake 200",)),
        Check("errors #1 GET /repos/{owner}/{repo}/issues/x", ("$.documentation_url: missing",)),
    ]
    gaps = [KnownGap(subject="labels #2 *", problem="status:*", why="a test's accepted gap")]
    report = apply_gaps("github", "real interactions", SOURCE, checks, gaps)
    assert (report.passed, report.total, len(report.gaps), len(report.failures)) == (1, 3, 1, 1)
    assert not report.ok
    drift = Difference("b", "get.status", 200, 404)
    lines = service_lines("github", [outcome("a", "live"), outcome("b", "self", [drift])], [report])
    assert lines[0] == "== github"
    assert not any(line.startswith("github real interactions: none") for line in lines)
    assert service_lines("slack", [], [])[1].startswith("slack real interactions: none (")
    assert lines[1].startswith("github real interactions: 1/3 (1 known gaps, 1 failures)")
    assert "octokit/fixtures@cb8bc9dafc55" in lines[1]
    assert any("gap  labels #2" in line and "a test's accepted gap" in line for line in lines)
    assert any("FAIL errors #1" in line for line in lines)
    assert "live recordings (the vendor's API, evidence): 1/1 scenarios reproduced" in lines
    assert (
        "self recordings (the fake's regression snapshots, not evidence): 0/1 scenarios "
        "reproduced" in lines
    )


def test_a_gap_that_matches_nothing_fails_the_report() -> None:
    stale = KnownGap(subject="nothing *", why="no longer true of the fake")
    report = apply_gaps("github", "real interactions", SOURCE, [Check("labels #1")], [stale])
    assert report.failures == [] and not report.ok
    assert any("stale gap nothing *" in line for line in report.lines())
