"""The image audit: the answer searched in the files of the images an agent's sandbox is made of.

The snapshot audit (:mod:`replay.snapshot.audit`) covers the world; the agent also reads the
filesystem of its sandbox: the case's environment image (the base image's interpreter and
standard library, the packages its setup installed) and the harness layers built on it. Any
of these can carry the case's future fix: Debian bookworm's Python 3.11 ships ``tomllib`` and
pip and setuptools vendor ``tomli``, so a 2021 tomli case finds its own fixed line there.

What is searched: the gold patch's added lines (stripped, 16+ characters) and the names of the
functions and classes the hidden tests add (8+ characters), minus whatever the base
repository's files already hold (a line the project already had is no leak): the selection of
:func:`replay.snapshot.audit.answer_of`. Where: every regular file under :data:`SCANNED`
(site-packages, dist-packages, ``/usr/lib/python3*``, vendored copies, ``/usr/share``, ``/opt``
where the harness lives, home directories), except the case's working directory (the
repository at its base commit, which the snapshot audit covers), and every member of the zip
archives there (``.whl``, ``.zip``, ``.egg``, ``.pyz``: pip's and setuptools' own wheels). How:
one container per image with no network, the markers copied in, ``grep -rFoIZ -f`` over plain
files (bytes, ``LC_ALL=C``; ``-I`` leaves out binary files such as ``.pyc``), and a small
script run by the image's own ``python3`` for the archives. Because the markers are stripped,
an indented copy matches too.

What a base image held before T is no answer either. A generic gold line (``except
TypeError:``, 17 characters) is in 94 files of bookworm's standard library and its vendored pip
and setuptools; none of them is a copy of the fix. So a reference is searched first
(:func:`reference_image`): the base image the environment was built FROM, or when that came
out after T the newest base image released by T that is built here. Its packages were frozen
before T, so a marker it holds outside any copy of the fix is text older than the fix
(:func:`common_markers`). A hit of such a marker counts only in a copy of the fix
(:func:`copies`): a file in a package or distribution named like the project, or holding two
markers or more, unless the reference, released by T, holds that file with the marker (a
file a release froze before T is no copy of a later fix). So a later release of the project
installed into the environment, or vendored, still leaks by every marker it holds.

A base image released after T may carry a later copy of the project (issue 16: bookworm's
``tomllib`` and the ``tomli`` its pip and setuptools vendor hold 2021 tomli fixes), so it cannot
vouch for every line it holds. Yet a fix older than every base image (bullseye, the oldest, came
out 2021-08-14) would otherwise have its generic lines counted as leaks in the standard
library. So when no base image released by T is built here, the oldest one built is the
reference, and from it only generic text is discounted: a marker it holds in files of
:data:`GENERIC_OWNERS` unrelated packages (:func:`owner`), none of them a copy of the fix. A
fix's line copied into a later release lands in one place, the copy; a line spread over three
unrelated packages is idiom older than any fix.

What the case's own registry installed is text older than the fix too: a hit in a file an
installed distribution's ``RECORD`` lists, where that distribution and version are among the
files the case's registry recorded as on the index at T (:func:`registry_at_t`), is no leak
(:func:`_on_index_at_t`), unless the distribution is named like the project (a release of the
project itself still counts by every marker it holds). Which distribution owns a file is read
in the same container (:data:`_OWNERS_SCRIPT`).

A line is a trace of the fix only where the lines around it are the fix's too. A gold line
found alone, outside a copy of the fix, with none of the lines the patched file has around it
(:func:`fix_contexts`) near it, is a line of other code that reads the same by chance:
glom's 2020 fix overrides ``reprlib.Repr.repr1`` and so adds ``def repr1(self, x, level):``,
which ``reprlib.py`` and ``pydoc.py`` hold too; its 2019 fix adds ``if func is None:``, which
``functools.py`` holds (fifth corpus). Such a hit is no leak (:func:`out_of_context`), with a
note. A copy, vendored or renamed (``tomllib`` of ``tomli``), carries the fix's neighbours
with its lines. What is near a hit is read in the same container (:data:`_NEAR_SCRIPT`); an
image without ``python3`` keeps every hit.

A hit is a leak unless the case's ``audit.accepted`` declares it, with a reason
(:class:`replay.base.case.AcceptedHit`). :func:`propose_base_image` tells which other base
image (``replay-base:<release>``) carries none of the markers.
"""

from __future__ import annotations

import posixpath
import re
import shlex
import tempfile
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Literal

from replay.base.case import Audit, Case, read_patch
from replay.images.base import RELEASES as BASE_RELEASES
from replay.images.base import Release, parse_base_tag
from replay.images.env import env_reference
from replay.runtime.base import (
    ENV_IMAGE_LABEL,
    IMAGE_KIND_LABEL,
    ContainerSpec,
    Limits,
    Runtime,
    SandboxError,
)
from replay.snapshot.audit import base_text, gold_lines, test_names

SCANNED = ("/usr", "/opt", "/home", "/root", "/etc")
"""The trees searched in each image: everything an installed package or interpreter lives in."""
ARCHIVES = (".whl", ".zip", ".egg", ".pyz")
RELEASES = ("bullseye", "bookworm", "trixie")
"""The Debian releases base images are built for, oldest first (``replay-base:<release>``)."""
BASE_REPOSITORY = "replay-base"
STAGE = "/tmp/replay-image-audit"
SCAN_LIMITS = Limits(cpus=None, memory=1024**3, pids=256, wall_time=900)

