"""Snapshot format: building cuts the timeline at T; loading checks every hash."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from replay import gitrepo
from replay.errors import SourcesError
from replay.formats import dump_json
from replay.snapshot import build_snapshot, load_snapshot
from replay.snapshot.audit import dated_after
from replay.snapshot.load import sha256_file
from tests.cli_helpers import assert_one_line_error, run_cli


def copy(snapshot_dir: Path, tmp_path: Path) -> Path:
    dest = tmp_path / "snap"
    shutil.copytree(snapshot_dir, dest)
    return dest


def rehash(snap: Path) -> None:
    manifest = json.loads((snap / "manifest.json").read_text())
    manifest["parts"] = {name: sha256_file(snap / name) for name in manifest["parts"]}
    (snap / "manifest.json").write_text(dump_json(manifest))


def test_cut_drops_everything_after_t(tiny_snapshot) -> None:
    gh, lin, sl = tiny_snapshot.github, tiny_snapshot.linear, tiny_snapshot.slack
    assert [u.login for u in gh.users] == ["alice", "agent"], "a user created after T is gone"
    (issue,) = gh.issues
    assert issue.state == "open" and issue.closed_at is None, "closing after T is rolled back"
    assert [c.body for c in issue.comments] == ["still broken"]
    assert issue.updated_at.isoformat() == "2026-03-11T00:00:00+00:00"
    assert gh.pulls == [], "the fix PR, opened after T, is gone"
    (lissue,) = lin.issues
    assert lissue.state == "s-todo" and lissue.completed_at is None
    (msg,) = sl.channels[0].messages
    assert msg.text == "add() is broken"
    assert [r.name for r in msg.reactions] == ["eyes"]
    assert dated_after(tiny_snapshot) == []


def test_bundle_holds_only_history_up_to_base(tiny_snapshot, tmp_path: Path) -> None:
    (repo,) = tiny_snapshot.manifest.repositories
    bundle = tiny_snapshot.part(repo.bundle)
    assert gitrepo.bundle_heads(bundle) == {"refs/heads/main": repo.base_commit}
    work = gitrepo.checkout_from_bundle(bundle, repo.base_commit, tmp_path / "w", "main")
    subjects = gitrepo.run(work, "log", "--format=%s").splitlines()
    assert subjects == ["Add tests", "Initial commit"]
    everything = gitrepo.run(work, "rev-list", "--all", "--reflog").splitlines()
    assert len(everything) == 2, "no object of the fix is reachable by any ref or reflog"
    assert not (work / ".git" / "FETCH_HEAD").exists()
    assert not (work / ".git" / "ORIG_HEAD").exists()
    assert (work / "lib.py").read_text().endswith("a - b\n")


def test_same_sources_give_same_hashes(tiny_sources: Path, tmp_path: Path) -> None:
    first = build_snapshot(tiny_sources, tmp_path / "a")
    second = build_snapshot(tiny_sources, tmp_path / "b")
    assert first.parts == second.parts
    assert (tmp_path / "a/manifest.json").read_bytes() == (
        tmp_path / "b/manifest.json"
    ).read_bytes()


def test_cut_at_a_later_t_keeps_the_fix(tiny_sources: Path, tmp_path: Path) -> None:
    from datetime import UTC, datetime

    manifest = build_snapshot(tiny_sources, tmp_path / "late", datetime(2026, 3, 20, tzinfo=UTC))
    snap = load_snapshot(tmp_path / "late")
    assert snap.github.issues[0].state == "closed"
    assert [p.number for p in snap.github.pulls] == [3]
    assert snap.github.pulls[0].head_sha == manifest.repositories[0].base_commit


def test_inspect_shows_t_and_counts(capsys, tiny_snapshot_dir: Path) -> None:
    result = run_cli(capsys, "snapshot", "inspect", str(tiny_snapshot_dir))
    assert result.code == 0, result.err
    assert "T         2026-03-12T09:00:00+00:00" in result.out
    assert "2 commits" in result.out
    assert "github issues          1" in result.out or "github issues" in result.out


@pytest.mark.parametrize(
    "name",
    [
        "hash mismatch",
        "missing part",
        "extra file",
        "missing manifest",
        "corrupt manifest",
        "corrupt state",
        "not a directory",
    ],
)
def test_bad_snapshot_gives_one_line(
    name: str, capsys, tiny_snapshot_dir: Path, tmp_path: Path
) -> None:
    snap = copy(tiny_snapshot_dir, tmp_path)
    expected: list[str]
    if name == "hash mismatch":
        (snap / "slack.json").write_text(
            (snap / "slack.json").read_text().replace("broken", "fixed!")
        )
        expected = ["slack.json", "hash mismatch"]
    elif name == "missing part":
        (snap / "linear.json").unlink()
        expected = ["linear.json", "missing"]
    elif name == "extra file":
        (snap / "notes.txt").write_text("hi")
        expected = ["notes.txt", "not listed"]
    elif name == "missing manifest":
        (snap / "manifest.json").unlink()
        expected = ["manifest.json", "file not found"]
    elif name == "corrupt manifest":
        (snap / "manifest.json").write_text("{not json")
        expected = ["manifest.json", "malformed JSON", "line 1"]
    elif name == "corrupt state":
        data = json.loads((snap / "github.json").read_text())
        data["issues"][0]["state"] = "reopened"
        (snap / "github.json").write_text(dump_json(data))
        rehash(snap)
        expected = ["github.json", "issues[0].state"]
    else:
        snap = tmp_path / "absent"
        expected = ["absent", "not a snapshot directory"]
    before = sorted(p.name for p in tmp_path.rglob("*"))
    result = run_cli(capsys, "snapshot", "inspect", str(snap))
    assert_one_line_error(result, *expected)
    assert sorted(p.name for p in tmp_path.rglob("*")) == before


def test_audit_finds_a_planted_leak(capsys, tiny_snapshot_dir: Path, tmp_path: Path) -> None:
    snap = copy(tiny_snapshot_dir, tmp_path)
    data = json.loads((snap / "github.json").read_text())
    data["issues"][0]["comments"][0]["created_at"] = "2026-03-13T00:00:00Z"
    (snap / "github.json").write_text(dump_json(data))
    rehash(snap)
    result = run_cli(capsys, "snapshot", "audit", str(snap))
    assert result.code == 1
    assert "github.json.issues[0].comments[0].created_at" in result.out


def test_audit_finds_a_later_commit_in_the_bundle(tiny_sources: Path, tmp_path: Path) -> None:
    out = tmp_path / "snap"
    build_snapshot(tiny_sources, out)
    manifest = json.loads((out / "manifest.json").read_text())
    # Swap in a bundle that goes one commit further: the fix, dated after T.
    full = tmp_path / "full"
    gitrepo.init(full)
    gitrepo.run(
        full,
        "am",
        "-q",
        "--committer-date-is-author-date",
        *sorted(str(p) for p in (tiny_sources / "history").glob("*.patch")),
    )
    tip = gitrepo.run(full, "rev-parse", "HEAD")
    gitrepo.bundle_create(full, out / manifest["repositories"][0]["bundle"], tip, "main")
    manifest["repositories"][0]["base_commit"] = tip
    (out / "manifest.json").write_text(dump_json(manifest))
    rehash(out)
    findings = dated_after(load_snapshot(out))
    assert any("is after T" in f and "bundle" in f for f in findings), findings


def test_failed_build_leaves_existing_snapshot(tiny_sources: Path, tmp_path: Path) -> None:
    out = tmp_path / "snap"
    build_snapshot(tiny_sources, out)
    before = (out / "manifest.json").read_bytes()
    broken = tmp_path / "broken"
    shutil.copytree(tiny_sources, broken)
    text = (broken / "world.yaml").read_text().replace("viewer: agent", "viewer: nobody")
    (broken / "world.yaml").write_text(text)
    with pytest.raises(SourcesError, match="viewer 'nobody' is not among users"):
        build_snapshot(broken, out)
    assert (out / "manifest.json").read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["broken", "snap"]


def test_unknown_commit_subject_is_reported(tiny_sources: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken"
    shutil.copytree(tiny_sources, broken)
    text = (broken / "world.yaml").read_text().replace("@commit:Add tests", "@commit:No such")
    (broken / "world.yaml").write_text(text)
    with pytest.raises(SourcesError, match="no commit with subject 'No such'"):
        build_snapshot(broken, tmp_path / "out")


def test_malformed_timeline_is_a_sources_error(tiny_sources: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken"
    shutil.copytree(tiny_sources, broken)
    text = (broken / "world.yaml").read_text().replace("2026-03-11T00:00:00Z", "yesterday", 1)
    (broken / "world.yaml").write_text(text)
    with pytest.raises(SourcesError, match="cannot cut the timeline at T"):
        build_snapshot(broken, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_relative_paths(tiny_sources: Path, tmp_path: Path, monkeypatch) -> None:
    import os

    monkeypatch.chdir(tmp_path)
    manifest = build_snapshot(Path(os.path.relpath(tiny_sources, tmp_path)), Path("rel"))
    assert load_snapshot(tmp_path / "rel").manifest == manifest


def test_registry_and_docs_indexes_are_cut_at_t(tiny_sources: Path, tmp_path: Path) -> None:
    src = tmp_path / "src"
    shutil.copytree(tiny_sources, src)
    (src / "registry").mkdir()

    def wheel(version: str, when: str) -> dict[str, object]:
        return {
            "project": "demo",
            "version": version,
            "filename": f"demo-{version}-py3-none-any.whl",
            "sha256": "a" * 64,
            "size": 1,
            "upload_time": when,
        }

    index = {
        "schema": 1,
        "python": [wheel("1.0", "2026-01-01T00:00:00Z"), wheel("2.0", "2026-03-20T00:00:00Z")],
    }
    (src / "registry" / "index.json").write_text(json.dumps(index))
    (src / "docs").mkdir()
    page = {
        "url": "https://docs.example.test/",
        "status": 200,
        "content_type": "text/html",
        "sha256": "b" * 64,
    }
    docs = {
        "schema": 1,
        "pages": [
            {**page, "fetched_at": "2026-03-01T00:00:00Z"},
            {**page, "url": "https://docs.example.test/new", "fetched_at": "2026-04-01T00:00:00Z"},
        ],
    }
    (src / "docs" / "index.json").write_text(json.dumps(docs))
    build_snapshot(src, tmp_path / "out")
    snap = load_snapshot(tmp_path / "out")
    assert [f.version for f in snap.registry.python] == ["1.0"]
    assert [p.url for p in snap.docs.pages] == ["https://docs.example.test/"]
