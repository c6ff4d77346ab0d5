"""Shared git storage: snapshots of one repository cut at different T share one store, which
holds each object once, while every restore (and the audit, which checks what restores see)
gets exactly its base commit's history and never a later commit the store also holds."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import sys
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

import pytest
import yaml

from replay.base import gitrepo
from replay.base.blobs import ENV
from replay.base.case import load_case
from replay.base.errors import SnapshotError
from replay.base.formats import dump_json
from replay.base.sharedgit import bundle_path, prune_bundles
from replay.base.snapshot import sha256_file
from replay.snapshot import build_snapshot, load_snapshot
from replay.snapshot.audit import audit, audit_cached, dated_after
from replay.snapshot.inspect import summarize
from tests import worlds
from tests.cli_helpers import assert_one_line_error, run_cli
from tests.fakes.github.conftest import REPO, clone, git, serve

STORE = "git/acme/tiny.git"
WORK = 6
"""Commits of ordinary work, each adding a file of its own, before the fix."""
TEST_LIB = "from lib import add\n\n\ndef test_two():\n    assert add(1, 1) == 2\n"
"""The fix's test: ``test_two`` is the hidden test's new name (tests/worlds.py HIDDEN)."""


def _random_text(seed: int) -> str:
    rng = random.Random(seed)
    return "\n".join(rng.randbytes(32).hex() for _ in range(600)) + "\n"


def _history(repo: Path) -> list[tuple[str, datetime]]:
    """Work commits on 1..6 March, then the fix (with the hidden test's name) on 13 March."""
    gitrepo.init(repo)
    commits = []
    steps: list[tuple[str, str, dict[str, str]]] = [
        (
            f"2026-03-0{i + 1}T10:00:00Z",
            # The tiny world's pull request names "Add tests" as its base.
            ["Initial commit", "Add tests"][i] if i < 2 else f"Work {i}",
            {f"data/part{i}.txt": _random_text(i), "lib.py": "def add(a, b):\n    return a - b\n"},
        )
        for i in range(WORK)
    ]
    steps.append(
        (
            "2026-03-13T10:00:00Z",
            "Fix add (#3)",
            {
                "lib.py": "def add(a, b):\n    return a + b\n",
                "test_lib.py": TEST_LIB,
            },
        )
    )
    for when, subject, files in steps:
        for name, text in files.items():
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            (repo / name).write_text(text)
        gitrepo.run(repo, "add", "-A")
        dated = {"GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}
        gitrepo.run(repo, "commit", "-q", "-m", subject, env=dated)
        commits.append((gitrepo.run(repo, "rev-parse", "HEAD"), datetime.fromisoformat(when)))
    return commits


@dataclass(frozen=True)
class Lineage:
    repo: Path
    """The full history, fix included."""
    commits: list[tuple[str, datetime]]
    sources: Path
    root: Path
    """The blob store root every snapshot's history went into."""
    snapshots: list[Path]
    """One per commit, cut an hour after it: the last one holds the fix."""


@pytest.fixture(scope="module")
def lineage(tmp_path_factory: pytest.TempPathFactory) -> Lineage:
    top = tmp_path_factory.mktemp("lineage")
    repo = top / "repo"
    commits = _history(repo)
    src = top / "sources"
    src.mkdir()
    gitrepo.bundle_create(repo, src / "repo.bundle", commits[-1][0], "main")
    world = worlds.world()
    world["repository"] = {"name": REPO, "default_branch": "main", "bundle": "repo.bundle"}
    (src / "world.yaml").write_text(yaml.safe_dump(world, sort_keys=False))
    root = top / "blobs"
    snapshots = []
    for i, (sha, when) in enumerate(commits):
        out = top / f"snap-{i}"
        at = when + timedelta(hours=1)
        manifest = build_snapshot(src, out, at, shared_git=True, blobs=root)
        assert manifest.repositories[0].base_commit == sha
        snapshots.append(out)
    return Lineage(repo, commits, src, root, snapshots)


def _objects(repo: Path) -> set[str]:
    out = gitrepo.run(repo, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)")
    return set(out.split())


def _history_of(repo: Path, commit: str) -> set[str]:
    """Every object reachable from ``commit``."""
    out = gitrepo.run(repo, "rev-list", "--objects", commit)
    return {line.split(" ", 1)[0] for line in out.splitlines()}


def _count_objects(repo: Path) -> dict[str, int]:
    out = gitrepo.run(repo, "count-objects", "-v")
    return {k: int(v) for k, v in (line.split(": ") for line in out.splitlines())}


def _case(lineage: Lineage, tmp: Path, snap: Path) -> Path:
    base = json.loads((snap / "manifest.json").read_text())["repositories"][0]["base_commit"]
    return worlds.write_case(tmp / "case", snap, base)


def _rehash(snap: Path) -> None:
    manifest = json.loads((snap / "manifest.json").read_text())
    manifest["parts"] = {name: sha256_file(snap / name) for name in manifest["parts"]}
    (snap / "manifest.json").write_text(dump_json(manifest))


# ----------------------------------------------------------------------------- storage


def test_the_store_holds_each_object_once(lineage: Lineage) -> None:
    store = lineage.root / STORE
    newest = lineage.commits[-1][0]
    history = _history_of(lineage.repo, newest)
    # Exactly the distinct objects of the newest history, each once, in a single pack.
    assert _objects(store) == history
    counts = _count_objects(store)
    assert (counts["count"], counts["in-pack"], counts["packs"]) == (0, len(history), 1)
    # One ref per stored commit and nothing else: no branch, no tag, no reflog.
    refs = gitrepo.run(store, "for-each-ref", "--format=%(refname)").split()
    assert sorted(refs) == sorted(f"refs/replay/{sha}" for sha, _ in lineage.commits)
    for snap in lineage.snapshots:
        manifest = json.loads((snap / "manifest.json").read_text())
        (repo,) = manifest["repositories"]
        assert repo["objects"] == STORE and "bundle" not in repo
        assert not list(snap.rglob("*.bundle"))
        assert not [p for p in manifest["parts"] if p.startswith("repos/")]
    # What N self-contained snapshots would carry: a bundle of each base's history.
    bundles = sum(
        load_snapshot(s, lineage.root).bundle(REPO).stat().st_size for s in lineage.snapshots
    )
    stored = sum(p.stat().st_size for p in (store / "objects" / "pack").glob("*.pack"))
    print(
        f"\n{len(lineage.snapshots)} snapshots: shared store {stored} bytes, "
        f"{len(lineage.snapshots)} bundles {bundles} bytes ({bundles / stored:.1f}x)"
    )
    assert stored * 2 < bundles


def test_adding_again_changes_nothing(lineage: Lineage) -> None:
    store = lineage.root / STORE
    before = sorted(p.name for p in (store / "objects" / "pack").iterdir())
    sha, _ = lineage.commits[2]
    assert gitrepo.store_add(store, lineage.repo, sha) == sha
    assert sorted(p.name for p in (store / "objects" / "pack").iterdir()) == before


def test_two_processes_adding_at_once(lineage: Lineage, tmp_path: Path) -> None:
    store = tmp_path / "git" / "acme" / "tiny.git"
    script = "import sys; from pathlib import Path; from replay.base import gitrepo; " + (
        "gitrepo.store_add(Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3])"
    )
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", script, str(store), str(lineage.repo), sha],
            stderr=subprocess.PIPE,
        )
        for sha, _ in lineage.commits
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err.decode()
    gitrepo.run(store, "fsck", "--no-progress", "--strict")
    refs = gitrepo.run(store, "for-each-ref", "--format=%(refname) %(objectname)").splitlines()
    assert sorted(refs) == sorted(f"refs/replay/{sha} {sha}" for sha, _ in lineage.commits)
    assert _objects(store) == _objects(lineage.root / STORE)
    assert _count_objects(store)["packs"] == 1


# ----------------------------------------------------------------------------- restores


def test_an_earlier_restore_holds_none_of_the_later_commits(
    lineage: Lineage, tmp_path: Path
) -> None:
    first, _ = lineage.commits[0]
    snap = load_snapshot(lineage.snapshots[0], lineage.root)
    bundle = snap.bundle(REPO)
    assert bundle == bundle_path(lineage.root, snap.manifest.repositories[0])
    assert gitrepo.bundle_heads(bundle) == {"refs/heads/main": first}
    work = gitrepo.checkout_from_bundle(bundle, first, tmp_path / "w", "main")
    assert gitrepo.run(work, "rev-list", "--all", "--reflog").split() == [first]
    for later, _ in lineage.commits[1:]:
        with pytest.raises(gitrepo.ToolError):
            gitrepo.run(work, "cat-file", "-e", later)
    # The later files' blobs are nowhere in the restore's object store either.
    assert len(_objects(work)) == 5  # commit, two trees (root, data/), two blobs
    # Byte for byte what a self-contained snapshot of the same cut carries.
    own = build_snapshot(lineage.sources, tmp_path / "own", snap.at)
    assert own.repositories[0].bundle is not None
    assert bundle.read_bytes() == (tmp_path / "own" / own.repositories[0].bundle).read_bytes()


def test_the_store_holding_the_answer_never_fails_an_earlier_audit(
    lineage: Lineage, tmp_path: Path
) -> None:
    # The newest snapshot's history (in the same store) holds the fix and the hidden test.
    assert "test_two" in gitrepo.run(
        lineage.root / STORE, "show", f"{lineage.commits[-1][0]}:test_lib.py"
    )
    snap = load_snapshot(lineage.snapshots[0], lineage.root)
    case = _case(lineage, tmp_path, lineage.snapshots[0])
    assert dated_after(snap) == []
    assert audit(snap) == []
    assert audit(snap, load_case(case)) == []
    summary = summarize(snap)
    assert [(r.commits, r.base_commit) for r in summary.repositories] == [
        (1, lineage.commits[0][0])
    ]


def test_a_leak_planted_in_the_earlier_state_is_still_found(
    lineage: Lineage, tmp_path: Path
) -> None:
    snap_dir = tmp_path / "snap"
    shutil.copytree(lineage.snapshots[0], snap_dir)
    state = json.loads((snap_dir / "github.json").read_text())
    state["repos"][0]["description"] = "next: make test_two pass"
    state["repos"][0]["pushed_at"] = "2026-03-13T10:00:00Z"
    (snap_dir / "github.json").write_text(dump_json(state))
    _rehash(snap_dir)
    case = _case(lineage, tmp_path, snap_dir)
    found = audit(load_snapshot(snap_dir, lineage.root), load_case(case))
    problems = {(f.location, f.problem) for f in found}
    assert ("github.json.repos[0].description", "quotes the answer: 'test_two'") in problems
    assert any(
        "github.json.repos[0].pushed_at" in f.problem and "after T" in f.problem for f in found
    ), found


def test_the_audit_checks_the_bundle_restores_are_made_from(
    lineage: Lineage, tmp_path: Path
) -> None:
    """A cached bundle that carried a later commit would be what restores get: it is found."""
    root = tmp_path / "blobs"
    shutil.copytree(lineage.root / "git", root / "git")
    snap = load_snapshot(lineage.snapshots[0], root)
    first, fix = lineage.commits[0][0], lineage.commits[-1][0]
    cached = snap.bundle(REPO)
    names = gitrepo.run(lineage.repo, "rev-list", "--objects", first, fix)
    pack = subprocess.run(
        ["git", "pack-objects", "--stdout"],
        cwd=lineage.repo,
        input="".join(line.split(" ")[0] + "\n" for line in names.splitlines()).encode(),
        capture_output=True,
        check=True,
        env=gitrepo.clean_env(),
    ).stdout
    cached.write_bytes(f"# v2 git bundle\n{first} refs/heads/main\n\n".encode() + pack)
    found = audit(snap)
    where = f"{STORE}@{first}"
    assert any(
        f.location == where and fix[:12] in f.problem and "after T" in f.problem for f in found
    ), found
    # A cached bundle with the wrong refs is not used: it is cut again from the store.
    cached.write_bytes(b"not a bundle")
    assert gitrepo.bundle_heads(snap.bundle(REPO)) == {"refs/heads/main": first}
    assert audit(snap) == []


# ----------------------------------------------------------------------------- serving


def test_the_fakes_serve_git_from_a_shared_snapshot(
    lineage: Lineage, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV, str(lineage.root))
    second, _ = lineage.commits[1]
    with serve(lineage.snapshots[1]) as served:
        work = clone(served, tmp_path)
        log = git(served, work, "log", "--all", "--format=%s").stdout.splitlines()
        assert log == ["Add tests", "Initial commit"]
        assert git(served, work, "rev-parse", "HEAD").stdout.strip() == second
        for later, _ in lineage.commits[2:]:
            assert git(served, work, "cat-file", "-e", later, check=False).returncode != 0
        # The fake's repository is a fresh one made from the cut, never the shared store.
        served_repo = served.backend.git.path(REPO)
        assert lineage.root not in served_repo.resolve().parents
        assert _objects(served_repo) == _history_of(lineage.repo, second)
        for later, _ in lineage.commits[2:]:
            with pytest.raises(gitrepo.ToolError):
                gitrepo.run(served_repo, "cat-file", "-e", later)


# ----------------------------------------------------------------------------- the CLI


def test_cli_builds_into_the_shared_store(
    lineage: Lineage, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch
) -> None:
    monkeypatch.setenv("REPLAY_AUDIT_CACHE", str(tmp_path / "audits"))
    root = tmp_path / "blobs"
    out = tmp_path / "snap"
    at = "2026-03-03T11:00:00Z"
    result = run_cli(
        capsys, "snapshot", "build", str(lineage.sources), str(out), "--at", at,
        "--shared-git", "--blobs", str(root),
    )  # fmt: skip
    assert result.code == 0, result.err
    third = lineage.commits[2][0]
    assert f"{REPO} @ {third} in the shared store {STORE}" in result.out
    assert gitrepo.resolve(root / STORE, f"refs/replay/{third}") == third
    monkeypatch.setenv(ENV, str(root))
    inspected = run_cli(capsys, "snapshot", "inspect", str(out))
    assert inspected.code == 0, inspected.err
    assert f"repo      {REPO} @ {third} (main): 3 commits" in inspected.out
    assert audit_cached(out) == []
    audited = run_cli(capsys, "snapshot", "audit", str(out), "--fresh")
    assert audited.code == 0 and "clean" in audited.out, audited.out


def test_a_missing_store_is_one_line(
    lineage: Lineage, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch
) -> None:
    snap = lineage.snapshots[3]
    base = lineage.commits[3][0]
    monkeypatch.setenv(ENV, str(tmp_path / "empty"))
    result = run_cli(capsys, "snapshot", "inspect", str(snap))
    line = assert_one_line_error(
        result, str(snap / "manifest.json"), "no shared git store", STORE, base,
        "the blob store (--blobs, $REPLAY_BLOBS) must travel with the snapshot",
    )  # fmt: skip
    assert str(tmp_path / "empty") in line
    # A store that exists but was filled by an earlier cut only.
    early = tmp_path / "early"
    gitrepo.store_add(early / STORE, lineage.repo, lineage.commits[1][0])
    monkeypatch.setenv(ENV, str(early))
    result = run_cli(capsys, "snapshot", "inspect", str(snap))
    assert_one_line_error(
        result, "does not hold base commit", base, "must travel with the snapshot"
    )
    with pytest.raises(SnapshotError, match="must travel with the snapshot"):
        load_snapshot(snap, early)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda r: r.update(bundle="repos/acme/tiny.bundle"), "give exactly one of bundle"),
        (lambda r: r.pop("objects"), "give exactly one of bundle"),
        (lambda r: r.update(objects="git/../tiny.git"), "must stay inside the blob store"),
    ],
)
def test_a_repository_needs_exactly_one_history(
    lineage: Lineage, tmp_path: Path, capsys: pytest.CaptureFixture[str], change, message: str
) -> None:
    snap = tmp_path / "snap"
    shutil.copytree(lineage.snapshots[0], snap)
    manifest = json.loads((snap / "manifest.json").read_text())
    change(manifest["repositories"][0])
    (snap / "manifest.json").write_text(dump_json(manifest))
    result = run_cli(capsys, "snapshot", "inspect", str(snap))
    assert_one_line_error(result, "manifest.json", "repositories", message)


