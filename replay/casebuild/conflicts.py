"""pip's ``ResolutionImpossible`` read for a case: the cause in the project's terms, and the
dependent to record one version older when the registry at T lacks the version pip needs.

The registry at T holds, per requirement, the newest version at T that satisfies it, so pip
cannot backtrack past a dependent whose newest version asks for more than another requirement
allows; :func:`step_back` names that dependent, from pip's words or, where pip's words lose it,
from the metadata the registry recorded (:func:`dependent_in_registry`)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from email.parser import HeaderParser

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from replay.base.blobs import BlobStore
from replay.base.manifest import PythonFile

_CONFLICT_START = re.compile(r"^\s*The conflict is caused by:\s*$")
_REQUESTED = re.compile(
    r"The user requested (?P<name>\S+) (?P<version>\S+) \(from (?P<src>[^)]*)\)"
)
_DEPENDS = re.compile(r"^\s*(?P<who>\S+ \S+) depends on (?P<req>.+?)\s*$")


_LOWER = frozenset({">=", ">", "==", "~=", "==="})
_USER_REQUESTED = re.compile(r"The user requested ([A-Za-z0-9][\w.-]*)")
_CANNOT_INSTALL = re.compile(r"Cannot install (.+?) because these package versions")


def step_back(output: str) -> str | None:
    """``NAME<VERSION``: one version older of the dependent that pip's ``ResolutionImpossible``
    shows asking for the newest of a project they share, or None when it shows none that is
    not a requirement the user gave.

    The registry at T holds, per requirement, the newest version at T that satisfies it, so
    pip cannot backtrack past a dependent whose newest version asks for more than another
    dependent allows (websockets 2026: pyOpenSSL 26.3.0 asks for cryptography>=49, mitmproxy
    12.2.3 for cryptography<=48.1, and the pyOpenSSL before it is not in the registry).
    Recording an older version of that dependent lets pip take it, as it would have from the
    index at T."""
    found = _stepped(output)
    return None if found is None else f"{found[1]}<{found[2]}"


def stepped_floor(output: str) -> tuple[str, Version] | None:
    """``(project, floor)``: what the dependent :func:`step_back` names asks for of the
    project they share (dataclasses-json 2022, eighth held-out corpus: mkdocs-material 7.3.6
    asks for ``mkdocs>=1.2.3``, and so does every 7.2 and 7.3 before it), so that its older
    versions can be read until one asks for less. None when :func:`step_back` names none."""
    found = _stepped(output)
    return None if found is None else (found[3], found[0])


def _stepped(output: str) -> tuple[Version, str, str, str] | None:
    """``(floor, dependent, its version, shared project)`` of :func:`step_back`."""
    if against_the_checkout(output):
        return None  # the checkout's own version is in the conflict: read_conflict says why
    requested = {canonicalize_name(m) for m in _USER_REQUESTED.findall(output)}
    for listed in _CANNOT_INSTALL.findall(output):
        for item in re.split(r", | and ", listed):
            found = re.match(r"[A-Za-z0-9][\w.-]*", item.strip())
            if found and not item.strip().startswith("-r"):
                requested.add(canonicalize_name(found.group(0)))
    best: tuple[Version, str, str, str] | None = None
    for line in output.splitlines():
        found = _DEPENDS.match(line)
        if found is None:
            continue
        name, _, version = found["who"].partition(" ")
        name = name.partition("[")[0]  # coverage[toml] 7.0.1: the project is coverage
        if canonicalize_name(name) in requested:
            continue
        shared = re.match(r"[A-Za-z0-9][\w.-]*", found["req"].strip())
        spec = re.sub(r"^[A-Za-z0-9][\w.-]*(?:\[[^\]]*\])?", "", found["req"].strip())
        try:
            wanted = SpecifierSet(spec.replace(" and ", ","))
            Version(version)
        except (InvalidSpecifier, InvalidVersion):
            continue
        floors = [
            Version(s.version) for s in wanted if s.operator in _LOWER and "*" not in s.version
        ]
        if not floors:
            continue
        floor = max(floors)
        # pip shows each version of a dependent it tried, newest first (markdown-it-py 2020:
        # pytest-cov 2.10.1 and 2.10.0 both ask for pytest>=4.6): below the oldest shown.
        again = best is not None and floor == best[0] and canonicalize_name(name) == best[1]
        if best is None or floor > best[0] or (again and Version(version) < Version(best[2])):
            project = canonicalize_name(shared.group(0)) if shared else ""
            best = (floor, canonicalize_name(name), version, project)
    return best


_TWO_PLACES = re.compile(
    r"Cannot install (?P<a>[\w.-]+) \S+ \(from (?P<src_a>[^)]+)\) and "
    r"(?P<b>[\w.-]+) \S+ \(from (?P<src_b>[^)]+)\)"
)


def against_the_checkout(output: str) -> bool:
    """Whether pip's conflict is between the checkout's own version and a test requirement
    (``The user requested pyflakes 2.2.0 (from /workspace/repo)``, ``flake8 3.6.0 depends on
    pyflakes<2.1.0``)."""
    return any(m["src"].startswith(("/", ".")) for m in _REQUESTED.finditer(output))


def read_conflict(output: str) -> str | None:
    """pip's ``ResolutionImpossible`` in the project's terms, or None when pip said none.

    pip names the requirements that conflict ("The conflict is caused by: ...") and then
    advice about loosening ranges that does not apply to a case (the ranges are the
    project's, as of T). The common cause in a case: a test requirement depends on the
    project itself at a version the checkout does not build as (``0.1.devN`` when its
    version comes from git tags it lacks)."""
    if "ResolutionImpossible" not in output and "conflicting dependencies" not in output:
        return None
    lines = output.splitlines()
    start = next((i for i, line in enumerate(lines) if _CONFLICT_START.match(line)), None)
    caused = []
    if start is not None:
        for line in lines[start + 1 :]:
            if not line.strip() or line.strip().startswith("To fix this"):
                break
            caused.append(line.strip())
    own = next((m for line in caused if (m := _REQUESTED.search(line))), None)
    head = "pip at T cannot install the project and its test requirements together"
    twice = _TWO_PLACES.search(output)
    if twice is not None and canonicalize_name(twice["a"]) == canonicalize_name(twice["b"]):
        return (
            f"{head}: {twice['a']} is asked for from two places in one command ({twice['src_a']}"
            f" and {twice['src_b']}): a test requirements file names the project's own "
            "directory; name that file alone in a setup command before the project's"
        )
    if own is not None and own["src"].startswith(("/", ".")):
        name, version = own["name"], own["version"]
        wants = [
            f"{m['who']} requires {m['req']}"
            for line in caused
            if (m := _DEPENDS.match(line))
            and canonicalize_name(m["req"]).startswith(canonicalize_name(name))
        ]
        return (
            f"{head}: the checkout builds as {name} {version}, and "
            f"{'; '.join(wants) or 'a test requirement wants another version of it'}. "
            "Give the build the version the project had at the base (for a version from git "
            "tags: the repository's tags, or SETUPTOOLS_SCM_PRETEND_VERSION in the setup), or "
            "leave that test requirement out"
        )
    reason = "; ".join(caused) or "pip names no cause"
    return (
        f"{head}: {reason}. These are the project's own ranges as of T: name a requirement "
        "with a version that fits (--requires), or choose another T (--at)"
    )


_USER_SPEC = re.compile(r"^\s*The user requested (?P<req>[A-Za-z0-9][^(]*?)\s*(?:\(from .*)?$")


def _user_specs(output: str) -> dict[str, SpecifierSet]:
    """What the user asked for of each project pip's conflict names (``coverage<5``)."""
    specs: dict[str, SpecifierSet] = {}
    for line in output.splitlines():
        found = _USER_SPEC.match(line)
        if found is None:
            continue
        try:
            req = Requirement(found["req"].replace(" and ", ","))
        except InvalidRequirement:
            continue
        specs[canonicalize_name(req.name)] = req.specifier
    return specs


def _floor(spec: SpecifierSet) -> Version | None:
    floors = [Version(s.version) for s in spec if s.operator in _LOWER and "*" not in s.version]
    return max(floors) if floors else None


def requirements_of(f: PythonFile, blobs: BlobStore) -> list[Requirement]:
    """The ``Requires-Dist`` of a recorded file that apply without an extra (from the core
    metadata the registry stored beside it); none when it stored none."""
    if not f.metadata_sha256 or not blobs.has(f.metadata_sha256):
        return []
    text = blobs.read(f.metadata_sha256).decode("utf-8", "replace")
    found = []
    for line in HeaderParser().parsestr(text).get_all("Requires-Dist") or []:
        try:
            req = Requirement(line)
        except InvalidRequirement:
            continue
        if req.marker is None or "extra" not in str(req.marker):
            found.append(req)
    return found


def still_asks(f: PythonFile, blobs: BlobStore, project: str, floor: Version) -> bool:
    """Whether the recorded ``f`` asks for ``project`` (canonical name) at ``floor`` or more,
    by its metadata; False when the registry stored none."""
    for req in requirements_of(f, blobs):
        if canonicalize_name(req.name) != project:
            continue
        found = _floor(req.specifier)
        if found is not None and found >= floor:
            return True
    return False


def refused(f: PythonFile, blobs: BlobStore, user: dict[str, SpecifierSet]) -> str | None:
    """The project ``f`` asks for at a floor outside what the user asked for of it (pytest-cov
    4.0.0's ``coverage[toml]>=5.2.1`` against a pinned ``coverage<5``), or None."""
    for req in requirements_of(f, blobs):
        name = canonicalize_name(req.name)
        floor = _floor(req.specifier)
        if name in user and floor is not None and not user[name].contains(floor, True):
            return name
    return None


def dependent_in_registry(
    output: str, recorded: Callable[[], Iterable[PythonFile]], blobs: BlobStore
) -> tuple[str, dict[str, SpecifierSet]] | None:
    """``(NAME<VERSION, what the user asked for)`` when pip's conflict does not name the
    dependent: the recorded distribution that asks for a project the user pinned, at a floor
    the pin excludes, one version older than its oldest such version recorded. None when no
    recorded metadata shows one.

    pip 20.3 (bullseye's) reports a conflict through an extra as ``coverage[toml] 7.0.1
    depends on coverage==7.0.1`` and ``The user requested coverage<5``, and never says that
    pytest-cov 4.0.0 asked for ``coverage[toml]>=5.2.1`` (jsonpickle 2022, third held-out
    corpus). The registry recorded pytest-cov's metadata, so it says so itself."""
    if "ResolutionImpossible" not in output and "conflicting dependencies" not in output:
        return None
    if against_the_checkout(output):
        return None  # the checkout's own version is in the conflict: read_conflict says why
    user = _user_specs(output)
    if not user:
        return None
    oldest: dict[str, Version] = {}
    for f in recorded():
        name = canonicalize_name(f.project)
        if name in user:
            continue
        try:
            version = Version(f.version)
        except InvalidVersion:
            continue
        if refused(f, blobs, user) and (name not in oldest or version < oldest[name]):
            oldest[name] = version
    if not oldest:
        return None
    chosen = min(oldest)  # one answer, the same every time
    return f"{chosen}<{oldest[chosen]}", user
