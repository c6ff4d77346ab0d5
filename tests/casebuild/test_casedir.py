"""What a case's snapshot keeps of the repository besides the base's history: its tags at T."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from fakes.github.gitstore import GitStore
from replay.base import gitrepo
from replay.base.case import load_case
from replay.base.errors import InputError
from replay.base.manifest import MANIFEST
from replay.casebuild.casedir import write_case_dir
from replay.casebuild.create import spec_from_fix
from replay.snapshot import load_snapshot
from replay.snapshot.audit import audit, dated_after
from tests.casebuild.repos import (
    SETUP,
    shapes_repo,
    shapes_source,
    tag,
    tagged_repo,
    with_submodule,
)


def test_the_tags_t_knew_reach_every_restore(tmp_path: Path) -> None:
    """Issue 34 (cause 3): the snapshot had no tags, so a project versioned from them
    (setuptools-scm, hatch-vcs) built as 0.1.devN and a test requirement on its real version
    did not resolve. The tags on the base's history that T knew now reach the workspace's
    restore and the world's repository: a lightweight tag, and a tag object dated before T;
    not a tag object made after T (its date and message are the future), nor a tag of the
    fix. The audit passes it, and finds a later tag object planted in it."""
    repo, base, fix, tags = tagged_repo(tmp_path / "shapes")
    path, manifest = write_case_dir(
        spec_from_fix("shapes-area", shapes_source(repo, fix)), tmp_path / "c"
    )
    (part,) = manifest.repositories
    assert part.tags == {"v0.1": tags["v0.1"], "v0.2": tags["v0.2"]}
    case = load_case(path)
    snapshot = load_snapshot(case.snapshot)
    work = snapshot.restore("acme/shapes", tmp_path / "work")
    assert gitrepo.run(work, "tag").split() == ["v0.1", "v0.2"]
    assert gitrepo.run(work, "describe", "--tags").startswith(
        "v0.2-2-g"
    )  # the docs commit and the merge
    assert gitrepo.run(work, "cat-file", "-t", "v0.2") == "tag"
    fake = GitStore(tmp_path / "fake")
    fake.create("acme/shapes", snapshot.bundle("acme/shapes"), base, "main", part.tags)
    assert fake.heads("acme/shapes") == {
        "refs/heads/main": base,
        "refs/tags/v0.1": tags["v0.1"],
        "refs/tags/v0.2": tags["v0.2"],
    }
    assert audit(snapshot, case) == []

    # The later tag object, planted in the manifest (the shared store holds it: the sources
    # list every tag of the base's history, and the cut at T left it out).
    data = json.loads((case.snapshot / MANIFEST).read_text())
    data["repositories"][0]["tags"]["v0.3"] = tags["v0.3"]
    (case.snapshot / MANIFEST).write_text(json.dumps(data))
    planted = load_snapshot(case.snapshot)
    late = [line for line in dated_after(planted) if "v0.3" in line]
    assert late == [
        "git/acme/shapes.git@" + base + ": tag refs/tags/v0.3 is a tag object dated "
        "2026-03-12T09:00:00+00:00, after T"
    ]
    found = [f.problem for f in audit(planted, case)]
    assert f"tag {tags['v0.3'][:12]} tagged 2026-03-12 09:00:00+00:00, after T" in found


SCM = """\
[build-system]
requires = ["setuptools>=64", "setuptools_scm[toml]>=6.2"]
build-backend = "setuptools.build_meta"

[project]
name = "shapes.kit"
dynamic = ["version"]

[tool.setuptools_scm]
"""
HATCH = """\
[build-system]
requires = ["hatchling", "hatch-vcs"]
build-backend = "hatchling.build"

[project]
name = "shapes-kit"
dynamic = ["version"]

