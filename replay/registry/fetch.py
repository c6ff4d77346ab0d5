"""Filling the blob store with the files a recorded registry lists, from the index it came from.

A case's registry index (``snapshot/registry/index.json``) names every file by project,
filename and sha256; the bytes live in the shared blob store. A case shipped without its
files (the real set's tooling wheels weigh hundreds of megabytes: a project's development
requirements bring uv, ruff, mypy and cryptography) is filled again from the index it was
recorded from: each missing file is looked up on its project's PEP 691 page by filename and
downloaded only if the index still gives it the recorded sha256 (the store checks the bytes
too); its core metadata comes from the index's PEP 658 file, else out of the wheel, and must
hash as recorded. Nothing about T is decided here: the index says which files existed then,
this only brings their bytes back. A file the index no longer has, or has with other bytes
(deleted, or re-uploaded under the same name), is named and not replaced.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from urllib.parse import urljoin

from replay.base.blobs import BlobError, BlobStore
from replay.base.manifest import PythonFile, RegistryIndex
from replay.registry.errors import RecordError
from replay.registry.pypi import normalize
from replay.registry.upstream import Upstream


@dataclass
class Fetched:
    """What filling the store did: files brought, bytes, and the files that could not be."""

    files: int = 0
    bytes: int = 0
    present: int = 0
    """Files the store already held, with their core metadata."""
    failed: list[str] = field(default_factory=list)


def missing(files: Iterable[PythonFile], blobs: BlobStore) -> list[PythonFile]:
    """The entries whose file or core metadata the store lacks."""
    return [
        f
        for f in files
        if not blobs.has(f.sha256) or (f.metadata_sha256 and not blobs.has(f.metadata_sha256))
    ]


def fetch_missing(
    indexes: Iterable[RegistryIndex],
    blobs: BlobStore,
    upstream: Upstream,
    say: Callable[[str], None] = lambda _: None,
) -> Fetched:
    """Bring the bytes of every file the ``indexes`` list and ``blobs`` lacks."""
    wanted: dict[str, PythonFile] = {}
    everything = [f for index in indexes for f in index.python]
    for f in missing(everything, blobs):
        wanted.setdefault(f.sha256, f)
    done = Fetched(present=len({f.sha256 for f in everything}) - len(wanted))
    by_project: dict[str, list[PythonFile]] = {}
    for f in wanted.values():
        by_project.setdefault(normalize(f.project), []).append(f)
    n = 0
    for project, files in sorted(by_project.items()):
        try:
            page_url, page = upstream.project(project)
        except RecordError as exc:
            done.failed += [f"{f.filename}: {exc}" for f in files]
            continue
        offered = {
            str(e.get("filename")): {**e, "url": urljoin(page_url, str(e.get("url")))} for e in page
        }
        for f in sorted(files, key=lambda f: f.filename):
            n += 1
            say(f"[{n}/{len(wanted)}] {f.filename} ({f.size / 1e6:.1f} MB)")
            problem = _fetch_one(f, offered.get(f.filename), blobs, upstream)
            if problem is None:
                done.files += 1
                done.bytes += f.size
            else:
                done.failed.append(f"{f.filename}: {problem}")
    return done


def _fetch_one(
    f: PythonFile, entry: dict[str, object] | None, blobs: BlobStore, upstream: Upstream
) -> str | None:
    """None when the file and its metadata are in the store as recorded, else why not."""
    if entry is None:
        return "the index no longer lists it (deleted after it was recorded)"
    hashes = entry.get("hashes")
    offered = hashes.get("sha256") if isinstance(hashes, dict) else None
    if offered != f.sha256:
        return (
            f"the index gives it sha256 {offered}, not the recorded {f.sha256} "
            "(re-uploaded with other bytes): not replaced"
        )
    url = str(entry.get("url"))
    try:
        upstream.download(url, blobs, f.sha256)
    except (BlobError, RecordError, OSError) as exc:
        return f"download failed: {exc}"
    if not f.metadata_sha256 or blobs.has(f.metadata_sha256):
        return None
    data: bytes | None = None
    if entry.get("core-metadata") or entry.get("dist-info-metadata"):
        try:
            data = upstream.get(url + ".metadata")
        except (RecordError, OSError):
            data = None
    if data is None and f.filename.endswith(".whl"):
        data = _wheel_metadata(blobs.read(f.sha256))
    if data is None:
        return "its core metadata is nowhere to be read"
    try:
        blobs.put_chunks([data], f.metadata_sha256)
    except BlobError:
        return f"its core metadata does not hash to the recorded {f.metadata_sha256}"
    return None


def _wheel_metadata(wheel: bytes) -> bytes | None:
    with zipfile.ZipFile(io.BytesIO(wheel)) as zf:
        name = next(
            (n for n in zf.namelist() if n.count("/") == 1 and n.endswith(".dist-info/METADATA")),
            None,
        )
        return zf.read(name) if name is not None else None


__all__ = ["Fetched", "fetch_missing", "missing"]
