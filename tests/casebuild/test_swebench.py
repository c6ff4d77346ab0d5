"""``case import-swebench``: a hand-written instance over a test repository becomes a case
that validates, holds the ticket as a GitHub issue, audits clean and calibrates."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from replay.base import gitrepo
from replay.base.case import SideEffectRule, load_case
from replay.base.errors import InputError
from replay.casebuild.casedir import default_branch
from replay.casebuild.swebench import import_instances, load_instances
from replay.run.runner import RunOptions, run_case
from replay.snapshot import load_snapshot
from replay.snapshot.audit import audit
from replay.validate import validate_case
from tests.casebuild.repos import REGISTRY, SETUP, shapes_repo


def _instance(clone: Path, base: str, fix: str) -> dict[str, object]:
    diff = gitrepo.run(clone, "diff", base, fix, "--", "shapes.py") + "\n"
    tests = gitrepo.run(clone, "diff", base, fix, "--", "tests") + "\n"
    return {
        "instance_id": "acme__shapes-42",
        "repo": "acme/shapes",
        "base_commit": base,
        "patch": diff,
        "test_patch": tests,
        "problem_statement": "area() adds the sides\n\narea(2, 3) returns 5; it should be 6.\n",
        "created_at": "2026-03-11T09:00:00",
        # As in the published datasets: the lists are JSON text.
        "FAIL_TO_PASS": json.dumps(["tests/test_shapes.py::test_area_multiplies"]),
        "PASS_TO_PASS": json.dumps(["tests/test_shapes.py::test_perimeter"]),
        "version": "0.1",
        "environment_setup_commit": base,
    }


@pytest.fixture()
def imported(tmp_path: Path) -> Path:
    clones = tmp_path / "clones"
    clone, base, fix = shapes_repo(clones / "acme__shapes")
    file = tmp_path / "instances.jsonl"
    file.write_text(json.dumps(_instance(clone, base, fix)) + "\n")
    (path,) = import_instances(
        file, clones, tmp_path / "cases", setup=SETUP, registry_index=REGISTRY
    )
    return path


def test_import_validates_and_audits_clean(imported: Path) -> None:
    assert imported.parent.name == "acme__shapes-42"
    validate_case(imported)
    case = load_case(imported)
    assert case.ticket.ref == "acme/shapes#42"
    assert case.hidden_tests.fail_to_pass == ["tests/test_shapes.py::test_area_multiplies"]
    snapshot = load_snapshot(case.snapshot)
    (issue,) = snapshot.github.issues
    assert issue.title == "area() adds the sides" and "should be 6" in (issue.body or "")
    assert audit(snapshot, case) == []
    # The history is in the shared git store; restores get exactly the base's.
    assert snapshot.manifest.repositories[0].objects == "git/acme/shapes.git"
    assert gitrepo.bundle_heads(snapshot.bundle("acme/shapes")) == {
        "refs/heads/main": case.repository.base_commit
    }


def test_import_calibrates(imported: Path, tmp_path: Path) -> None:
    opts = {"out": tmp_path / "runs", "db": str(tmp_path / "results.db")}
    (gold,) = run_case(imported, RunOptions(stub="gold", **opts))  # type: ignore[arg-type]
    assert gold.outcome == "pass", gold.reason
    (idle,) = run_case(imported, RunOptions(stub="idle", **opts))  # type: ignore[arg-type]
    assert idle.outcome == "model_fail", idle.reason


def test_bad_instances_name_the_problem(tmp_path: Path) -> None:
    file = tmp_path / "bad.json"
    file.write_text(json.dumps([{"instance_id": "x", "repo": "a/b"}]))
    with pytest.raises(InputError, match="base_commit"):
        load_instances(file)
    clone, base, fix = shapes_repo(tmp_path / "elsewhere" / "shapes")
    file.write_text(json.dumps([_instance(clone, base, fix)]))
    with pytest.raises(InputError, match="no clone of acme/shapes"):
        import_instances(file, tmp_path / "nowhere", tmp_path / "out")


def test_cli_import(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from replay.cli.case import app

    clones = tmp_path / "clones"
    clone, base, fix = shapes_repo(clones / "shapes")
    file = tmp_path / "instances.json"
    file.write_text(json.dumps([_instance(clone, base, fix)]))
    args = ["import-swebench", str(file), "--clones", str(clones), "--out", str(tmp_path / "c")]
    args += ["--setup", SETUP[0], "--registry-index", str(REGISTRY)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "acme__shapes-42/case.yaml" in result.output
    validate_case(tmp_path / "c" / "acme__shapes-42" / "case.yaml")


def test_the_default_branch_comes_from_the_repository(tmp_path: Path) -> None:
    """A repository whose default branch is ``master``: the clone's ``origin/HEAD`` says so
    even with another branch checked out, and the generated snapshot, its GitHub and the
    case's rules all use ``master``."""
    upstream, base, fix = shapes_repo(tmp_path / "upstream", branch="master")
    clones = tmp_path / "clones"
    clones.mkdir()
    gitrepo.run(clones, "clone", "-q", str(upstream), "acme__shapes")
    clone = clones / "acme__shapes"
    gitrepo.run(clone, "checkout", "-q", "-b", "work-in-progress")
    assert default_branch(clone, base) == "master"
    file = tmp_path / "instances.jsonl"
    file.write_text(json.dumps(_instance(clone, base, fix)) + "\n")
    (path,) = import_instances(
        file, clones, tmp_path / "cases", setup=SETUP, registry_index=REGISTRY
    )
    validate_case(path)
    case = load_case(path)
    snapshot = load_snapshot(case.snapshot)
    assert snapshot.manifest.repositories[0].default_branch == "master"
    assert [r.default_branch for r in snapshot.github.repos] == ["master"]
    assert gitrepo.bundle_heads(snapshot.bundle("acme/shapes")) == {"refs/heads/master": base}
    (push,) = [r for r in case.side_effects if r.id == "no-push-to-master"]
    assert isinstance(push, SideEffectRule) and push.kind == "github.branch.moved"
    assert (push.where[0].field, push.where[0].equals) == ("data.default", True)
    assert case.gold.side_effects[0].data["base_ref"] == "master"
    assert audit(snapshot, case) == []
    # The gold run opens its pull request against master, and passes.
    opts = {"out": tmp_path / "runs", "db": str(tmp_path / "results.db")}
    (gold,) = run_case(path, RunOptions(stub="gold", **opts))  # type: ignore[arg-type]
    assert gold.outcome == "pass", gold.reason


def test_default_branch_without_origin_head(tmp_path: Path) -> None:
    """No ``origin/HEAD``: the checked-out branch; a detached HEAD: whichever of main and
    master holds the base."""
    repo, base, _ = shapes_repo(tmp_path / "shapes", branch="master")
    assert default_branch(repo, base) == "master"
    gitrepo.run(repo, "checkout", "-q", "-b", "trunk")
    assert default_branch(repo, base) == "trunk"
    gitrepo.run(repo, "checkout", "-q", "--detach", base)
    assert default_branch(repo, base) == "master"
    gitrepo.run(repo, "branch", "-q", "-m", "master", "main")
    assert default_branch(repo, base) == "main"
