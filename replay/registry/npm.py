"""The npm registry as it stood at T: packuments (full and abbreviated) and tarball paths.

``versions`` and ``time`` hold only what was published at or before T, and ``dist-tags`` are
recomputed from them (``latest`` is the highest final version published by T), so a default
install cannot see a ``latest`` from after T. Other dist-tags cannot be known as of T and
are left out.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

from replay.base.manifest import NpmVersion

REGISTRY_HOST = "registry.npmjs.org"
ABBREVIATED = "application/vnd.npm.install-v1+json"

# The fields npm's abbreviated ("corgi") documents keep for each version.
ABBREVIATED_FIELDS = (
    "name",
    "version",
    "deprecated",
    "dependencies",
    "optionalDependencies",
    "devDependencies",
    "bundleDependencies",
    "bundledDependencies",
    "peerDependencies",
    "peerDependenciesMeta",
    "acceptDependencies",
    "bin",
    "directories",
    "dist",
    "engines",
    "funding",
    "license",
    "os",
    "cpu",
    "libc",
    "_hasShrinkwrap",
    "hasInstallScript",
)
# Package-level fields of a full packument, taken from the manifest of ``latest``.
TOP_FIELDS = (
    "description",
    "homepage",
    "keywords",
    "repository",
    "author",
    "bugs",
    "license",
    "maintainers",
    "readme",
    "readmeFilename",
)

_SEMVER = re.compile(
    r"^v?(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$",
)

TarballUrl = Callable[[NpmVersion], str]


@dataclass(frozen=True, order=False)
class SemVer:
    major: int
    minor: int
    patch: int
    pre: tuple[int | str, ...] = ()

    @classmethod
    def parse(cls, text: str) -> SemVer | None:
        m = _SEMVER.match(text.strip())
        if not m:
            return None
        pre = tuple(int(p) if p.isdigit() else p for p in m.group(4).split(".")) if m[4] else ()
        return cls(int(m[1]), int(m[2]), int(m[3]), pre)

    def key(self) -> tuple[Any, ...]:
        # A prerelease sorts before its release; numeric identifiers before alphanumeric.
        pre = tuple((0, p, "") if isinstance(p, int) else (1, 0, p) for p in self.pre)
        return (self.major, self.minor, self.patch, 0 if self.pre else 1, pre)

    def __lt__(self, other: SemVer) -> bool:
        return self.key() < other.key()


def semver_key(version: str) -> tuple[Any, ...]:
    parsed = SemVer.parse(version)
    return (1, parsed.key()) if parsed else (0, version)


def is_prerelease(version: str) -> bool:
    parsed = SemVer.parse(version)
    return bool(parsed and parsed.pre)


def iso_ms(when: datetime) -> str:
    """npm's spelling of times: ``2024-03-03T14:49:04.427Z``."""
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + (
        f"{when.microsecond // 1000:03d}Z"
    )


def tarball_path(v: NpmVersion) -> str:
    dist = v.manifest.get("dist")
    tarball = dist.get("tarball") if isinstance(dist, dict) else None
    if isinstance(tarball, str) and tarball:
        return urlsplit(tarball).path
    bare = v.package.rsplit("/", 1)[-1]
    return f"/{v.package}/-/{bare}-{v.version}.tgz"


@dataclass
class Package:
    name: str
    versions: list[NpmVersion] = field(default_factory=list)
    """Oldest first by publish time."""

    def dist_tags(self) -> dict[str, str]:
        ordered = sorted((v.version for v in self.versions), key=semver_key)
        finals = [v for v in ordered if not is_prerelease(v)]
        pick = finals or ordered
        return {"latest": pick[-1]} if pick else {}

    def modified(self) -> datetime:
        return max(v.publish_time for v in self.versions)


class NpmCatalog:
    """The versions of a ``RegistryIndex`` published at or before T."""

    def __init__(self, versions: Iterable[NpmVersion], at: datetime) -> None:
        self.at = at
        self.packages: dict[str, Package] = {}
        self.by_path: dict[str, NpmVersion] = {}
        for v in sorted(versions, key=lambda v: v.publish_time):
            if v.publish_time > at:
                continue
            self.packages.setdefault(v.package, Package(v.package)).versions.append(v)
            self.by_path[tarball_path(v)] = v


def _with_tarball(v: NpmVersion, url: TarballUrl) -> dict[str, Any]:
    manifest: dict[str, Any] = dict(v.manifest)
    old = manifest.get("dist")
    dist: dict[str, Any] = dict(old) if isinstance(old, dict) else {}
    dist["tarball"] = url(v)
    manifest["dist"] = dist
    return manifest


def version_document(v: NpmVersion, url: TarballUrl) -> dict[str, Any]:
    return _with_tarball(v, url)


def full_packument(pkg: Package, url: TarballUrl) -> dict[str, Any]:
    tags = pkg.dist_tags()
    by_version = {v.version: v for v in pkg.versions}
    latest = by_version.get(tags.get("latest", ""))
    doc: dict[str, Any] = {"_id": pkg.name, "name": pkg.name, "dist-tags": tags}
    if latest is not None:
        for key in TOP_FIELDS:
            if key in latest.manifest:
                doc[key] = latest.manifest[key]
    doc.setdefault("readme", "")
    doc["versions"] = {
        v.version: _with_tarball(v, url)
        for v in sorted(pkg.versions, key=lambda v: semver_key(v.version))
    }
    time = {
        "created": iso_ms(min(v.publish_time for v in pkg.versions)),
        "modified": iso_ms(pkg.modified()),
    }
    time.update({v.version: iso_ms(v.publish_time) for v in pkg.versions})
    doc["time"] = time
    return doc


def abbreviated_packument(pkg: Package, url: TarballUrl) -> dict[str, Any]:
    versions: dict[str, Any] = {}
    for v in sorted(pkg.versions, key=lambda v: semver_key(v.version)):
        manifest = _with_tarball(v, url)
        versions[v.version] = {k: manifest[k] for k in ABBREVIATED_FIELDS if k in manifest}
    return {
        "name": pkg.name,
        "modified": iso_ms(pkg.modified()),
        "dist-tags": pkg.dist_tags(),
        "versions": versions,
    }


def wants_abbreviated(accept: str | None) -> bool:
    """True when the client prefers the abbreviated document (npm, pnpm, yarn do)."""
    for item in (accept or "").split(","):
        parts = [p.strip() for p in item.split(";")]
        if parts[0].lower() != ABBREVIATED:
            continue
        for param in parts[1:]:
            key, _, value = param.partition("=")
            if key.strip() == "q":
                try:
                    return float(value) > 0
                except ValueError:
                    return False
        return True
    return False


__all__ = [
    "ABBREVIATED",
    "REGISTRY_HOST",
    "NpmCatalog",
    "Package",
    "SemVer",
    "abbreviated_packument",
    "full_packument",
    "semver_key",
    "tarball_path",
    "version_document",
    "wants_abbreviated",
]