def test_sources_may_name_the_store(lineage: Lineage, tmp_path: Path) -> None:
    """``objects`` in world.yaml: the history comes from the shared store, like case create's."""
    src = tmp_path / "sources"
    shutil.copytree(lineage.sources, src)
    (src / "repo.bundle").unlink()
    world = yaml.safe_load((src / "world.yaml").read_text())
    fourth = lineage.commits[3][0]
    world["repository"] = {"name": REPO, "objects": STORE, "base": fourth}
    # The store holds the base's history only (for these sources): nothing later to name.
    world["github"]["pulls"] = []
    (src / "world.yaml").write_text(yaml.safe_dump(world, sort_keys=False))
    at = datetime.fromisoformat("2026-03-12T09:00:00Z")
    shared = build_snapshot(src, tmp_path / "shared", at, shared_git=True, blobs=lineage.root)
    assert (shared.repositories[0].objects, shared.repositories[0].base_commit) == (STORE, fourth)
    own = build_snapshot(src, tmp_path / "own", at, blobs=lineage.root)
    snap = load_snapshot(tmp_path / "own", tmp_path / "nowhere")  # self-contained
    work = gitrepo.checkout_from_bundle(snap.bundle(REPO), fourth, tmp_path / "w", "main")
    assert gitrepo.commit_count(work) == 4 and own.repositories[0].bundle is not None
    from replay.base.errors import SourcesError

    with pytest.raises(SourcesError, match="does not hold"):
        build_snapshot(src, tmp_path / "x", at, blobs=tmp_path / "nowhere")
    world["repository"].pop("base")
    (src / "world.yaml").write_text(yaml.safe_dump(world, sort_keys=False))
    with pytest.raises(SourcesError, match="objects needs base"):
        build_snapshot(src, tmp_path / "x", at, blobs=lineage.root)