MarkerKind = Literal["gold line", "test name"]

_ARCHIVE_SCRIPT = """
import os, sys, zipfile
markers = [m for m in open(sys.argv[1], encoding="utf-8").read().split("\\n") if m]
out = sys.stdout.buffer
for top in sys.argv[2:]:
    for root, dirs, files in os.walk(top):
        for name in files:
            path = os.path.join(root, name)
            if not name.endswith(SUFFIXES) or os.path.islink(path):
                continue
            try:
                with zipfile.ZipFile(path) as archive:
                    for info in archive.infolist():
                        if info.is_dir() or info.file_size > 64 * 1024 * 1024:
                            continue
                        text = archive.read(info).decode("utf-8", "replace")
                        for m in markers:
                            if m in text:
                                where = path + "!" + info.filename
                                out.write(where.encode("utf-8", "replace") + b"\\0")
                                out.write(m.encode("utf-8") + b"\\n")
            except Exception as exc:
                sys.stderr.write(path + ": " + str(exc) + "\\n")
""".replace("SUFFIXES", repr(ARCHIVES))


_OWNERS_SCRIPT = """
import csv, os, sys
data = open(sys.argv[1], "rb").read()
paths, pos = [], 0
while pos < len(data):
    nul = data.index(b"\\0", pos)
    end = data.index(b"\\n", nul)
    paths.append(data[pos:nul].decode("utf-8", "replace"))
    pos = end + 1
sites, out = {}, sys.stdout.buffer
for path in sorted(set(paths)):
    parts = path.split("/")
    tops = [i for i, part in enumerate(parts[:-1]) if part in ("site-packages", "dist-packages")]
    if not tops:
        continue
    site = "/".join(parts[: tops[-1] + 1])
    if site not in sites:
        owned = {}
        try:
            names = os.listdir(site)
        except OSError:
            names = []
        for name in names:
            if not name.endswith(".dist-info"):
                continue
            dist, _, version = name[: -len(".dist-info")].partition("-")
            try:
                with open(os.path.join(site, name, "RECORD"), newline="", errors="replace") as f:
                    for row in csv.reader(f):
                        if row:
                            owned[os.path.normpath(os.path.join(site, row[0]))] = (dist, version)
            except OSError:
                pass
        sites[site] = owned
    found = sites[site].get(os.path.normpath(path))
    if found:
        out.write(path.encode("utf-8", "replace") + b"\\0")
        out.write(found[0].encode() + b"\\0" + found[1].encode() + b"\\n")
"""
"""Which installed distribution owns each hit's file: ``path NUL name NUL version LF`` for
every path (of the grep's ``path NUL marker LF`` records) that a ``*.dist-info/RECORD`` of
its ``site-packages`` or ``dist-packages`` lists. Run by the image's own ``python3``."""

CONTEXT_LINES = 3
"""How many lines either side of a gold line are its context: git's default, so a hunk holds
them for each line it adds."""

_NEAR_SCRIPT = """
import json, sys, zipfile
RADIUS = CONTEXT
data = open(sys.argv[1], "rb").read()
wanted, pos = {}, 0
while pos < len(data):
    nul = data.index(b"\\0", pos)
    end = data.index(b"\\n", nul)
    path = data[pos:nul].decode("utf-8", "surrogateescape")
    wanted.setdefault(path, set()).add(data[nul + 1 : end].decode("utf-8", "replace"))
    pos = end + 1
out = sys.stdout
for path in sorted(wanted)[:20000]:
    archive, bang, member = path.partition("!")
    try:
        if bang:
            with zipfile.ZipFile(archive) as zf:
                if zf.getinfo(member).file_size > 16 * 1024 * 1024:
                    continue
                raw = zf.read(member)
        else:
            with open(path, "rb") as f:
                raw = f.read(16 * 1024 * 1024 + 1)
            if len(raw) > 16 * 1024 * 1024:
                continue
    except Exception as exc:
        sys.stderr.write(path + ": " + str(exc) + "\\n")
        continue
    lines = raw.decode("utf-8", "replace").splitlines()
    for marker in sorted(wanted[path]):
        near = set()
        for i, line in enumerate(lines):
            if marker in line:
                for other in lines[max(0, i - RADIUS) : i] + lines[i + 1 : i + 1 + RADIUS]:
                    near.add(other.strip())
        out.write(json.dumps({"path": path, "marker": marker, "near": sorted(near)}) + "\\n")
""".replace("CONTEXT", str(CONTEXT_LINES))
"""For each hit (the ``path NUL marker LF`` records of the grep and the archives), the
stripped lines within :data:`CONTEXT_LINES` of each line holding the marker: one JSON object
per line. Files over 16 MiB are left out (their hits stay leaks). Run by the image's own
``python3``."""


@dataclass(frozen=True)
class Marker:
    """A piece of the answer the audit searches for."""

    text: str
    kind: MarkerKind


@dataclass(frozen=True)
class ImageHit:
    """A marker found in a file of an image."""

    image: str
    """The image's reference (``replay-env:<case>``, ``replay-harness:...``)."""
    path: str
    """The file in the image; a member of an archive is ``<archive>!<member>``."""
    marker: Marker
    accepted: str | None = None
    """The reason the case gives for accepting this hit; ``None``: a leak."""

    @property
    def leak(self) -> bool:
        return self.accepted is None

    def __str__(self) -> str:
        text = self.marker.text if len(self.marker.text) <= 70 else self.marker.text[:67] + "..."
        return f"{self.image}:{self.path}: {self.marker.kind} {text!r}"


