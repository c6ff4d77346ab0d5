"""The Python package index as it stood at T: the catalog and the documents PyPI serves.

Pure functions from the recorded files to the wire: the PEP 503 HTML and PEP 691 JSON simple
pages (api-version 1.1, PEP 700 ``upload-time``), and the per-project JSON API. URLs are given
by the caller, so the same catalog serves the real host names (behind the gateway) and a plain
local address (tests, ``replay registry serve``).
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.message import Message
from email.parser import BytesParser
from email.policy import compat32
from typing import Any
from urllib.parse import urlsplit

from packaging.version import InvalidVersion, Version

from replay.base.manifest import PythonFile

INDEX_HOST = "pypi.org"
FILES_HOST = "files.pythonhosted.org"
API_VERSION = "1.1"

JSON_V1 = "application/vnd.pypi.simple.v1+json"
HTML_V1 = "application/vnd.pypi.simple.v1+html"
TEXT_HTML = "text/html"

FileUrl = Callable[[PythonFile], str]


def normalize(name: str) -> str:
    """PEP 503 normalisation."""
    return re.sub(r"[-_.]+", "-", name).lower()


def version_key(version: str) -> tuple[int, Version | str]:
    """Order versions as PEP 440 does; unparseable (legacy) ones sort first, by text."""
    try:
        return (1, Version(version))
    except InvalidVersion:
        return (0, version)


def is_prerelease(version: str) -> bool:
    try:
        return Version(version).is_prerelease
    except InvalidVersion:
        return False


def file_url(pf: PythonFile) -> str:
    """The file's URL on the files host, a PyPI-shaped path made from its sha256.

    PyPI's own path for a file is the blake2b-256 of its content; the files app serves
    that path too (see ``serve.Registry.find_file``), so URLs kept in lockfiles still work.
    """
    s = pf.sha256
    return f"https://{FILES_HOST}/packages/{s[:2]}/{s[2:4]}/{s[4:]}/{pf.filename}"


def file_path(pf: PythonFile) -> str:
    return urlsplit(file_url(pf)).path


def iso_z(when: datetime) -> str:
    """PEP 700 / PyPI spelling: ``2024-03-03T14:49:04.427406Z``."""
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass
class Project:
    """One project's files at T, newest version last."""

    name: str
    """The PEP 503 normalised name."""
    display: str
    files: list[PythonFile] = field(default_factory=list)

    @property
    def versions(self) -> list[str]:
        return sorted({f.version for f in self.files}, key=version_key)

    def files_of(self, version: str) -> list[PythonFile]:
        return [f for f in self.files if f.version == version]

    def latest(self) -> str | None:
        """PyPI's "current" release: the newest final version not wholly yanked."""
        versions = self.versions
        live = [v for v in versions if any(not f.yanked for f in self.files_of(v))]
        finals = [v for v in live if not is_prerelease(v)]
        pick = finals or live or versions
        return pick[-1] if pick else None


class Catalog:
    """The files of a ``RegistryIndex`` uploaded at or before T, by project and by path."""

    def __init__(self, files: Iterable[PythonFile], at: datetime) -> None:
        self.at = at
        self.projects: dict[str, Project] = {}
        self.by_path: dict[str, PythonFile] = {}
        self.by_filename: dict[str, PythonFile] = {}
        for pf in sorted(files, key=lambda f: (version_key(f.version), f.filename)):
            if pf.upload_time > at:
                continue
            name = normalize(pf.project)
            project = self.projects.setdefault(name, Project(name, pf.project))
            project.files.append(pf)
            self.by_path[file_path(pf)] = pf
            self.by_filename[pf.filename] = pf

    def project(self, name: str) -> Project | None:
        return self.projects.get(normalize(name))


# ----------------------------------------------------------------------------- simple API


def _yanked_reason(pf: PythonFile) -> str | None:
    if pf.yanked is False:
        return None
    return pf.yanked if isinstance(pf.yanked, str) else ""


def simple_index_json(catalog: Catalog) -> dict[str, Any]:
    return {
        "meta": {"api-version": API_VERSION, "_last-serial": 0},
        "projects": [
            {"name": p.display, "_last-serial": 0}
            for p in sorted(catalog.projects.values(), key=lambda p: p.name)
        ],
    }


