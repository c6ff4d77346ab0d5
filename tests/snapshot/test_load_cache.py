"""load_snapshot parses a snapshot once per manifest and hashes each content once, yet every
load still checks every part: an edited, corrupted, missing or extra file is reported exactly
as without the caches."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections import OrderedDict
from pathlib import Path

import pytest

from replay.base import snapshot as loader
from replay.base.errors import SnapshotError
from replay.base.formats import dump_json
from replay.base.snapshot import list_files, load_snapshot, sha256_file

PARTS = [
    "github.json",
    "linear.json",
    "slack.json",
    "registry/index.json",
    "docs/index.json",
    "repos/acme/semverkit.bundle",
]


@pytest.fixture()
def snap(tmp_path: Path) -> Path:
    dest = tmp_path / "snap"
    shutil.copytree(Path(__file__).resolve().parents[2] / "snapshots" / "demo", dest)
    manifest = json.loads((dest / "manifest.json").read_text())
    assert sorted(manifest["parts"]) == sorted(PARTS)
    return dest


@pytest.fixture()
def counted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every file the loader hashes from its bytes, in order."""
    hashed: list[str] = []
    real = loader._hash

    def counting(path: str, keep: bool) -> tuple[bytes | None, str]:
        hashed.append(path)
        return real(path, keep)

    monkeypatch.setattr(loader, "_hash", counting)
    return hashed


def uncached_error(monkeypatch: pytest.MonkeyPatch, path: Path) -> str:
    """What a load with empty caches (the loader as it was before them) reports."""
    monkeypatch.setattr(loader, "_loaded", OrderedDict())
    monkeypatch.setattr(loader, "_hashed", {})
    with pytest.raises(SnapshotError) as err:
        load_snapshot(path)
    return str(err.value)


