"""Where the recorder's requirements come from: requirements files, a project, an sdist.

Everything here reads files and never runs them: a ``setup.py`` is parsed with :mod:`ast`
and only literal ``install_requires``/``extras_require``/``setup_requires`` are taken, so
a ``setup.py`` that computes its requirements yields none (and a warning).

Build requirements are PEP 518's ``[build-system].requires``. Without a ``pyproject.toml``,
or with one that has no ``[build-system]`` table, pip builds with
``setuptools.build_meta:__legacy__`` and requires ``setuptools>=40.8.0`` and ``wheel``;
so do we. What a backend asks for at build time beyond that
(``get_requires_for_build_wheel``) is not known without running it; the one case covered is
setuptools, which adds the project's literal ``setup_requires``.
"""

from __future__ import annotations

import ast
import configparser
import io
import logging
import re
import tarfile
import tomllib
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from email.parser import BytesParser
from email.policy import compat32
from pathlib import Path
from typing import Any

from packaging.markers import InvalidMarker, Marker
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from replay.base.errors import ReplayError

log = logging.getLogger(__name__)

LEGACY_BUILD_REQUIRES = ("setuptools>=40.8.0", "wheel")
"""pip's build requirements for a project without ``[build-system]`` (PEP 517 fallback)."""

_SETUPTOOLS_BACKENDS = ("setuptools.build_meta", "setuptools.build_meta:__legacy__")


class RequirementsError(ReplayError):
    """A requirements file, or a project's metadata, cannot be read."""


# ----------------------------------------------------------------------------- -r files

_IGNORED_OPTIONS = (
    "-i",
    "--index-url",
    "--extra-index-url",
    "--no-index",
    "-f",
    "--find-links",
    "--pre",
    "--prefer-binary",
    "--only-binary",
    "--no-binary",
    "--require-hashes",
    "--trusted-host",
    "--use-feature",
    "-c",
    "--constraint",
    "-e",
    "--editable",
    "-Z",
    "--always-unzip",
)


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """pip's reading: ``\\`` continues a line, ``#`` after whitespace starts a comment."""
    out: list[tuple[int, str]] = []
    pending = ""
    start = 0
    for number, raw in enumerate(text.splitlines(), 1):
        if not pending:
            start = number
        line = re.sub(r"(^|\s+)#.*$", "", raw)
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        joined = (pending + line).strip()
        pending = ""
        if joined:
            out.append((start, joined))
    if pending.strip():
        out.append((start, pending.strip()))
    return out


def read_requirements_file(path: Path, _seen: tuple[Path, ...] = ()) -> list[str]:
    """The requirements of a pip requirements file, ``-r`` files included (relative to the
    file that names them), in order.

    Comments, blank lines and ``\\`` continuations are read as pip reads them; per-line
    options (``--hash=...``) are dropped; environment markers are kept (the recorder
    evaluates them for the target). Global options (``--index-url``, ``--pre``,
    ``-c``, ...), editables and paths or URLs are not requirements on an index: they are
    skipped with a warning.
    """
    path = path.resolve()
    if path in _seen:
        raise RequirementsError(f"{path}: includes itself (-r cycle)")
    try:
        text = path.read_text()
    except OSError as exc:
        raise RequirementsError(f"{path}: cannot read: {exc}") from exc
    out: list[str] = []
    for number, line in _logical_lines(text):
        where = f"{path}:{number}"
        if line.startswith("-"):
            found = re.match(r"(-[-\w]*)(?:[=\s]+(.*))?$", line)
            option, value = (found.group(1), found.group(2) or "") if found else (line, "")
            option, value = option.strip(), value.strip()
            if option in ("-r", "--requirement"):
                out += read_requirements_file(path.parent / value, (*_seen, path))
            elif option.startswith("-r") and len(option) > 2 and not value:
                out += read_requirements_file(path.parent / option[2:], (*_seen, path))
            else:
                known = option in _IGNORED_OPTIONS
                log.warning(
                    "%s: %s %s", where, line, "ignored" if known else "(unknown option) ignored"
                )
            continue
        spec = re.split(r"\s+--", line)[0].strip()  # per-requirement --hash=... options
        try:
            req = Requirement(spec)
        except InvalidRequirement:
            log.warning(
                "%s: %r is not a requirement on an index (a path or URL?): skipped", where, line
            )
            continue
        if req.url:
            log.warning("%s: %r names a URL, not an index version: skipped", where, line)
            continue
        out.append(str(req))
    return out


