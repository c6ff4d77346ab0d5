"""The real historical cases `cases/` ships beside the demo's (issue 16): public fixes of two
repositories with permissive licenses, one older than 2022 and one newer than 2024, each on the
interpreter of its T, with its provenance, and nothing of the fix outside its hidden parts."""

from __future__ import annotations

import tempfile
from datetime import UTC, datetime
from pathlib import Path

import pytest

from replay.base import gitrepo
from replay.base.case import Case, load_case
from replay.base.errors import ToolError
from replay.casebuild.casedir import license_at, license_text
from replay.casebuild.environment import export_tree
from replay.images.base import base_tag, choose_release, read_requires_python
from replay.snapshot import load_snapshot
from replay.snapshot.audit import audit

ROOT = Path(__file__).resolve().parent.parent
REAL = sorted(p for p in (ROOT / "cases").glob("*/case.yaml") if p.parent.name[:5] != "demo-")
REAL_SET = sorted((ROOT / "cases" / "real").glob("*/case.yaml"))
"""Issue 34's real set: calibrated cases made by `case create --from` (`make real-set`)."""
PERMISSIVE = {"MIT", "BSD-2-Clause", "BSD-3-Clause", "Apache-2.0", "ISC", "PSF-2.0"}


def permissive(spdx: str) -> bool:
    """An SPDX expression of permissive licenses: every one of an AND, any one of an OR."""
    return any(
        all(part.strip() in PERMISSIVE for part in alternative.split(" AND "))
        for alternative in spdx.split(" OR ")
    )


def _cases() -> list[Case]:
    return [load_case(p) for p in REAL]


def test_at_least_four_real_fixes_from_two_repositories_old_and_new() -> None:
    cases = _cases()
    assert len(cases) >= 4
    assert all(c.provenance is not None for c in cases)
    assert len({c.provenance.repository for c in cases if c.provenance}) >= 2
    fixed = [c.provenance.fixed_at for c in cases if c.provenance]
    assert min(fixed) < datetime(2022, 1, 1, tzinfo=UTC)
    assert max(fixed) >= datetime(2025, 1, 1, tzinfo=UTC)


def test_the_real_set_spans_repositories_years_and_kinds_of_history() -> None:
    """Issue 34, what to build 4: at least 30 calibrated cases from at least 10 public
    repositories, fixed from 2019 to 2026, among them one older than 2020, one with C
    extensions, one with a submodule and one versioned from git tags. (`make real-set`
    replays each with the gold fix and idly; CI replays one, `test_real_set_case_calibrates`.)"""
    cases = [load_case(p) for p in REAL_SET]
    assert len(cases) >= 30
    origins = [c.provenance for c in cases]
    assert all(o is not None for o in origins)
    assert len({o.repository for o in origins if o}) >= 10
    years = {o.fixed_at.year for o in origins if o}
    assert min(years) == 2019 and max(years) == 2026
    assert any(o.fixed_at < datetime(2020, 1, 1, tzinfo=UTC) for o in origins if o)
    assert any(
        "build" in c.environment.toolchains and "build_ext --inplace" in c.hidden_tests.command
        for c in cases
    )
    snapshots = [load_snapshot(c.snapshot) for c in cases]
    assert any(s.manifest.repositories[0].submodules for s in snapshots)
    from_tags = [
        c.id
        for c, s in zip(cases, snapshots, strict=True)
        if s.manifest.repositories[0].tags
        and any(
            f.project.replace("_", "-") in {"setuptools-scm", "hatch-vcs"}
            and "build requirement of the project" in (f.chosen_because or "")
            for f in s.registry.python
        )
    ]
    assert from_tags


@pytest.mark.parametrize("path", REAL + REAL_SET, ids=[p.parent.name for p in REAL + REAL_SET])
def test_provenance_license_and_interpreter(path: Path) -> None:
    case = load_case(path)
    prov = case.provenance
    assert prov is not None
    assert permissive(prov.license)
    assert prov.license_file.is_file() and prov.license_file.parent == path.parent
    assert case.at < prov.fixed_at
    snapshot = load_snapshot(case.snapshot)
    repo = snapshot.manifest.repositories[0]
    assert repo.name == case.repository.name
    with tempfile.TemporaryDirectory() as tmp:
        cut = gitrepo.checkout_from_bundle(
            snapshot.bundle(repo.name), repo.base_commit, Path(tmp) / "cut", repo.default_branch
        )
        # The restore holds the base's history only: not the fix, nothing after it.
        with pytest.raises(ToolError):
            gitrepo.run(cut, "cat-file", "-e", f"{prov.fix_commit}^{{commit}}")
        assert gitrepo.run(cut, "rev-parse", "HEAD") == case.repository.base_commit
        # The license shipped beside the case is the repository's own at the base.
        shipped = license_text(license_at(cut, "HEAD")).replace("\r\n", "\n")
        assert shipped == prov.license_file.read_text()  # (read_text reads CRLF as LF)
        project = export_tree(cut, "HEAD", Path(tmp) / "project")
        wanted = choose_release(case.at, read_requires_python(project))
    # The interpreter is the one current at T that the project admits.
    assert case.environment.base_image == base_tag(wanted, case.environment.toolchains)
    assert audit(snapshot, case) == []


REPRESENTATIVE = ROOT / "cases" / "real" / "wrapt-2019-aee6c12" / "case.yaml"
"""CI's one case of the real set (`make real-set` replays them all): wrapt's January 2019 fix,
older than 2020, with a C extension rebuilt before its tests, on bullseye's Python 3.9 with
the build toolchain, from the registry and history shipped in the repository."""


def test_a_real_set_case_calibrates_from_what_is_shipped(tmp_path: Path) -> None:
    from replay.run.calibrate import calibrate
    from replay.run.runner import RunOptions

    options = RunOptions(out=tmp_path / "runs", db=str(tmp_path / "results.db"))
    result = calibrate(REPRESENTATIVE, options, runs=1)
    assert result.calibrated, [r.reason for r in [*result.gold, *result.idle]]
