"""A new case's environment as of T: the interpreter, the registry, the setup, settled by pip.

``case create`` given only the test requirements (``--requires pytest``, ``--extra tests``):

1. The interpreter: the Debian release current at T, moved when the project's requires-python
   excludes its Python, or the one ``--python`` names (:func:`replay.images.base.choose_release`).
2. The registry: the project's build requirements, its runtime dependencies and the named
   extras, and the test requirements, each resolved as of T for that interpreter
   (:func:`replay.registry.record.record_for_project`).
3. The setup: ``python -m pip install -e .[extras] REQUIREMENTS`` (on trixie with
   ``--ignore-installed``: pip installs beside the Python packages Debian put in the image
   without a RECORD file, which it cannot uninstall) (``pip install .`` where the
   release's pip cannot install the project editable: pip before 21.3 needs a ``setup.py``).
   The hidden tests are run by pytest (it runs unittest TestCases as well, and writes the JUnit
   report the grader reads): when the project's test requirements do not name it (a project
   tested with unittest), pytest as of T is added to them, and its registry entry says why.
4. A compiler where the project needs one: a project whose ``setup.py`` (or setuptools'
   ``ext-modules`` table) builds extension modules from C, C++ or Cython sources of its own
   gets the ``build`` toolchain (Debian's compilers and the interpreter's headers, of the same
   release), and the hidden tests' command rebuilds them in place first (``python setup.py
   build_ext --inplace``): a fix in the C code is otherwise never compiled, and a project with
   a pure-Python fallback (simplejson, pyrsistent) passes its tests on the fallback before and
   after the fix alike. That rebuild runs outside pip's isolated build, so the build's own
   requirements (Cython for a setup.py that cythonizes) are installed in the environment
   too; a C file the build names but the tree lacks, beside a Cython source, is generated
   with Cython first, at setup and before each run of the hidden tests
   (:func:`rebuild_requires`, :func:`cython_outputs`). A dependency released only as an sdist
   with C code (what pip at T found) shows as a compiler missing while settling: the
   toolchain is added then.
5. Settling: the environment image is built through the world. When pip at T asks for
   something the registry lacks (``No matching distribution found for X``: what a build
   backend asks for only when it runs, e.g. hatchling's ``editables`` for an editable
   install), X is recorded as of T and the image built again, for at most
   :data:`MAX_ROUNDS` rounds. So what the registry holds is what pip at T asked for, and
   each entry says why it is there.
"""

from __future__ import annotations

import contextlib
import io
import logging
import re
import shlex
import subprocess
import tarfile
import tempfile
import tomllib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

import yaml
from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

from replay.base.blobs import BlobStore
from replay.base.case import load_case
from replay.base.errors import InputError, ReplayError, ToolError
from replay.base.manifest import PythonFile, RegistryIndex
from replay.casebuild.conflicts import (
    against_the_checkout,
    dependent_in_registry,
    read_conflict,
    refused,
    requirements_of,
    step_back,
    stepped_floor,
    still_asks,
)
from replay.casebuild.extensions import (
    BUILD_TOOLCHAIN,
    COMMON,
    GCC_10,
    REBUILD,
    built_c_sources,
    cython_outputs,
    cython_requirement,
    extension_sources,
    generate_command,
    lacks_compiler,
    rebuild_command,
    rebuild_requires,
    with_common,
)
from replay.images.base import (
    Release,
    base_tag,
    choose_release,
    parse_base_tag,
    read_requires_python,
)
from replay.images.env import cause_line, failed_distribution
from replay.images.system import Lacking, contents_mirror, installed, lacking, packages_for
from replay.registry.errors import NothingAtT
from replay.registry.record import (
    TEST_RUNNER,
    Target,
    merge_python,
    project_wants,
    record_for_project,
    record_python,
)
from replay.registry.requirements import (
    RequirementsError,
    expand_specs,
    read_project,
    read_requirements_file,
    requirement_name,
)
from replay.registry.slot import dump_index, read_index, write_index
from replay.runtime.base import Runtime, SandboxError

log = logging.getLogger(__name__)

MAX_ROUNDS = 6
LOGGED_LINES = 40
"""How many of a failed build's last lines the log keeps (``logs/<fix>.log``)."""
"""Environment builds before giving up on a registry that keeps missing something."""

_MISSING = re.compile(r"No matching distribution found for (\S+)")
_EDITABLE_WITHOUT_SETUP_PY = frozenset({"bullseye"})
"""Releases whose pip (20.3, before PEP 660) installs a project editable only through its
setup.py, with ``setup.py develop`` run in the isolated build environment: that works only
when the build backend is setuptools. A setup.py shim beside another backend (more-itertools
2023: flit_core and ``setup()``) fails there with "No module named 'setuptools'", so such a
project is installed as a wheel (:func:`_develops_with_setup_py`)."""
_DISTS_WITHOUT_RECORD = frozenset({"trixie"})
"""Releases whose image holds Python packages Debian installed without a ``RECORD`` file
(trixie's ``packaging``), which their pip refuses to uninstall when a requirement wants
another version: the setup installs with ``--ignore-installed`` there. Not on bullseye and
bookworm, whose pip leaves Debian's packages alone and installs beside them anyway; there
``--ignore-installed`` would put an old setuptools as of T, which a test requirement such as
pytest 4 names, over the image's (boltons 2019: setuptools 41 does not run on Python 3.9)."""


class SettleError(ReplayError):
    """The environment could not be settled: the build fails for a reason other than a
    missing distribution, or keeps missing one after it was recorded."""


@dataclass(frozen=True)
class Wanted:
    """What the case's environment must hold besides the project itself."""

    requires: tuple[str, ...] = ()
    """Test requirements (PEP 508 strings, or ``-r FILE`` relative to the repository)."""
    extras: tuple[str, ...] = ()
    """The project's own extras to install (``tests``)."""
    python: str | None = None
    """``3.9``: overrides the choice from T and requires-python."""
    index_url: str | None = None
    """Where to record from (default: pip's configured index)."""

    def __bool__(self) -> bool:
        return bool(self.requires or self.extras)


RUNNER = TEST_RUNNER
"""What runs the hidden tests (:data:`replay.casebuild.casedir.DEFAULT_COMMAND`), the one the
recorder takes as of the interpreter's release when that is after T."""
RUNNER_WHY = (
    "the hidden tests are run with pytest (which runs unittest TestCases too and writes the "
    "JUnit report the grader reads), and the project's test requirements do not name it"
)


@dataclass(frozen=True)
class Planned:
    release: Release
    base_image: str
    setup: list[str]
    files: list[PythonFile]
    requires_python: str | None
    notes: list[str] = field(default_factory=list)
    """What was added to the project's own requirements, and why."""
    toolchains: tuple[str, ...] = ()
    """Toolchains the base image carries (``build`` for a project with extension modules)."""
    rebuild: str | None = None
    """A command the hidden tests' command runs first (:data:`REBUILD`), or None."""


def requires_command(release: Release, wanted: Wanted) -> str:
    """The pip command that installs the test requirements alone (before the project: what a
    step before its build needs, such as Cython)."""
    ignore = "--ignore-installed " if release.name in _DISTS_WITHOUT_RECORD else ""
    return f"python -m pip install {ignore}" + " ".join(_quote(r) for r in wanted.requires)