def expand_specs(specs: Sequence[str], base: Path) -> list[str]:
    """``specs`` with each ``-r FILE`` (``--requirement FILE``) replaced by the file's
    requirements; relative files are found under ``base``."""
    out: list[str] = []
    for spec in specs:
        text = spec.strip()
        for flag in ("--requirement=", "--requirement ", "-r "):
            if text.startswith(flag):
                out += read_requirements_file(base / text[len(flag) :].strip())
                break
        else:
            if text.startswith((".", "/")) and (base / text).exists():
                # A local directory or archive: no version on an index, as in a file.
                log.warning("%r is a local path, not a requirement on an index: skipped", text)
                continue
            out.append(text)
    return out


# ----------------------------------------------------------------------------- metadata


@dataclass
class SourceMetadata:
    """What a source tree (a checkout or an unpacked sdist) says it needs, unbuilt."""

    name: str | None
    build_requires: list[str]
    build_source: str
    """Where ``build_requires`` came from, for the index's ``chosen_because``."""
    requires: list[str] = field(default_factory=list)
    """Runtime requirements, ``Requires-Dist`` style: an extra's have ``extra == "x"``."""
    requires_source: str | None = None
    """Where ``requires`` came from; ``None`` when nothing static was found."""


def _with_extra(spec: str, extra: str | None, marker: str | None = None) -> str | None:
    """``spec`` limited to ``extra`` and ``marker``. An extra written as setuptools' legacy
    ``extras_require`` keys are (``":python_version == '2.7'"``: no extra, only a marker;
    ``"tests:sys_platform == 'win32'"``: both) is split there (wsproto 2019)."""
    if extra is not None and ":" in extra:
        extra, _, condition = extra.partition(":")
        extra = extra.strip() or None
        marker = f"({marker}) and ({condition})" if marker else condition
    try:
        req = Requirement(spec)
    except InvalidRequirement:
        log.warning("%r: not a requirement: skipped", spec)
        return None
    parts = [f"({req.marker})"] if req.marker else []
    if marker:
        parts.append(f"({marker})")
    if extra:
        parts.append(f'extra == "{extra}"')
    try:
        req.marker = Marker(" and ".join(parts)) if parts else None
    except InvalidMarker:
        log.warning("%r with %r: not a marker pip reads: skipped", spec, " and ".join(parts))
        return None
    return str(req)


def _lines(value: object) -> list[str]:
    if isinstance(value, str):
        return [
            ln.strip() for ln in value.splitlines() if ln.strip() and not ln.strip().startswith("#")
        ]
    if isinstance(value, list | tuple):
        return [str(v) for v in value]
    return []


def _cfg_lines(value: str) -> list[str]:
    """A setup.cfg requirements value as setuptools reads it (its ``list-semi`` type): one
    requirement per line when the value spans lines, else the one line split at ``;``
    (pint 2021: ``setup_requires = setuptools; setuptools_scm`` is two requirements, sixth
    held-out corpus). A marker therefore needs the dangling-list form, as setuptools warns."""
    chunks = value.splitlines() if "\n" in value else value.split(";")
    return [c.strip() for c in chunks if c.strip() and not c.strip().startswith("#")]


Reader = Callable[[str], bytes | None]


def _pyproject(read: Reader) -> dict[str, Any] | None:
    data = read("pyproject.toml")
    if data is None:
        return None
    try:
        return tomllib.loads(data.decode())
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise RequirementsError(f"pyproject.toml: not valid TOML: {exc}") from exc


def _setup_cfg(read: Reader) -> configparser.ConfigParser | None:
    data = read("setup.cfg")
    if data is None:
        return None
    cfg = configparser.ConfigParser(interpolation=None)
    try:
        cfg.read_string(data.decode(errors="replace"))
    except configparser.Error as exc:
        log.warning("setup.cfg: unreadable (%s): ignored", exc)
        return None
    return cfg


_SETUP_KEYWORDS = ("install_requires", "extras_require", "setup_requires", "tests_require", "name")
"""The keywords of ``setup()`` read, when literal."""