def simple_index_html(catalog: Catalog) -> str:
    links = "\n".join(
        f'    <a href="/simple/{p.name}/">{html.escape(p.display)}</a>'
        for p in sorted(catalog.projects.values(), key=lambda p: p.name)
    )
    return (
        "<!DOCTYPE html>\n<html>\n  <head>\n"
        f'    <meta name="pypi:repository-version" content="{API_VERSION}">\n'
        "    <title>Simple index</title>\n  </head>\n  <body>\n"
        f"{links}\n  </body>\n</html>\n"
    )


def simple_project_json(project: Project, url: FileUrl) -> dict[str, Any]:
    files = []
    for pf in project.files:
        entry: dict[str, Any] = {
            "filename": pf.filename,
            "url": url(pf),
            "hashes": {"sha256": pf.sha256},
            "requires-python": pf.requires_python,
            "size": pf.size,
            "upload-time": iso_z(pf.upload_time),
            "yanked": False if pf.yanked is False else (_yanked_reason(pf) or True),
        }
        metadata: dict[str, str] | bool = (
            {"sha256": pf.metadata_sha256} if pf.metadata_sha256 else False
        )
        entry["core-metadata"] = metadata
        entry["data-dist-info-metadata"] = metadata
        files.append(entry)
    return {
        "meta": {"api-version": API_VERSION, "_last-serial": 0},
        "name": project.name,
        "files": files,
        "versions": project.versions,
    }


def simple_project_html(project: Project, url: FileUrl) -> str:
    lines = []
    for pf in project.files:
        attrs = [f'href="{html.escape(url(pf))}#sha256={pf.sha256}"']
        if pf.requires_python:
            attrs.append(f'data-requires-python="{html.escape(pf.requires_python)}"')
        if pf.metadata_sha256:
            attrs.append(f'data-dist-info-metadata="sha256={pf.metadata_sha256}"')
            attrs.append(f'data-core-metadata="sha256={pf.metadata_sha256}"')
        reason = _yanked_reason(pf)
        if reason is not None:
            attrs.append(f'data-yanked="{html.escape(reason)}"')
        lines.append(f"    <a {' '.join(attrs)}>{html.escape(pf.filename)}</a><br />")
    body = "\n".join(lines)
    return (
        "<!DOCTYPE html>\n<html>\n  <head>\n"
        f'    <meta name="pypi:repository-version" content="{API_VERSION}">\n'
        f"    <title>Links for {html.escape(project.name)}</title>\n  </head>\n  <body>\n"
        f"    <h1>Links for {html.escape(project.name)}</h1>\n{body}\n  </body>\n</html>\n"
    )


def negotiate(accept: str | None, fmt: str | None = None) -> str | None:
    """PEP 691 content negotiation; ``None`` means 406.

    ``?format=`` wins, as on PyPI. Without an Accept header, HTML (the PEP 503 default).
    Among the types offered, the highest quality wins; ties go to the order PyPI prefers.
    """
    aliases = {
        JSON_V1: JSON_V1,
        "application/vnd.pypi.simple.latest+json": JSON_V1,
        HTML_V1: HTML_V1,
        "application/vnd.pypi.simple.latest+html": HTML_V1,
        TEXT_HTML: TEXT_HTML,
    }
    if fmt:
        return aliases.get(fmt)
    if not accept or not accept.strip():
        return TEXT_HTML
    preference = [JSON_V1, HTML_V1, TEXT_HTML]
    best: tuple[float, int, str] | None = None
    for item in accept.split(","):
        parts = [p.strip() for p in item.split(";")]
        media = parts[0].lower()
        q = 1.0
        for param in parts[1:]:
            key, _, value = param.partition("=")
            if key.strip().lower() == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        if q <= 0:
            continue
        if media in ("*/*", "text/*", "application/*"):
            chosen = TEXT_HTML if media != "application/*" else JSON_V1
        elif media in aliases:
            chosen = aliases[media]
        else:
            continue
        rank = (q, -preference.index(chosen), chosen)
        if best is None or rank[:2] > best[:2]:
            best = rank
    return best[2] if best else None