def export_tree(repo: Path, rev: str, dest: Path) -> Path:
    """The files of ``rev`` (no .git) under ``dest``."""
    done = subprocess.run(
        ["git", "-C", str(repo), "archive", "--format=tar", rev],
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        said = done.stderr.decode(errors="replace").strip()
        missing = re.search(r"(?:invalid object \d+|cannot read '?)([0-9a-f]{40})", said)
        if missing is not None:
            raise InputError(
                repo,
                f"the repository lacks object {missing[1]}, which the tree at {rev} holds (an "
                "incomplete clone or mirror; `git fsck --connectivity-only` there names every "
                "object missing): the files cannot be read whole. Fetch the repository again "
                f"from its origin and create the case again (git said: {said})",
            )
        raise InputError(repo, f"git archive {rev}: {said}")
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(done.stdout)) as tar:
        tar.extractall(dest, filter="data")
    return dest


def setup_command(checkout: Path, release: Release, wanted: Wanted, *, pep660: bool = False) -> str:
    """The one pip command that installs the project and the test requirements; ``pep660``
    when the setup has put a pip that installs any build backend editable first
    (:func:`needs_pep660_pip`)."""
    extras = f"[{','.join(wanted.extras)}]" if wanted.extras else ""
    editable = (
        pep660
        or release.name not in _EDITABLE_WITHOUT_SETUP_PY
        or _develops_with_setup_py(checkout)
    )
    target = f"-e .{extras}" if editable else f".{extras}"
    words = [target, *(_quote(r) for r in wanted.requires)]
    ignore = "--ignore-installed " if release.name in _DISTS_WITHOUT_RECORD else ""
    scheme = ""
    if editable and not pep660 and release.name in _EDITABLE_WITHOUT_SETUP_PY:
        # setup.py develop runs with a setuptools as of T: the one a [build-system] table
        # asks for (cachetools 2023), or, without one, whatever the same command installed
        # first as a test requirement's own dependency (webargs 2022: pyramid requires
        # setuptools, 62 as of T). From 60 on, setuptools uses its own distutils, which knows
        # nothing of Debian's install scheme and links the project into
        # /usr/lib/python3.9/site-packages, which Debian's Python does not search ("No module
        # named ..." before and after the fix). Told to, it uses Debian's distutils, which
        # links it into /usr/local/lib/python3.9/dist-packages; before 60 it did anyway.
        scheme = "SETUPTOOLS_USE_DISTUTILS=stdlib "
    return f"{scheme}python -m pip install {ignore}" + " ".join(words)


PEP_660_PIP = "pip>=21.3"
"""The first pip that installs any build backend's project editable (PEP 660)."""
PEP_660_SINCE = datetime(2021, 10, 11, tzinfo=UTC)
"""pip 21.3's release: before it, a project without setup.py was installed as a wheel."""


def needs_pep660_pip(checkout: Path, release: Release, at: datetime) -> bool:
    """Whether the setup first installs pip as of T (:data:`PEP_660_PIP`): the release's own
    pip (bullseye's 20.3) installs editable only through setup.py, the project builds with
    another backend (hatchling, flit), and T is after pip learnt PEP 660, as the project's
    developers then had it. Installed as a wheel instead, a ``src/`` layout's tests import
    the installed copy, never the tree under test (platformdirs 2022: the gold patch had no
    effect, and plain ``pytest`` imports the installed copy in any layout)."""
    return (
        release.name in _EDITABLE_WITHOUT_SETUP_PY
        and not _develops_with_setup_py(checkout)
        and at >= PEP_660_SINCE
    )


def setup_commands(
    checkout: Path, release: Release, wanted: Wanted, *, pep660: bool = False
) -> list[str]:
    """:func:`setup_command`, split in two when a requirements file the test requirements
    name pins hashes (:func:`_pins_hashes`) or installs the project itself
    (``file:.#egg=referencing``, ``-e .``, ``.``, as pip-compile writes a project's own
    line): pip cannot take the project from two places in one command ("Cannot install
    referencing 0.26.2.dev1 (from .) and referencing 0.26.2.dev1 (from /workspace/repo)",
    referencing 2023). That file is installed first, as the project's own tooling installs
    it, then the project editable with the rest."""
    own = [
        spec
        for spec in wanted.requires
        if _installs_itself(checkout, spec) or _pins_hashes(checkout, spec)
    ]
    if not own:
        return [setup_command(checkout, release, wanted, pep660=pep660)]
    rest = replace(wanted, requires=tuple(r for r in wanted.requires if r not in own))
    first = requires_command(release, replace(wanted, requires=tuple(own)))
    return [first, setup_command(checkout, release, rest, pep660=pep660)]


_ITSELF = re.compile(
    r"^(?:(?:-e|--editable)[=\s]+)?(?:file:)?\.(?:/)?(?:\[[^\]]*\])?(?:#egg=\S*)?$"
)


def _pins_hashes(checkout: Path, spec: str) -> bool:
    """Whether the ``-r FILE`` that ``spec`` names (or one it includes) pins hashes
    (``--hash=sha256:...``, as ``uv export`` and ``pip-compile --generate-hashes`` write):
    pip then requires a hash of everything in the same command, which the project's own
    directory has none of ("The editable requirement file:///workspace/repo cannot be
    installed when requiring hashes", charset-normalizer 2026, fourth corpus). Such a file is
    installed in a command of its own, before the project."""
    return any(
        "--hash=" in line or "--require-hashes" in line
        for line in _requirement_lines(checkout, spec)
    )


def _installs_itself(checkout: Path, spec: str) -> bool:
    """Whether ``spec``, a ``-r FILE`` test requirement, names the project's own directory
    (in the file, or one it includes)."""
    return bool(_own_lines(checkout, spec))


def own_extras(checkout: Path, requires: Sequence[str]) -> list[str]:
    """The project's extras that the test requirements' files install with it
    (``.[dev,docs,testing]``, jsonpickle 2024): recorded as of T like extras given with
    ``--extra``, since pip installs them from the registry."""
    extras: list[str] = []
    for spec in requires:
        for line in _own_lines(checkout, spec):
            found = re.search(r"\[([^\]]*)\]", line)
            for extra in found.group(1).split(",") if found else []:
                if extra.strip() and extra.strip() not in extras:
                    extras.append(extra.strip())
    return extras


def _own_lines(checkout: Path, spec: str) -> list[str]:
    """The lines naming the project's own directory in the ``-r FILE`` that ``spec`` names
    and the files it includes."""
    return [line for line in _requirement_lines(checkout, spec) if _ITSELF.match(line)]


_INCLUDE = re.compile(r"^(?:-r|--requirement)[=\s]*(\S+)$")


def _requirement_lines(checkout: Path, spec: str, seen: tuple[Path, ...] = ()) -> Iterator[str]:
    """The lines (pip's comments taken out) of the ``-r FILE`` that ``spec`` names, then of
    each file it includes, where it includes it; nothing when ``spec`` names no file here."""
    found = _INCLUDE.match(spec.strip())
    if found is None:
        return
    path = (checkout / found.group(1)).resolve()
    if path in seen or not path.is_file():
        return
    for raw in path.read_text(errors="replace").splitlines():
        line = re.sub(r"(^|\s+)#.*$", "", raw).strip()  # pip's comments: "#" after a space
        yield line
        inner = _INCLUDE.match(line)
        if inner:
            yield from _requirement_lines(path.parent, f"-r {inner.group(1)}", (*seen, path))


