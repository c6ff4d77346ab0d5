"""The version a project versioned from git tags builds as at the base commit.

A project whose build takes its version from git tags (setuptools-scm, hatch-vcs, which runs
setuptools-scm) computes it from ``git describe --tags --long --match '*[0-9]*'`` in the
workspace: the nearest tag and the commits since. The snapshot keeps the tags T knew
(:func:`replay.base.gitrepo.tags_at`), so the build usually finds its version itself. When the
tags it would use are missing there (the repository's release tags were made after T, or the
clone has none the base can reach), the build would say ``0.1.devN``, and a test requirement
on the project's real version fails to resolve with pip's ``ResolutionImpossible``, which
does not name the cause. :func:`pretend` then computes the version the way the build would
have at the base, from the repository's own tags, for the setup to pass as
``SETUPTOOLS_SCM_PRETEND_VERSION_FOR_<NAME>`` (``SETUPTOOLS_SCM_PRETEND_VERSION`` for
hatch-vcs, which reads no other), and says so.

Computed as setuptools-scm's defaults do: the tag's version (``v`` and a ``name-`` prefix
dropped), exact at distance 0, else the next version with ``.devN`` and ``+g<commit>``
(``guess-next-dev``, ``node-and-date`` on a clean tree). A project that configures another
scheme gets this one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from replay.base import gitrepo
from replay.base.errors import ToolError
from replay.registry.requirements import RequirementsError, read_source

_DESCRIBED = re.compile(r"^(?P<tag>.+)-(?P<distance>\d+)-g(?P<node>[0-9a-f]+)$")
_TAG_VERSION = re.compile(r"^(?:[\w-]+-)?(?P<version>[vV]?\d+(?:\.\d+){0,2}[^+]*)(?:\+.*)?$")
"""setuptools-scm's default ``tag_regex``."""
GENERIC = "SETUPTOOLS_SCM_PRETEND_VERSION"


@dataclass(frozen=True)
class Pretended:
    """What the setup passes to the build, and why."""

    variables: dict[str, str]
    """Environment variables for every setup command (empty: nothing to pass)."""
    note: str
    """What was found, in the project's terms, for ``case create`` to state."""


def backend(repo: Path, rev: str) -> tuple[str, str | None] | None:
    """``(tool, project name)`` when the project at ``rev`` takes its version from git tags
    through setuptools-scm or hatch-vcs (a build requirement, setup_requires included)."""

    def read(name: str) -> bytes | None:
        try:
            return gitrepo.run_exact(repo, "show", f"{rev}:{name}").encode(
                "utf-8", "surrogateescape"
            )
        except ToolError:
            return None

    try:
        meta = read_source(read)
    except RequirementsError:
        return None
    wanted = {_requirement_name(r) for r in meta.build_requires}
    for tool in ("hatch-vcs", "setuptools-scm"):
        if tool in wanted:
            return tool, meta.name
    return None


def _requirement_name(spec: str) -> str:
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", spec)
    return canonicalize_name(match.group(1)) if match else ""


def describe(repo: Path, rev: str, tags: Iterable[str] | None = None) -> str | None:
    """``git describe --tags --long`` at ``rev`` over the version-like tags (``*[0-9]*``),
    only those named in ``tags`` when given; None when no such tag is on ``rev``'s history."""
    names = ["*[0-9]*"] if tags is None else sorted(t for t in tags if re.search(r"\d", t))
    if not names:
        return None
    matches = [arg for name in names for arg in ("--match", name)]
    try:
        return gitrepo.run(repo, "describe", "--tags", "--long", *matches, rev) or None
    except ToolError:
        return None  # "No names found, cannot describe anything."


def version_of(described: str) -> str | None:
    """The version setuptools-scm's defaults make of ``git describe --long`` output, or None
    when its tag is not a version."""
    match = _DESCRIBED.match(described)
    found = match and _TAG_VERSION.match(match["tag"])
    if not match or not found:
        return None
    try:
        tag = Version(found["version"])
    except InvalidVersion:
        return None
    distance = int(match["distance"])
    if distance == 0:
        return str(tag)
    text = str(tag).partition("+")[0]
    if ".dev" in text:
        guessed = text.rpartition(".dev")[0]
    else:
        last = re.match(r"(.*?)(\d+)$", text)
        if last is None:
            return None
        guessed = f"{last[1]}{int(last[2]) + 1}"
    return f"{guessed}.dev{distance}+g{match['node']}"


def variable(tool: str, name: str | None) -> str:
    """The variable ``tool`` reads a pretended version from for the project ``name``."""
    if tool == "hatch-vcs" or not name:
        return GENERIC
    return f"{GENERIC}_FOR_{re.sub(r'[-_.]+', '_', name).upper()}"


def pretend(repo: Path, base: str, at: datetime) -> Pretended | None:
    """What the setup must pass for the project at ``base`` to build with the version it had
    at T, or None when it needs nothing (not versioned from tags, or the snapshot keeps the
    tag its build uses)."""
    found = backend(repo, base)
    if found is None:
        return None
    tool, name = found
    kept = gitrepo.tags_at(repo, base, at, gitrepo.tags_on(repo, base))
    if describe(repo, base, kept) is not None:
        return None
    described = describe(repo, base)
    version = version_of(described) if described else None
    project = f"{name or 'the project'} (versioned from git tags by {tool})"
    if described is None or version is None:
        return Pretended(
            {},
            f"{project}: {repo} has no version tag on the base's history, so it builds as "
            "0.1.devN and a requirement on its real version will not resolve; fetch the "
            "repository's tags (git fetch --tags) and create the case again",
        )
    var = variable(tool, name)
    tag = described.rsplit("-", 2)[0]
    why = "made after T" if gitrepo.TAG_NAME.fullmatch(tag) else "a name no snapshot carries"
    return Pretended(
        {var: version},
        f"{project}: the snapshot keeps no version tag on the base's history (git describe "
        f"in the repository finds {described}, and tag {tag} is {why}), so the build would "
        f"say 0.1.devN; the setup passes {var}={version}, the version it computes at the base",
    )


__all__ = ["Pretended", "backend", "describe", "pretend", "variable", "version_of"]