@dataclass(frozen=True)
class ImageAudit:
    """What the image audit of one case found."""

    images: list[str]
    """The images searched."""
    hits: list[ImageHit]
    notes: list[str] = field(default_factory=list)
    """What was not searched, and why (no environment image built, no ``python3`` in an
    image to open its archives, a marker the base image already held)."""
    common: dict[str, list[str]] = field(default_factory=dict)
    """The markers the reference base image held as text older than the fix, each with the
    files there that hold it (:func:`common_markers`: all it held outside a copy of the fix if
    released by T, else only what it held in unrelated packages): a hit of one counts only in a
    copy of the fix."""

    @property
    def leaks(self) -> list[ImageHit]:
        return [h for h in self.hits if h.leak]

    @property
    def accepted(self) -> list[ImageHit]:
        return [h for h in self.hits if not h.leak]


@dataclass(frozen=True)
class Scan:
    """One image searched: its hits (path, marker text) and what could not be searched."""

    image: str
    hits: list[tuple[str, str]]
    notes: list[str] = field(default_factory=list)
    owners: dict[str, tuple[str, str]] = field(default_factory=dict)
    """The installed distribution (name, version) whose ``RECORD`` lists a hit's file."""
    near: dict[tuple[str, str], frozenset[str]] = field(default_factory=dict)
    """For a hit (path, marker), the stripped lines within :data:`CONTEXT_LINES` of the
    marker there; a hit missing here (no ``python3``, a file too large) has none known."""


# ----------------------------------------------------------------------------- markers


def markers_from(gold: str, tests: str, base: str) -> list[Marker]:
    """The markers of a gold patch and a hidden-test patch, minus what ``base`` (the base
    repository's files, concatenated) already holds. A gold line that is only a comment counts
    only in a copy of the project (:func:`comment_only`)."""
    found = {m: Marker(m, "gold line") for m in gold_lines(gold) if m not in base}
    for name in test_names(tests):
        if name not in base:
            found.setdefault(name, Marker(name, "test name"))
    return sorted(found.values(), key=lambda m: (m.kind, m.text))


def case_markers(case: Case) -> list[Marker]:
    """The case's markers; the base repository is read from the case's snapshot."""
    return markers_from(
        read_patch(case.gold.patch),
        read_patch(case.hidden_tests.patch),
        base_text(case),
    )


_PATCH_PATH = re.compile(r"^diff --git a/(\S+) b/", re.MULTILINE)
_NOT_PACKAGES = frozenset({"src", "lib", "tests", "test", "testing", "docs", "doc", "scripts"})


def _name(part: str) -> str:
    """A path component as a distribution or package name: ``tomli-2.0.1.dist-info``,
    ``pip-23.0.1-py3-none-any.whl`` and ``Tomli.py`` give ``tomli``, ``pip``, ``tomli``."""
    part = part.lower().removesuffix(".py")
    return re.sub(r"[-_.]+", "_", part.split("-")[0])


def project_names(repository: str, *patches: str) -> set[str]:
    """The names the project's code goes by: the repository's (``hukkin/tomli``: ``tomli``,
    also a single module's ``six.py``) and each package its patches touch
    (``src/humanize/filesize.py``: ``humanize``)."""
    # Whole, not cut at a dash: python-dateutil is python_dateutil-2.8.2.dist-info installed.
    names = {re.sub(r"[-_.]+", "_", repository.rsplit("/", 1)[-1].lower())}
    for patch in patches:
        for path in _PATCH_PATH.findall(patch):
            dirs = [d for d in path.split("/")[:-1] if d not in _NOT_PACKAGES]
            names.update(_name(d) for d in dirs[:1])
    return names - {""}


def case_project_names(case: Case) -> set[str]:
    """:func:`project_names` of the case's repository and patches."""
    return project_names(
        case.repository.name, read_patch(case.gold.patch), read_patch(case.hidden_tests.patch)
    )


def is_copy_of(path: str, names: Iterable[str]) -> bool:
    """Whether ``path`` (``<archive>!<member>`` for a member) is in a package or distribution
    named like the project: a copy of its code, vendored or installed."""
    wanted = set(names)
    return any(_name(part) in wanted for part in re.split(r"[/!]", path) if part)


def copies(hits: Iterable[tuple[str, str]], names: Iterable[str]) -> set[str]:
    """The files among ``hits`` (path, marker) taken as copies of the fix: named like the
    project (:func:`is_copy_of`), or holding two distinctive markers or more (a renamed copy,
    as the standard library's ``tomllib`` is of ``tomli``).

    A marker the same hits spread over files of :data:`GENERIC_OWNERS` unrelated packages
    (:func:`owner`) or more is idiom, not a trace of the fix, and does not count towards the
    two: a 2026 simplejson fix adding ``import traceback``, ``except BaseException:`` and
    ``def __init__(self):`` made dozens of standard-library modules "copies" for holding two
    of them. A renamed copy still shows: its lines are the project's own, held in one or two
    places (``tomllib`` and the ``tomli`` pip and setuptools vendor are two owners)."""
    hits = list(hits)
    names = set(names)
    owners: dict[str, set[str]] = {}
    held: dict[str, set[str]] = {}
    for path, text in hits:
        held.setdefault(path, set()).add(text)
        owners.setdefault(text, set()).add(owner(path))
    generic = {text for text, found in owners.items() if len(found) >= GENERIC_OWNERS}
    generic |= {text for text in owners if comment_only(text)}
    return {p for p, found in held.items() if len(found - generic) > 1 or is_copy_of(p, names)}