def _develops_with_setup_py(checkout: Path) -> bool:
    """Whether pip before PEP 660 can install the project editable: it has a setup.py and
    builds with setuptools (``[build-system].build-backend`` is setuptools', or absent)."""
    if not (checkout / "setup.py").is_file():
        return False
    try:
        table = tomllib.loads((checkout / "pyproject.toml").read_text(errors="replace"))
    except (OSError, tomllib.TOMLDecodeError):
        return True  # no pyproject.toml (or none readable): pip's setuptools fallback
    system = table.get("build-system")
    backend = system.get("build-backend") if isinstance(system, dict) else None
    return not isinstance(backend, str) or backend.split(".")[0] == "setuptools"


def _quote(req: str) -> str:
    if req.startswith("-r"):
        return req
    return "'" + req.replace("'", "'\\''") + "'" if re.search(r"[\s<>|&;*?!]", req) else req


def names_runner(checkout: Path, wanted: Wanted, target: Target) -> bool:
    """Whether the project, its named extras or its test requirements (``-r`` files read)
    name :data:`RUNNER`, or the project is the runner itself. Requirements that cannot be read
    count as naming it: recording them then stops with their own error."""
    try:
        meta = read_project(checkout)
        lines = expand_specs(list(wanted.requires), checkout)
    except RequirementsError:
        return True
    if meta.requires_source is not None:  # else project_wants warns, as recording will
        lines += [req for req, _ in project_wants(meta, target, wanted.extras)]
    names = {canonicalize_name(meta.name)} if meta.name else set()
    for line in lines:
        try:
            names.add(canonicalize_name(Requirement(line).name))
        except InvalidRequirement:
            continue
    return RUNNER in names


def added_by_fix(checkout: Path, fixed: Path, wanted: Wanted, target: Target) -> list[str]:
    """The test requirements the fix adds to what the project declares for its tests (the
    ``-r`` files named, the named extras), by name: a requirement of a project the base's
    declaration does not name at all. The hidden tests are the fix's, so they may import
    what only the fix declared (arrow's 2019 fix added ``dateparser`` to requirements.txt with
    the test that uses it): without it, they fail before and after the gold patch alike."""

    def declared(tree: Path) -> list[str]:
        try:
            lines = expand_specs(list(wanted.requires), tree)
            meta = read_project(tree)
        except RequirementsError:
            return []
        if meta.requires_source is not None and wanted.extras:
            lines += [req for req, _ in project_wants(meta, target, wanted.extras)]
        return lines

    before = {requirement_name(line) for line in declared(checkout)}
    added = []
    for line in declared(fixed):
        found = requirement_name(line)
        if found is not None and found not in before and line not in added:
            req = Requirement(line)
            if req.marker is None or req.marker.evaluate(target.environment("")):
                req.marker = None
                added.append(str(req))
    return added


_TOX_ENV = re.compile(r"^\{env:[A-Za-z_][A-Za-z0-9_]*(?::(?P<default>[^{}]*))?\}$")
"""tox's substitution of an environment variable, ``{env:NAME:DEFAULT}``."""
_EXTRA_NAME = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$")
"""An extra's name (PEP 508)."""


def given_extras(wanted: Wanted) -> tuple[Wanted, list[str]]:
    """``wanted`` with each extra given as tox's substitution of an environment variable
    (natsort's tox.ini: ``extras = {env:WITH_EXTRAS:}``) taken as tox takes it with the
    variable unset (its default: none here), and the notes that say so. An extra that is no
    name is an InputError naming it (pip would stop on it with a parser's traceback)."""
    extras: list[str] = []
    notes: list[str] = []
    for extra in wanted.extras:
        found = _TOX_ENV.match(extra.strip())
        named = [extra.strip()]
        if found:
            named = [e.strip() for e in (found["default"] or "").split(",") if e.strip()]
            notes.append(
                f"the extra {extra} is tox's substitution of an environment variable: taken "
                f"as tox takes it with the variable unset ({', '.join(named) or 'no extra'})"
            )
        for name in named:
            if not _EXTRA_NAME.match(name):
                raise InputError(
                    Path(name),
                    "is not an extra's name (letters, digits, '.', '_' and '-'); the project's "
                    "extras are named in its pyproject.toml, setup.cfg or setup.py",
                    "--extra",
                )
            if name not in extras:
                extras.append(name)
    return replace(wanted, extras=tuple(extras)), notes