[tool.hatch.version]
source = "vcs"
"""


def test_a_version_from_tags_t_did_not_know_is_passed_to_the_build(tmp_path: Path) -> None:
    """Issue 34 (cause 3): a project versioned from git tags whose release tag was made after
    T (here v0.3, on the base's history, tagged on 12 March) finds no version tag in the
    snapshot and would build as 0.1.devN. The version its build computes at the base from
    the repository's tags (v0.3 and two commits: 0.4.dev2+g<base>) goes to every setup
    command, named per project for setuptools-scm, generic for hatch-vcs, and is stated."""
    repo, base, fix = shapes_repo(tmp_path / "scm", files={"pyproject.toml": SCM})
    tag(repo, "v0.3", f"{base}^", "2026-03-12T09:00:00Z")
    spec = spec_from_fix("shapes-area", shapes_source(repo, fix))
    version = f"0.4.dev2+g{gitrepo.run(repo, 'rev-parse', '--short', base)}"
    assert spec.setup_env == {"SETUPTOOLS_SCM_PRETEND_VERSION_FOR_SHAPES_KIT": version}
    (note,) = spec.notes
    assert "shapes.kit (versioned from git tags by setuptools-scm)" in note
    assert "tag v0.3 is made after T" in note and version in note
    path, manifest = write_case_dir(spec, tmp_path / "c")
    assert manifest.repositories[0].tags == {}
    (setup,) = load_case(path).environment.setup
    assert setup == f"export SETUPTOOLS_SCM_PRETEND_VERSION_FOR_SHAPES_KIT={version}; {SETUP[0]}"

    # A tag T knew is kept: the build finds its version itself, nothing is passed.
    tag(repo, "v0.2", f"{base}^", "2026-03-02T12:00:00Z")
    spec = spec_from_fix("shapes-area", shapes_source(repo, fix))
    assert (spec.setup_env, spec.notes) == ({}, [])

    # hatch-vcs reads only the generic variable.
    repo, base, fix = shapes_repo(tmp_path / "hatch", files={"pyproject.toml": HATCH})
    tag(repo, "1.0", base, "2026-03-12T09:00:00Z")
    spec = spec_from_fix("shapes-area", shapes_source(repo, fix))
    assert spec.setup_env == {"SETUPTOOLS_SCM_PRETEND_VERSION": "1.0"}

    # No tag at all (a clone made without them): said, with what to do.
    repo, base, fix = shapes_repo(tmp_path / "bare", files={"pyproject.toml": HATCH})
    spec = spec_from_fix("shapes-area", shapes_source(repo, fix))
    assert spec.setup_env == {}
    (note,) = spec.notes
    assert "builds as 0.1.devN" in note and "git fetch --tags" in note


def test_submodules_are_restored_at_their_pinned_commits(tmp_path: Path) -> None:
    """Issue 34 (cause 4): submodules were not checked out, and the tests failed reading them
    with an error that did not name the cause. The pinned commit's history now goes from the
    repository's .git/modules into the submodule's shared git store (named after its URL),
    and every restore checks it out there, by relative paths (the checkout is copied into a
    container); the audit passes it."""
    url = "https://github.com/acme/vendor.git"
    repo, _, fix, pinned = with_submodule(tmp_path / "shapes", url)
    path, manifest = write_case_dir(
        spec_from_fix("shapes-area", shapes_source(repo, fix)), tmp_path / "c"
    )
    (part,) = manifest.repositories
    assert [s.model_dump() for s in part.submodules] == [
        {"path": "vendor", "name": "vendor", "url": url, "objects": "git/acme/vendor.git",
         "commit": pinned},
    ]  # fmt: skip
    case = load_case(path)
    snapshot = load_snapshot(case.snapshot)
    work = snapshot.restore("acme/shapes", tmp_path / "work")
    moved = tmp_path / "moved"
    work.rename(moved)
    assert (moved / "vendor" / "data.txt").read_text() == "42\n"
    # Neither "-" (not checked out) nor "+" (another commit) before it.
    assert gitrepo.run(moved, "submodule", "status").startswith(f"{pinned} vendor ")
    assert gitrepo.run(moved, "status", "--porcelain") == ""
    assert gitrepo.run(moved, "config", "submodule.vendor.url") == url
    assert audit(snapshot, case) == []


def test_a_submodule_nothing_holds_stops_naming_it(tmp_path: Path) -> None:
    """Without the submodule's objects anywhere here (never initialised in the clone, not in
    a shared store), case creation stops naming its path, URL and commit, and what to run."""
    url = "git@github.com:acme/gadgets.git"
    repo, _, fix, pinned = with_submodule(tmp_path / "shapes", url)
    gitrepo.run(repo, "submodule", "deinit", "-q", "-f", "vendor")
    shutil.rmtree(repo / ".git" / "modules")
    spec = spec_from_fix("shapes-area", shapes_source(repo, fix))
    with pytest.raises(InputError) as exc:
        write_case_dir(spec, tmp_path / "c")
    assert exc.value.field == "submodules"
    assert f"vendor ({url} at {pinned[:12]})" in exc.value.problem
    assert f"run `git submodule update --init` in the clone ({repo};" in exc.value.problem


def test_a_lightweight_tag_last_in_order_is_read(tmp_path: Path) -> None:
    """Found by the held-out corpus (python-tabulate): when the last tag by name is a
    lightweight one, git prints its line without the trailing space of the missing date, and
    the audit's reading of it crashed (``case create --from`` reported ``crash``)."""
    repo, base, fix, _ = tagged_repo(tmp_path / "shapes")
    gitrepo.run(repo, "tag", "zz-light", base)
    path, manifest = write_case_dir(
        spec_from_fix("shapes-area", shapes_source(repo, fix)), tmp_path / "c"
    )
    assert "zz-light" in manifest.repositories[0].tags
    case = load_case(path)
    assert audit(load_snapshot(case.snapshot), case) == []


def test_a_submodule_held_in_part_stops_naming_it(tmp_path: Path) -> None:
    """Found by the held-out corpus (python-xxhash): the clone's .git/modules held the pinned
    commit but not one of its files (an incomplete mirror); copying it into the shared store
    failed with git's own words ("possible repository corruption on the remote side"). The
    stop now names the submodule, the object missing and what to do. (Its own URL: a store
    another test filled with the same commit whole would serve it.)"""
    url = "https://github.com/acme/partial.git"
    repo, _, fix, pinned = with_submodule(tmp_path / "shapes", url)
    modules = repo / ".git" / "modules" / "vendor"
    blob = gitrepo.run(modules, "rev-parse", f"{pinned}:data.txt")
    (modules / "objects" / blob[:2] / blob[2:]).unlink()
    spec = spec_from_fix("shapes-area", shapes_source(repo, fix))
    with pytest.raises(InputError) as exc:
        write_case_dir(spec, tmp_path / "c")
    assert exc.value.field == "submodules"
    assert f"vendor ({url} at {pinned[:12]}): {modules} holds the commit but not all of its " \
        f"files (object {blob[:12]} is missing)" in exc.value.problem  # fmt: skip
    assert "`git submodule update --init --force`" in exc.value.problem
