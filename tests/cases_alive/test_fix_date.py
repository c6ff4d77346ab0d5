"""``replay case create`` writes the case's fix date from the fix commit (no Docker)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest
import yaml

from replay.base import gitrepo
from replay.base.blobs import ENV, default_root
from replay.base.case import load_case
from replay.casebuild.casedir import Origin, write_case_dir
from replay.casebuild.create import FixSource, spec_from_fix
from tests.casebuild.repos import REGISTRY, SETUP, shapes_repo


@pytest.fixture(autouse=True)
def blob_store(tmp_path: Path) -> Iterator[Path]:
    """A fresh default blob store (a case's history goes there), with the checkout's package
    files: nothing is written into the checkout."""
    root = tmp_path / "blobs"
    shutil.copytree(default_root() / "sha256", root / "sha256")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(ENV, str(root))
        yield root


def _source(repo: Path, fix: str) -> FixSource:
    return FixSource(
        repo=repo, fix=fix, repo_name="acme/shapes", ticket_title="area() adds the sides",
        ticket_body="area(2, 3) returns 5.", issue_number=1,
        ticket_created=datetime.fromisoformat("2026-03-11T09:00:00Z"), setup=SETUP,
        registry_index=REGISTRY,
    )  # fmt: skip


def test_the_case_file_gets_the_fix_commit_s_date(tmp_path: Path) -> None:
    repo, _, fix = shapes_repo(tmp_path / "shapes")
    committed = datetime.fromisoformat(gitrepo.run(repo, "log", "-1", "--format=%cI", fix))
    spec = spec_from_fix("shapes-area", _source(repo, fix))
    assert spec.fixed_at == committed
    path, _ = write_case_dir(spec, tmp_path / "case")
    written = yaml.safe_load(path.read_text())
    assert list(written).index("fixed_at") == list(written).index("at") + 1
    case = load_case(path)
    assert case.fixed_at == committed and case.at < committed
    assert case.provenance is None


def test_a_public_fix_keeps_its_provenance_beside_the_fix_date(tmp_path: Path) -> None:
    # The provenance block was once written and then overwritten with the plain case data.
    repo, _, fix = shapes_repo(tmp_path / "shapes")
    spec = spec_from_fix("shapes-area", _source(repo, fix))
    origin = Origin(
        repository="https://example.org/acme/shapes", fix=fix, fixed_at=spec.fixed_at,  # type: ignore[arg-type]
        license="MIT", license_text="MIT License\n", ticket="the issue the fix closed",
    )  # fmt: skip
    object.__setattr__(spec, "provenance", origin)
    path, _ = write_case_dir(spec, tmp_path / "case")
    case = load_case(path)
    assert case.provenance is not None and case.provenance.fix_commit == fix
    assert case.fixed_at == case.provenance.fixed_at == spec.fixed_at
    assert (path.parent / "LICENSE").read_text() == "MIT License\n"