def plan_environment(
    repo: Path,
    base: str,
    at: datetime,
    wanted: Wanted,
    blobs: BlobStore,
    fix: str | None = None,
) -> Planned:
    """Choose the interpreter, record the registry at T for it, propose the setup. With the
    ``fix`` commit, what it adds to the declared test requirements is installed too
    (:func:`added_by_fix`)."""
    from replay.registry.record import default_index_url

    wanted, notes = given_extras(wanted)
    with tempfile.TemporaryDirectory(prefix="replay-project-") as tmp:
        checkout = export_tree(repo, base, Path(tmp) / "project")
        requires_python = read_requires_python(checkout)
        release = choose_release(at, requires_python, wanted.python)
        target = Target.for_debian(release.name)
        if fix is not None:
            fixed = export_tree(repo, fix, Path(tmp) / "fixed")
            extra = added_by_fix(checkout, fixed, wanted, target)
            if extra:
                wanted = replace(wanted, requires=(*wanted.requires, *extra))
                notes.append(
                    f"{', '.join(extra)} added to the test requirements, as of T: the fix "
                    f"declares {'them' if extra[1:] else 'it'} for its tests (the hidden tests "
                    "may need it), the base does not"
                )
        runner_added = not names_runner(checkout, wanted, target)
        if runner_added:
            wanted = replace(wanted, requires=(*wanted.requires, RUNNER))
            notes.append(f"{RUNNER} added to the test requirements, as of T: {RUNNER_WHY}")
        sources = extension_sources(checkout)
        generated = cython_outputs(checkout) if sources else []
        rebuilds = bool(sources) and (checkout / "setup.py").is_file()
        made = {c for _, c in generated}  # generated before the rebuild: kept
        stale = [p for p in built_c_sources(checkout, sources) if p[1] not in made]
        stale = stale if rebuilds else []
        if rebuilds or generated:
            more, why = rebuild_requires(checkout, wanted.requires, [*generated, *stale])
            if more:
                wanted = replace(wanted, requires=(*wanted.requires, *more))
                notes.append(f"{', '.join(more)} added to the test requirements, as of T: {why}")
        pep660 = needs_pep660_pip(checkout, release, at)
        installer = [PEP_660_PIP] if pep660 else []
        if pep660:
            notes.append(
                f"{PEP_660_PIP} installed first, as of T: {release.name}'s pip "
                "installs a project editable only through setup.py, this one builds with "
                "another backend, and the pip of T installs it editable (PEP 660), so the "
                "tests import the tree under test"
            )
        dropped = without_urls(checkout, wanted)
        if dropped is not None:
            wanted, note = dropped
            notes.append(note)
        left_out = 0
        while True:
            try:
                files = record_for_project(
                    checkout,
                    [*wanted.requires, *installer],
                    at,
                    target,
                    blobs,
                    wanted.index_url or default_index_url(),
                    extras=[*wanted.extras, *own_extras(checkout, wanted.requires)],
                )
                break
            except NothingAtT as exc:
                left = leave_out(checkout, wanted, exc) if left_out < MAX_LEFT_OUT else None
                if left is None:
                    raise
                wanted, note = left
                notes.append(note)
                left_out += 1
        if runner_added:
            files = [_runner_added(f) for f in files]
        setup = setup_commands(checkout, release, wanted, pep660=pep660)
        if pep660:
            setup = [f"python -m pip install {_quote(PEP_660_PIP)}", *setup]
        toolchains: tuple[str, ...] = ()
        rebuild = None
        if sources:
            toolchains = (BUILD_TOOLCHAIN,)
            rebuild = rebuild_command(stale) if rebuilds else None
            if generated:
                cythonize = generate_command(generated)
                generator = replace(
                    wanted, requires=(cython_requirement(checkout, wanted.requires),)
                )
                setup = [requires_command(release, generator), cythonize, *setup]
                rebuild = f"{cythonize} && {rebuild}" if rebuild else None
                notes.append(
                    f"{', '.join(out for _, out in generated)} generated by Cython before the "
                    "build and before each run of the hidden tests: the build compiles "
                    f"{'it' if len(generated) == 1 else 'them'} and the tree holds only the "
                    "Cython source"
                )
            if at < GCC_10:
                setup = [with_common(command) for command in setup]
                rebuild = with_common(rebuild) if rebuild else None
                notes.append(
                    f"the C code is built with {COMMON}: it is from before GCC 10 (May 2020), "
                    f"which made -fno-common the default, and Debian {release.name}'s GCC "
                    "refuses what the compilers of T linked (a variable defined in a header)"
                )
            others = f" and {len(sources) - 3} more" if sources[3:] else ""
            shown = ", ".join(sources[:3]) + others
            notes.append(
                f"the build toolchain added (Debian {release.name}'s compilers and Python "
                f"{release.python_version}'s headers): the project builds extension modules "
                f"({shown})"
                + (
                    f"; the hidden tests' command runs `{rebuild}` first, so the tests run the "
                    "C code of the tree under test"
                    if rebuild
                    else "; its build is not setup.py's, so the tests run the extensions "
                    "built at the base commit (a fix to their C code is not rebuilt)"
                )
            )
    return Planned(
        release,
        base_tag(release, toolchains),
        setup,
        files,
        requires_python,
        notes,
        toolchains,
        rebuild,
    )


MAX_LEFT_OUT = 3
"""How many requirements of the project's requirements files :func:`plan_environment` leaves
out (:func:`leave_out`), one per recording."""


def leave_out(checkout: Path, wanted: Wanted, exc: NothingAtT) -> tuple[Wanted, str] | None:
    """``wanted`` without the requirement ``exc`` found nothing at T for, and the note that
    says so; None when it may not be left out.

    It is left out only when the index holds no file of that project from at or before T
    at all (the project was deleted and uploaded again later: codecov, in cloudpickle's
    ``dev-requirements.txt``, has only 2023 files), and only a requirements file or an extra
    of the project's names it (not a requirement given by name, nor only a dependency). Each
    ``-r FILE`` naming it is replaced by that file's requirements without it
    (:func:`_expanded`), or else each extra naming it by the extra's other requirements
    (:func:`_without_in_extras`, cmd2 2019's ``test`` extra). The tests of such a case do
    not import it, or the measure stops naming the module they cannot import."""
    name = exc.project
    if name is None or not exc.absent:
        return None
    if any(requirement_name(spec) == name for spec in wanted.requires):
        return None
    found = None
    if exc.asked:
        found = _expanded(
            checkout,
            wanted,
            lambda path: any(requirement_name(r) == name for r in read_requirements_file(path)),
            lambda req: requirement_name(req) != name,
        )
    found = found or _without_in_extras(checkout, wanted, name)
    if found is None:
        return None
    wanted, files = found
    note = (
        f"{name} left out of the test requirements ({', '.join(files)} "
        f"{'names' if len(files) == 1 else 'name'} it; the rest of "
        f"{'it' if len(files) == 1 else 'them'} is installed): the index holds no file of it "
        "from at or before T, all of them were uploaded later (the project deleted and "
        "uploaded again), so nothing of it can be installed as of T; tests that import it "
        "stop the measure, naming it"
    )
    return wanted, note


_OF_EXTRA = re.compile(
    r"""^(?P<spec>.*?)(?:;\s*|\s+and\s+)extra\s*==\s*["'](?P<extra>[^"']+)["']\s*$"""
)
"""A ``Requires-Dist`` line limited to an extra, as :func:`read_project` writes it (the
extra's clause last): the requirement with the rest of its marker, and the extra."""


def _without_in_extras(
    checkout: Path, wanted: Wanted, name: str
) -> tuple[Wanted, list[str]] | None:
    """``wanted`` with each of its extras that names ``name`` replaced by that extra's other
    requirements, given by name (cmd2 2019's ``test`` extra names codecov, whose every file
    on the index is from 2023; sixth held-out corpus), and the extras replaced (``the
    project's extra 'test'``); None when no extra names it, or when one names the project
    itself (``anyio[curio,trio]``), which only the extra can install from the checkout."""
    try:
        meta = read_project(checkout)
    except (ReplayError, OSError, ValueError):
        return None
    own = canonicalize_name(meta.name) if meta.name else None
    by_extra: dict[str, list[str]] = {}
    for line in meta.requires:
        found = _OF_EXTRA.match(line)
        if found:
            by_extra.setdefault(found["extra"], []).append(found["spec"].strip())
    extras, requires, replaced = list(wanted.extras), list(wanted.requires), []
    for extra in wanted.extras:
        specs = by_extra.get(extra, [])
        if not any(requirement_name(spec) == name for spec in specs):
            continue
        if own is not None and any(requirement_name(spec) == own for spec in specs):
            return None
        extras.remove(extra)
        requires += [spec for spec in specs if requirement_name(spec) != name]
        replaced.append(f"the project's extra '{extra}'")
    if not replaced:
        return None
    return replace(wanted, extras=tuple(extras), requires=tuple(requires)), replaced


_BY_URL = re.compile(r"^(?:-e\s+|--editable[=\s]+)?(?:[\w.+-]+\s*@\s*)?(?:[a-z][\w+.-]*://|git\+)")
"""A requirements-file line that installs from a URL (``https://.../master.zip``,
``git+https://...``, ``name @ https://...``)."""