def comment_only(marker: str) -> bool:
    """A gold line that is only a comment: it makes no file a copy by being there, and a hit
    of it counts only in a copy of the project. python-dotenv's 2019 fix adds type comments
    (``# type: () -> None``) that pip holds, two in one file, which made pip's file a "copy"
    (third corpus); tomli's 2021 fix has a comment as its only marker, which the tomli that
    bookworm's pip vendors holds (``tests/images/test_real_leak.py``): still a leak there."""
    return marker.startswith("#")


def fix_contexts(gold: str) -> dict[str, frozenset[str]]:
    """For each line the gold patch adds (stripped), the stripped lines within
    :data:`CONTEXT_LINES` of it in the patched file: the hunk's context and added lines
    around it. A line added in several places has the lines around each."""
    found: dict[str, set[str]] = {}
    post: list[tuple[str, bool]] = []  # the hunk's lines in the patched file: (text, added)

    def flush() -> None:
        for i, (text, added) in enumerate(post):
            if not added:
                continue
            around = post[max(0, i - CONTEXT_LINES) : i] + post[i + 1 : i + 1 + CONTEXT_LINES]
            found.setdefault(text, set()).update(t for t, _ in around)
        post.clear()

    for line in gold.splitlines():
        if line.startswith("@@") or line.startswith("diff --git "):
            flush()
        elif line.startswith("+++") or line.startswith("---"):
            continue
        elif line.startswith("+"):
            post.append((line[1:].strip(), True))
        elif line.startswith(" ") or line == "":
            post.append((line[1:].strip(), False))
    flush()
    return {text: frozenset(near - {text}) for text, near in found.items()}


TELLING = 8
"""Lines shorter than this (``else:``, ``return``, ``pass``) say nothing about where a line
stands: they are left out when the lines near a hit are compared with the fix's."""


def in_fix_context(near: Iterable[str], context: Iterable[str]) -> bool:
    """Whether the lines near a hit (``near``) share with the lines around the gold line in the
    fix (``context``) one line long enough to be a marker itself
    (:data:`replay.snapshot.audit.MIN_MARKER`), or two of :data:`TELLING` characters or more:
    ``return True`` alone beside ``def isclosed(self):`` in urllib3 is chance; ``self.msg =
    headers`` there would be responses' own code."""
    from replay.snapshot.audit import MIN_MARKER

    shared = {line for line in near if len(line) >= TELLING} & set(context)
    return len(shared) >= 2 or any(len(line) >= MIN_MARKER for line in shared)


def out_of_context(
    scan: Scan, contexts: dict[str, frozenset[str]], copied: set[str]
) -> tuple[Scan, list[str]]:
    """``scan`` less the hits of a gold line found alone: outside a copy of the fix
    (``copied``, :func:`copies`), not a comment (those count only in a copy anyway), and
    with none of the fix's lines around it near it (:func:`in_fix_context`); a note for
    each. A hit whose surroundings are not known stays a leak."""
    kept: list[tuple[str, str]] = []
    notes: list[str] = []
    for path, text in scan.hits:
        near = scan.near.get((path, text))
        context = contexts.get(text)
        if (
            path in copied
            or near is None
            or context is None
            or comment_only(text)
            or in_fix_context(near, context)
        ):
            kept.append((path, text))
            continue
        notes.append(
            f"{scan.image}: no leak in {path}: {text!r} stands there alone, with none of the "
            "lines around it in the fix near it: other code that reads the same, not a copy"
        )
    return Scan(scan.image, kept, scan.notes, scan.owners, scan.near), notes


GENERIC_OWNERS = 3
"""In how many unrelated packages (:func:`owner`) a base image released after T must hold a
marker for it to be discounted as idiom older than the fix (:func:`common_markers`)."""
_LIBRARY = re.compile(r"(?:^|/)lib/python\d(?:\.\d+)?/(?:(?:site|dist)-packages/)?")
_VENDOR_DIRS = frozenset({"_vendor", "vendor", "_vendored"})