# ----------------------------------------------------------------------------- JSON API


def parse_metadata(data: bytes) -> Message:
    return BytesParser(policy=compat32).parsebytes(data)


def _all(meta: Message | None, key: str) -> list[str]:
    if meta is None:
        return []
    return [str(v) for v in meta.get_all(key) or []]


def _one(meta: Message | None, key: str) -> str | None:
    if meta is None:
        return None
    value = meta.get(key)
    return None if value is None or str(value) == "UNKNOWN" else str(value)


def project_info(project: Project, version: str, meta: Message | None, base: str) -> dict[str, Any]:
    """``info`` of the JSON API, from the release's core metadata where we have it."""
    urls: dict[str, str] = {}
    for item in _all(meta, "Project-URL"):
        label, _, link = item.partition(",")
        urls[label.strip()] = link.strip()
    home = _one(meta, "Home-page")
    if home and "Homepage" not in urls:
        urls["Homepage"] = home
    files = project.files_of(version)
    yanked = bool(files) and all(f.yanked is not False for f in files)
    description = meta.get_payload() if meta is not None else ""
    if meta is not None and not description:
        description = _one(meta, "Description") or ""
    return {
        "author": _one(meta, "Author"),
        "author_email": _one(meta, "Author-email"),
        "bugtrack_url": None,
        "classifiers": _all(meta, "Classifier"),
        "description": description,
        "description_content_type": _one(meta, "Description-Content-Type"),
        "docs_url": None,
        "download_url": _one(meta, "Download-URL"),
        "downloads": {"last_day": -1, "last_month": -1, "last_week": -1},
        "dynamic": _all(meta, "Dynamic") or None,
        "home_page": home,
        "keywords": _one(meta, "Keywords"),
        "license": _one(meta, "License"),
        "license_expression": _one(meta, "License-Expression"),
        "license_files": _all(meta, "License-File") or None,
        "maintainer": _one(meta, "Maintainer"),
        "maintainer_email": _one(meta, "Maintainer-email"),
        "name": _one(meta, "Name") or project.display,
        "package_url": f"{base}/project/{project.name}/",
        "platform": _one(meta, "Platform"),
        "project_url": f"{base}/project/{project.name}/",
        "project_urls": urls or None,
        "provides_extra": _all(meta, "Provides-Extra") or None,
        "release_url": f"{base}/project/{project.name}/{version}/",
        "requires_dist": _all(meta, "Requires-Dist") or None,
        "requires_python": next((f.requires_python for f in files if f.requires_python), None)
        or _one(meta, "Requires-Python"),
        "summary": _one(meta, "Summary"),
        "version": version,
        "yanked": yanked,
        "yanked_reason": next((_yanked_reason(f) for f in files if f.yanked), None) or None,
    }


def release_file(pf: PythonFile, url: FileUrl, digests: dict[str, str]) -> dict[str, Any]:
    """One file of ``releases``/``urls`` in the JSON API."""
    wheel = pf.filename.endswith(".whl")
    return {
        "comment_text": None,
        "digests": {"sha256": pf.sha256, **digests},
        "downloads": -1,
        "filename": pf.filename,
        "has_sig": False,
        "md5_digest": digests.get("md5"),
        "packagetype": "bdist_wheel" if wheel else "sdist",
        "python_version": pf.filename.split("-")[-3] if wheel else "source",
        "requires_python": pf.requires_python,
        "size": pf.size,
        "upload_time": pf.upload_time.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S"),
        "upload_time_iso_8601": iso_z(pf.upload_time),
        "url": url(pf),
        "yanked": pf.yanked is not False,
        "yanked_reason": _yanked_reason(pf) or None,
    }


__all__ = [
    "FILES_HOST",
    "INDEX_HOST",
    "Catalog",
    "Project",
    "file_path",
    "file_url",
    "negotiate",
    "normalize",
    "project_info",
    "release_file",
    "simple_index_html",
    "simple_index_json",
    "simple_project_html",
    "simple_project_json",
]
