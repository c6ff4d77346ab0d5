"""Recording npm packages as the registry served them at T.

Reads full packuments (they carry ``time``), keeps the versions published at or before T,
picks what npm would install then (the highest version satisfying each range; a bare name
means ``latest`` recomputed at T), follows ``dependencies``, ``optionalDependencies`` and
non-optional ``peerDependencies``, and stores the tarballs in the blob store after checking
them against the packument's ``integrity`` (sha512) or ``shasum``.
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import os
import shutil
import subprocess
import urllib.error
import urllib.request
from collections.abc import Sequence
from datetime import datetime
from typing import Any
from urllib.parse import quote

from replay.base.blobs import BlobError, BlobStore
from replay.base.manifest import NpmVersion
from replay.registry.errors import RecordError
from replay.registry.npm import is_prerelease, semver_key
from replay.registry.semver import RangeError, max_satisfying
from replay.registry.upstream import USER_AGENT

log = logging.getLogger(__name__)

DEFAULT_REGISTRY = "https://registry.npmjs.org/"


def default_registry() -> str:
    """The registry npm is configured with (``npm_config_registry``, ``npm config``)."""
    env = os.environ.get("npm_config_registry") or os.environ.get("NPM_CONFIG_REGISTRY")  # noqa: SIM112
    if env:
        return env
    npm = shutil.which("npm")
    if npm is None:
        return DEFAULT_REGISTRY
    try:
        done = subprocess.run(
            [npm, "config", "get", "registry"], capture_output=True, text=True, timeout=60
        )
    except (OSError, subprocess.TimeoutExpired):
        return DEFAULT_REGISTRY
    value = done.stdout.strip()
    return value if done.returncode == 0 and value.startswith("http") else DEFAULT_REGISTRY


def split_spec(spec: str) -> tuple[str, str]:
    """``@scope/name@^1`` -> (``@scope/name``, ``^1``); no range means ``latest``."""
    at = spec.find("@", 1)
    if at == -1:
        return spec, "latest"
    return spec[:at], spec[at + 1 :] or "latest"


def _time(value: object) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        when = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo else None


class NpmRecorder:
    def __init__(self, registry: str, at: datetime, blobs: BlobStore) -> None:
        if at.tzinfo is None:
            raise RecordError("T needs a timezone")
        self.registry = registry.rstrip("/") + "/"
        self.at = at
        self.blobs = blobs
        self._packuments: dict[str, dict[str, Any]] = {}

    def _get(self, url: str, accept: str = "application/json") -> bytes:
        request = urllib.request.Request(url, headers={"Accept": accept, "User-Agent": USER_AGENT})
        try:
            with urllib.request.urlopen(request, timeout=120) as resp:
                data: bytes = resp.read()
                return data
        except urllib.error.HTTPError as exc:
            raise RecordError(f"{url}: upstream answered {exc.code} {exc.reason}") from exc
        except (urllib.error.URLError, OSError) as exc:
            raise RecordError(f"{url}: cannot reach upstream: {exc}") from exc

    def packument(self, name: str) -> dict[str, Any]:
        if name not in self._packuments:
            url = self.registry + quote(name, safe="@")
            doc = json.loads(self._get(url))
            if not isinstance(doc.get("time"), dict):
                raise RecordError(f"{url}: the packument has no 'time': cannot place it at T")
            self._packuments[name] = doc
        return self._packuments[name]

    def at_t(self, name: str) -> dict[str, datetime]:
        doc = self.packument(name)
        out = {}
        for version in doc.get("versions", {}):
            when = _time(doc["time"].get(version))
            if when is not None and when <= self.at:
                out[version] = when
        return out

    def choose(self, name: str, range_: str) -> str:
        versions = self.at_t(name)
        if range_ == "latest":
            finals = [v for v in versions if not is_prerelease(v)] or list(versions)
            picked = max(finals, key=semver_key) if finals else None
        else:
            try:
                picked = max_satisfying(versions, range_)
            except RangeError as exc:
                raise RecordError(f"{name}@{range_}: {exc} (only semver ranges)") from exc
        if picked is None:
            raise RecordError(f"{name}@{range_}: no version published at or before {self.at}")
        return picked

    def store(self, name: str, version: str) -> NpmVersion:
        doc = self.packument(name)
        manifest = doc["versions"][version]
        dist = manifest.get("dist") or {}
        data = self._get(str(dist["tarball"]), "application/octet-stream")
        integrity = str(dist.get("integrity") or "")
        if integrity.startswith("sha512-"):
            actual = "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()
            ok = actual in integrity.split()
        else:
            ok = hashlib.sha1(data, usedforsecurity=False).hexdigest() == dist.get("shasum")
        if not ok:
            raise BlobError(self.blobs.root, f"{name}@{version}: tarball fails its integrity check")
        return NpmVersion(
            package=name,
            version=version,
            publish_time=self.at_t(name)[version],
            manifest=manifest,
            tarball_sha256=self.blobs.put_bytes(data),
        )

    def record(self, specs: Sequence[str]) -> list[NpmVersion]:
        queue = [split_spec(s) for s in specs]
        chosen: dict[tuple[str, str], NpmVersion] = {}
        while queue:
            name, range_ = queue.pop(0)
            if range_.startswith("npm:"):  # an alias: "npm:other@^1"
                name, range_ = split_spec(range_[4:])
            version = self.choose(name, range_)
            if (name, version) in chosen:
                continue
            entry = self.store(name, version)
            chosen[(name, version)] = entry
            manifest = entry.manifest
            optional_peers = manifest.get("peerDependenciesMeta") or {}
            for key in ("dependencies", "optionalDependencies", "peerDependencies"):
                deps = manifest.get(key) or {}
                assert isinstance(deps, dict)
                for dep, dep_range in deps.items():
                    if key == "peerDependencies" and (
                        isinstance(optional_peers, dict)
                        and (optional_peers.get(dep) or {}).get("optional")
                    ):
                        continue
                    if not isinstance(dep_range, str) or ":" in dep_range.replace("npm:", ""):
                        log.warning("%s@%s: skipping %s %r", name, version, dep, dep_range)
                        continue
                    queue.append((dep, dep_range or "*"))
        return sorted(chosen.values(), key=lambda v: (v.package, semver_key(v.version)))


def merge_npm(old: Sequence[NpmVersion], new: Sequence[NpmVersion]) -> list[NpmVersion]:
    """Entries of both, one per (package, version), the new one winning."""
    by_key = {(v.package, v.version): v for v in old}
    by_key.update({(v.package, v.version): v for v in new})
    return sorted(by_key.values(), key=lambda v: (v.package, semver_key(v.version)))


def record_npm(
    specs: Sequence[str],
    at: datetime,
    registry: str | None = None,
    blobs: BlobStore | None = None,
) -> list[NpmVersion]:
    """Record ``specs`` (``name``, ``name@range``, ``@scope/name@1.2.3``) and their
    dependencies as the registry stood at T; tarballs go into the blob store."""
    return NpmRecorder(registry or default_registry(), at, blobs or BlobStore()).record(specs)


__all__ = [
    "DEFAULT_REGISTRY",
    "NpmRecorder",
    "default_registry",
    "merge_npm",
    "record_npm",
    "split_spec",
]
