"""Build times read from distribution files' own stamps: what counts and what does not."""

from __future__ import annotations

import gzip
import io
import os
import struct
import tarfile
import zipfile
from datetime import UTC, datetime, timedelta

from replay.registry.buildtime import ZONE_SLACK, BuildTime, build_time, targz_build_time

BUILT = datetime(2019, 2, 1, 10, 38, 10, tzinfo=UTC)
"""atomicwrites 1.3.0's wheel: its dist-info entries are dated so, its module 18 s earlier."""


def _zip(entries: dict[str, datetime], utc_field: bool = False) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        for name, when in entries.items():
            info = zipfile.ZipInfo(name, when.timetuple()[:6])
            if utc_field:  # the extended-timestamp field Info-ZIP writes: flags, then mtime
                info.extra = struct.pack("<HHBI", 0x5455, 5, 1, int(when.timestamp()))
            zf.writestr(info, name.encode())
    return out.getvalue()


def _read(filename: str, data: bytes) -> BuildTime | None:
    return build_time(filename, lambda start, end: data[start:end], len(data))


def _wheel_entries(built: datetime) -> dict[str, datetime]:
    return {
        "atomicwrites/__init__.py": built - timedelta(seconds=18),
        "atomicwrites-1.3.0.dist-info/METADATA": built,
        "atomicwrites-1.3.0.dist-info/RECORD": built,
    }


def test_a_wheel_is_dated_by_its_newest_entry_with_room_for_an_unknown_zone() -> None:
    got = _read("atomicwrites-1.3.0-py2.py3-none-any.whl", _zip(_wheel_entries(BUILT)))
    assert got is not None
    assert got.when == BUILT
    assert got.latest == BUILT + ZONE_SLACK  # zip times carry no zone
    assert got.source == "its wheel's entries"


def test_an_extended_timestamp_is_utc() -> None:
    got = _read("x-1.0-py3-none-any.whl", _zip(_wheel_entries(BUILT), utc_field=True))
    assert got is not None and got.when == got.latest == BUILT


def test_one_date_throughout_is_a_reproducible_build_not_a_build_time() -> None:
    same = dict.fromkeys(_wheel_entries(BUILT), BUILT)
    assert _read("x-1.0-py3-none-any.whl", _zip(same)) is None
    epoch = dict.fromkeys(_wheel_entries(BUILT), datetime(1980, 1, 1, tzinfo=UTC))
    assert _read("x-1.0-py3-none-any.whl", _zip(epoch)) is None
    assert _read("x-1.0-py3-none-any.whl", b"not a zip") is None


def _targz(members: dict[str, datetime], gzip_mtime: float, big: str = "") -> bytes:
    """A .tar.gz of ``members``; the one named ``big`` holds 2 MB that do not compress."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, when in members.items():
            data = name.encode() + (os.urandom(2_000_000) if name == big else b"")
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mtime = int(when.timestamp())
            tar.addfile(info, io.BytesIO(data))
    return gzip.compress(raw.getvalue(), mtime=gzip_mtime)


def test_an_sdist_is_dated_by_its_gzip_header_and_first_members() -> None:
    members = {
        "atomicwrites-1.3.0/LICENSE": datetime(2018, 8, 24, 18, 0, 55, tzinfo=UTC),
        "atomicwrites-1.3.0/PKG-INFO": BUILT,
    }
    got = _read("atomicwrites-1.3.0.tar.gz", _targz(members, BUILT.timestamp() + 1))
    assert got is not None
    assert got.when == got.latest == BUILT + timedelta(seconds=1)
    assert got.source == "its sdist's gzip header and members"
    # Reproducible: no gzip date, every member at SOURCE_DATE_EPOCH.
    assert _read("x-1.0.tar.gz", _targz(dict.fromkeys(members, BUILT), 0)) is None


def test_a_large_sdist_is_dated_from_its_first_bytes() -> None:
    """Only the head is read: members beyond it do not count, those in it do."""
    members = {
        "big-1.0/PKG-INFO": BUILT,
        "big-1.0/a.bin": BUILT - timedelta(days=1),
        "big-1.0/late.txt": BUILT + timedelta(days=3000),  # past the head
    }
    data = _targz(members, 0, big="big-1.0/a.bin")
    got = targz_build_time(data[: 256 * 1024])
    assert got is not None and got.when == BUILT
    whole = targz_build_time(data)
    assert whole is not None and whole.when == BUILT + timedelta(days=3000)
