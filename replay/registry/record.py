"""Recording the Python packages a case needs, as the index served them at T.

``record_python`` reads an upstream index's PEP 691 JSON pages (api-version 1.1, so every file
has its ``upload-time``), keeps the files uploaded at or before T, picks the versions an
installer would pick then, follows their ``Requires-Dist`` for the target Python, and stores
the files and their core metadata in the blob store. It is not a full resolver: for each
requirement it records the newest version that satisfies it, which is what pip and uv choose
when the requirements do not conflict, plus every version named explicitly.
"""

from __future__ import annotations

import io
import json
import logging
import os
import subprocess
import sys
import urllib.error
import urllib.request
import zipfile
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from urllib.parse import urljoin

from packaging.markers import Marker
from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.tags import Tag, compatible_tags, cpython_tags
from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    canonicalize_name,
    parse_sdist_filename,
    parse_wheel_filename,
)
from packaging.version import InvalidVersion, Version

from replay.base.blobs import BlobStore
from replay.base.errors import ReplayError
from replay.base.manifest import PythonFile
from replay.registry.pypi import JSON_V1, normalize, parse_metadata

log = logging.getLogger(__name__)

DEFAULT_INDEX = "https://pypi.org/simple"
USER_AGENT = "replay-registry-recorder/1"


class RecordError(ReplayError):
    """Recording failed: an unreachable upstream, an unknown project, nothing at T."""


@dataclass(frozen=True)
class Target:
    """The interpreter and platform the recorded files must install on."""

    python: tuple[int, int] = (3, 11)
    machine: str = "x86_64"
    glibc_max: int = 39
    """Newest ``manylinux_2_N`` accepted."""

    @property
    def full_version(self) -> str:
        here = sys.version_info
        if (here.major, here.minor) == self.python:
            return f"{here.major}.{here.minor}.{here.micro}"
        return f"{self.python[0]}.{self.python[1]}.0"

    def tags(self) -> frozenset[Tag]:
        m = self.machine
        platforms = [f"manylinux_2_{n}_{m}" for n in range(self.glibc_max, 16, -1)]
        platforms += [f"manylinux2014_{m}", f"manylinux2010_{m}", f"manylinux1_{m}"]
        interp = f"cp{self.python[0]}{self.python[1]}"
        tags = set(cpython_tags(self.python, [interp], platforms))
        tags |= set(compatible_tags(self.python, interp, platforms))
        return frozenset(tags)

    def environment(self, extra: str = "") -> dict[str, str]:
        return {
            "implementation_name": "cpython",
            "implementation_version": self.full_version,
            "os_name": "posix",
            "platform_machine": self.machine,
            "platform_python_implementation": "CPython",
            "platform_release": "",
            "platform_system": "Linux",
            "platform_version": "",
            "python_full_version": self.full_version,
            "python_version": f"{self.python[0]}.{self.python[1]}",
            "sys_platform": "linux",
            "extra": extra,
        }


def default_index_url() -> str:
    """The index pip is configured with: ``PIP_INDEX_URL``, else ``pip config``, else PyPI."""
    env = os.environ.get("PIP_INDEX_URL")
    if env:
        return env
    try:
        done = subprocess.run(
            [sys.executable, "-m", "pip", "config", "list"],
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )
    except (OSError, subprocess.TimeoutExpired):
        return DEFAULT_INDEX
    found = DEFAULT_INDEX
    for line in done.stdout.splitlines():
        key, _, value = line.partition("=")
        if key.endswith(".index-url"):
            found = value.strip().strip("'\"")  # later scopes override earlier ones
    return found


# ----------------------------------------------------------------------------- upstream