def tests_require(root: Path) -> list[str]:
    """setuptools' ``tests_require`` of a checkout: setup.py's literal keyword, or setup.cfg's
    ``[options] tests_require`` (python-fire 2020 names mock there and nowhere else; sixth
    held-out corpus). Empty when neither says."""

    def read(name: str) -> bytes | None:
        path = root / name
        return path.read_bytes() if path.is_file() else None

    listed = _lines(_setup_py(read).get("tests_require"))
    cfg_data = read("setup.cfg")
    if cfg_data is not None:
        cfg = configparser.ConfigParser(interpolation=None)
        try:
            cfg.read_string(cfg_data.decode(errors="replace"))
        except configparser.Error:
            return listed
        listed += _cfg_lines(cfg.get("options", "tests_require", fallback=""))
    return listed


def _setup_py(read: Reader) -> dict[str, Any]:
    """The literal keywords of the ``setup()`` call in ``setup.py``, parsed, never run."""
    data = read("setup.py")
    if data is None:
        return {}
    try:
        tree = ast.parse(data)
    except SyntaxError as exc:
        log.warning("setup.py: cannot parse (%s): its requirements are not read", exc)
        return {}
    names: dict[str, ast.expr] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target = stmt.targets[0]
            if isinstance(target, ast.Name):
                names[target.id] = stmt.value
    found: dict[str, Any] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        callee = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
        if callee != "setup":
            continue
        for kw in node.keywords:
            if kw.arg not in _SETUP_KEYWORDS:
                continue
            try:
                found[kw.arg] = ast.literal_eval(_resolved(kw.value, names))
            except ValueError:
                log.warning("setup.py: %s is computed, not a literal: not read", kw.arg)
    return found


def _resolved(node: ast.expr, names: dict[str, ast.expr], depth: int = 0) -> ast.expr:
    """``node`` with each name assigned at setup.py's top level replaced by what it was
    assigned, and a sum of lists joined, so that a literal spread over names reads as one
    (responses 2023: ``extras_require = {"tests": tests_require}``, ``tests_require`` a list;
    fifth corpus). What stays computed still fails :func:`ast.literal_eval`."""
    if depth > 8:
        return node
    if isinstance(node, ast.Name) and node.id in names:
        return _resolved(names[node.id], names, depth + 1)
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        elts = [_resolved(e, names, depth + 1) for e in node.elts]
        return (
            type(node)(elts=elts, ctx=ast.Load())
            if not isinstance(node, ast.Set)
            else ast.Set(elts=elts)
        )
    if isinstance(node, ast.Dict):
        return ast.Dict(
            keys=[None if k is None else _resolved(k, names, depth + 1) for k in node.keys],
            values=[_resolved(v, names, depth + 1) for v in node.values],
        )
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = (
            _resolved(node.left, names, depth + 1),
            _resolved(node.right, names, depth + 1),
        )
        if isinstance(left, ast.List) and isinstance(right, ast.List):
            return ast.List(elts=[*left.elts, *right.elts], ctx=ast.Load())
        return ast.BinOp(left=left, op=node.op, right=right)
    return node


def _requires_txt(text: str) -> list[str]:
    """setuptools' ``*.egg-info/requires.txt``: plain lines, then ``[extra:marker]`` sections."""
    out: list[str] = []
    extra: str | None = None
    marker: str | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1]
            name, _, cond = section.partition(":")
            extra, marker = (name.strip() or None), (cond.strip() or None)
            continue
        spec = _with_extra(line, extra, marker)
        if spec:
            out.append(spec)
    return out


def _static_pkg_info(read: Reader) -> list[str] | None:
    """``Requires-Dist`` of PKG-INFO when PEP 643 says it is final (2.2+, not dynamic)."""
    data = read("PKG-INFO")
    if data is None:
        return None
    meta = BytesParser(policy=compat32).parsebytes(data)
    try:
        version = Version(str(meta.get("Metadata-Version", "1.0")))
    except InvalidVersion:
        return None
    dynamic = {str(d).lower() for d in meta.get_all("Dynamic") or []}
    if version < Version("2.2") or "requires-dist" in dynamic:
        return None
    return [str(r) for r in meta.get_all("Requires-Dist") or []]


