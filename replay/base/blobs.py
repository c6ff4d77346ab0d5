"""The content-addressed blob store: every package file once, shared by all snapshots.

A blob is named by the sha256 of its bytes and lives at ``<root>/sha256/ab/cdef...`` (the
first two hex digits, then the other 62). Writes go to a temporary file in the store and are
renamed into place, so a reader never sees half a blob. Reads are verified: a blob whose bytes
no longer match its name is an error naming the file, and is never served.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import BinaryIO

from replay.base.errors import ReplayError

ENV = "REPLAY_BLOBS"
_HEX = re.compile(r"^[0-9a-f]{64}$")
_CHUNK = 1 << 20


class BlobError(ReplayError):
    """A blob is missing, or its bytes do not match its sha256 name."""

    def __init__(self, path: Path, problem: str) -> None:
        self.path = path
        super().__init__(f"{path}: {problem}")


def default_root() -> Path:
    """``$REPLAY_BLOBS``, else ``snapshots/blobs`` in the repository this package lives in."""
    env = os.environ.get(ENV)
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[2] / "snapshots" / "blobs"


class BlobStore:
    """Files by sha256 under one root directory."""

    def __init__(self, root: Path | str | None = None) -> None:
        self.root = Path(root) if root is not None else default_root()
        # sha256 -> (size, mtime_ns, inode) of the file when it was last verified, so a
        # blob is hashed once per process, and again only if the file changed under us.
        self._verified: dict[str, tuple[int, int, int]] = {}
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"BlobStore({str(self.root)!r})"

    def path(self, sha256: str) -> Path:
        if not _HEX.match(sha256):
            raise ValueError(f"not a sha256 hex digest: {sha256!r}")
        return self.root / "sha256" / sha256[:2] / sha256[2:]

    def has(self, sha256: str) -> bool:
        return self.path(sha256).is_file()

    # ------------------------------------------------------------------------- writing

    def put_bytes(self, data: bytes) -> str:
        """Store ``data``; return its sha256."""
        return self.put_chunks([data])[0]

    def put_stream(self, stream: BinaryIO, expected_sha256: str | None = None) -> tuple[str, int]:
        """Store what ``stream`` yields; return (sha256, size).

        With ``expected_sha256``, bytes that hash differently are discarded and raise
        :class:`BlobError` (a download that does not match the index's hash).
        """
        return self.put_chunks(iter(lambda: stream.read(_CHUNK), b""), expected_sha256)

    def put_chunks(
        self, chunks: Iterable[bytes], expected_sha256: str | None = None
    ) -> tuple[str, int]:
        tmpdir = self.root / "tmp"
        tmpdir.mkdir(parents=True, exist_ok=True)
        digest = hashlib.sha256()
        size = 0
        fd, tmpname = tempfile.mkstemp(dir=tmpdir, prefix="blob-")
        tmp = Path(tmpname)
        try:
            with os.fdopen(fd, "wb") as fh:
                for chunk in chunks:
                    digest.update(chunk)
                    size += len(chunk)
                    fh.write(chunk)
                fh.flush()
                os.fsync(fh.fileno())
            sha = digest.hexdigest()
            if expected_sha256 is not None and sha != expected_sha256:
                raise BlobError(
                    self.path(expected_sha256),
                    f"refused: the bytes received hash to sha256 {sha}, not {expected_sha256}",
                )
            dest = self.path(sha)
            dest.parent.mkdir(parents=True, exist_ok=True)
            os.chmod(tmp, 0o444)
            tmp.replace(dest)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        with self._lock:
            st = dest.stat()
            self._verified[sha] = (st.st_size, st.st_mtime_ns, st.st_ino)
        return sha, size

    # ------------------------------------------------------------------------- reading

    def verified_path(self, sha256: str) -> Path:
        """The blob's path, after checking that its bytes still hash to its name."""
        path = self.path(sha256)
        try:
            st = path.stat()
        except FileNotFoundError:
            raise BlobError(path, "missing from the blob store") from None
        stamp = (st.st_size, st.st_mtime_ns, st.st_ino)
        with self._lock:
            if self._verified.get(sha256) == stamp:
                return path
        digest = hashlib.sha256()
        with path.open("rb") as fh:
            for block in iter(lambda: fh.read(_CHUNK), b""):
                digest.update(block)
        actual = digest.hexdigest()
        if actual != sha256:
            raise BlobError(path, f"corrupt blob: its bytes hash to sha256 {actual}")
        with self._lock:
            self._verified[sha256] = stamp
        return path

    def read(self, sha256: str) -> bytes:
        """The blob's bytes, verified."""
        data = self.verified_path(sha256).read_bytes()
        if hashlib.sha256(data).hexdigest() != sha256:  # changed between check and read
            raise BlobError(self.path(sha256), "corrupt blob: changed while being read")
        return data

    def total_size(self, digests: Iterable[str]) -> int:
        return sum(self.path(d).stat().st_size for d in set(digests))


__all__ = ["ENV", "BlobError", "BlobStore", "default_root"]