def owner(path: str) -> str:
    """The package a file of an image belongs to, so that text spread over unrelated code can be
    told from text held in one place (:func:`common_markers`).

    Under a Python library tree (``.../lib/python3.X/``, its ``site-packages`` or
    ``dist-packages``, ``/usr/lib/python3/dist-packages``) it is the top-level package,
    module or distribution there (:func:`_name`): ``argparse`` for the standard library's
    ``argparse.py``, ``unittest`` for ``unittest/mock.py``, ``pip`` for
    ``pip/_internal/...`` and ``pip-20.3.4.dist-info``. An archive's member is named by its own
    path (the archive's place does not matter): pip's wheel under ``/usr/share/python-wheels`` is
    ``pip`` as the installed pip is. Code vendored under ``_vendor``/``vendor`` belongs to
    the vendored package, not the vendoring one: ``pip/_vendor/packaging/version.py`` and
    ``setuptools/_vendor/packaging/version.py`` are both ``packaging``, one piece of code copied
    twice. The standard library and installed packages share one namespace, so a module and a
    distribution of one name count once. Any other file belongs to its first two directories
    (``/usr/share``, ``/usr/bin``, ``/opt/harness``): however many files there, they count once.
    Each rule errs towards fewer owners, so towards counting a hit as a leak."""
    archive, bang, member = path.partition("!")
    if bang:
        parts = [p for p in member.split("/") if p]
    else:
        library = _LIBRARY.search(path)
        if library is None:
            dirs = [p for p in path.split("/") if p][:-1]
            return "/" + "/".join(dirs[:2])
        parts = [p for p in path[library.end() :].split("/") if p]
    if not parts:
        return archive
    found = parts[0]
    for i, part in enumerate(parts[:-1]):
        if part not in _VENDOR_DIRS:
            continue
        below = parts[i + 1]
        # A vendored package's directory, or a single vendored module (``six.py``); the
        # vendoring package's own files there (``vendor.txt``, ``__init__.py``) stay its own.
        if i + 2 < len(parts) or (below.endswith(".py") and below != "__init__.py"):
            found = below
    return _name(found)


def common_markers(
    hits: Iterable[tuple[str, str]], release: Release, at: datetime, names: Iterable[str]
) -> dict[str, list[str]]:
    """The markers a base image of ``release`` holds (``hits``: path, marker) that are text
    older than the fix, each with the files holding it. None held in any of :func:`copies` of
    the fix counts.

    Released on or before T, the image's packages were frozen before the fix: every marker it
    holds outside the copies is older text. Released after T, it may carry a later copy of the
    project (issue 16: bookworm's ``tomllib`` holds 2021 tomli fixes), so it discounts only
    generic text, a marker it holds in files of :data:`GENERIC_OWNERS` unrelated packages
    (:func:`owner`) or more. A fix's line copied into a later release lands in one place, the
    copy (a renamed module gives itself away by holding several markers, an installed or
    vendored one by its name); a line spread over three unrelated packages is idiom older
    than any fix. A marker held in one or two packages may be such a later copy: it counts.

    Released by T, the image's copies of the fix are only those named like the project (a
    stable update may carry the fix into a vendored copy, whose markers stay searched); a file
    of another name holding two markers is older text, not a renamed copy: what a release
    froze before T cannot copy a fix made after it (python-lz4 2021, seventh corpus: the fix
    takes gzip's buffer handling, and bullseye's ``gzip.py`` holds four of its lines)."""
    hits = list(hits)
    names = set(names)
    if release.released <= at.date():
        copied = {path for path, _ in hits if is_copy_of(path, names)}
    else:
        copied = copies(hits, names)
    held: dict[str, list[str]] = {}
    for path, text in hits:
        held.setdefault(text, []).append(path)
    outside = {
        text: sorted(paths)
        for text, paths in held.items()
        if not any(path in copied for path in paths)
    }
    if release.released <= at.date():
        return outside
    return {
        text: paths
        for text, paths in outside.items()
        if len({owner(path) for path in paths}) >= GENERIC_OWNERS
    }


def _uncommon(scan: Scan, common: dict[str, list[str]], names: set[str]) -> Scan:
    """``scan`` less the hits of a common marker outside :func:`copies` of the fix, and less
    those in the very file where the reference holds the same marker (the reference's own
    file, which :func:`common_markers` found to be no copy of the fix)."""
    copied = copies(scan.hits, names)
    kept = [
        (p, m)
        for p, m in scan.hits
        if (m not in common or (p in copied and p not in common[m]))
        and (not comment_only(m) or p in copied)
    ]
    return Scan(scan.image, kept, scan.notes, scan.owners, scan.near)


def registry_at_t(case: Case) -> set[tuple[str, str]]:
    """The Python distributions (canonical name, canonical version) the case's registry
    recorded as on the index at T: what its environment installed from there."""
    from packaging.utils import canonicalize_name, canonicalize_version

    from replay.snapshot import load_snapshot

    return {
        (canonicalize_name(f.project), canonicalize_version(f.version))
        for f in load_snapshot(case.snapshot).registry.python
    }


def _on_index_at_t(
    scan: Scan, recorded: set[tuple[str, str]], names: set[str]
) -> tuple[Scan, list[str]]:
    """``scan`` less the hits in files of a distribution the case's registry recorded at T
    (not one named like the project), and a note for each such distribution."""
    from packaging.utils import canonicalize_name, canonicalize_version

    kept: list[tuple[str, str]] = []
    discounted: dict[tuple[str, str], list[str]] = {}
    for path, text in scan.hits:
        dist = scan.owners.get(path) or archive_distribution(path)
        if dist is not None and _name(dist[0]) not in names:
            key = (canonicalize_name(dist[0]), canonicalize_version(dist[1]))
            if key in recorded:
                discounted.setdefault((dist[0], dist[1]), []).append(path)
                continue
        kept.append((path, text))
    notes = [
        f"{scan.image}: no leak in {name} {version} ({len(paths)} hit(s), e.g. {paths[0]}): "
        "the case's registry recorded it as on the index at T, so its text is older than the fix"
        for (name, version), paths in sorted(discounted.items())
    ]
    return Scan(scan.image, kept, scan.notes, scan.owners, scan.near), notes


