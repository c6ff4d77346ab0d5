"""Recording the Python packages a case needs, as the index served them at T.

``record_python`` reads an upstream index's PEP 691 JSON pages (api-version 1.1, so every file
has its ``upload-time``), keeps the files the index held at T (uploaded at or before T, or
uploaded again after it with evidence that they were there: :mod:`replay.registry.history`;
such a file is recorded with its build time as its upload time), picks the versions pip
would pick then on the target interpreter (:mod:`replay.registry.choice`: pre-releases,
yanked files, ``requires-python``, platform tags), follows their ``Requires-Dist`` for the
target, and stores the files and their core metadata in the blob store. Every sdist it
records brings its build requirements (``[build-system].requires`` read from the archive,
or pip's fallback), as pip's isolated build would install them, recursively.
``record_for_project`` does the same for a project checkout's build system, dependencies
and extras, plus test requirements (requirement strings or ``-r`` files).

It is not a full resolver: for each requirement it records the newest version pip would
take for it alone, which is what pip and uv choose when the requirements do not conflict,
plus every version named explicitly. Each entry's ``chosen_because`` says which
requirement chose it, on whose behalf, what newer versions were passed over and why, and
for a file uploaded after T, the evidence that placed it at T. When nothing fits at T but
later files would, the error (:class:`NothingAtT`) says why in the project's terms and the
one change that lets the case be recorded.

The test runner is the grader's tool, not the project's: when the target's interpreter came
out after T, pytest and its own dependencies are taken as of the interpreter's release, not T
(:class:`RunnerLift`), except those the project itself requires.

Not covered: what a build backend asks for only when it runs (``get_requires_for_build_wheel``
beyond setuptools' literal ``setup_requires``), requirements a ``setup.py`` computes, and
the yank time (PEP 592 indexes do not publish it: a file yanked after T counts as yanked).
"""

from __future__ import annotations

import io
import logging
import sys
import zipfile
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, time
from pathlib import Path

from packaging.markers import Marker
from packaging.requirements import InvalidRequirement, Requirement
from packaging.tags import Tag, compatible_tags, cpython_tags
from packaging.utils import (
    canonicalize_name,
)

from replay.base.blobs import BlobStore
from replay.base.manifest import PythonFile
from replay.registry.buildtime import BuildTime, build_time, fetcher
from replay.registry.choice import Candidate, Chooser, candidates
from replay.registry.errors import NothingAtT, RecordError
from replay.registry.history import Dependent, Evidence, History, choose_at_t, dependent, refusal
from replay.registry.pypi import normalize, parse_metadata
from replay.registry.requirements import (
    LEGACY_BUILD_REQUIRES,
    RequirementsError,
    SourceMetadata,
    expand_specs,
    read_project,
    read_sdist,
)
from replay.registry.upstream import DEFAULT_INDEX, USER_AGENT, Upstream, default_index_url

log = logging.getLogger(__name__)

DEBIAN_PYTHONS: dict[str, tuple[tuple[int, int], int, int]] = {
    "bullseye": ((3, 9), 2, 31),
    "bookworm": ((3, 11), 2, 36),
    "trixie": ((3, 13), 5, 41),
}
"""Debian release -> (its ``python3`` minor version, micro version, glibc 2.N)."""

CPYTHON_RELEASED: dict[tuple[int, int], date] = {
    (3, 9): date(2020, 10, 5),
    (3, 11): date(2022, 10, 24),
    (3, 13): date(2024, 10, 7),
}
"""When each minor version of :data:`DEBIAN_PYTHONS` first came out (its ``.0``), from
python.org's release pages (https://www.python.org/downloads/release/python-390/,
``python-3110/``, ``python-3130/``)."""

TEST_RUNNER = "pytest"
"""What runs the hidden tests (``replay.casebuild.environment.RUNNER`` is this): taken as of the
interpreter's release when that is after T (:class:`RunnerLift`)."""