@dataclass
class Upstream:
    """An index's JSON simple API, read over HTTP(S) with the machine's proxy settings."""

    base: str
    timeout: float = 120.0

    def __post_init__(self) -> None:
        self.base = self.base.rstrip("/") + "/"

    def _open(self, url: str, accept: str | None = None) -> Any:
        headers = {"User-Agent": USER_AGENT}
        if accept:
            headers["Accept"] = accept
        try:
            return urllib.request.urlopen(
                urllib.request.Request(url, headers=headers), timeout=self.timeout
            )
        except urllib.error.HTTPError as exc:
            raise RecordError(f"{url}: upstream answered {exc.code} {exc.reason}") from exc
        except (urllib.error.URLError, OSError) as exc:
            raise RecordError(f"{url}: cannot reach upstream: {exc}") from exc

    def project(self, name: str) -> tuple[str, list[dict[str, Any]]]:
        """(page URL, files) of a project's PEP 691 page."""
        url = urljoin(self.base, f"{normalize(name)}/")
        with self._open(url, JSON_V1) as resp:
            ctype = resp.headers.get("Content-Type", "")
            body = resp.read()
            final = resp.geturl()
        if not ctype.startswith(JSON_V1):
            raise RecordError(f"{url}: upstream does not speak PEP 691 JSON (got {ctype!r})")
        data = json.loads(body)
        files = data.get("files")
        if not isinstance(files, list):
            raise RecordError(f"{url}: no 'files' list in the JSON page")
        return final, files

    def get(self, url: str) -> bytes:
        with self._open(url) as resp:
            data: bytes = resp.read()
            return data

    def download(self, url: str, blobs: BlobStore, sha256: str) -> int:
        if blobs.has(sha256):
            return blobs.path(sha256).stat().st_size
        with self._open(url) as resp:
            _, size = blobs.put_stream(resp, sha256)
        return size


# ----------------------------------------------------------------------------- choosing


@dataclass
class Candidate:
    project: str
    version: Version
    filename: str
    url: str
    sha256: str
    size: int | None
    upload_time: datetime
    requires_python: str | None
    metadata_sha256: str | None
    yanked: bool | str
    wheel_tags: frozenset[Tag] | None
    """None for an sdist."""


def _parse_time(value: object) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        when = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo else None


def _candidates(project: str, page: str, files: Iterable[dict[str, Any]]) -> list[Candidate]:
    out = []
    for f in files:
        name = str(f.get("filename", ""))
        tags: frozenset[Tag] | None
        try:
            if name.endswith(".whl"):
                _, version, _, tags = parse_wheel_filename(name)
            elif name.endswith((".tar.gz", ".zip")):
                _, version = parse_sdist_filename(name)
                tags = None
            else:
                continue
        except (InvalidWheelFilename, InvalidSdistFilename, InvalidVersion):
            continue
        sha = (f.get("hashes") or {}).get("sha256")
        when = _parse_time(f.get("upload-time"))
        if not sha or when is None:
            continue  # untimed files cannot be placed before or after T: uv drops them too
        meta = f.get("core-metadata", f.get("data-dist-info-metadata"))
        meta_sha = meta.get("sha256") if isinstance(meta, dict) else None
        yanked = f.get("yanked", False)
        out.append(
            Candidate(
                project=project,
                version=version,
                filename=name,
                url=urljoin(page, str(f["url"])),
                sha256=str(sha),
                size=f.get("size") if isinstance(f.get("size"), int) else None,
                upload_time=when,
                requires_python=f.get("requires-python") or None,
                metadata_sha256=str(meta_sha) if meta_sha else None,
                yanked=yanked if isinstance(yanked, str) and yanked else bool(yanked),
                wheel_tags=tags,
            )
        )
    return out


_INCLUSIVE = ("==", "===", ">=", "<=", "~=")


def _names_prerelease(req: Requirement) -> bool:
    """Whether ``req`` asks for pre-releases as pip reads it: an inclusive comparison with a
    pre-release (``>=2.0b1``, ``==1.0rc1``); an exclusive bound such as ``<1.0.0a1`` does not."""
    for spec in req.specifier:
        if spec.operator not in _INCLUSIVE:
            continue
        try:
            if Version(spec.version.removesuffix(".*")).is_prerelease:
                return True
        except InvalidVersion:
            continue
    return False


@dataclass
class _Plan:
    chosen: dict[tuple[str, str], list[Candidate]] = field(default_factory=dict)
    why: dict[tuple[str, str], str] = field(default_factory=dict)
    """Why each (project, version) was chosen, for the first requirement that chose it."""
    expanded: set[tuple[str, str, frozenset[str]]] = field(default_factory=set)


