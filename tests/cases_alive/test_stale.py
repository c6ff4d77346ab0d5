"""The staleness rule, on copies of a demo case made stale on purpose: a base image of a
Debian release that can no longer be built, a rule naming an event kind the log does not
record, a package file missing from the blob store. No Docker, no network."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from replay.base.blobs import default_root
from replay.cases.stale import check_case
from tests.cases_alive.helpers import ROOT, copy_case
from tests.cli_helpers import run_cli

PYGMENTS = next(
    f
    for f in json.loads((ROOT / "snapshots/demo/registry/index.json").read_text())["python"]
    if f["project"] == "pygments"
)


def _buster(text: str) -> str:
    return text.replace("base_image: replay-base:bookworm", "base_image: replay-base:buster")


def _unknown_kind(text: str) -> str:
    assert "kind: github.pull_request.merged" in text
    return text.replace("kind: github.pull_request.merged", "kind: github.pull_request.teleported")


def _blobs_without(tmp_path: Path, sha256: str) -> Path:
    root = tmp_path / "blobs"
    shutil.copytree(default_root() / "sha256", root / "sha256")
    (root / "sha256" / sha256[:2] / sha256[2:]).unlink()
    return root


def test_a_healthy_case_is_not_stale() -> None:
    for path in sorted((ROOT / "cases").glob("*/case.yaml")):
        found = check_case(path)
        assert not found.stale, (path, found.reasons)


def test_a_base_image_of_a_release_no_longer_built_is_stale(tmp_path: Path) -> None:
    found = check_case(copy_case(tmp_path / "cases", edit=_buster))
    (reason,) = found.reasons
    assert reason.startswith("base image replay-base:buster: Debian buster is not a release")
    assert "bullseye, bookworm, trixie" in reason


def test_a_rule_naming_an_unknown_event_kind_is_stale_not_an_error(tmp_path: Path) -> None:
    found = check_case(copy_case(tmp_path / "cases", edit=_unknown_kind))
    assert found.case_id == "demo-caret-zero"
    (reason,) = found.reasons
    assert reason.startswith("side_effects[")
    assert "(no-merge): the event log no longer records it" in reason
    assert "github.pull_request.teleported" in reason


def _unknown_end_field(text: str) -> str:
    assert "{field: body, regex:" in text
    return text.replace("{field: body, regex:", "{field: description, regex:")


def test_an_end_state_rule_naming_a_field_the_end_lacks_is_stale_not_an_error(
    tmp_path: Path,
) -> None:
    found = check_case(copy_case(tmp_path / "cases", edit=_unknown_end_field))
    (reason,) = found.reasons
    assert reason.startswith("side_effects[0] (pr-references-issue) where[1]:")
    assert "the end state no longer holds it: 'description' is not a field" in reason


def test_a_package_file_missing_from_the_blob_store_is_stale(tmp_path: Path) -> None:
    blobs = _blobs_without(tmp_path, PYGMENTS["sha256"])
    found = check_case(copy_case(tmp_path / "cases"), blobs)
    (reason,) = found.reasons
    assert reason.startswith("registry files frozen at T missing from the blob store")
    assert f"{PYGMENTS['filename']} (sha256 {PYGMENTS['sha256'][:12]})" in reason


def test_stale_lists_the_stale_cases_and_retires_them_when_asked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = tmp_path / "cases"
    fine = copy_case(cases, "demo-prerelease-order")
    old = copy_case(cases, "demo-caret-zero", edit=_buster)
    odd = copy_case(cases, "demo-build-metadata-sort", edit=lambda t: t.replace(
        "kind: github.pull_request.merged", "kind: github.pull_request.teleported"
    ))  # fmt: skip
    files = [str(fine), str(old), str(odd)]
    result = run_cli(capsys, "case", "stale", *files)
    assert result.code == 1, "stale cases left unretired"
    assert "ok     demo-prerelease-order" in result.out
    assert "STALE  demo-caret-zero" in result.out and "Debian buster" in result.out
    assert "STALE  demo-build-metadata-sort" in result.out
    assert not (cases / "retired.yaml").exists()
    retired = run_cli(capsys, "case", "stale", *files, "--retire")
    assert retired.code == 0, retired.out + retired.err
    registry = yaml.safe_load((cases / "retired.yaml").read_text())["cases"]
    assert sorted(registry) == ["demo-build-metadata-sort", "demo-caret-zero"]
    assert registry["demo-caret-zero"]["reason"].startswith("stale: base image replay-base:buster")
    # Retired, they are skipped by a run, even the one whose file no longer loads.
    ran = run_cli(
        capsys, "--db", str(tmp_path / "r.db"), "run", str(old), str(odd), "--stub", "gold"
    )
    assert ran.code == 0, ran.out + ran.err
    assert "skipping demo-caret-zero: retired" in ran.out
    assert "skipping demo-build-metadata-sort: retired" in ran.out
    # A missing blob, through the command line's --blobs.
    blobs = _blobs_without(tmp_path, PYGMENTS["sha256"])
    missing = run_cli(capsys, "case", "stale", str(fine), "--blobs", str(blobs))
    assert missing.code == 1 and PYGMENTS["filename"] in missing.out