def test_cached_bundles_can_be_pruned_and_are_made_again(
    lineage: Lineage, capsys: pytest.CaptureFixture[str]
) -> None:
    snap = load_snapshot(lineage.snapshots[0], lineage.root)
    bundle = snap.bundle(REPO)
    first = bundle.read_bytes()
    # Written just now: an age limit spares it (a run starting now may be about to read it).
    assert prune_bundles(lineage.root, older_than=3600) == []
    assert bundle.is_file()
    result = run_cli(
        capsys, "snapshot", "prune-cache", "--blobs", str(lineage.root), "--older-than", "0"
    )
    assert result.code == 0, result.err
    assert "removed" in result.out and not bundle.exists()
    assert not (lineage.root / "git-bundles").exists() or not any(
        (lineage.root / "git-bundles").rglob("*.bundle")
    )
    # The next use cuts the same bundle again from the store.
    again = load_snapshot(lineage.snapshots[0], lineage.root).bundle(REPO)
    assert again.read_bytes() == first


def test_a_world_cuts_its_bundles_before_its_bounded_start(
    lineage: Lineage, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Found by the sixth held-out corpus (cmd2 2026): the world's process cut the base
    history from the shared store while it started, and a long history's first cut took
    more than the start's whole timeout on a busy machine ("the gateway did not start"). The
    bundle is cut before the world's process starts, so its start only reads it: here a
    gateway that only starts if the bundle is already there, given one second."""
    from replay.world import World

    monkeypatch.setenv(ENV, str(lineage.root))
    snap = lineage.snapshots[2]
    part = load_snapshot(snap).manifest.repositories[0]
    bundle = bundle_path(lineage.root, part)
    bundle.unlink(missing_ok=True)
    gateway = tmp_path / "python"
    # As `replay world up` writes its state once it listens: the state file's path follows
    # --state among its arguments.
    gateway.write_text(
        "#!/bin/sh\n"
        f'[ -f "{bundle}" ] || exec sleep 30\n'
        'while [ "$1" != --state ]; do shift; done\n'
        'echo \'{"pid": 0}\' > "$2"\n'
        "exec sleep 30\n"
    )
    gateway.chmod(0o755)
    monkeypatch.setenv("REPLAY_GATEWAY_PYTHON", str(gateway))
    world = World(snap, tmp_path / "work", timeout=1)
    (tmp_path / "work").mkdir()
    try:
        assert world.start() == {"pid": 0}
        assert bundle.is_file()
    finally:
        world.stop()