class PythonRecorder:
    """One recording session: an upstream, T, a target, the blob store."""

    def __init__(
        self,
        upstream: str,
        at: datetime,
        blobs: BlobStore,
        target: Target | None = None,
        include_sdist: bool = False,
    ) -> None:
        if at.tzinfo is None:
            raise RecordError("T needs a timezone")
        self.upstream = Upstream(upstream)
        self.at = at
        self.blobs = blobs
        self.target = target or Target()
        self.include_sdist = include_sdist
        self._tags = self.target.tags()
        self._pages: dict[str, list[Candidate]] = {}
        self._metadata: dict[str, bytes] = {}

    def files_at_t(self, project: str) -> list[Candidate]:
        name = normalize(project)
        if name not in self._pages:
            page, files = self.upstream.project(name)
            self._pages[name] = [c for c in _candidates(name, page, files) if self._fits(c)]
        return self._pages[name]

    def _fits(self, c: Candidate) -> bool:
        if c.upload_time > self.at:
            return False
        if c.requires_python:
            try:
                if not SpecifierSet(c.requires_python).contains(
                    self.target.full_version, prereleases=True
                ):
                    return False
            except ValueError:
                pass
        return c.wheel_tags is None or bool(c.wheel_tags & self._tags)

    def choose(self, req: Requirement) -> tuple[str, list[Candidate], str]:
        """The version pip would install for ``req`` at T, its files, and why.

        As pip does (its ``PackageFinder`` over packaging's ``SpecifierSet.filter``): the
        newest version in range that is not wholly yanked (a yanked one only when pinned
        exactly); a pre-release only when the requirement names one with an inclusive
        operator (``==``, ``>=``, ``<=``, ``~=``, ``===``) or when no final release is in range.
        Today's packaging lets ``contains(v, prereleases=None)`` accept pre-releases, which
        recorded ``pluggy 1.0.0.dev0`` for ``pluggy<1.0.0a1,>=0.12``, so range and pre-release
        policy are decided here, not left to the library's default.
        """
        files = self.files_at_t(req.name)
        versions = sorted({c.version for c in files}, reverse=True)
        pinned = {s.version for s in req.specifier if s.operator in ("==", "===")}
        in_range = [v for v in versions if req.specifier.contains(v, prereleases=True)]
        yanked = [
            v
            for v in in_range
            if all(c.yanked for c in files if c.version == v) and str(v) not in pinned
        ]
        usable = [v for v in in_range if v not in yanked]
        finals = [v for v in usable if not v.is_prerelease]
        explicit = _names_prerelease(req)
        pool = usable if explicit or not finals else finals
        if not pool:
            newer = "" if files else " (nothing fits the target at T)"
            raise RecordError(
                f"{req}: no version uploaded at or before {self.at.isoformat()}{newer}"
            )
        v = pool[0]
        why = [f"newest at T satisfying {str(req.specifier) or 'any version'}"]
        if pool is usable and v.is_prerelease:
            why.append(
                "a pre-release: the requirement names one"
                if explicit
                else "a pre-release: no final release is in range (pip's fallback)"
            )
        passed = [str(p) for p in usable if p > v]
        if passed:
            why.append(f"passed over pre-releases {', '.join(passed)}")
        passed_yanked = [str(y) for y in yanked if y > v]
        if passed_yanked:
            why.append(f"passed over yanked {', '.join(passed_yanked)}")
        return str(v), self._pick_files([c for c in files if c.version == v]), "; ".join(why)

    def _pick_files(self, files: list[Candidate]) -> list[Candidate]:
        wheels = [c for c in files if c.wheel_tags is not None]
        sdists = [c for c in files if c.wheel_tags is None]
        if not wheels or self.include_sdist:
            return wheels + sdists[:1]
        return wheels

    def metadata(self, c: Candidate) -> bytes | None:
        """The file's core metadata: upstream's PEP 658 file, else read out of the wheel."""
        if c.metadata_sha256:
            if self.blobs.has(c.metadata_sha256):
                return self.blobs.read(c.metadata_sha256)
            data = self.upstream.get(c.url + ".metadata")
            self.blobs.put_chunks([data], c.metadata_sha256)
            return data
        if c.wheel_tags is None:
            return None
        self.upstream.download(c.url, self.blobs, c.sha256)
        with zipfile.ZipFile(io.BytesIO(self.blobs.read(c.sha256))) as zf:
            name = next(
                (
                    n
                    for n in zf.namelist()
                    if n.count("/") == 1 and n.endswith(".dist-info/METADATA")
                ),
                None,
            )
            if name is None:
                return None
            data = zf.read(name)
        c.metadata_sha256 = self.blobs.put_bytes(data)
        return data

    def requirements_of(self, files: list[Candidate], extras: frozenset[str]) -> list[Requirement]:
        meta = None
        for c in sorted(files, key=lambda c: c.wheel_tags is None):
            data = self.metadata(c)
            if data is not None:
                meta = parse_metadata(data)
                break
        if meta is None:
            if files:
                log.warning(
                    "%s: no core metadata; its dependencies are not recorded", files[0].filename
                )
            return []
        out = []
        for line in meta.get_all("Requires-Dist") or []:
            try:
                req = Requirement(str(line))
            except InvalidRequirement:
                log.warning("%s: unparseable Requires-Dist %r", files[0].filename, line)
                continue
            if req.marker is None or self._marker_ok(req.marker, extras):
                out.append(req)
        return out

    def _marker_ok(self, marker: Marker, extras: frozenset[str]) -> bool:
        return any(marker.evaluate(self.target.environment(e)) for e in ("", *sorted(extras)))

    def plan(self, specs: Sequence[str]) -> _Plan:
        plan = _Plan()
        queue: list[Requirement] = []
        for spec in specs:
            try:
                queue.append(Requirement(spec))
            except InvalidRequirement as exc:
                raise RecordError(f"{spec!r}: not a requirement: {exc}") from exc
        while queue:
            req = queue.pop(0)
            version, files, why = self.choose(req)
            key = (canonicalize_name(req.name), version)
            plan.chosen.setdefault(key, files)
            plan.why.setdefault(key, f"{req}: {why}")
            extras = frozenset(canonicalize_name(e) for e in req.extras)
            if (key[0], version, extras) in plan.expanded:
                continue
            plan.expanded.add((key[0], version, extras))
            queue.extend(self.requirements_of(files, extras))
        return plan

    def record(self, specs: Sequence[str]) -> list[PythonFile]:
        plan = self.plan(specs)
        todo = [c for files in plan.chosen.values() for c in files]

        def fetch(c: Candidate) -> PythonFile:
            size = self.upstream.download(c.url, self.blobs, c.sha256)
            if c.metadata_sha256 and not self.blobs.has(c.metadata_sha256):
                self.metadata(c)
            return PythonFile(
                project=c.project,
                version=str(c.version),
                filename=c.filename,
                sha256=c.sha256,
                size=size,
                upload_time=c.upload_time,
                requires_python=c.requires_python,
                metadata_sha256=c.metadata_sha256,
                yanked=c.yanked,
                chosen_because=plan.why.get((canonicalize_name(c.project), str(c.version))),
            )

        with ThreadPoolExecutor(max_workers=8) as pool:
            done = list(pool.map(fetch, todo))
        return sorted(done, key=lambda f: (f.project, f.version, f.filename))


