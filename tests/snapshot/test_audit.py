"""The leak audit finds each planted leak, by location, and passes clean snapshots."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from replay.base import gitrepo
from replay.base.case import load_case
from replay.snapshot import build_snapshot, load_snapshot
from replay.snapshot.audit import Finding, audit, audit_cached, audit_repository, dated_after
from replay.snapshot.edit import write_part
from tests import worlds

REPO = Path(__file__).resolve().parents[2]
T = "2026-03-12T09:00:00Z"
BUGGY = "def area(width, height):\n    return width + height\n"
FIXED = "def area(width, height):\n    return width * height  # rectangles multiply\n"
GOLD = """\
diff --git a/geom.py b/geom.py
--- a/geom.py
+++ b/geom.py
@@ -1,2 +1,2 @@
 def area(width, height):
-    return width + height
+    return width * height  # rectangles multiply
"""
HIDDEN = """\
diff --git a/test_geom.py b/test_geom.py
new file mode 100644
--- /dev/null
+++ b/test_geom.py
@@ -0,0 +1,5 @@
+from geom import area
+
+
+def test_area_multiplies_sides():
+    assert area(2, 3) == 6
"""
PYPROJECT = '[project]\nname = "geomkit"\nversion = "0.1.0"\n'
FIX_LINE = "return width * height  # rectangles multiply"


def _history(dest: Path) -> None:
    scratch = dest.parent / "scratch"
    commits = [
        ("2026-03-01T10:00:00Z", "Initial", {"geom.py": BUGGY, "pyproject.toml": PYPROJECT}),
        ("2026-03-13T10:00:00Z", "Fix area (#3)", {"geom.py": FIXED}),
    ]
    gitrepo.init(scratch)
    for when, subject, files in commits:
        for name, text in files.items():
            (scratch / name).write_text(text)
        gitrepo.run(scratch, "add", "-A")
        dated = {"GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}
        gitrepo.run(scratch, "commit", "-q", "-m", subject, env=dated)
    dest.mkdir(parents=True)
    gitrepo.run(scratch, "format-patch", "-q", "--root", "-o", str(dest))


def _world() -> dict[str, object]:
    w = worlds.world()
    w["repository"] = {"name": "acme/tiny", "default_branch": "main", "history": "history"}
    gh = w["github"]
    assert isinstance(gh, dict)
    gh["pulls"] = []
    return w


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """(sources, clean snapshot, case file)."""
    root = tmp_path_factory.mktemp("leaks")
    src = root / "sources"
    src.mkdir()
    _history(src / "history")
    (src / "world.yaml").write_text(yaml.safe_dump(_world(), sort_keys=False))
    snap = root / "snap"
    build_snapshot(src, snap)
    base = load_snapshot(snap).manifest.repositories[0].base_commit
    case_dir = root / "case"
    case = worlds.write_case(case_dir, snap, base)
    (case_dir / "gold.patch").write_text(GOLD)
    (case_dir / "hidden.patch").write_text(HIDDEN)
    data = yaml.safe_load(case.read_text())
    data["hidden_tests"]["fail_to_pass"] = ["test_geom.py::test_area_multiplies_sides"]
    data["hidden_tests"]["pass_to_pass"] = []
    data["gold"]["side_effects"] = [
        {
            "service": "github",
            "kind": "github.pull_request.opened",
            "data": {"number": 3, "title": "Fix area", "head_ref": "fix-area"},
        }
    ]
    case.write_text(yaml.safe_dump(data))
    return src, snap, case


@pytest.fixture()
def leaky(built: tuple[Path, Path, Path], tmp_path: Path) -> tuple[Path, Path, Path]:
    """A copy of the clean snapshot (and its case, pointing at the copy) to plant leaks in."""
    src, snap, case = built
    dest = tmp_path / "snap"
    shutil.copytree(snap, dest)
    new_case = tmp_path / "case"
    shutil.copytree(case.parent, new_case)
    data = yaml.safe_load((new_case / "case.yaml").read_text())
    data["snapshot"] = str(dest)
    (new_case / "case.yaml").write_text(yaml.safe_dump(data))
    return src, dest, new_case / "case.yaml"


def _full_repo(src: Path, dest: Path) -> tuple[Path, str]:
    """The whole timeline as a repository, and its fix commit (after T)."""
    gitrepo.init(dest)
    gitrepo.run(
        dest, "am", "-q", "--committer-date-is-author-date",
        *sorted(str(p) for p in (src / "history").glob("*.patch")),
    )  # fmt: skip
    return dest, gitrepo.run(dest, "rev-parse", "HEAD")


def _find(snapshot: Path, case: Path | None) -> list[Finding]:
    return audit(load_snapshot(snapshot), load_case(case) if case else None)


def _rebuild_bundle_same_sha(src: Path, tmp: Path) -> tuple[Path, str, str]:
    full, fix = _full_repo(src, tmp / "full")
    # The rebuilt base has the same SHA as the snapshot's (same patches, same dates)? Not
    # necessarily: committer differs. Use the full repo's own base (fix's parent).
    return full, fix, gitrepo.run(full, "rev-parse", "HEAD~1")


def _bundle_with(full: Path, base: str, extra: list[str], out: Path, refs: dict[str, str]) -> None:
    """A v2 bundle whose refs are ``refs`` and whose pack holds base's history plus ``extra``."""
    objects = subprocess.run(
        ["git", "rev-list", "--objects", base, *extra],
        cwd=full, capture_output=True, check=True, env=gitrepo.clean_env(),
    ).stdout  # fmt: skip
    names = b"\n".join(line.split(b" ")[0] for line in objects.splitlines()) + b"\n"
    pack = subprocess.run(
        ["git", "pack-objects", "--stdout"],
        cwd=full, input=names, capture_output=True, check=True, env=gitrepo.clean_env(),
    ).stdout  # fmt: skip
    header = "# v2 git bundle\n" + "".join(f"{sha} {ref}\n" for ref, sha in refs.items()) + "\n"
    out.write_bytes(header.encode() + pack)


