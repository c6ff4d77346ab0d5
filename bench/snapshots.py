"""Snapshot loading and restores: hashes and validation against reading bytes; restores from
the shared git store against restores from a snapshot's own bundle."""

from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path

from bench.common import ROOT_DIR, Pair, at_most, suite


@suite
def snapshot() -> list[Pair]:
    from replay.base import gitrepo
    from replay.base.sharedgit import prune_bundles
    from replay.base.snapshot import list_files
    from replay.snapshot import build_snapshot, load_snapshot

    snap = ROOT_DIR / "snapshots" / "demo"
    files = [snap / name for name in list_files(snap)]
    work = Path(tempfile.mkdtemp(prefix="replay-bench-snap-"))
    atexit.register(shutil.rmtree, work, True)
    blobs = work / "blobs"
    shared = work / "shared"
    build_snapshot(
        ROOT_DIR / "snapshots" / "sources" / "demo", shared, shared_git=True, blobs=blobs
    )
    own = load_snapshot(snap)
    (repo,) = own.manifest.repositories

    def restore(path: Path, store: Path | None) -> None:
        loaded = load_snapshot(path, store)
        dest = work / "restore"
        shutil.rmtree(dest, ignore_errors=True)
        gitrepo.checkout_from_bundle(
            loaded.bundle(repo.name), repo.base_commit, dest, repo.default_branch
        )

    def cold(path: Path, store: Path) -> None:
        prune_bundles(store, older_than=0)  # the bundle is cut again from the store
        restore(path, store)

    return [
        Pair(
            "load_snapshot vs reading the same files",
            lambda: load_snapshot(snap),
            lambda: [f.read_bytes() for f in files],
            goal=at_most(3),
        ),
        Pair(
            "restore: shared store, bundle cached vs own bundle",
            lambda: restore(shared, blobs),
            lambda: restore(snap, None),
            rounds=5,
        ),
        Pair(
            "restore: shared store, bundle cut anew vs own bundle",
            lambda: cold(shared, blobs),
            lambda: restore(snap, None),
            rounds=5,
        ),
    ]
