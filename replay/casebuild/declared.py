"""What the project declares that installs a module its tests cannot import.

The test requirements ``case create`` is given (or that the corpus draw reads from one place:
an extra, tox's deps, a requirements file) are sometimes not all the tests need: starlette
keeps its test requirements in a top-level ``requirements.txt`` no metadata names (its tests
import ``requests``, later ``httpx``); anyio 2019's tests import ``curio``, which its ``curio``
extra installs and its ``test`` extra does not (the fourth held-out corpus). When the tests
stop on ``ModuleNotFoundError``, the project's own declarations are searched for the module:
its extras first (an extra named after the module too: cattrs' ``bson`` installs
``pymongo``), then its dependency groups (PEP 735's ``[dependency-groups]``, PDM's
``[tool.pdm.dev-dependencies]``: cattrs 2023 keeps its test requirements there, sixth
held-out corpus), then its requirements files, and what names it is added as a whole (the
extra, the group's requirements, or ``-r FILE``), as the project's developers install it.
Nothing is added from outside the project: a module no declaration names still stops the
case, saying so.
"""

from __future__ import annotations

import logging
import re
import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from replay.base.errors import ReplayError
from replay.registry.requirements import read_project, read_requirements_file, tests_require

log = logging.getLogger(__name__)

_EXTRA = re.compile(r"""extra\s*==\s*["']([^"']+)["']""")


@dataclass(frozen=True)
class Addition:
    """A declaration of the project's that installs a missing module."""

    module: str
    """The module the tests could not import (its top-level name)."""
    requires: tuple[str, ...] = ()
    """``-r FILE`` to add to the test requirements."""
    extras: tuple[str, ...] = ()
    """An extra of the project's to add."""
    where: str = ""
    """What names it, as said to the user (``requirements.txt (line: requests)``)."""


def provides(distribution: str, module: str) -> bool:
    """Whether a distribution's name is one the module ``module`` is commonly installed by:
    the same name (``python-multipart`` is ``multipart`` without its ``python-`` prefix,
    ``PyYAML`` is ``yaml`` without ``py``, ``msgpack-python`` is ``msgpack``). A name alone, as
    pip's own ``ModuleNotFoundError`` hints read it; a distribution whose import name is
    unrelated to its own (``beautifulsoup4``'s ``bs4``) is not found by it."""
    name = canonicalize_name(distribution).replace("-", "_")
    wanted = module.lower()
    forms = {
        name,
        name.removeprefix("python_"),
        name.removesuffix("_python"),
        name.removeprefix("py"),
        name.removeprefix("py_"),
    }
    return wanted in forms


def _requirement_files(checkout: Path) -> list[Path]:
    """The project's pip requirements files, those named for tests first: top-level
    ``*requirements*.txt`` and ``requirements/*.txt`` (``test-requirements.txt``,
    ``requirements-dev.txt``, ``requirements/testing.txt``), and those kept beside the tests
    (authlib 2022's ``tests/requirements-flask.txt``, which tox.ini's ``flask`` factor
    installs; sixth held-out corpus)."""
    patterns = ("*requirements*.txt", "requirements/*.txt", "requirements*/*.txt")
    beside = tuple(f"{tests}/*requirements*.txt" for tests in ("tests", "test", "testing"))
    found = {p for pattern in (*patterns, *beside) for p in checkout.glob(pattern) if p.is_file()}

    def rank(path: Path) -> tuple[int, str]:
        name = path.relative_to(checkout).as_posix().lower()
        order = 0 if "test" in name else 1 if name == "requirements.txt" else 2
        return order, name

    return sorted(found, key=rank)