def without_urls(checkout: Path, wanted: Wanted) -> tuple[Wanted, str] | None:
    """``wanted`` with each ``-r FILE`` that installs something from a URL replaced by the
    file's other requirements, and the note that says so; None when no file does. pip would
    fetch the URL from the internet, which the world does not reach (asn1crypto 2026's
    ``requires/ci`` names ``https://github.com/wbond/asn1crypto/archive/master.zip``, the
    project itself; the checkout is installed anyway)."""
    urls: list[str] = []

    def has_urls(path: Path) -> bool:
        relative = path.relative_to(checkout).as_posix()
        found = [
            line for line in _requirement_lines(checkout, f"-r {relative}") if _BY_URL.match(line)
        ]
        urls.extend(u for u in found if u not in urls)
        return bool(found)

    found = _expanded(checkout, wanted, has_urls, lambda req: True)
    if found is None:
        return None
    wanted, files = found
    shown = ", ".join(urls[:2]) + (f" and {len(urls) - 2} more" if urls[2:] else "")
    note = (
        f"{shown} left out of the test requirements ({', '.join(files)}; the rest is "
        "installed): a requirement by URL is fetched from the internet, which the world does "
        "not reach, and is no version on the index as of T; tests that import what it "
        "installs stop the measure, naming it"
    )
    return wanted, note


def _expanded(
    checkout: Path,
    wanted: Wanted,
    replace_file: Callable[[Path], bool],
    keep: Callable[[str], bool],
) -> tuple[Wanted, list[str]] | None:
    """``wanted`` with each ``-r FILE`` for which ``replace_file`` holds replaced by the
    file's requirements (its includes read, URL lines dropped) that ``keep`` and the local
    paths it installs (:func:`_local_paths`), the extras of its line for the project kept as
    extras; and those files. None when no file was replaced."""
    requires: list[str] = []
    extras = list(wanted.extras)
    files: list[str] = []
    for spec in wanted.requires:
        found = _INCLUDE.match(spec.strip())
        path = checkout / found.group(1) if found else None
        try:
            listed = read_requirements_file(path) if path and replace_file(path) else None
        except (RequirementsError, ValueError):
            listed = None
        if found is None or listed is None:
            requires.append(spec)
            continue
        files.append(found.group(1))
        extras += [e for e in own_extras(checkout, [spec]) if e not in extras]
        requires += [r for r in listed if keep(r)]
        requires += [p for p in _local_paths(checkout, spec) if p not in requires]
    if not files:
        return None
    return replace(wanted, requires=tuple(requires), extras=tuple(extras)), files


def _local_paths(checkout: Path, spec: str) -> list[str]:
    """The local directories and archives the ``-r FILE`` that ``spec`` names installs (a
    test helper package: cloudpickle's ``./tests/cloudpickle_testpkg``), relative to the
    top as pip reads them, the project itself and URLs aside; an editable one is installed
    as a plain one."""
    found = []
    for line in _requirement_lines(checkout, spec):
        if not line or _ITSELF.match(line) or _BY_URL.match(line) or _INCLUDE.match(line):
            continue
        path = re.sub(r"^(?:-e|--editable)[=\s]+", "", line).split("#", 1)[0].strip()
        if path.startswith("-") or not (path.startswith((".", "/")) or "/" in path):
            continue
        target = (checkout / path).resolve()
        if target.is_relative_to(checkout.resolve()) and target.exists():
            found.append(path)
    return found


def _runner_added(f: PythonFile) -> PythonFile:
    """The runner's entry chosen for the requirement added (``pytest: newest ... at T``)
    says why it was added; a version a dependency asked for keeps its reason."""
    because = f.chosen_because or ""
    if canonicalize_name(f.project) != RUNNER or because.partition(":")[0].strip() != RUNNER:
        return f
    return f.model_copy(update={"chosen_because": f"added by case create: {RUNNER_WHY}; {because}"})


def write_registry_source(path: Path, files: Sequence[PythonFile]) -> Path:
    """A registry index file holding ``files`` (for the case's snapshot sources)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dump_index(RegistryIndex(schema=1, python=list(files))))
    return path


def missing_requirements(message: str) -> list[str]:
    """What pip could not find, in pip's words (every pip since 2018 says it this way)."""
    return list(dict.fromkeys(m.rstrip(".,;") for m in _MISSING.findall(message)))


BuildFn = Callable[[Path], None]
"""Builds the environment image of the case at the path (raises SandboxError on failure)."""