def flip_in_place(path: Path) -> tuple[str, str]:
    """Flip one byte in the middle of ``path``, same size, its mtime put back; the sha256
    before and after."""
    st = path.stat()
    data = bytearray(path.read_bytes())
    before = hashlib.sha256(data).hexdigest()
    data[len(data) // 2] ^= 0x01
    with path.open("r+b") as fh:
        fh.write(data)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert path.stat().st_size == st.st_size and path.stat().st_mtime_ns == st.st_mtime_ns
    return before, hashlib.sha256(data).hexdigest()


def mismatch(path: Path, manifest_says: str, file_has: str) -> str:
    return (
        f"{path}: hash mismatch: manifest says sha256 {manifest_says[:12]}..., "
        f"file has {file_has[:12]}..."
    )


@pytest.mark.parametrize("part", PARTS)
def test_a_byte_flipped_after_a_cached_load_is_reported_as_before(
    part: str, snap: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = load_snapshot(snap)
    assert load_snapshot(snap) is first, "the second load is served from the cache"
    before, after = flip_in_place(snap / part)
    with pytest.raises(SnapshotError) as err:
        load_snapshot(snap)
    assert str(err.value) == mismatch(snap / part, before, after)
    assert str(err.value) == uncached_error(monkeypatch, snap)


def test_a_hash_is_taken_once_per_content(
    snap: Path, counted: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Files as old as a checkout's: their timestamps would show any later change.
    monkeypatch.setattr(loader, "RACY_NS", -(10**18))
    first = load_snapshot(snap)
    assert len(counted) == len(PARTS)
    assert load_snapshot(snap) is first
    assert len(counted) == len(PARTS), "no part was hashed again"
    assert load_snapshot(snap.parent / "." / snap.name) is first


def test_a_fresh_file_is_hashed_on_every_load(snap: Path, counted: list[str]) -> None:
    # The copy is younger than RACY_NS: a change within the timestamps' granularity could hide
    # behind identical stat results, so nothing about it is taken on trust.
    first = load_snapshot(snap)
    assert load_snapshot(snap) is first
    assert len(counted) == 2 * len(PARTS)


@pytest.mark.parametrize("how", ["replaced", "mtime", "size"])
def test_a_trusted_hash_is_dropped_when_the_file_changes(
    how: str, snap: Path, counted: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(loader, "RACY_NS", -(10**18))
    load_snapshot(snap)
    target = snap / "slack.json"
    original = target.read_bytes()
    st = target.stat()
    if how == "replaced":  # same size and mtime, another inode
        changed = original.replace(b"U0", b"U1", 1)
        (snap / "tmp").write_bytes(changed)
        os.utime(snap / "tmp", ns=(st.st_atime_ns, st.st_mtime_ns))
        os.replace(snap / "tmp", target)
    elif how == "mtime":  # same inode and size, mtime moved
        changed = original.replace(b"U0", b"U1", 1)
        with target.open("r+b") as fh:
            fh.write(changed)
        os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    else:
        changed = original + b"\n"
        target.write_bytes(changed)
    assert changed != original
    with pytest.raises(SnapshotError) as err:
        load_snapshot(snap)
    digest = json.loads((snap / "manifest.json").read_text())["parts"]["slack.json"]
    assert str(err.value) == mismatch(target, digest, hashlib.sha256(changed).hexdigest())
    target.write_bytes(original)
    assert load_snapshot(snap).slack.channels, "the original bytes load again"


def test_an_extra_or_missing_file_after_a_cached_load(
    snap: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(loader, "RACY_NS", -(10**18))
    load_snapshot(snap)
    (snap / "docs" / ".notes").write_text("hi")
    with pytest.raises(SnapshotError, match=r"docs/\.notes: not listed in the manifest's parts"):
        load_snapshot(snap)
    (snap / "docs" / ".notes").unlink()
    load_snapshot(snap)
    (snap / "linear.json").unlink()
    with pytest.raises(SnapshotError, match=r"linear\.json: missing: listed in the manifest"):
        load_snapshot(snap)


def test_a_new_manifest_is_parsed_anew(snap: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(loader, "RACY_NS", -(10**18))
    first = load_snapshot(snap)
    data = json.loads((snap / "slack.json").read_text())
    data["channels"][0]["name"] = "renamed"
    (snap / "slack.json").write_text(dump_json(data))
    manifest = json.loads((snap / "manifest.json").read_text())
    manifest["parts"]["slack.json"] = sha256_file(snap / "slack.json")
    (snap / "manifest.json").write_text(dump_json(manifest))
    second = load_snapshot(snap)
    assert second is not first
    assert second.slack.channels[0].name == "renamed"
    assert first.slack.channels[0].name != "renamed"


def test_a_cached_load_equals_an_uncached_one(snap: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cached = load_snapshot(snap)
    monkeypatch.setattr(loader, "_loaded", OrderedDict())
    monkeypatch.setattr(loader, "_hashed", {})
    assert load_snapshot(snap) == cached


def test_list_files_is_what_rglob_lists(tmp_path: Path) -> None:
    root = tmp_path / "tree"
    (root / "a" / "b").mkdir(parents=True)
    (root / ".hidden").mkdir()
    (root / "outside").mkdir()
    for name in ["x.json", "a/y", "a/b/z", ".hidden/.dot", "manifest.json", "a/manifest.json"]:
        (root / name).write_text(name)
    (root / "outside" / "w").write_text("w")
    (root / "link-to-file").symlink_to(root / "x.json")
    (root / "link-to-dir").symlink_to(root / "outside")
    (root / "dangling").symlink_to(root / "nowhere")
    expected = sorted(
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if p.is_file() and p.relative_to(root).as_posix() != "manifest.json"
    )
    assert list_files(root) == expected
    assert "link-to-file" in expected and "a/manifest.json" in expected


def test_the_parsed_cache_is_bounded(snap: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(loader, "_loaded", OrderedDict())
    monkeypatch.setattr(loader, "_LOADED_BYTES", 1000)  # smaller than the demo's JSON
    first = load_snapshot(snap)
    second = load_snapshot(snap)
    assert second is not first and second == first, "too big to keep: parsed again"
    assert not loader._loaded
    monkeypatch.setattr(loader, "_LOADED_BYTES", 64 << 20)
    monkeypatch.setattr(loader, "_LOADED_MAX", 2)
    copies = []
    for i in range(3):
        copies.append(tmp_path / f"copy{i}")
        shutil.copytree(snap, copies[-1])
        load_snapshot(copies[-1])
    assert [Path(k[0]).name for k in loader._loaded] == ["copy1", "copy2"]