def dependency_groups(checkout: Path) -> dict[str, list[str]]:
    """The project's dependency groups, each as its requirement strings, those named for
    tests first: PEP 735's ``[dependency-groups]`` (an ``{include-group = ...}`` entry read
    through, at most 8 deep), then PDM's ``[tool.pdm.dev-dependencies]`` for a name PEP 735
    does not give. Entries that are no requirement (PDM's ``-e`` paths) are left out."""
    try:
        table = tomllib.loads((checkout / "pyproject.toml").read_text(errors="replace"))
    except (OSError, tomllib.TOMLDecodeError):
        return {}
    pep735 = table.get("dependency-groups")
    pdm = table.get("tool", {}).get("pdm", {}).get("dev-dependencies")
    groups: dict[str, list[str]] = {}

    def read(raw: dict[str, object], name: str, depth: int) -> list[str]:
        out: list[str] = []
        entries = raw.get(name)
        for entry in entries if isinstance(entries, list) else []:
            if isinstance(entry, str):
                try:
                    Requirement(entry)
                except InvalidRequirement:
                    continue
                out.append(entry)
            elif (
                isinstance(entry, dict)
                and isinstance(entry.get("include-group"), str)
                and depth < 8
            ):
                out += [r for r in read(raw, entry["include-group"], depth + 1) if r not in out]
        return out

    for raw in (pep735, pdm):
        if not isinstance(raw, dict):
            continue
        for name in raw:
            if isinstance(name, str) and name not in groups:
                found = read(raw, name, 0)
                if found:
                    groups[name] = found
    return dict(sorted(groups.items(), key=lambda item: (0 if "test" in item[0] else 1, item[0])))


def _names(requirements: Iterable[str]) -> list[str]:
    out = []
    for spec in requirements:
        try:
            out.append(Requirement(spec).name)
        except InvalidRequirement:
            continue
    return out


def declared_for(
    checkout: Path,
    modules: Sequence[str],
    requires: Sequence[str] = (),
    extras: Sequence[str] = (),
) -> Addition | None:
    """The first declaration of the project (``checkout``, the base's files) that installs one
    of ``modules`` and is not already in ``requires`` or ``extras``: an extra naming a
    distribution that provides it (:func:`provides`) or named after the module itself (cattrs'
    ``bson`` extra installs ``pymongo``, whose name says nothing of the ``bson`` module it
    installs: the project says what the extra is for), else a dependency group naming one,
    (:func:`dependency_groups`), else the requirement in setuptools' ``tests_require`` that
    provides it (only that one: the rest is added when the tests miss it, and may not install
    at T; python-fire 2020 names python-Levenshtein there, which its tests do not import),
    else a requirements file naming one.
    None when the project declares none of them."""
    try:
        meta = read_project(checkout)
    except (ReplayError, OSError, ValueError) as exc:
        log.info("the project's metadata could not be read (%s): its extras are not searched", exc)
        meta = None
    by_extra: dict[str, list[str]] = {}
    for spec in (meta.requires if meta is not None else None) or []:
        found = _EXTRA.search(spec)
        if found:
            by_extra.setdefault(found.group(1), []).append(spec)
    given = {r.strip() for r in requires}
    for module in modules:
        for extra, specs in by_extra.items():
            if extra in extras:
                continue
            named = [n for n in _names(specs) if provides(n, module)]
            if named:
                return Addition(
                    module, extras=(extra,), where=f"the project's extra '{extra}' ({named[0]})"
                )
            if provides(extra, module) and _names(specs):
                return Addition(
                    module,
                    extras=(extra,),
                    where=f"the project's extra '{extra}', named after the module "
                    f"({', '.join(_names(specs))})",
                )
        for group, specs in dependency_groups(checkout).items():
            if all(spec.strip() in given for spec in specs):
                continue
            named = [n for n in _names(specs) if provides(n, module)]
            if named:
                return Addition(
                    module,
                    requires=tuple(spec for spec in specs if spec.strip() not in given),
                    where=f"the project's dependency group '{group}' ({named[0]})",
                )
        tests = [spec for spec in tests_require(checkout) if spec.strip() not in given]
        needed = [spec for spec in tests if any(provides(n, module) for n in _names([spec]))]
        if needed:
            return Addition(
                module,
                requires=tuple(needed),
                where=f"setuptools' tests_require ({', '.join(_names(needed))})",
            )
        for path in _requirement_files(checkout):
            relative = path.relative_to(checkout).as_posix()
            if f"-r {relative}" in given:
                continue
            try:
                listed = read_requirements_file(path)
            except ReplayError as exc:
                log.info("%s", exc)
                continue
            named = [n for n in _names(listed) if provides(n, module)]
            if named:
                return Addition(
                    module, requires=(f"-r {relative}",), where=f"{relative} ({named[0]})"
                )
    return None


__all__ = ["Addition", "declared_for", "dependency_groups", "provides"]