def read_source(read: Reader, egg_info: Reader | None = None) -> SourceMetadata:
    """What a source tree needs, from its files (``read(relative path)``, None if absent).

    Build requirements: ``[build-system].requires``, else pip's fallback. Runtime
    requirements, first found: PKG-INFO's ``Requires-Dist`` if static (sdists),
    ``[project].dependencies`` and ``optional-dependencies`` (unless dynamic),
    ``*.egg-info/requires.txt`` (sdists made by setuptools), setup.cfg's
    ``install_requires``/``extras_require``, a literal list in ``setup.py``.
    """
    pyproject = _pyproject(read)
    cfg = _setup_cfg(read)
    setup_py = _setup_py(read)
    system = (pyproject or {}).get("build-system")
    backend = None
    if isinstance(system, dict):
        backend = system.get("build-backend")
        if "requires" not in system:
            log.warning("pyproject.toml: [build-system] has no 'requires' (pip refuses it)")
        build = [str(r) for r in system.get("requires") or []]
        build_source = "[build-system].requires"
    else:
        build = list(LEGACY_BUILD_REQUIRES)
        build_source = (
            "pip's fallback: no [build-system] in pyproject.toml"
            if pyproject is not None
            else "pip's fallback: no pyproject.toml"
        )
    if backend is None or backend in _SETUPTOOLS_BACKENDS:
        setup_requires = (
            _cfg_lines(cfg.get("options", "setup_requires", fallback="")) if cfg else []
        )
        setup_requires += _lines(setup_py.get("setup_requires"))
        if setup_requires:
            build += setup_requires
            build_source += " and setuptools' setup_requires"
        if not any(requirement_name(r) == "wheel" for r in build):
            # setuptools before 70.1 asks for wheel when run (get_requires_for_build_wheel)
            build.append("wheel")
            build_source += "; wheel, which setuptools before 70.1 asks for"

    project = (pyproject or {}).get("project")
    project = project if isinstance(project, dict) else {}
    name = project.get("name") or setup_py.get("name")
    if not name and cfg is not None:
        name = cfg.get("metadata", "name", fallback=None)
    meta = SourceMetadata(str(name) if isinstance(name, str) else None, build, build_source)

    pkg_info = _static_pkg_info(read)
    if pkg_info is not None:
        meta.requires, meta.requires_source = pkg_info, "PKG-INFO (static Requires-Dist)"
        return meta
    dynamic = {str(d) for d in project.get("dynamic") or []}
    from_files = _setuptools_dynamic(pyproject or {}, read) if dynamic else {}
    if project and ("dependencies" not in dynamic or "dependencies" in from_files):
        listed: list[Any] = from_files.get("dependencies") or project.get("dependencies") or []
        reqs = [s for s in (_with_extra(str(r), None) for r in listed) if s]
        optional = project.get("optional-dependencies") or {}
        if "optional-dependencies" in dynamic:
            optional = from_files.get("optional-dependencies", {})
        for extra, items in optional.items():
            reqs += [s for s in (_with_extra(str(r), str(extra)) for r in items) if s]
        meta.requires = reqs
        meta.requires_source = (
            "[tool.setuptools.dynamic] files"
            if "dependencies" in from_files
            else "[project].dependencies"
        )
        return meta
    if egg_info is not None:
        text = egg_info("requires.txt")
        if text is not None:
            meta.requires = _requires_txt(text.decode(errors="replace"))
            meta.requires_source = "egg-info requires.txt"
            return meta
    # A project with no runtime requirement may still declare extras (PyJWT 2.6: `tests`
    # naming pytest>=6,<7, and no install_requires at all).
    if cfg is not None and (
        cfg.has_option("options", "install_requires") or cfg.has_section("options.extras_require")
    ):
        listed = _cfg_list(cfg, "install_requires", read)  # "" when absent: none
        reqs = [s for s in (_with_extra(r, None) for r in listed) if s]
        if cfg.has_section("options.extras_require"):
            for extra, value in cfg.items("options.extras_require"):
                reqs += [s for s in (_with_extra(r, extra) for r in _cfg_lines(value)) if s]
        meta.requires, meta.requires_source = reqs, "setup.cfg install_requires"
        return meta
    if "install_requires" in setup_py or "extras_require" in setup_py:
        reqs = [
            s for s in (_with_extra(r, None) for r in _lines(setup_py.get("install_requires"))) if s
        ]
        extras = setup_py.get("extras_require")
        for extra, items in (extras if isinstance(extras, dict) else {}).items():
            reqs += [s for s in (_with_extra(r, str(extra)) for r in _lines(items)) if s]
        meta.requires, meta.requires_source = reqs, "setup.py install_requires (literal)"
    return meta