def _plant_bundle(snap: Path, src: Path, tmp: Path, *, tag: bool) -> str:
    full, fix, base = _rebuild_bundle_same_sha(src, tmp)
    manifest = json.loads((snap / "manifest.json").read_text())
    part = manifest["repositories"][0]
    new = tmp / "planted.bundle"
    refs = {"refs/heads/main": base}
    if tag:
        refs["refs/tags/v0.2.0"] = fix
    _bundle_with(full, base, [] if tag else [fix], new, refs)
    # The planted bundle's base must be the manifest's base commit.
    manifest["repositories"][0]["base_commit"] = base
    (snap / "manifest.json").write_text(json.dumps(manifest))
    write_part(snap, part["bundle"], new.read_bytes())
    return fix


# ----------------------------------------------------------------------------- clean


def test_clean_snapshot_and_case_pass(built: tuple[Path, Path, Path]) -> None:
    _, snap, case = built
    assert _find(snap, case) == []
    assert _find(snap, None) == []


@pytest.mark.parametrize("case_dir", sorted((REPO / "cases").glob("demo-*")), ids=lambda p: p.name)
def test_demo_cases_are_clean(case_dir: Path) -> None:
    case = case_dir / "case.yaml"
    assert _find(load_case(case).snapshot, case) == []


# ----------------------------------------------------------------------------- planted