@dataclass(frozen=True)
class Target:
    """The interpreter and platform the recorded files must install on.

    ``python`` and ``micro`` are the interpreter's version (``micro`` None: this machine's
    if it runs the same minor version, else ``.0``); ``glibc_max`` is the N of the newest
    ``manylinux_2_N`` wheel the C library accepts (glibc 2.31 -> 31). A case's Debian
    release gives all three: :meth:`for_debian`.
    """

    python: tuple[int, int] = (3, 11)
    machine: str = "x86_64"
    glibc_max: int = 39
    """Newest ``manylinux_2_N`` accepted."""
    micro: int | None = None

    @classmethod
    def for_debian(cls, release: str, machine: str = "x86_64") -> Target:
        """The interpreter and C library of a Debian release's ``python3``."""
        try:
            python, micro, glibc = DEBIAN_PYTHONS[release]
        except KeyError:
            known = ", ".join(DEBIAN_PYTHONS)
            raise RecordError(f"{release!r}: no known Python for it (known: {known})") from None
        return cls(python=python, machine=machine, glibc_max=glibc, micro=micro)

    @property
    def full_version(self) -> str:
        if self.micro is not None:
            return f"{self.python[0]}.{self.python[1]}.{self.micro}"
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

    @property
    def released(self) -> date | None:
        """When the interpreter's minor version came out (None: not known here)."""
        return CPYTHON_RELEASED.get(self.python)


def _date(when: datetime) -> str:
    return when.astimezone(UTC).date().isoformat()


@dataclass(frozen=True)
class RunnerLift:
    """The test runner's own packages, taken as of the interpreter's release instead of T.

    The hidden tests are the grader's, run by pytest; pytest as of a T older than the
    interpreter may not start on it (pytest 5.1, importlib_metadata as of January 2019 on
    Python 3.9, the oldest here). So pytest and what its ``Requires-Dist`` names on the target,
    transitively, are chosen among the files uploaded by the end of the interpreter's release
    day, except a package the project itself requires (its build requirements, dependencies and
    named extras, and theirs, not through pytest), which keeps T. pytest plugins and the other
    test requirements keep T, and so do the build requirements of a lifted sdist. A lifted file
    uploaded after T is listed as uploaded at T, so that the registry frozen at T serves it; its
    ``chosen_because`` gives the real date.
    """

    at: datetime
    """The end of the interpreter's release day: the files uploaded by then count."""
    python: str
    """The interpreter's minor version, ``3.9``."""
    t: datetime

    @classmethod
    def of(cls, target: Target, at: datetime) -> RunnerLift | None:
        """The lift for ``target`` at T; None when its interpreter came out by T's day."""
        released = target.released
        if released is None or released <= at.astimezone(UTC).date():
            return None
        python = f"{target.python[0]}.{target.python[1]}"
        return cls(datetime.combine(released, time.max, tzinfo=UTC), python, at)

    @property
    def day(self) -> str:
        return _date(self.at)

    def because(self) -> str:
        return (
            f"taken as of {self.day} (Python {self.python}'s release), not T "
            f"{_date(self.t)}: the test runner as of T predates the "
            "interpreter"
        )


# ----------------------------------------------------------------------------- choosing


@dataclass
class _Want:
    """A requirement to resolve and why it is wanted (``None``: asked for directly)."""

    req: Requirement
    origin: str | None = None
    by: Dependent | None = None
    """The file uploaded before T that requires it, if one does: evidence that the
    project was on the index at T (see :mod:`replay.registry.history`)."""
    own: bool = False
    """The project's own requirement (``more`` of :meth:`PythonRecorder.plan`), or one of
    theirs not through the test runner: it keeps T."""
    lifted: bool = False
    """The test runner or one of its dependencies, chosen as of :attr:`RunnerLift.at`."""


@dataclass
class _Plan:
    chosen: dict[tuple[str, str], list[Candidate]] = field(default_factory=dict)
    why: dict[tuple[str, str], str] = field(default_factory=dict)
    """Why each (project, version) was chosen, for the first requirement that chose it."""
    expanded: set[tuple[str, str, frozenset[str]]] = field(default_factory=set)
    built: set[str] = field(default_factory=set)
    """sha256 of the sdists whose build requirements are queued."""
    own: set[str] = field(default_factory=set)
    """The projects chosen for the project's own requirements: the test runner's lift leaves
    them at T."""


def _pips_own_floor(req: Requirement, origin: str | None) -> bool:
    """Whether ``req`` is one of pip's fallback build requirements
    (:data:`LEGACY_BUILD_REQUIRES`, for a source without ``[build-system]``), not one its
    project named. ``setuptools>=40.8.0`` is pip's floor since pip 19: a project whose T is
    before setuptools 40.8.0 (5 February 2019) has nothing at T to meet it, though pip at T
    built it, with setup.py, without isolation."""
    return str(req) in LEGACY_BUILD_REQUIRES and origin is not None and "pip's fallback" in origin