def record_python(
    specs: Sequence[str],
    at: datetime,
    upstream: str | None = None,
    blobs: BlobStore | None = None,
    target: Target | None = None,
    include_sdist: bool = False,
) -> list[PythonFile]:
    """Record the files ``specs`` (requirements, e.g. ``pytest==8.3.5``) need at T.

    For each requirement, and transitively for each dependency its ``Requires-Dist`` names
    on the target, the newest version uploaded at or before T that satisfies it: its wheels
    for the target (its sdist when it has none, or always with ``include_sdist``) and their
    core metadata go into the blob store. Returns the index entries, sorted.
    """
    recorder = PythonRecorder(
        upstream or default_index_url(), at, blobs or BlobStore(), target, include_sdist
    )
    return recorder.record(specs)


def merge_python(old: Iterable[PythonFile], new: Iterable[PythonFile]) -> list[PythonFile]:
    """Entries of both, one per (project, filename), the new one winning."""
    by_key = {(normalize(f.project), f.filename): f for f in old}
    by_key.update({(normalize(f.project), f.filename): f for f in new})
    return sorted(by_key.values(), key=lambda f: (normalize(f.project), f.version, f.filename))


__all__ = [
    "DEFAULT_INDEX",
    "PythonRecorder",
    "RecordError",
    "Target",
    "default_index_url",
    "merge_python",
    "record_python",
]
