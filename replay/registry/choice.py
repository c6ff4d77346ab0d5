"""Which of an index's files pip takes at T, and why: the policy, without the I/O.

The files of a PEP 691 page (:func:`candidates`) and :func:`choose`, which picks a
version for one requirement as pip's resolver does over its ``PackageFinder``, and says
why in words that go into the registry index's ``chosen_because``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import urljoin

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.tags import Tag
from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    canonicalize_name,
    parse_sdist_filename,
    parse_wheel_filename,
)
from packaging.version import InvalidVersion, Version

YANK_TIME_NOTE = (
    "the index does not publish when a file was yanked, so a file yanked after T "
    "counts as yanked at T"
)
"""Said whenever a yanked file is passed over or taken: PEP 592 has no yank time."""

_INCLUSIVE = ("==", "===", ">=", "<=", "~=")


@dataclass
class Candidate:
    """One file of a project's index page."""

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


SDIST_SUFFIXES = (".tar.gz", ".zip", ".tar.bz2", ".tbz", ".tar.xz", ".txz", ".tgz", ".tar")
"""The archives pip installs as a source distribution (its ``SUPPORTED_EXTENSIONS`` less the
rare lzip/lzma ones). Old releases were often only a ``.tar.bz2`` (Twisted before 19.2 had
no other file for Linux), so a list of ``.tar.gz`` and ``.zip`` alone found nothing at T."""


def parse_sdist(filename: str) -> tuple[str, Version]:
    """An sdist file's project and version, for every archive of :data:`SDIST_SUFFIXES`
    (packaging's ``parse_sdist_filename`` reads ``.tar.gz`` and ``.zip`` only): the stem's
    last ``-`` parts the name from the version, as pip reads them."""
    if filename.endswith((".tar.gz", ".zip")):
        return parse_sdist_filename(filename)
    suffix = next((s for s in SDIST_SUFFIXES if filename.endswith(s)), None)
    if suffix is None:
        raise InvalidSdistFilename(f"not an sdist: {filename}")
    name, sep, text = filename[: -len(suffix)].rpartition("-")
    if not sep or not name:
        raise InvalidSdistFilename(f"no version in {filename}")
    return canonicalize_name(name), Version(text)


def candidates(project: str, page: str, files: Iterable[dict[str, Any]]) -> list[Candidate]:
    """The wheels and sdists of a PEP 691 page (``page`` is its URL, for relative links)."""
    out = []
    for f in files:
        name = str(f.get("filename", ""))
        tags: frozenset[Tag] | None
        try:
            if name.endswith(".whl"):
                _, version, _, tags = parse_wheel_filename(name)
            elif name.endswith(SDIST_SUFFIXES):
                _, version = parse_sdist(name)
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


def names_prerelease(req: Requirement) -> bool:
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


def is_pinned(req: Requirement) -> bool:
    """pip's test for PEP 592 (``===``, or ``==`` without a wildcard)."""
    return any(
        s.operator == "===" or (s.operator == "==" and not s.version.endswith(".*"))
        for s in req.specifier
    )


def python_ok(requires_python: str | None, python: str) -> bool:
    """Whether a ``requires-python`` admits the interpreter version ``python`` (``3.9.2``)."""
    if not requires_python:
        return True
    try:
        spec = SpecifierSet(requires_python)
    except ValueError:
        return True  # pip ignores an unparseable requires-python too
    return spec.contains(python, prereleases=True)


@dataclass
class Choice:
    version: Version
    files: list[Candidate]
    """The version's files pip could take (yanked ones left out unless pinned)."""
    reason: str