def settle(
    case_path: Path,
    build: BuildFn,
    at: datetime,
    release: Release,
    blobs: BlobStore,
    index_url: str | None = None,
    say: Callable[[str], None] = lambda _: None,
) -> list[str]:
    """Build the case's environment; record what pip at T asked for and missed; repeat.

    Returns the requirements recorded on the way. Both the snapshot's registry index and the
    case's ``sources/registry/index.json`` (when present) are updated, so rebuilding the
    snapshot from its sources gives the same registry.
    """
    from replay.registry.record import default_index_url

    upstream = index_url or default_index_url()
    target = Target.for_debian(release.name)
    added: list[str] = []
    for _ in range(MAX_ROUNDS):
        try:
            build(case_path)
            return added
        except SandboxError as exc:
            output = getattr(exc, "output", "") or str(exc)
            # The log keeps pip's own words of every failed round; the stop says the cause.
            tail = "\n".join(output.rstrip().splitlines()[-LOGGED_LINES:])
            log.info("the environment build failed; its output ends:\n%s", tail)
            if lacks_compiler(output) and add_toolchain(case_path, BUILD_TOOLCHAIN):
                say(
                    "a build at T needs a compiler (an sdist with C code, as pip at T found "
                    f"it): the build toolchain added to the base image "
                    f"({load_case(case_path).environment.base_image}), and the image built again"
                )
                continue
            needs = lacking(output)
            image = _written_base_image(case_path)
            holding = system_packages(needs, release, say, image) if needs and image else {}
            if holding and (fresh_packages := add_packages(case_path, holding.values())):
                said = "; ".join(f"{w}: {p}" for w, p in holding.items() if p in fresh_packages)
                say(
                    f"a build at T looked for what the image lacks, which Debian "
                    f"{release.name}'s index of package contents names ({said}): added to the "
                    f"base image with the build toolchain "
                    f"({load_case(case_path).environment.base_image}), and the image built again"
                )
                continue
            if breaks_on_interpreter(output) and (dropped := drop_tool_pin(case_path)):
                say(
                    f"setuptools left out of {', '.join(dropped)} (the rest installed): the "
                    f"version it pins does not run on Python {release.python_version} (its "
                    "traceback ends in setuptools' own code), the interpreter the case has as "
                    "the oldest here; the image's setuptools builds the project, and rebuilding"
                )
                continue
            if lacks_build_editable(output) and install_not_editable(case_path):
                say(
                    "the project's build backend as of T cannot install it editable (it has "
                    "no build_editable hook, and the project no setup.py): installed as a "
                    "wheel instead, as pip installed it for its developers then; the hidden "
                    "tests import the tree under test where it comes first on their path (a "
                    "flat layout under python -m pytest), and calibration tells if they do "
                    "not, and rebuilding"
                )
                continue
            missing = missing_requirements(output)
            fresh = [m for m in missing if m not in added]
            if not fresh:
                conflict = read_conflict(output)
                older = step_back(output)
                if conflict is not None and older is not None and older not in added:
                    asks = stepped_floor(output)
                    # Again while the version recorded still asks for that floor (every
                    # mkdocs-material 7.2 and 7.3 asks for mkdocs>=1.2.3: dataclasses-json
                    # 2022, eighth held-out corpus, ran out of rounds one build per version).
                    last = _step_back_while(
                        case_path,
                        older,
                        partial(_asks_again, blobs=blobs, asks=asks),
                        at,
                        upstream,
                        blobs,
                        target,
                    )
                    further = (
                        ""
                        if last == older or asks is None
                        else f", then older while each still asked for {asks[0]}>={asks[1]} "
                        f"(read from their metadata, to {last})"
                    )
                    say(
                        f"pip at T found no versions that fit together; {older} recorded as "
                        "of T too (the dependent that asks for the newest of what they share, "
                        f"one version older{further}), so that pip can take it instead, and "
                        "rebuilding"
                    )
                    added.append(older)
                    continue
                found = None if conflict is None else _registry_dependent(case_path, output, blobs)
                if found is not None and found[0] not in added:
                    user = found[1]  # again while it asks for what the user's pins exclude
                    older = _step_back_while(
                        case_path,
                        found[0],
                        partial(_refused_again, blobs=blobs, user=user),
                        at,
                        upstream,
                        blobs,
                        target,
                    )
                    say(
                        f"pip at T found no versions that fit together; its words do not name "
                        f"the dependent, the registry's metadata does: {older} recorded as of "
                        "T (the newest that fits what the project pins), and rebuilding"
                    )
                    added.append(found[0])
                    continue
                split = conflict is not None and against_the_checkout(output)
                if split and install_project_last(case_path):
                    say(
                        "pip at T cannot install the project with a test requirement that "
                        "asks for another version of it; the test requirements are installed "
                        "first and the project over them, in two commands, as tox installs a "
                        "test environment's deps before the package, and rebuilding"
                    )
                    continue
                if conflict is not None:
                    raise SettleError(conflict) from exc
                unbuilt = sdist_build_failure(output)
                broken = _unbuildable(output, missing)
                if broken and (dropped := drop_pins(case_path, broken)):
                    say(
                        f"{', '.join(broken)} left out of {', '.join(dropped)} (the rest "
                        f"installed): its source distribution as of T does not build here "
                        f"({cause_line(output) or 'its build failed'}) and no wheel of it at T "
                        f"fits Python {release.python_version}, the oldest interpreter here; "
                        "only the project's requirements files ask for it. Tests that import "
                        "it fail before and after the fix alike, and the measure names it if "
                        "the fix's tests need it"
                    )
                    continue
                if broken and (left := drop_from_extras(case_path, broken, blobs)):
                    say(
                        f"{', '.join(left)} left out of the project's extras (the rest "
                        f"installed): {', '.join(broken)}, which it brings, has a source "
                        f"distribution as of T that does not build here "
                        f"({cause_line(output) or 'its build failed'}) and no wheel at T for "
                        f"Python {release.python_version}, the oldest interpreter here. Tests "
                        "that import it fail before and after the fix alike, and the measure "
                        "names it if the fix's tests need it"
                    )
                    continue
                if missing and unbuilt is not None:
                    written = yaml.safe_load(case_path.read_text()) if case_path.is_file() else {}
                    toolchains = ((written or {}).get("environment") or {}).get("toolchains") or []
                    carries = (
                        "the image carries Debian's compilers, Python's headers, libffi-dev "
                        "and libssl-dev"
                        if BUILD_TOOLCHAIN in toolchains
                        else "the image carries no compiler, and the build's words do not "
                        "say it wants one"
                    )
                    raise SettleError(
                        f"pip at T found {', '.join(missing)} only as a source distribution "
                        f"that does not build here ({unbuilt}): the build needs something "
                        f"the image lacks, most often a system library ({carries}); name "
                        "the test requirements without it (--requires), or choose a T when a "
                        f"wheel for Python {release.python_version} existed (--at)\n{exc}"
                    ) from exc
                if missing:
                    raise SettleError(
                        f"pip still finds no distribution for {', '.join(missing)} after it "
                        f"was recorded as of T ({at.isoformat()}); nothing at T fits the "
                        f"interpreter ({release.name}, Python {release.python_version}) and "
                        f"platform:\n{exc}"
                    ) from exc
                raise
            say(f"pip at T asked for {', '.join(fresh)}: recording it as of T and rebuilding")
            files = record_python(fresh, at, upstream, blobs, target)
            why = "pip asked for it while setting up the environment"
            _add_to_registry(case_path, [_because(f, why) for f in files])
            added += fresh
    raise SettleError(
        f"the environment still misses distributions after {MAX_ROUNDS} rounds "
        f"(recorded on the way: {', '.join(added)})"
    )


_TOOL_TRACEBACK = re.compile(
    r'File "[^"]*/(?:site|dist)-packages/setuptools/[^"]*", line \d+.*\n(?:.*\n){0,3}?'
    r"\s*(?:AttributeError|ImportError|ModuleNotFoundError|SyntaxError|TypeError|NameError)\b"
)
"""A traceback that ends in the installed setuptools' own code: a setuptools too old for the
interpreter (asn1crypto 2019 pins ``setuptools == 39.0.1``, whose ``py33compat`` calls
``HTMLParser().unescape``, gone in Python 3.9)."""


def breaks_on_interpreter(output: str) -> bool:
    """Whether the setup failed inside the setuptools it installed (:data:`_TOOL_TRACEBACK`)."""
    return _TOOL_TRACEBACK.search(output) is not None


def drop_tool_pin(case_path: Path) -> list[str]:
    """:func:`drop_pins` of setuptools. A project's CI pins setuptools for its own tools; the
    image's setuptools, of the interpreter's release, is the one that runs there."""
    return drop_pins(case_path, ["setuptools"])


def drop_pins(case_path: Path, names: Sequence[str]) -> list[str]:
    """Replace each ``-r FILE`` of the case's setup commands whose requirements name one of
    the projects ``names`` (canonical) by that file's other requirements
    (:func:`_expanded`); the files replaced, none when no file names one."""
    wanted_out = {canonicalize_name(n) for n in names}
    if not wanted_out or not case_path.is_file():
        return []
    data = yaml.safe_load(case_path.read_text())
    setup: list[str] = data.get("environment", {}).get("setup", [])
    replaced: list[str] = []
    with _checkout_of(case_path) as checkout:
        commands = []
        for command in setup:
            words = shlex.split(command)
            specs, rest, i = [], [], 0
            while i < len(words):
                if words[i] in ("-r", "--requirement") and i + 1 < len(words):
                    specs.append(f"-r {words[i + 1]}")
                    i += 2
                    continue
                rest.append(words[i])
                i += 1
            found = _expanded(
                checkout,
                Wanted(requires=tuple(specs)),
                lambda path: any(
                    requirement_name(r) in wanted_out for r in read_requirements_file(path)
                ),
                lambda req: requirement_name(req) not in wanted_out,
            )
            if found is None:
                commands.append(command)
                continue
            wanted, files = found
            replaced += files
            extras = f"[{','.join(wanted.extras)}]" if wanted.extras else ""
            words = [w + extras if _OWN.match(w) and extras and "[" not in w else w for w in rest]
            commands.append(shlex.join([*words, *wanted.requires]))
    if replaced:
        data["environment"]["setup"] = commands
        case_path.write_text(yaml.safe_dump(data, sort_keys=False, width=100))
    return replaced