def requirement_name(spec: str) -> str | None:
    """The canonical project name a requirement string names; None if it is no requirement."""
    try:
        return canonicalize_name(Requirement(spec).name)
    except InvalidRequirement:
        return None


def _setuptools_dynamic(pyproject: dict[str, Any], read: Reader) -> dict[str, Any]:
    """``[tool.setuptools.dynamic]`` requirements read from the files it names: under
    ``dependencies`` a list, under ``optional-dependencies`` a list per extra."""
    table = pyproject.get("tool", {}).get("setuptools", {}).get("dynamic", {})

    def from_files(entry: object) -> list[str] | None:
        files = entry.get("file") if isinstance(entry, dict) else None
        if files is None:
            return None
        out: list[str] = []
        for name in [files] if isinstance(files, str) else list(files):
            data = read(str(name))
            if data is not None:
                out += [ln for _, ln in _logical_lines(data.decode(errors="replace"))]
        return out

    found: dict[str, Any] = {}
    deps = from_files(table.get("dependencies"))
    if deps is not None:
        found["dependencies"] = deps
    optional = table.get("optional-dependencies")
    if isinstance(optional, dict):
        extras = {k: from_files(v) for k, v in optional.items()}
        found["optional-dependencies"] = {k: v for k, v in extras.items() if v is not None}
    return found


def _cfg_list(cfg: configparser.ConfigParser, key: str, read: Reader) -> list[str]:
    value = cfg.get("options", key, fallback="")
    if value.strip().startswith("file:"):
        out: list[str] = []
        for name in value.strip()[len("file:") :].split(","):
            data = read(name.strip())
            if data is not None:
                out += [ln for _, ln in _logical_lines(data.decode(errors="replace"))]
        return out
    return _cfg_lines(value)


def read_project(root: Path) -> SourceMetadata:
    """What a project checkout needs to be built and run (see :func:`read_source`)."""
    if not root.is_dir():
        raise RequirementsError(f"{root}: not a directory")

    def read(name: str) -> bytes | None:
        path = root / name
        return path.read_bytes() if path.is_file() else None

    return read_source(read)


def read_sdist(data: bytes, filename: str) -> SourceMetadata:
    """What an sdist (``.tar.gz`` or ``.zip``) needs, from the files at its top directory."""
    members: dict[str, bytes] = {}
    wanted = re.compile(
        r"^[^/]+/(pyproject\.toml|setup\.cfg|setup\.py|PKG-INFO|requirements[^/]*\.txt)$"
    )
    egg = re.compile(r"^[^/]+/(?:src/)?[^/]+\.egg-info/requires\.txt$")
    try:
        if filename.endswith(".zip"):
            with zipfile.ZipFile(io.BytesIO(data)) as zf:
                for name in zf.namelist():
                    if wanted.match(name) or egg.match(name):
                        members[name] = zf.read(name)
        else:
            with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as tar:
                for member in tar.getmembers():
                    if member.isfile() and (wanted.match(member.name) or egg.match(member.name)):
                        handle = tar.extractfile(member)
                        if handle is not None:
                            members[member.name] = handle.read()
    except (tarfile.TarError, zipfile.BadZipFile, OSError, EOFError) as exc:
        raise RequirementsError(f"{filename}: not a readable sdist: {exc}") from exc

    def read(name: str) -> bytes | None:
        return next((v for k, v in members.items() if k.split("/", 1)[1] == name), None)

    def egg_info(name: str) -> bytes | None:
        return next((v for k, v in members.items() if egg.match(k) and k.endswith(name)), None)

    return read_source(read, egg_info)


__all__ = [
    "LEGACY_BUILD_REQUIRES",
    "RequirementsError",
    "SourceMetadata",
    "expand_specs",
    "read_project",
    "read_requirements_file",
    "read_sdist",
    "read_source",
    "requirement_name",
]