@dataclass
class Chooser:
    """pip's choice for one interpreter and platform.

    ``declared_requires_python`` gives a version's core-metadata ``Requires-Python`` when the
    index left it out (it may fetch the metadata); pip rejects such a version and takes the
    next.
    """

    tags: frozenset[Tag]
    python: str
    """The interpreter's full version, ``3.9.2``."""
    declared_requires_python: Callable[[list[Candidate]], str | None]
    when: str = "T"
    """The moment the files were cut at, as the reason names it (``T``, or the date the test
    runner is taken as of: :class:`replay.registry.record.RunnerLift`)."""

    def tags_ok(self, c: Candidate) -> bool:
        return c.wheel_tags is None or bool(c.wheel_tags & self.tags)

    def choose(self, req: Requirement, files: list[Candidate]) -> Choice | None:
        """The version pip would install for ``req`` among ``files`` (those at T), or None.

        Files for other platforms and files whose ``requires-python`` excludes the
        interpreter are not candidates; a pre-release only when the requirement names one
        with an inclusive operator (``==``, ``>=``, ``<=``, ``~=``, ``===``) or when no final
        release is in range (decided over the candidates, yanked ones included, as
        packaging's ``SpecifierSet.filter`` does for pip); yanked files (PEP 592) only when
        the requirement pins a version (``==`` without a wildcard, or ``===``) and every
        candidate in range is yanked. The index does not say when a file was yanked: a file
        yanked after T is treated as yanked at T (pip at T would have taken it), a known
        deviation the reason states. Today's packaging lets ``contains(v, prereleases=None)``
        accept pre-releases, which recorded ``pluggy 1.0.0.dev0`` for
        ``pluggy<1.0.0a1,>=0.12``, so range and pre-release policy are decided here.
        """
        on_platform = [c for c in files if self.tags_ok(c)]
        eligible = [c for c in on_platform if python_ok(c.requires_python, self.python)]
        explicit = names_prerelease(req)
        in_range = sorted(
            {c.version for c in eligible if req.specifier.contains(c.version, prereleases=True)},
            reverse=True,
        )
        finals = [v for v in in_range if not v.is_prerelease]
        applicable = in_range if explicit or not finals else finals
        app_files = [c for c in eligible if c.version in set(applicable)]
        allow_yanked = is_pinned(req) and bool(app_files) and all(c.yanked for c in app_files)
        rejected: dict[Version, str] = {}
        for version in applicable:
            live = [c for c in app_files if c.version == version and (allow_yanked or not c.yanked)]
            if not live:
                continue
            declared = self.declared_requires_python(live)
            if declared is not None and not python_ok(declared, self.python):
                rejected[version] = declared
                continue
            why = _Reasons(req, version, files, on_platform, eligible, self.python, self.when)
            return Choice(version, live, why.text(rejected, allow_yanked, live))
        return None


@dataclass
class _Reasons:
    """Why ``version`` was taken for ``req``, and what newer versions were passed over."""

    req: Requirement
    version: Version
    files: list[Candidate]
    on_platform: list[Candidate]
    eligible: list[Candidate]
    python: str
    when: str = "T"

    def _newer(self, versions: Iterable[Version], explicit: bool) -> list[Version]:
        return sorted(
            {
                x
                for x in versions
                if x > self.version
                and self.req.specifier.contains(x, prereleases=True)
                and (explicit or not x.is_prerelease)
            }
        )

    def text(self, rejected: dict[Version, str], allow_yanked: bool, taken: list[Candidate]) -> str:
        explicit = names_prerelease(self.req)
        spec = str(self.req.specifier) or "any version"
        v = self.version
        if not v.is_prerelease:
            why = [f"newest final release at {self.when} satisfying {spec}"]
        elif explicit:
            why = [
                f"named pre-release: newest at {self.when} satisfying {spec} "
                "(the requirement names one)"
            ]
        else:
            why = [
                f"newest at {self.when} satisfying {spec}; a pre-release: no final release is "
                "in range (pip's fallback)"
            ]
        eligible_versions = {c.version for c in self.eligible}
        newer_pre = [x for x in self._newer(eligible_versions, True) if x.is_prerelease]
        if newer_pre and not explicit:
            why.append(f"passed over pre-releases {', '.join(map(str, newer_pre))}")
        excluded = dict(rejected)
        for c in self.on_platform:
            if c.version not in eligible_versions:
                excluded.setdefault(c.version, c.requires_python or "")
        listed = self._newer(excluded, explicit)
        if listed:
            text = ", ".join(f"{x} ({excluded[x]})" for x in listed)
            why.append(f"requires-python excludes newer {text} on Python {self.python}")
        platform_versions = {c.version for c in self.on_platform}
        off = self._newer((c.version for c in self.files), explicit)
        off = [x for x in off if x not in platform_versions]
        if off:
            why.append(f"no file for the target in newer {', '.join(map(str, off))}")
        yanked = [
            x
            for x in self._newer(eligible_versions, explicit)
            if x not in rejected and all(c.yanked for c in self.eligible if c.version == x)
        ]
        if yanked:
            why.append(f"passed over yanked {', '.join(map(str, yanked))}")
        if allow_yanked:
            why.append("yanked, taken because the requirement pins it (PEP 592)")
        elif any(c.yanked for c in self.eligible if c.version == v and c not in taken):
            why.append("its yanked files left out")
        if yanked or allow_yanked or any(c.yanked for c in self.eligible if c.version == v):
            why.append(YANK_TIME_NOTE)
        return "; ".join(why)


__all__ = [
    "YANK_TIME_NOTE",
    "Candidate",
    "Choice",
    "Chooser",
    "candidates",
    "is_pinned",
    "names_prerelease",
    "python_ok",
]