@contextlib.contextmanager
def _checkout_of(case_path: Path) -> Iterator[Path]:
    """The case's repository at its base commit, restored from its snapshot."""
    from replay.snapshot import load_snapshot

    case = load_case(case_path)
    with tempfile.TemporaryDirectory(prefix="replay-checkout-") as tmp:
        yield load_snapshot(case.snapshot).restore(case.repository.name, Path(tmp) / "repo")


STEP_BACK_LIMIT = 40
"""How many versions of one dependent :func:`_step_back_while` records at most."""


def _registry_dependent(
    case_path: Path, output: str, blobs: BlobStore
) -> tuple[str, dict[str, SpecifierSet]] | None:
    return dependent_in_registry(output, lambda: _registry_files(case_path), blobs)


def _registry_files(case_path: Path) -> list[PythonFile]:
    return read_index(load_case(case_path).snapshot).python


def _asks_again(f: PythonFile, blobs: BlobStore, asks: tuple[str, Version] | None) -> bool:
    """Whether ``f`` still asks for ``asks``'s project at its floor or more."""
    return asks is not None and still_asks(f, blobs, *asks)


def _refused_again(f: PythonFile, blobs: BlobStore, user: dict[str, SpecifierSet]) -> bool:
    """Whether ``f`` still asks for what the user's pins exclude."""
    return refused(f, blobs, user) is not None


def _step_back_while(
    case_path: Path,
    older: str,
    again: Callable[[PythonFile], bool],
    at: datetime,
    upstream: str,
    blobs: BlobStore,
    target: Target,
) -> str:
    """Record ``older`` (``NAME<VERSION``) as of T, and again one version older while the
    version recorded is ``again`` (at most :data:`STEP_BACK_LIMIT`); the last requirement
    recorded is returned. Each version is read from its metadata here, not found by a build
    each."""
    name = older.partition("<")[0]
    why = "pip could not fit the newest versions at T together"
    for _ in range(STEP_BACK_LIMIT):
        files = record_python([older], at, upstream, blobs, target)
        _add_to_registry(case_path, [_because(f, why) for f in files])
        mine = [f for f in files if canonicalize_name(f.project) == canonicalize_name(name)]
        if not mine or not again(mine[0]):
            break
        older = f"{name}<{mine[0].version}"
    return older


_BUILD_FAILED = re.compile(
    r"^WARNING: Discarding \S+\.(?:tar\.gz|zip|tar\.bz2|tar\.xz|tgz)\S* .*Command errored out"
    r"|^error: (?:metadata-generation-failed|subprocess-exited-with-error)",
    re.MULTILINE,
)


def _unbuildable(output: str, missing: Sequence[str]) -> list[str]:
    """The projects (canonical names) whose source distribution pip failed to build: those
    it then found nothing else for (``missing``, :func:`sdist_build_failure`), or the one
    whose install from source failed (:func:`replay.images.env.failed_distribution`: numpy
    1.16 on Python 3.9, deepdiff 2019 in the sixth held-out corpus). Empty when no build
    of a dependency failed."""
    if missing and sdist_build_failure(output) is not None:
        return [n for n in map(requirement_name, missing) if n]
    built = failed_distribution(output)
    return [canonicalize_name(built)] if built else []


def sdist_build_failure(output: str) -> str | None:
    """The cause pip's output gives when a source distribution it tried failed to build
    (pip 20.3 discards it, "Command errored out"; later pips say
    ``metadata-generation-failed``) and pip then found no other file: the build's own error
    line (:func:`replay.images.env.cause_line`), or pip's words. None when no build failed."""
    if _BUILD_FAILED.search(output) is None:
        return None
    return cause_line(output) or "its build failed"


def _because(f: PythonFile, why: str) -> PythonFile:
    return f.model_copy(update={"chosen_because": f"{why}; {f.chosen_because or 'at T'}"})


def lacks_build_editable(output: str) -> bool:
    """Whether pip refused an editable install because the project's build backend has no
    PEP 660 hook and the project no ``setup.py`` ("its build backend is missing the
    'build_editable' hook": tinydb 2022, seventh corpus, with the poetry-core of T)."""
    return "missing the 'build_editable' hook" in " ".join(output.split())


def install_not_editable(case_path: Path) -> bool:
    """Install the project as a wheel in the case's setup: ``-e .[extras]`` (or
    ``--editable``) becomes ``.[extras]``. False when no setup command installs the project
    editable."""
    data, setup = _setup_of(case_path)
    for i, words, start in _installs(setup):
        for j in range(start, len(words) - 1):
            if words[j] in ("-e", "--editable") and _OWN.match(words[j + 1]):
                changed = [*words[:j], *words[j + 1 :]]
                _write_setup(case_path, data, [*setup[:i], shlex.join(changed), *setup[i + 1 :]])
                return True
    return False


def drop_from_extras(case_path: Path, broken: Sequence[str], blobs: BlobStore) -> list[str]:
    """Install the project's extras in the case's setup without the requirements that bring
    ``broken`` (canonical names of projects whose source distribution does not build here):
    each ``.[extra]`` whose requirements name one of them, or a project whose recorded
    metadata asks for one (mypy for typed-ast, at any depth the registry recorded), is
    replaced by the extra's other requirements, given by name. The requirements left out,
    none when no extra brings one (dataclasses-json 2019, eighth held-out corpus: the ``dev``
    extra names mypy, whose typed-ast of T has no wheel for Python 3.9 and does not build)."""
    wanted_out = {canonicalize_name(n) for n in broken}
    if not wanted_out or not case_path.is_file():
        return []
    data, setup = _setup_of(case_path)
    if not any(re.fullmatch(r"\.\[[^\]]*\]", w) for _, words, _ in _installs(setup) for w in words):
        return []  # no extra of the project installed
    asks: dict[str, set[str]] = {}
    for f in _registry_files(case_path):
        asks.setdefault(canonicalize_name(f.project), set()).update(
            canonicalize_name(r.name) for r in requirements_of(f, blobs)
        )

    def brings(name: str) -> bool:
        """Whether ``name`` reaches one of ``broken`` through the recorded metadata (each
        project visited once)."""
        seen, todo = {name}, [name]
        while todo:
            here = todo.pop()
            if here in wanted_out:
                return True
            fresh = asks.get(here, set()) - seen
            seen |= fresh
            todo += fresh
        return False

    with _checkout_of(case_path) as checkout:
        try:
            meta = read_project(checkout)
        except (ReplayError, OSError, ValueError):
            return []
    by_extra: dict[str, list[str]] = {}
    for line in meta.requires:
        found = _OF_EXTRA.match(line)
        if found:
            by_extra.setdefault(found["extra"], []).append(found["spec"].strip())
    left: list[str] = []
    for i, words, start in _installs(setup):
        for j in range(start, len(words)):
            own = re.fullmatch(r"\.\[([^\]]*)\]", words[j])
            if own is None:
                continue
            extras = [e.strip() for e in own.group(1).split(",") if e.strip()]
            kept, given = [], []
            for extra in extras:
                specs = by_extra.get(extra, [])
                out = [spec for spec in specs if brings(requirement_name(spec) or "")]
                if not out:
                    kept.append(extra)
                    continue
                left += [spec for spec in out if spec not in left]
                given += [spec for spec in specs if spec not in out and spec not in given]
            if not given and len(kept) == len(extras):
                continue
            words = [*words[:j], f".[{','.join(kept)}]" if kept else ".", *words[j + 1 :], *given]
            setup = [*setup[:i], shlex.join(words), *setup[i + 1 :]]
            break
    if left:
        _write_setup(case_path, data, setup)
    return left


