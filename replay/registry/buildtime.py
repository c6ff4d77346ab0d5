"""When a distribution file was built, read from the file itself with a few range reads.

A wheel or zip sdist dates each entry (its central directory, at the end of the file); a
``.tar.gz`` sdist dates its gzip stream (the header's MTIME, the first bytes) and each tar
member (the first members sit in the first kilobytes). The newest of these stamps is when
the file was built: the build writes ``METADATA``, ``RECORD`` and ``PKG-INFO`` last, so no
honest stamp in it is later than the build, and a file cannot be published before it is
built. Real files (``atomicwrites 1.3.0``'s wheel) show it: source files dated minutes
before the dist-info entries, the sdist's gzip header a second after.

Reproducible builds replace every stamp with one constant (``SOURCE_DATE_EPOCH``, the zip
format's 1980-01-01, hatchling's and poetry's fixed dates): a file whose stamps hold fewer
than two distinct values tells nothing about its build and gets no :class:`BuildTime`.

Zip entries carry local time without a zone unless an extended-timestamp field (0x5455,
UTC) is present. ``wheel`` writes UTC (atomicwrites' wheel and sdist agree to the second),
but other tools do not, so a zone-less stamp is read as UTC and may be up to
:data:`ZONE_SLACK` later in truth: :attr:`BuildTime.latest` says how late.
"""

from __future__ import annotations

import io
import struct
import tarfile
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

ZONE_SLACK = timedelta(hours=14)
"""How far a zone-less local time can be behind UTC (UTC+14 is the easternmost zone)."""

BLOCK = 64 * 1024
"""Range reads are made and cached in aligned blocks of this size."""

SDIST_HEAD = 4 * BLOCK
"""How much of a ``.tar.gz`` is read for its first members' stamps."""

_TAR_HEAD = 16 * SDIST_HEAD
"""At most this much of it is decompressed (a server that ignores ranges sends it all)."""

_ZIP_EPOCH = datetime(1980, 1, 2, tzinfo=UTC)
"""Stamps before this are the zip format's zero date or a tar's 0: no date at all."""

Fetch = Callable[[int, int], bytes]
"""Reads bytes ``[start, end)`` of a file."""


def fetcher(get_range: Callable[[int, int], tuple[bytes, bool]]) -> Fetch:
    """A :data:`Fetch` over ``get_range(start, end)``, which answers (the bytes, True) or,
    from a server that ignores ``Range``, (the whole file, False): then kept for later reads."""
    whole: list[bytes] = []

    def fetch(start: int, end: int) -> bytes:
        if not whole:
            data, partial = get_range(start, end)
            if partial:
                return data
            whole.append(data)
        return whole[0][start:end]

    return fetch


@dataclass(frozen=True)
class BuildTime:
    """When a file was built, by its own stamps."""

    when: datetime
    """The newest stamp in the file, read as UTC."""
    latest: datetime
    """The latest the build can have been, allowing for a zone-less stamp's zone."""
    source: str
    """Which stamps: ``its wheel's entries``, ``its sdist's gzip header and members``."""