def archive_distribution(path: str) -> tuple[str, str] | None:
    """The distribution (name, version) a member of a wheel or sdist belongs to, read from the
    archive's file name (``face-0.1.0-py3-none-any.whl!face/sinter.py``: ``face``, ``0.1.0``;
    pip's cache holds wheels it built from the sdists the registry served, glom 2019 in the
    fifth corpus); None for any other path."""
    archive, bang, _ = path.partition("!")
    if not bang:
        return None
    base = archive.rsplit("/", 1)[-1]
    if base.endswith(".whl"):
        parts = base.split("-")
        return (parts[0], parts[1]) if len(parts) >= 5 else None
    for suffix in (".tar.gz", ".tar.bz2", ".zip"):
        if base.endswith(suffix):
            name, dash, version = base.removesuffix(suffix).rpartition("-")
            return (name, version) if dash and version[:1].isdigit() else None
    return None


# ----------------------------------------------------------------------------- scanning


def _script(scanned: Sequence[str]) -> str:
    dirs = " ".join(shlex.quote(d) for d in scanned)
    return (
        "set -o pipefail\n"
        "set --\n"
        f'for d in {dirs}; do [ -d "$d" ] && set -- "$@" "$d"; done\n'
        # With no directory left, grep -r would search its working directory instead.
        '[ "$#" -gt 0 ] || exit 0\n'
        f'LC_ALL=C grep -rFoIZ -D skip -f {STAGE}/markers -- "$@" | LC_ALL=C sort -u'
        f" > {STAGE}/files\n"
        "rc=$?\n"
        '[ "$rc" -le 1 ] || exit "$rc"\n'
        "if command -v python3 >/dev/null; then\n"
        f'  python3 {STAGE}/archives.py {STAGE}/markers "$@" > {STAGE}/archives || exit 3\n'
        f"  python3 {STAGE}/owners.py {STAGE}/files > {STAGE}/owners || exit 4\n"
        f"  cat {STAGE}/files {STAGE}/archives > {STAGE}/hits\n"
        f"  python3 {STAGE}/near.py {STAGE}/hits > {STAGE}/near || exit 5\n"
        f"else echo no-python3 > {STAGE}/archives.skipped; fi\n"
        f"cat {STAGE}/files {STAGE}/archives 2>/dev/null\n"
    )


def _parse(out: bytes) -> list[tuple[str, str]]:
    """``path NUL marker LF`` records (a path may hold any byte but NUL)."""
    hits: set[tuple[str, str]] = set()
    pos = 0
    while pos < len(out):
        nul = out.index(b"\0", pos)
        end = out.index(b"\n", nul)
        path = out[pos:nul].decode("utf-8", "replace")
        hits.add((path, out[nul + 1 : end].decode("utf-8", "replace")))
        pos = end + 1
    return sorted(hits)


def scan_image(
    runtime: Runtime,
    image: str,
    markers: Iterable[str],
    *,
    exclude: Sequence[str] = (),
    scanned: Sequence[str] = SCANNED,
) -> Scan:
    """Search the files of ``image`` under ``scanned`` for ``markers``, in one container with
    no network; paths under ``exclude`` (directories) are left out of the result."""
    wanted = sorted({m for m in markers if m and "\n" not in m})
    if not wanted:
        return Scan(image, [])
    spec = ContainerSpec(
        image=image,
        command=["sleep", "infinity"],
        limits=SCAN_LIMITS,
        labels={"replay.role": "image-audit"},
    )
    container = runtime.create(spec, f"image-audit-{uuid.uuid4().hex[:12]}")
    try:
        with tempfile.TemporaryDirectory(prefix="replay-image-audit-") as tmp:
            stage = Path(tmp) / posixpath.basename(STAGE)
            stage.mkdir()
            (stage / "markers").write_text("".join(f"{m}\n" for m in wanted), encoding="utf-8")
            (stage / "archives.py").write_text(_ARCHIVE_SCRIPT)
            (stage / "owners.py").write_text(_OWNERS_SCRIPT)
            (stage / "near.py").write_text(_NEAR_SCRIPT)
            container.copy_in(stage, posixpath.dirname(STAGE), owner=(0, 0))
        done = container.exec(["bash", "-c", _script(scanned)], user="0:0", timeout=900)
        if not done.ok:
            raise SandboxError(
                f"searching the files of {image} failed ({done.exit_code}): {done.err[-2000:]}"
            )
        skipped = container.exec(["test", "-e", f"{STAGE}/archives.skipped"], user="0:0")
        owned = container.exec(["cat", f"{STAGE}/owners"], user="0:0")
        nearby = container.exec(["cat", f"{STAGE}/near"], user="0:0")
    finally:
        container.remove()
    notes = [f"{image}: no python3, archives not opened"] if skipped.exit_code == 0 else []
    prefixes = tuple(posixpath.normpath(d) + "/" for d in exclude)
    hits = [(p, m) for p, m in _parse(done.stdout) if not p.startswith(prefixes)]
    owners = {}
    if owned.ok:
        for path, dist in _parse(owned.stdout):
            name, _, version = dist.partition("\0")
            owners[path] = (name, version)
    return Scan(image, hits, notes, owners, _near(nearby.stdout) if nearby.ok else {})


