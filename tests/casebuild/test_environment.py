"""A new case's environment as of T: the setup proposed, pip's misses read, the branch found."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from replay.base import gitrepo
from replay.base.blobs import BlobStore
from replay.base.manifest import PythonFile
from replay.casebuild.casedir import default_branch
from replay.casebuild.environment import (
    SettleError,
    Wanted,
    missing_requirements,
    settle,
    setup_command,
)
from replay.images.base import release_named
from replay.runtime.base import SandboxError
from tests.casebuild.repos import commit

PIP_20 = """\
ERROR: Could not find a version that satisfies the requirement flit_core<4,>=3.2.0
ERROR: No matching distribution found for flit_core<4,>=3.2.0
"""
PIP_25 = """\
  ╰─> [2 lines of output]
      ERROR: Could not find a version that satisfies the requirement editables~=0.3
      ERROR: No matching distribution found for editables~=0.3
      [end of output]
"""


def test_pip_misses_are_read_in_pips_words_old_and_new() -> None:
    assert missing_requirements(PIP_20) == ["flit_core<4,>=3.2.0"]
    assert missing_requirements(PIP_25 + PIP_25) == ["editables~=0.3"]
    assert missing_requirements("ERROR: some other failure") == []


def test_setup_installs_the_project_and_the_test_requirements(tmp_path: Path) -> None:
    wanted = Wanted(requires=("pytest", "-r tests/requirements.txt", "pytest-cov>=2.12"))
    bookworm = release_named("bookworm")
    bullseye = release_named("bullseye")
    assert setup_command(tmp_path, bookworm, wanted) == (
        "python -m pip install -e . pytest -r tests/requirements.txt 'pytest-cov>=2.12'"
    )
    # pip 20.3 (bullseye) installs editable only through a setup.py.
    assert setup_command(tmp_path, bullseye, Wanted(extras=("tests",))) == (
        "python -m pip install .[tests]"
    )
    (tmp_path / "setup.py").write_text("from setuptools import setup\nsetup()\n")
    assert setup_command(tmp_path, bullseye, Wanted(extras=("tests", "docs"))) == (
        "python -m pip install -e .[tests,docs]"
    )


def test_default_branch_is_the_repositorys_own(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    repo.mkdir()
    gitrepo.run(repo, "init", "-q", "-b", "master")
    base = commit(repo, "2021-07-01T10:00:00+00:00", "first", {"a.txt": "a\n"})
    assert default_branch(repo, base) == "master"
    clone = tmp_path / "clone"
    gitrepo.run(tmp_path, "clone", "-q", str(repo), str(clone))
    gitrepo.run(clone, "checkout", "-q", "-b", "topic")
    assert default_branch(clone, base) == "master"  # origin/HEAD, not the checked-out branch


def _file(project: str) -> PythonFile:
    return PythonFile(
        project=project,
        version="1.0",
        filename=f"{project}-1.0-py3-none-any.whl",
        sha256="0" * 64,
        size=1,
        upload_time=datetime(2021, 1, 1, tzinfo=UTC),
    )


def test_settle_records_what_pip_missed_and_rebuilds(monkeypatch, tmp_path: Path) -> None:
    import replay.casebuild.environment as environment

    recorded: list[list[str]] = []
    added: list[list[PythonFile]] = []
    monkeypatch.setattr(
        environment,
        "record_python",
        lambda specs, *a, **k: recorded.append(list(specs)) or [_file("editables")],
    )
    monkeypatch.setattr(environment, "_add_to_registry", lambda path, files: added.append(files))
    builds = iter([SandboxError(PIP_25), None])

    def build(path: Path) -> None:
        outcome = next(builds)
        if outcome is not None:
            raise outcome

    at = datetime(2025, 2, 17, tzinfo=UTC)
    got = settle(
        tmp_path / "case.yaml",
        build,
        at,
        release_named("bookworm"),
        BlobStore(tmp_path),
        "http://x",
    )
    assert got == ["editables~=0.3"]
    assert recorded == [["editables~=0.3"]]
    assert "pip asked for it" in (added[0][0].chosen_because or "")


def test_settle_stops_when_a_recorded_miss_is_still_missed(monkeypatch, tmp_path: Path) -> None:
    import replay.casebuild.environment as environment

    monkeypatch.setattr(environment, "record_python", lambda *a, **k: [])
    monkeypatch.setattr(environment, "_add_to_registry", lambda path, files: None)

    def build(path: Path) -> None:
        raise SandboxError(PIP_20)

    at = datetime(2021, 7, 30, tzinfo=UTC)
    with pytest.raises(SettleError, match="still finds no distribution for flit_core"):
        settle(
            tmp_path / "case.yaml",
            build,
            at,
            release_named("bullseye"),
            BlobStore(tmp_path),
            "http://x",
        )


def test_settle_passes_other_failures_on_untouched(tmp_path: Path) -> None:
    def build(path: Path) -> None:
        raise SandboxError("environment setup 'make' exited 2: no rule")

    at = datetime(2021, 7, 30, tzinfo=UTC)
    with pytest.raises(SandboxError, match="no rule"):
        settle(
            tmp_path / "case.yaml",
            build,
            at,
            release_named("bullseye"),
            BlobStore(tmp_path),
            "http://x",
        )
