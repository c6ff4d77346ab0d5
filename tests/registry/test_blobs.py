from __future__ import annotations

import hashlib
import io
import os
import shutil
from pathlib import Path

import pytest

from replay.base.blobs import BlobError, BlobStore, default_root
from replay.base.manifest import RegistryIndex
from replay.registry.slot import check_blobs
from tests.registry.conftest import Recorded


def test_layout_is_content_addressed_and_shared(tmp_path: Path) -> None:
    store = BlobStore(tmp_path)
    sha = store.put_bytes(b"hello")
    assert sha == hashlib.sha256(b"hello").hexdigest()
    assert store.path(sha) == tmp_path / "sha256" / sha[:2] / sha[2:]
    assert store.path(sha).read_bytes() == b"hello"
    # A second store over the same root (another snapshot) sees the same blob, stored once.
    assert BlobStore(tmp_path).read(sha) == b"hello"
    assert store.put_bytes(b"hello") == sha
    assert [p for p in (tmp_path / "sha256").rglob("*") if p.is_file()] == [store.path(sha)]
    assert not list((tmp_path / "tmp").iterdir()), "no temporary files left behind"


def test_stream_with_wrong_expected_hash_is_refused(tmp_path: Path) -> None:
    store = BlobStore(tmp_path)
    wrong = "0" * 64
    with pytest.raises(BlobError, match="refused"):
        store.put_stream(io.BytesIO(b"bytes"), wrong)
    assert not store.has(wrong)
    assert not store.has(hashlib.sha256(b"bytes").hexdigest())
    assert not list((tmp_path / "tmp").iterdir())


def test_corrupt_blob_is_an_error_naming_the_file(tmp_path: Path) -> None:
    store = BlobStore(tmp_path)
    sha = store.put_bytes(b"original")
    path = store.path(sha)
    os.chmod(path, 0o644)
    path.write_bytes(b"tampered")
    for reader in (BlobStore(tmp_path), store):  # fresh, and one that verified it before
        with pytest.raises(BlobError) as exc:
            reader.read(sha)
        assert str(path) in str(exc.value)
        assert "corrupt" in str(exc.value)


def test_missing_blob(tmp_path: Path) -> None:
    with pytest.raises(BlobError, match="missing"):
        BlobStore(tmp_path).verified_path("a" * 64)
    with pytest.raises(ValueError):
        BlobStore(tmp_path).path("../../etc/passwd")


def test_default_root(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("REPLAY_BLOBS", str(tmp_path))
    assert BlobStore().root == tmp_path
    monkeypatch.delenv("REPLAY_BLOBS")
    assert default_root() == Path(__file__).resolve().parents[2] / "snapshots" / "blobs"


def test_check_blobs_names_missing_and_corrupt_files(recorded: Recorded, tmp_path: Path) -> None:
    blobs = BlobStore(tmp_path / "blobs")
    shutil.copytree(recorded.blobs.root, blobs.root)
    index = RegistryIndex(schema=1, python=recorded.files)
    assert check_blobs(index, blobs) == []
    alpha, beta = (
        next(f for f in recorded.files if f.filename == name)
        for name in ("alpha-1.1-py3-none-any.whl", "beta-1.5-py3-none-any.whl")
    )
    blobs.path(alpha.sha256).unlink()
    assert beta.metadata_sha256 is not None
    os.chmod(blobs.path(beta.metadata_sha256), 0o644)
    blobs.path(beta.metadata_sha256).write_bytes(b"Name: evil\n")
    problems = check_blobs(index, blobs)
    assert len(problems) == 2, problems
    assert "alpha-1.1-py3-none-any.whl" in problems[0] and "missing" in problems[0]
    assert "beta-1.5-py3-none-any.whl.metadata" in problems[1] and "corrupt" in problems[1]


def test_public_surface() -> None:
    import replay.registry

    for name in replay.registry.__all__:
        assert hasattr(replay.registry, name), name
    public = {n for n in vars(replay.registry) if not n.startswith("_") and n[0].isupper()}
    public |= {"host_apps", "record_python", "record_npm", "registry_app", "serve_snapshot"}
    assert public - {"annotations"} <= set(replay.registry.__all__)