class RangeFile(io.RawIOBase):
    """A read-only, seekable view of a remote file of known size, fetched block by block.

    ``zipfile`` reads a wheel's end records and central directory through it: two or
    three blocks of a file of any size, never the whole file unless it is that small.
    """

    def __init__(self, fetch: Fetch, size: int) -> None:
        super().__init__()
        self._fetch = fetch
        self._size = size
        self._pos = 0
        self._blocks: dict[int, bytes] = {}
        self.fetched = 0
        """Bytes read from the source so far."""

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: self._size}[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def _block(self, index: int) -> bytes:
        if index not in self._blocks:
            start = index * BLOCK
            data = self._fetch(start, min(start + BLOCK, self._size))
            self.fetched += len(data)
            self._blocks[index] = data[:BLOCK]
        return self._blocks[index]

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        want = min(len(buffer), self._size - self._pos)
        got = 0
        while got < want:
            block = self._block((self._pos + got) // BLOCK)
            offset = (self._pos + got) % BLOCK
            piece = block[offset : offset + want - got]
            if not piece:
                break  # the source is shorter than the index said
            buffer[got : got + len(piece)] = piece
            got += len(piece)
        self._pos += got
        return got


def _decided(stamps: list[datetime], zoned: bool, source: str) -> BuildTime | None:
    real = {s for s in stamps if s >= _ZIP_EPOCH}
    if len(real) < 2:
        return None  # one constant everywhere: a reproducible build's date, not its build's
    when = max(real)
    return BuildTime(when, when if zoned else when + ZONE_SLACK, source)


def zip_build_time(fp: RangeFile | io.BytesIO, kind: str) -> BuildTime | None:
    """The build time of a wheel or zip sdist: the newest of its entries' stamps."""
    try:
        with zipfile.ZipFile(fp) as zf:
            infos = zf.infolist()
    except (zipfile.BadZipFile, OSError, EOFError, ValueError):
        return None
    stamps = []
    zoned = True
    for info in infos:
        utc = _extended_mtime(info.extra)
        if utc is not None:
            stamps.append(utc)
            continue
        zoned = False
        try:
            stamps.append(datetime(*info.date_time, tzinfo=UTC))
        except ValueError:
            continue
    return _decided(stamps, zoned, f"its {kind}'s entries")


def _extended_mtime(extra: bytes) -> datetime | None:
    """The UTC mtime of a zip entry's extended-timestamp field (0x5455), if it has one."""
    i = 0
    while i + 4 <= len(extra):
        tag, size = struct.unpack_from("<HH", extra, i)
        body = extra[i + 4 : i + 4 + size]
        if tag == 0x5455 and len(body) >= 5 and body[0] & 1:
            return datetime.fromtimestamp(struct.unpack_from("<I", body, 1)[0], UTC)
        i += 4 + size
    return None


def targz_build_time(head: bytes) -> BuildTime | None:
    """The build time of a ``.tar.gz`` sdist from its first bytes: the gzip header's MTIME
    and the stamps of the tar members that fit in them."""
    if len(head) < 10 or head[:2] != b"\x1f\x8b":
        return None
    stamps = []
    mtime = struct.unpack_from("<I", head, 4)[0]
    if mtime:
        stamps.append(datetime.fromtimestamp(mtime, UTC))
    try:
        tar = zlib.decompressobj(wbits=31).decompress(head, _TAR_HEAD)
    except zlib.error:
        tar = b""
    offset = 0
    while offset + 512 <= len(tar):
        try:
            member = tarfile.TarInfo.frombuf(tar[offset : offset + 512], "utf-8", "replace")
        except tarfile.TarError:
            break  # the end-of-archive blocks, or a header cut short
        if member.mtime > 0:
            stamps.append(datetime.fromtimestamp(member.mtime, UTC))
        offset += 512 + -(-member.size // 512) * 512
    return _decided(stamps, True, "its sdist's gzip header and members")


def build_time(filename: str, fetch: Fetch, size: int | None) -> BuildTime | None:
    """When ``filename`` (a wheel or an sdist, of ``size`` bytes) was built, or None when its
    stamps do not say; ``fetch`` reads byte ranges of it (all of it when ``size`` is unknown)."""
    if size is None:
        data = fetch(0, 1 << 40)
        size = len(data)
        fetch = lambda start, end: data[start:end]  # noqa: E731
    if filename.endswith(".tar.gz"):
        return targz_build_time(fetch(0, min(size, SDIST_HEAD)))
    if filename.endswith((".whl", ".zip")):
        kind = "wheel" if filename.endswith(".whl") else "zip sdist"
        return zip_build_time(RangeFile(fetch, size), kind)
    return None


__all__ = ["BuildTime", "RangeFile", "build_time", "fetcher", "targz_build_time", "zip_build_time"]