def test_future_commit_left_unreachable_in_the_bundle(
    leaky: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    src, snap, case = leaky
    fix = _plant_bundle(snap, src, tmp_path, tag=False)
    assert dated_after(load_snapshot(snap)) == []  # the first, partial audit misses it
    found = _find(snap, case)
    bundle = "repos/acme/tiny.bundle"
    assert any(
        f.location == bundle and fix[:12] in f.problem and "after T" in f.problem for f in found
    ), found
    assert any(f.location == bundle and "holds the answer" in f.problem for f in found), found


def test_tag_in_the_bundle(leaky: tuple[Path, Path, Path], tmp_path: Path) -> None:
    src, snap, case = leaky
    fix = _plant_bundle(snap, src, tmp_path, tag=True)
    found = _find(snap, case)
    assert (
        Finding("repos/acme/tiny.bundle:refs/tags/v0.2.0", f"bundle carries ref -> {fix[:12]}")
        in found
    )


def test_reflog_and_orig_head_in_a_restored_repository(
    built: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    src, _, _ = built
    full, fix, base = _rebuild_bundle_same_sha(src, tmp_path)
    work = tmp_path / "work"
    gitrepo.run(tmp_path, "clone", "-q", "--no-local", str(full), str(work))
    gitrepo.run(work, "reset", "-q", "--hard", base)  # the reflog still names the fix
    gitrepo.run(work, "remote", "remove", "origin")
    found = audit_repository(work, base, "main", load_snapshot(built[1]).at)
    where = {f.location for f in found}
    assert "logs/HEAD" in where and "logs/refs/heads/main" in where, found
    assert any(f.location.endswith("ORIG_HEAD") for f in found), found
    assert any(fix[:12] in f.problem and "after T" in f.problem for f in found), found
    # A clean restore of the snapshot has none of it.
    clean = gitrepo.checkout_from_bundle(
        built[1] / "repos/acme/tiny.bundle",
        load_snapshot(built[1]).manifest.repositories[0].base_commit,
        tmp_path / "clean",
        "main",
    )
    snap_base = load_snapshot(built[1]).manifest.repositories[0].base_commit
    assert audit_repository(clean, snap_base, "main", load_snapshot(built[1]).at) == []


def _edit_github(snap: Path, change: object) -> None:
    state = json.loads((snap / "github.json").read_text())
    assert callable(change)
    change(state)
    write_part(snap, "github.json", json.dumps(state).encode())


def test_fix_pr_in_the_github_state(leaky: tuple[Path, Path, Path]) -> None:
    _, snap, case = leaky
    base = load_snapshot(snap).manifest.repositories[0].base_commit

    def add_pr(state: dict[str, list[dict[str, object]]]) -> None:
        state["pulls"].append(
            {
                "repo": "acme/tiny", "number": 3, "id": 103, "title": "Fix area",
                "body": "Fixes #1", "state": "open", "author": "alice", "head_ref": "fix-area",
                "base_ref": "main", "head_sha": base, "base_sha": base,
                "created_at": "2026-03-11T10:00:00Z", "updated_at": "2026-03-11T10:00:00Z",
            }
        )  # fmt: skip

    _edit_github(snap, add_pr)
    assert dated_after(load_snapshot(snap)) == []
    assert Finding("github.json:pulls[0]", "is the fix PR") in _find(snap, case)


def test_later_comment_quoting_the_patch(leaky: tuple[Path, Path, Path]) -> None:
    _, snap, case = leaky

    def quote(state: dict[str, list[dict[str, list[dict[str, object]]]]]) -> None:
        state["issues"][0]["comments"].append(
            {
                "id": 1003, "author": "alice", "body": f"Fixed with `{FIX_LINE}`",
                "created_at": "2026-03-11T12:00:00Z", "updated_at": "2026-03-11T12:00:00Z",
            }
        )  # fmt: skip

    _edit_github(snap, quote)
    found = _find(snap, case)
    assert any(
        f.location == "github.json.issues[0].comments[1].body" and FIX_LINE in f.problem
        for f in found
    ), found


def test_newer_release_of_the_package_under_test(leaky: tuple[Path, Path, Path]) -> None:
    _, snap, case = leaky
    index = json.loads((snap / "registry/index.json").read_text())
    index["python"].append(
        {
            "project": "geomkit", "version": "0.2.0", "filename": "geomkit-0.2.0-py3-none-any.whl",
            "sha256": "0" * 64, "size": 10, "upload_time": "2026-03-14T00:00:00Z",
        }
    )  # fmt: skip
    write_part(snap, "registry/index.json", json.dumps(index).encode(), slot="registry")
    found = _find(snap, case)
    assert any(
        f.location == "registry/index.json:geomkit-0.2.0-py3-none-any.whl"
        and "package under test" in f.problem
        for f in found
    ), found


def test_audit_cached_remembers_by_snapshot_hash(
    leaky: tuple[Path, Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, snap, case = leaky
    monkeypatch.setenv("REPLAY_AUDIT_CACHE", str(tmp_path / "cache"))
    assert audit_cached(snap, case) == []
    assert len(list((tmp_path / "cache").glob("*.json"))) == 1
    # A changed snapshot has another hash: audited afresh, and the leak is seen.
    test_later_comment_quoting_the_patch((Path(), snap, case))
    assert audit_cached(snap, case) != []
    assert len(list((tmp_path / "cache").glob("*.json"))) == 2


def test_a_changelog_line_restating_the_ticket_is_not_the_answer() -> None:
    """Found by the seventh held-out corpus (yapf 2023): the fix's ``CHANGELOG.md`` entry is
    its issue's title, so the world audit stopped the case because the ticket "quotes the
    answer". Lines of prose (a changelog, the docs) are no markers; the code's lines are,
    and the same text in a code file still is."""
    from replay.snapshot.audit import gold_lines

    entry = "being too agressive for lambdas and unpacking."
    gold = (
        "--- a/CHANGELOG.md\n+++ b/CHANGELOG.md\n@@ -1,0 +1,1 @@\n"
        f"+  {entry}\n"
        "--- a/docs/usage.rst\n+++ b/docs/usage.rst\n@@ -1,0 +1,1 @@\n"
        "+  The lambda's arguments are split only when they do not fit.\n"
        "--- a/yapf/yapflib/format_decision_state.py\n"
        "+++ b/yapf/yapflib/format_decision_state.py\n@@ -1,0 +1,2 @@\n"
        "+      if subtypes.LAMBDEF in current.subtypes:\n"
        f"+        note = '{entry}'\n"
    )
    assert gold_lines(gold) == {
        "if subtypes.LAMBDEF in current.subtypes:",
        f"note = '{entry}'",
    }
