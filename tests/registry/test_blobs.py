from __future__ import annotations

import hashlib
import io
import os
from pathlib import Path

import pytest

from replay.registry.blobs import BlobError, BlobStore, default_root


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