def _near(out: bytes) -> dict[tuple[str, str], frozenset[str]]:
    """The near script's JSON lines as (path, marker): lines near it."""
    import json

    found: dict[tuple[str, str], frozenset[str]] = {}
    for line in out.decode("utf-8", "replace").splitlines():
        try:
            item = json.loads(line)
            found[(str(item["path"]), str(item["marker"]))] = frozenset(map(str, item["near"]))
        except (ValueError, KeyError, TypeError):
            continue  # a damaged record: that hit has no known context and stays a leak
    return found


# ----------------------------------------------------------------------------- the case


def case_images(case: Case, runtime: Runtime) -> list[str]:
    """The case's environment image and every harness image built on it (empty: not built)."""
    env = env_reference(case)
    env_id = runtime.image_id(env)
    if env_id is None:
        return []
    harness = runtime.images({IMAGE_KIND_LABEL: "harness", ENV_IMAGE_LABEL: env_id})
    return [env, *harness]


def judge(scans: Iterable[Scan], markers: Iterable[Marker], audit: Audit) -> list[ImageHit]:
    """Hits as leaks, or accepted with the case's reason."""
    kinds = {m.text: m for m in markers}
    hits = []
    for scan in scans:
        for path, text in scan.hits:
            marker = kinds.get(text, Marker(text, "gold line"))
            entry = audit.accepting(path, text)
            hits.append(ImageHit(scan.image, path, marker, entry.reason if entry else None))
    return hits


def reference_image(case: Case, runtime: Runtime) -> tuple[str, Release] | None:
    """The base image to tell text older than the case's fix by: the case's own base image if
    its release came out on or before T, else the newest ``replay-base:<release>`` released by
    T that is built here. With neither (a fix older than every release, or none of those
    built), the oldest base image built here, released after T: from it :func:`common_markers`
    discounts only generic text. ``None`` if no base image of ours is built."""
    day = case.at.date()
    own = parse_base_tag(case.environment.base_image)
    candidates = [(case.environment.base_image, own[0])] if own is not None else []
    candidates += [(base_reference(r.name), r) for r in reversed(BASE_RELEASES)]
    for image, release in candidates:
        if release.released <= day and runtime.image_id(image) is not None:
            return image, release
    # Oldest first; the case's own base first among those of its release (a stable sort).
    for image, release in sorted(candidates, key=lambda c: c[1].released):
        if runtime.image_id(image) is not None:
            return image, release
    return None


def _common(
    case: Case, runtime: Runtime, markers: Sequence[Marker], names: set[str]
) -> tuple[dict[str, list[str]], list[str]]:
    """(:func:`common_markers` of the :func:`reference_image`, notes saying which rule judged
    them and what they are, or why there are none)."""
    day = case.at.date()
    released = [r for r in BASE_RELEASES if r.released <= day]
    # The base image that would vouch for all its text: the newest released by T, if any.
    wanted = released[-1].name if released else None
    found = reference_image(case, runtime)
    if found is None:
        name = wanted or BASE_RELEASES[0].name
        return {}, [
            f"no base image is built here (`replay image base --release {name}` builds "
            f"{base_reference(name)} to compare with): nothing tells text older than the fix, "
            "every hit counts"
        ]
    image, release = found
    scan = scan_image(runtime, image, [m.text for m in markers], exclude=[case.environment.workdir])
    common = common_markers(scan.hits, release, case.at, names)
    debian = f"{image} (Debian {release.name}, released {release.released}"
    if release.released <= day:
        notes = [
            f"no leak outside a copy of the project: {text!r}, which {debian}, before T) "
            f"already holds in {len(paths)} file(s), e.g. {paths[0]}: text older than the fix"
            for text, paths in sorted(common.items())
        ]
        return common, notes
    if wanted is None:
        why = f"every base image came out after T ({day})"
    else:
        why = (
            f"none released by T ({day}) is built here: `replay image base --release {wanted}` "
            f"builds {base_reference(wanted)}, which discounts all it holds outside a copy"
        )
    notes = [
        f"reference released after T: only text spread over {GENERIC_OWNERS} unrelated "
        f"packages is discounted; {debian}) is the oldest base image built here, {why}"
    ]
    for text, paths in sorted(common.items()):
        owners = sorted({owner(p) for p in paths})
        notes.append(
            f"no leak outside a copy of the project: {text!r}, which {debian}, after T) holds "
            f"in {len(paths)} file(s) of {len(owners)} unrelated packages "
            f"({', '.join(owners[:5])}{', ...' if len(owners) > 5 else ''}), e.g. {paths[0]}: "
            "idiom older than the fix"
        )
    return common, notes


def audit_images(
    case: Case,
    runtime: Runtime,
    images: Sequence[str] | None = None,
    markers: Sequence[Marker] | None = None,
) -> ImageAudit:
    """Search the case's images (``images``, or :func:`case_images`) for its answer; a marker
    the reference base image held as older text (:func:`reference_image`,
    :func:`common_markers`) counts only in a copy of the fix (:func:`copies`)."""
    markers = case_markers(case) if markers is None else markers
    notes: list[str] = []
    if images is None:
        images = case_images(case, runtime)
        if not images:
            notes.append(f"no image {env_reference(case)} here: build it (replay image env)")
    common: dict[str, list[str]] = {}
    names = case_project_names(case)
    if images and markers:
        common, said = _common(case, runtime, markers, names)
        notes += said
    recorded = registry_at_t(case) if images and markers else set()
    contexts = fix_contexts(read_patch(case.gold.patch))
    scans = []
    for image in images:
        found = scan_image(
            runtime, image, [m.text for m in markers], exclude=[case.environment.workdir]
        )
        scan, said = _on_index_at_t(_uncommon(found, common, names), recorded, names)
        scan, alone = out_of_context(scan, contexts, copies(found.hits, names))
        scans.append(scan)
        notes += said + alone
    notes += [note for scan in scans for note in scan.notes]
    return ImageAudit(list(images), judge(scans, markers, case.audit), notes, common)