def _setup_of(case_path: Path) -> tuple[dict[str, Any], list[str]]:
    """The case file's data and its setup commands."""
    data = yaml.safe_load(case_path.read_text())
    return data, list(data.get("environment", {}).get("setup", []))


def _installs(setup: list[str]) -> Iterator[tuple[int, list[str], int]]:
    """Each setup command that runs ``install``: its index, its words, and where the words
    after ``install`` start."""
    for i, command in enumerate(setup):
        words = shlex.split(command)
        if "install" in words:
            yield i, words, words.index("install") + 1


def _write_setup(case_path: Path, data: dict[str, Any], setup: list[str]) -> None:
    data["environment"]["setup"] = setup
    case_path.write_text(yaml.safe_dump(data, sort_keys=False, width=100))


def install_project_last(case_path: Path) -> bool:
    """Split the case's setup command that installs the project and test requirements
    together into two: the requirements, then the project (its extras with it). False when no
    command installs both (already split, or nothing to split).

    pyflakes 2021 (fourth corpus) tests with ``flake8==3.6.0`` (tox's deps), which asks for
    ``pyflakes<2.1.0``, while the checkout is 2.2.0: one pip command cannot install both, and
    tox never asked it to: it installs the deps, then the package, in two pip commands, and
    pip only warns that flake8's requirement is no longer met. The tests then run against the
    checkout, as the project's own test environment did."""
    data, setup = _setup_of(case_path)
    for i, words, start in _installs(setup):
        options = [w for w in words[start:] if w.startswith("--") and w != "--editable"]
        rest = [w for w in words[start:] if w not in options]
        where = next((j for j, word in enumerate(rest) if _OWN.match(word)), None)
        if where is None:
            continue
        if where > 0 and rest[where - 1] in ("-e", "--editable"):
            where -= 1
        size = 1 if _OWN.match(rest[where]) else 2
        target, others = rest[where : where + size], rest[:where] + rest[where + size :]
        if not others:
            continue
        head = words[:start]
        env = [w for w in head if "=" in w and not w.startswith("-")]
        pip = [w for w in head if w not in env]
        first = shlex.join([*pip, *options, *others])
        second = shlex.join([*env, *pip, *options, *target])
        _write_setup(case_path, data, [*setup[:i], first, second, *setup[i + 1 :]])
        return True
    return False


_OWN = re.compile(r"^\.(?:\[[^\]]*\])?$")
"""The project's own directory as the setup names it: ``.`` or ``.[extras]``."""


def add_toolchain(case_path: Path, toolchain: str) -> bool:
    """Name ``toolchain`` in the case's environment (its ``toolchains`` and its base image's
    tag); False when it is there already or the base image is not one of ours."""
    case = load_case(case_path)
    parsed = parse_base_tag(case.environment.base_image)
    if parsed is None or toolchain in parsed[1]:
        return False
    release, tools = parsed
    data = yaml.safe_load(case_path.read_text())
    env = data.setdefault("environment", {})
    env["base_image"] = base_tag(release, (*tools, toolchain), case.environment.packages)
    env["toolchains"] = sorted({*env.get("toolchains", []), toolchain})
    case_path.write_text(yaml.safe_dump(data, sort_keys=False, width=100))
    load_case(case_path)
    return True


def _written_base_image(case_path: Path) -> str | None:
    """The base image the case file names, read as written (None without one)."""
    written = yaml.safe_load(case_path.read_text()) if case_path.is_file() else None
    image = ((written or {}).get("environment") or {}).get("base_image")
    return str(image) if image else None


def system_packages(
    needs: Sequence[Lacking], release: Release, say: Callable[[str], None], image: str
) -> dict[Lacking, str]:
    """The Debian packages of the case's release holding what a build looked for, less those
    ``image`` (the case's base image) has installed already; none when Debian's index cannot
    be read (said, and the build's own stop follows)."""
    try:
        found = packages_for(needs, release.name, contents_mirror(release.name), say=say)
    except ToolError as exc:
        say(f"{exc}; what the build looked for ({', '.join(map(str, needs))}) is not added")
        return {}
    there = installed(image) if found else frozenset()
    return {need: package for need, package in found.items() if package not in there}


def add_packages(
    case_path: Path, packages: Iterable[str], toolchain: str | None = BUILD_TOOLCHAIN
) -> list[str]:
    """Add Debian ``packages`` to the case's environment, with ``toolchain`` (the build
    toolchain by default: what a build looks for on the system, a compiler reads), and name
    them in its base image's tag; the packages that were not there already (none when the
    base image is not one of ours)."""
    case = load_case(case_path)
    parsed = parse_base_tag(case.environment.base_image)
    fresh = sorted(set(packages) - set(case.environment.packages))
    if parsed is None or not fresh:
        return []
    release, tools = parsed
    data = yaml.safe_load(case_path.read_text())
    env = data.setdefault("environment", {})
    every = sorted({*case.environment.packages, *fresh})
    toolchains = sorted({*tools, *case.environment.toolchains, *([toolchain] if toolchain else [])})
    env["base_image"] = base_tag(release, toolchains, every)
    env["toolchains"] = toolchains
    env["packages"] = every
    case_path.write_text(yaml.safe_dump(data, sort_keys=False, width=100))
    load_case(case_path)
    return fresh


def _add_to_registry(case_path: Path, files: Sequence[PythonFile]) -> None:
    case = load_case(case_path)
    snapshot = case.snapshot
    index = read_index(snapshot)
    merged = index.model_copy(update={"python": merge_python(index.python, files)})
    write_index(snapshot, merged)
    source = case_path.parent / "sources" / "registry" / "index.json"
    if source.is_file():
        source.write_text(dump_index(merged))


def env_builder(runtime: Runtime) -> BuildFn:
    """Build (or reuse) the case's environment image through a world started for it."""

    def build(case_path: Path) -> None:
        from replay.images.base import ensure_case_base_image
        from replay.images.env import build_env_image
        from replay.world import running_world

        case = load_case(case_path)
        ensure_case_base_image(runtime, case.environment)
        with (
            tempfile.TemporaryDirectory(prefix="replay-casebuild-") as tmp,
            running_world(case.snapshot, Path(tmp)) as gateway,
        ):
            build_env_image(case, runtime, gateway)

    return build


__all__ = [
    "BUILD_TOOLCHAIN",
    "MAX_ROUNDS",
    "REBUILD",
    "Planned",
    "SettleError",
    "Wanted",
    "add_packages",
    "add_toolchain",
    "added_by_fix",
    "env_builder",
    "export_tree",
    "extension_sources",
    "lacks_compiler",
    "missing_requirements",
    "names_runner",
    "plan_environment",
    "read_conflict",
    "settle",
    "setup_command",
    "write_registry_source",
]
