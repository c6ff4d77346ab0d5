"""Snapshot format: building cuts the timeline at T; loading checks every hash."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from replay.base import gitrepo
from replay.base.errors import SourcesError
from replay.base.formats import dump_json
from replay.base.snapshot import sha256_file
from replay.snapshot import build_snapshot, load_snapshot
from replay.snapshot.audit import dated_after
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


def test_history_becomes_issue_events_and_linear_history(
    tiny_sources: Path, tmp_path: Path
) -> None:
    """The cut keeps, as the services' own history, exactly the changes made at or before T."""
    from datetime import UTC, datetime

    build_snapshot(tiny_sources, tmp_path / "t")
    at_t = load_snapshot(tmp_path / "t")
    assert at_t.github.issues[0].events == [] and at_t.linear.issues[0].history == []
    build_snapshot(tiny_sources, tmp_path / "late", datetime(2026, 3, 20, tzinfo=UTC))
    late = load_snapshot(tmp_path / "late")
    (closed,) = late.github.issues[0].events
    assert (closed.event, closed.actor, closed.state_reason) == ("closed", "alice", "completed")
    assert closed.created_at == late.github.issues[0].closed_at
    (moved,) = late.linear.issues[0].history
    assert (moved.from_state, moved.to_state) == ("s-todo", "s-done")
    assert dated_after(late) == []


def _bundle_sources(tiny_sources: Path, tmp_path: Path) -> tuple[Path, str, str]:
    """The tiny world with its repository given as a bundle holding a merge commit."""
    from tests.casebuild.repos import commit, merge

    repo = gitrepo.init(tmp_path / "repo")
    commit(repo, "2026-03-01T10:00:00Z", "Initial commit", {"lib.py": "def add(a, b):\n"})
    gitrepo.run(repo, "checkout", "-q", "-b", "side")
    commit(repo, "2026-03-02T10:00:00Z", "Side work", {"side.py": "x = 1\n"})
    gitrepo.run(repo, "checkout", "-q", "main")
    commit(repo, "2026-03-03T10:00:00Z", "Add tests", {"test_lib.py": "y = 2\n"})
    base = merge(repo, "2026-03-04T10:00:00Z", "side", "Merge side")
    later = commit(repo, "2026-03-13T10:00:00Z", "Fix add (#3)", {"lib.py": "fixed\n"})
    src = tmp_path / "sources"
    shutil.copytree(tiny_sources, src)
    shutil.rmtree(src / "history")
    gitrepo.bundle_create(repo, src / "repo.bundle", later, "main")
    world = (src / "world.yaml").read_text()
    (src / "world.yaml").write_text(
        world.replace("history: history", f"bundle: repo.bundle\n  base: {base}")
    )
    return src, base, later


def test_bundle_sources_keep_shas_and_merges(tiny_sources: Path, tmp_path: Path) -> None:
    src, base, later = _bundle_sources(tiny_sources, tmp_path)
    manifest = build_snapshot(src, tmp_path / "snap")
    (repo,) = manifest.repositories
    assert repo.base_commit == base
    snap = load_snapshot(tmp_path / "snap")
    work = gitrepo.checkout_from_bundle(snap.part(repo.bundle), base, tmp_path / "w", "main")
    assert gitrepo.run(work, "log", "--merges", "--format=%s") == "Merge side"
    assert later not in gitrepo.run(work, "rev-list", "--all", "--reflog")
    assert dated_after(snap) == []


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda w, base: w.replace(base, "a" * 40), "is not on main"),
        (lambda w, base: w.replace("bundle: repo.bundle", "bundle: nope.bundle"), "no such bundle"),
        (lambda w, base: re.sub(r"(?m)^at: .*$", "at: '2026-03-03T09:00:00Z'", w), "after T"),
    ],
)
def test_bad_bundle_sources_are_sources_errors(
    tiny_sources: Path, tmp_path: Path, edit, message: str
) -> None:
    src, base, _ = _bundle_sources(tiny_sources, tmp_path)
    world = src / "world.yaml"
    world.write_text(edit(world.read_text(), base))
    with pytest.raises(SourcesError, match=message):
        build_snapshot(src, tmp_path / "snap")
    assert not (tmp_path / "snap").exists()