def image_leaks_cached(case: Case, runtime: Runtime, images: Sequence[str]) -> list[str]:
    """The leaks of :func:`audit_images` over ``images`` (IDs), as lines; remembered by the
    images' IDs, the markers and the accepted entries, so a run pays for the search once per
    image. Runs call this before the harness starts: an image holding the answer is refused."""
    import hashlib
    import json
    import os

    from replay.snapshot.audit import cache_dir

    markers = case_markers(case)
    reference = reference_image(case, runtime)
    key = hashlib.sha256(
        json.dumps(
            {
                "images": sorted(images),
                "markers": sorted(m.text for m in markers),
                "accepted": case.audit.model_dump(mode="json"),
                # What the base image held is left out of the search (version 2); generic text
                # is, from a base image released after T (version 3). Building or removing a
                # base image may change which one is the reference.
                "base": runtime.image_id(case.environment.base_image),
                "reference": reference and runtime.image_id(reference[0]),
                "at": case.at.isoformat(),
                # What the case's registry recorded at T is left out too (version 4); a gold
                # line found alone, out of the fix's context, too (version 5).
                "registry": sorted(registry_at_t(case)),
                "version": 5,
            },
            sort_keys=True,
        ).encode()
    ).hexdigest()
    cache = cache_dir() / f"images-{key}.json"
    if cache.is_file():
        try:
            found = json.loads(cache.read_text())
            if isinstance(found, list) and all(isinstance(x, str) for x in found):
                return found
        except ValueError:
            pass  # a damaged entry is recomputed
    result = audit_images(case, runtime, images=list(images), markers=markers)
    leaks = [str(hit) for hit in result.leaks]
    cache.parent.mkdir(parents=True, exist_ok=True)
    tmp = cache.with_name(f"{cache.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(leaks))
    tmp.replace(cache)
    return leaks


# ----------------------------------------------------------------------------- proposal


@dataclass(frozen=True)
class BaseProposal:
    """Which base image carries none of the case's markers."""

    current: str
    scans: dict[str, list[ImageHit]]
    """Each base image searched, with its hits (accepted ones included)."""
    missing: list[str]
    """Candidate base images that are not built here."""
    proposed: str | None
    """A base image with no leak: ``current`` if it is clean, else the nearest clean release
    (older first); ``None`` if none is."""


def base_reference(release: str) -> str:
    return f"{BASE_REPOSITORY}:{release}"


def _nearest(current: str, candidates: Sequence[str]) -> list[str]:
    names = [base_reference(r) for r in RELEASES]
    if current not in names:
        return list(candidates)
    at = names.index(current)

    def distance(image: str) -> tuple[int, int]:
        i = names.index(image) if image in names else len(names)
        return abs(i - at), i - at  # older (negative) first on a tie

    return sorted(candidates, key=distance)


def propose_base_image(
    runtime: Runtime,
    markers: Sequence[Marker],
    current: str,
    *,
    audit: Audit | None = None,
    candidates: Sequence[str] | None = None,
    contexts: dict[str, frozenset[str]] | None = None,
    names: Iterable[str] = (),
) -> BaseProposal:
    """Search ``current`` and the other base images built here for ``markers``; propose one
    with no leak (hits ``audit`` accepts do not count, nor, given the fix's ``contexts``
    (:func:`fix_contexts`) and the project's ``names``, a gold line found alone:
    :func:`out_of_context`).

    ``candidates`` defaults to ``replay-base:<release>`` for every :data:`RELEASES`.
    """
    wanted = [base_reference(r) for r in RELEASES] if candidates is None else list(candidates)
    if current not in wanted:
        wanted.insert(0, current)
    present = [c for c in wanted if runtime.image_id(c) is not None]
    missing = [c for c in wanted if c not in present]
    scans: dict[str, list[ImageHit]] = {}
    for image in present:
        scan = scan_image(runtime, image, [m.text for m in markers])
        if contexts is not None:
            scan, _ = out_of_context(scan, contexts, copies(scan.hits, names))
        scans[image] = judge([scan], markers, audit or Audit())
    clean = [c for c in present if not any(h.leak for h in scans[c])]
    proposed = None
    if current in clean:
        proposed = current
    else:
        others = _nearest(current, [c for c in clean if c != current])
        proposed = others[0] if others else None
    return BaseProposal(current, scans, missing, proposed)


__all__ = [
    "GENERIC_OWNERS",
    "RELEASES",
    "SCANNED",
    "BaseProposal",
    "ImageAudit",
    "ImageHit",
    "Marker",
    "Scan",
    "audit_images",
    "base_reference",
    "case_images",
    "case_markers",
    "case_project_names",
    "common_markers",
    "copies",
    "fix_contexts",
    "image_leaks_cached",
    "in_fix_context",
    "is_copy_of",
    "judge",
    "markers_from",
    "out_of_context",
    "owner",
    "project_names",
    "propose_base_image",
    "reference_image",
    "scan_image",
]