class PythonRecorder:
    """One recording session: an upstream, T, a target, the blob store.

    ``provided`` names projects something else provides (the project checkout being
    recorded for): they are not looked up when a dependency names them.
    """

    def __init__(
        self,
        upstream: str,
        at: datetime,
        blobs: BlobStore,
        target: Target | None = None,
        include_sdist: bool = False,
        provided: Iterable[str] = (),
    ) -> None:
        if at.tzinfo is None:
            raise RecordError("T needs a timezone")
        self.upstream = Upstream(upstream)
        self.at = at
        self.blobs = blobs
        self.target = target or Target()
        self.include_sdist = include_sdist
        self.provided = {canonicalize_name(n) for n in provided}
        self._tags = self.target.tags()
        self._pages: dict[str, History] = {}
        self._evidence: dict[str, Evidence] = {}
        """By sha256: why a file uploaded after T is recorded as there at T."""
        self._metadata: dict[str, bytes] = {}
        self._sources: dict[str, SourceMetadata] = {}
        self._chooser = Chooser(
            self._tags, self.target.full_version, self._declared_requires_python
        )
        self.lift = RunnerLift.of(self.target, at)
        """Set when the target's interpreter came out after T."""
        self._lifted_pages: dict[str, History] = {}
        self._lifted: set[str] = set()
        """sha256 of the files chosen as of the lift."""

    def history(self, project: str) -> History:
        """The project's files on the index, on both sides of T, for any interpreter."""
        name = normalize(project)
        if name not in self._pages:
            page, files = self.upstream.project(name)
            self._pages[name] = History(name, self.at, candidates(name, page, files))
        return self._pages[name]

    def _lifted_history(self, project: str, lift: RunnerLift) -> History:
        """The project's files cut at the lift's time instead of T."""
        name = normalize(project)
        if name not in self._lifted_pages:
            self._lifted_pages[name] = History(name, lift.at, self.history(name).files)
        return self._lifted_pages[name]

    def files_at_t(self, project: str) -> list[Candidate]:
        """The project's files uploaded at or before T, for any interpreter."""
        return self.history(project).at_t

    def choose(
        self,
        req: Requirement,
        by: Dependent | None = None,
        origin: str | None = None,
        lifted: bool = False,
    ) -> tuple[str, list[Candidate], str]:
        """The version pip would install for ``req`` at T on the target, the files to
        record, and why (see :meth:`Chooser.choose`). Files uploaded after T count when
        the evidence places them at T (:func:`replay.registry.history.choose_at_t`);
        ``by`` is the dependent, ``origin`` why ``req`` is wanted (None: asked for);
        ``lifted``: as of :attr:`lift` instead of T (the test runner's packages)."""
        lift = self.lift if lifted else None
        history = self.history(req.name)
        chooser = self._chooser
        if lift is not None:
            history = self._lifted_history(req.name, lift)
            chooser = replace(chooser, when=lift.day)
        outcome = choose_at_t(history, req, chooser, self.build_time, by)
        if outcome.choice is None:
            wanted = f"{req} ({origin})" if origin else str(req)
            why = refusal(history, req, chooser, outcome, by, direct=origin is None)
            if why is not None:
                raise NothingAtT(
                    f"{wanted}: {why}",
                    project=canonicalize_name(req.name),
                    absent=not history.at_t,
                    asked=origin is None,
                )
            raise RecordError(
                f"{wanted}: no version uploaded at or before {history.at.isoformat()} that pip "
                f"would install on Python {self.target.full_version}"
            )
        files = self._pick_files(outcome.choice.files)
        self._evidence.update(outcome.evidence_for(files))
        because = outcome.because(files)
        if lift is not None:
            self._lifted.update(c.sha256 for c in files)
            because = f"{lift.because()}; {because}"
            later = sorted({_date(c.upload_time) for c in files if c.upload_time > self.at})
            if later:
                because += (
                    f"; uploaded {', '.join(later)}, after T: listed as uploaded at T, so that "
                    "the registry frozen at T serves it"
                )
        return str(outcome.choice.version), files, because

    def build_time(self, c: Candidate) -> BuildTime | None:
        """When ``c`` was built, by its own stamps: from the blob store if it is there, else
        by range reads of the end (a zip's central directory) or the start (a tar.gz)."""
        if self.blobs.has(c.sha256):
            data = self.blobs.read(c.sha256)
            return build_time(c.filename, lambda start, end: data[start:end], len(data))
        fetch = fetcher(lambda start, end: self.upstream.get_range(c.url, start, end))
        return build_time(c.filename, fetch, c.size)

    def _declared_requires_python(self, files: list[Candidate]) -> str | None:
        """The ``Requires-Python`` of the version's core metadata, when the index's
        ``requires-python`` left it out (pip checks the metadata's too)."""
        for c in sorted(files, key=lambda c: c.wheel_tags is None):
            if c.requires_python or c.wheel_tags is None:
                return None
            data = self.metadata(c)
            if data is not None:
                value = parse_metadata(data).get("Requires-Python")
                return str(value) if value else None
        return None

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

    def source(self, c: Candidate) -> SourceMetadata:
        """What an sdist says it needs to build and run, read from the archive."""
        if c.sha256 not in self._sources:
            self.upstream.download(c.url, self.blobs, c.sha256)
            try:
                self._sources[c.sha256] = read_sdist(self.blobs.read(c.sha256), c.filename)
            except RequirementsError as exc:
                raise RecordError(str(exc)) from exc
        return self._sources[c.sha256]

    def requirements_of(self, files: list[Candidate], extras: frozenset[str]) -> list[Requirement]:
        """The version's runtime requirements on the target: its core metadata's
        ``Requires-Dist``; for an sdist without any, what its source tree declares."""
        lines: list[str] | None = None
        for c in sorted(files, key=lambda c: c.wheel_tags is None):
            data = self.metadata(c)
            if data is not None:
                lines = [str(x) for x in parse_metadata(data).get_all("Requires-Dist") or []]
                break
        sdist = next((c for c in files if c.wheel_tags is None), None)
        if lines is None and sdist is not None:
            if self.source(sdist).requires_source is None:
                log.warning(
                    "%s: declares no requirements that can be read without running it "
                    "(none, or computed by setup.py): none recorded",
                    sdist.filename,
                )
                return []
            lines = self.source(sdist).requires
        if lines is None:
            if files:
                log.warning(
                    "%s: no core metadata; its dependencies are not recorded", files[0].filename
                )
            return []
        return self._applicable(lines, extras, files[0].filename if files else "")

    def _applicable(
        self, lines: Iterable[str], extras: frozenset[str], where: str
    ) -> list[Requirement]:
        out = []
        for line in lines:
            try:
                req = Requirement(str(line))
            except InvalidRequirement:
                log.warning("%s: unparseable requirement %r", where, line)
                continue
            if req.marker is None or self._marker_ok(req.marker, extras):
                out.append(req)
        return out

    def _marker_ok(self, marker: Marker, extras: frozenset[str]) -> bool:
        return any(marker.evaluate(self.target.environment(e)) for e in ("", *sorted(extras)))

    def plan(self, specs: Sequence[str], more: Sequence[tuple[str, str]] = ()) -> _Plan:
        """Choose every file: ``specs`` asked for directly, ``more`` as (requirement,
        why it is wanted), and transitively their dependencies and sdists' build
        requirements. A requirement whose marker excludes the target is left out, as pip
        leaves it out.

        ``more`` holds the project's own requirements (:func:`project_wants`). With a
        :attr:`lift`, the test runner and its dependencies are chosen last, once every other
        requirement is settled, as of the lift, except the projects chosen for ``more``'s
        requirements and theirs (not through the runner), which keep T."""
        plan = _Plan()
        queue: list[_Want] = []
        deferred: list[_Want] = []  # the runner's, until every other want is settled
        lifting = False
        for spec, origin in [(s, None) for s in specs] + [(s, o) for s, o in more]:
            try:
                req = Requirement(spec)
            except InvalidRequirement as exc:
                raise RecordError(f"{spec!r}: not a requirement: {exc}") from exc
            if req.url:
                raise RecordError(f"{spec!r}: a URL is not a version on an index")
            if req.marker is None or self._marker_ok(req.marker, frozenset()):
                queue.append(_Want(req, origin, own=origin is not None))
            else:
                log.warning("%s: its marker excludes the target: left out", spec)
        # A runner asked for where the lift cannot move it is pinned: nothing of it is lifted.
        pinned = self.lift is not None and any(
            canonicalize_name(w.req.name) == TEST_RUNNER
            and w.origin is None
            and self._lift_moves_nothing(w)
            for w in queue
        )
        while queue or deferred:
            if not queue:
                queue, deferred, lifting = deferred, [], True
            want = queue.pop(0)
            req = want.req
            name = canonicalize_name(req.name)
            if name in self.provided:
                continue
            if self.lift is not None and name == TEST_RUNNER and not pinned:
                want.own, want.lifted = False, True
            if want.lifted and not lifting:
                deferred.append(want)
                continue
            if want.lifted and name in plan.own:
                want.lifted = False  # the project requires it too: T's
            try:
                version, files, why = self.choose(req, want.by, want.origin, want.lifted)
            except NothingAtT as exc:
                if not _pips_own_floor(req, want.origin):
                    raise
                log.warning(
                    "%s: left out, nothing at T fits it (%s); it is the floor pip puts on a "
                    "project without [build-system] for an isolated build, not the project's "
                    "own requirement, and pip builds such a project with setup.py and the "
                    "interpreter's setuptools when it cannot have it (pip before 23.1 with "
                    "setuptools installed, as on Debian bullseye and bookworm)",
                    req,
                    exc,
                )
                continue
            key = (name, version)
            if want.own:
                plan.own.add(name)
            plan.chosen.setdefault(key, files)
            origin = f" ({want.origin})" if want.origin else ""
            plan.why.setdefault(key, f"{req}{origin}: {why}")
            for sdist in (c for c in files if c.wheel_tags is None):
                if sdist.sha256 in plan.built:
                    continue
                plan.built.add(sdist.sha256)
                built = self.source(sdist)
                because = f"build requirement of {req.name} {version}, {built.build_source}"
                queue += [
                    _Want(
                        r,
                        because,
                        dependent(f"{req.name} {version}", [sdist], r, self.at),
                        own=want.own,
                    )
                    for r in self._applicable(built.build_requires, frozenset(), sdist.filename)
                ]
            extras = frozenset(canonicalize_name(e) for e in req.extras)
            if (name, version, extras) in plan.expanded:
                continue
            plan.expanded.add((name, version, extras))
            because = f"dependency of {req.name} {version}"
            who = f"{req.name} {version}"
            cut = self.lift.at if want.lifted and self.lift is not None else self.at
            queue += [
                _Want(r, because, dependent(who, files, r, cut), want.own, want.lifted)
                for r in self.requirements_of(files, extras)
            ]
        return plan

    def _lift_moves_nothing(self, want: _Want) -> bool:
        """Whether the lift would choose the same runner version as T does for a runner asked
        for directly (the project pins it: h2 2019's ``pytest==3.4.2``, fifth corpus). Then
        nothing of the runner is lifted, not even for a plugin's ``pytest>=2.6``: pip
        installs the pinned one, and its dependencies taken as of the interpreter's release
        did not fit it (attrs 20.2 has no ``attr.ib(convert=...)``, which pytest 3.4 calls;
        pytest did not start)."""
        assert self.lift is not None
        lifted = self._lifted_history(want.req.name, self.lift)
        at_t = self.history(want.req.name)
        chooser = self._chooser
        try:
            when = replace(chooser, when=self.lift.day)
            later = choose_at_t(lifted, want.req, when, self.build_time, want.by)
            now = choose_at_t(at_t, want.req, chooser, self.build_time, want.by)
        except RecordError:
            return False
        if later.choice is None or now.choice is None:
            return False
        return later.choice.version == now.choice.version

    def record(
        self, specs: Sequence[str], more: Sequence[tuple[str, str]] = ()
    ) -> list[PythonFile]:
        plan = self.plan(specs, more)
        todo = [c for files in plan.chosen.values() for c in files]

        def fetch(c: Candidate) -> PythonFile:
            size = self.upstream.download(c.url, self.blobs, c.sha256)
            if c.metadata_sha256 and not self.blobs.has(c.metadata_sha256):
                self.metadata(c)
            uploaded = (
                self._evidence[c.sha256].available if c.sha256 in self._evidence else c.upload_time
            )
            if c.sha256 in self._lifted:
                uploaded = min(uploaded, self.at)  # served by the registry frozen at T
            return PythonFile(
                project=c.project,
                version=str(c.version),
                filename=c.filename,
                sha256=c.sha256,
                size=size,
                upload_time=uploaded,
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
    on the target, the newest version uploaded at or before T that pip would install on the
    target (see :meth:`PythonRecorder.choose`): its wheels for the target (its sdist when it
    has none, or always with ``include_sdist``) and their core metadata go into the blob
    store. Every sdist recorded brings its build requirements (and theirs), as pip's
    isolated build would install them. Returns the index entries, sorted.
    """
    recorder = PythonRecorder(
        upstream or default_index_url(), at, blobs or BlobStore(), target, include_sdist
    )
    return recorder.record(specs)


def record_for_project(
    project: Path,
    requirements: Sequence[str],
    at: datetime,
    target: Target,
    blobs: BlobStore,
    index_url: str,
    extras: Sequence[str] = (),
) -> list[PythonFile]:
    """Record what installing a project checkout and its test requirements needs at T.

    The checkout's build requirements (``[build-system].requires``, or pip's fallback
    ``setuptools>=40.8.0`` and ``wheel``; plus literal ``setup_requires`` for setuptools),
    its runtime dependencies (``[project].dependencies``, else setup.cfg's
    ``install_requires``, else a literal list in ``setup.py``, read with :mod:`ast`, never
    run) with the named ``extras``, and ``requirements`` (requirement strings, or
    ``-r FILE`` relative to the checkout), each resolved as pip would at T on ``target``
    (e.g. ``Target.for_debian("bullseye")``). The project itself is not looked up when a
    dependency names it: the checkout provides it. When the target's interpreter came out
    after T, pytest and its dependencies are taken as of its release instead
    (:class:`RunnerLift`), except those the project requires.

    Not covered: what a build backend asks for only when run
    (``get_requires_for_build_wheel`` beyond setuptools' ``setup_requires``), requirements
    a ``setup.py`` computes, and pip itself (it comes with the interpreter's image).
    """
    try:
        meta = read_project(project)
        specs = expand_specs(requirements, project)
    except RequirementsError as exc:
        raise RecordError(str(exc)) from exc
    recorder = PythonRecorder(
        index_url, at, blobs, target, provided=[meta.name] if meta.name else []
    )
    return recorder.record(specs, project_wants(meta, target, extras))


def project_wants(
    meta: SourceMetadata, target: Target, extras: Sequence[str] = ()
) -> list[tuple[str, str]]:
    """A project's build and runtime requirements on ``target`` as (requirement, why) for
    :meth:`PythonRecorder.plan`; a runtime requirement of an extra only if it is named."""
    out = [
        (r, f"build requirement of the project, {meta.build_source}") for r in meta.build_requires
    ]
    if meta.requires_source is None:
        log.warning("the project declares no static runtime requirements: none recorded")
    named = sorted({canonicalize_name(e) for e in extras})
    for line in meta.requires:
        req = Requirement(line)
        if req.marker is None:
            why: str | None = "dependency of the project"
        elif req.marker.evaluate(target.environment("")):
            why = "dependency of the project"
        else:
            why = next(
                (
                    f"the project's extra {e!r}"
                    for e in named
                    if req.marker.evaluate(target.environment(e))
                ),
                None,
            )
        if why is None:
            continue
        req.marker = None  # evaluated here, with the extras that were asked for
        out.append((str(req), f"{why}, {meta.requires_source}"))
    return out


def merge_python(old: Iterable[PythonFile], new: Iterable[PythonFile]) -> list[PythonFile]:
    """Entries of both, one per (project, filename), the new one winning."""
    by_key = {(normalize(f.project), f.filename): f for f in old}
    by_key.update({(normalize(f.project), f.filename): f for f in new})
    return sorted(by_key.values(), key=lambda f: (normalize(f.project), f.version, f.filename))


__all__ = [
    "DEFAULT_INDEX",
    "USER_AGENT",
    "NothingAtT",
    "PythonRecorder",
    "RecordError",
    "RunnerLift",
    "Target",
    "Upstream",
    "default_index_url",
    "merge_python",
    "project_wants",
    "record_for_project",
    "record_python",
]
