"""What a build wants from the system, and which Debian package holds it.

A build that fails for want of something of the system says what it looked for, in words
its tools have used for decades: Python's ``FileNotFoundError`` or the shell's "not found"
for a command (PyICU's ``setup.py`` runs ``pkg-config``), pkg-config's "Package icu-i18n was
not found in the pkg-config search path", the compiler's "fatal error: argon2.h: No such file
or directory", the linker's "cannot find -lyaml". :func:`lacking` reads those.

Debian publishes, per release and architecture, which package holds each file: the index of
package contents (``dists/<suite>/main/Contents-<arch>.gz``, and ``Contents-all.gz`` for
packages built once for every architecture), the file ``apt-file`` reads. :func:`packages_for`
looks each wanted thing up there, in the release of the case's base image, from the mirror its
packages come from (``REPLAY_DEBIAN_CONTENTS`` names another); the index is kept in the cache
for a week. A header is looked for where the compiler looks and one directory down (the
``-I`` of a library's own directory), so a name can match a file the build would not have
read (``sys/endian.h``, a BSD header, is ``bsd/sys/endian.h`` in libbsd-dev): the package is
added once, and the build's stop that follows names what it still lacks.
"""

from __future__ import annotations

import gzip
import os
import platform
import re
import subprocess
import time
import urllib.request
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from replay.base.errors import ToolError

Kind = Literal["command", "pkg-config module", "header", "library", "locale"]

_NAME = r"[A-Za-z0-9_.+-]+"
_SAID: tuple[tuple[Kind, re.Pattern[str]], ...] = (
    ("command", re.compile(rf"No such file or directory: '({_NAME})'")),
    ("command", re.compile(rf"\bsh: (?:\d+: )?({_NAME}): (?:command )?not found")),
    ("command", re.compile(rf"error: command '({_NAME})' failed: No such file or directory")),
    ("pkg-config module", re.compile(rf"Package '?({_NAME})'? was not found in the pkg-config")),
    ("pkg-config module", re.compile(rf"Package '({_NAME})', required by '[^']*', not found")),
    ("pkg-config module", re.compile(rf"No package '({_NAME})' found")),
    ("header", re.compile(r"fatal error: '?([A-Za-z0-9_.+/-]+\.h(?:h|pp|xx)?)'?: No such file")),
    ("header", re.compile(r"fatal error: '([A-Za-z0-9_.+/-]+\.h(?:h|pp|xx)?)' file not found")),
    ("library", re.compile(rf"cannot find -l({_NAME})")),
    # Python's words for a locale the C library does not have (setlocale failed). Which one
    # is in the test's code, not in the error: the package holding en_US's (locales-all, in
    # every release here) holds every locale the C library knows.
    ("locale", re.compile(r"locale\.Error: (unsupported locale setting)")),
)
"""What a build's tools say when they miss something of the system, by what it is."""


@dataclass(frozen=True)
class Lacking:
    """One thing a build looked for on the system and did not find."""

    kind: Kind
    name: str

    def __str__(self) -> str:
        return (
            "a locale (unsupported locale setting)"
            if self.kind == "locale"
            else (f"{self.name} (a {self.kind})")
        )

    def path(self) -> re.Pattern[str]:
        """Where a Debian package would hold it (a path in the contents index: no leading
        slash)."""
        name = re.escape(self.name)
        return re.compile(
            {
                "command": rf"(?:usr/)?s?bin/{name}",
                "pkg-config module": rf"usr/(?:lib|share)/(?:[^/]+/)?pkgconfig/{name}\.pc",
                # Where the compiler looks (usr/include, its multiarch directory) or one
                # directory down (-I/usr/include/libxml2 for <libxml/parser.h>).
                "header": rf"usr/include/(?:[^/]+/)?{name}",
                "library": rf"(?:usr/)?lib/(?:[^/]+/)?lib{name}\.(?:so|a)",
                "locale": r"usr/lib/locale/en_US\.utf8/LC_CTYPE",
            }[self.kind]
        )

    def key(self) -> str:
        """What every line of the index holding it contains (a quick test before the
        pattern)."""
        return "en_US.utf8/LC_CTYPE" if self.kind == "locale" else self.name.rsplit("/", 1)[-1]


def lacking(output: str) -> list[Lacking]:
    """What the build's words say it looked for and did not find, each once, in order."""
    found: dict[Lacking, None] = {}
    for kind, said in _SAID:
        for match in said.finditer(output):
            found.setdefault(Lacking(kind, match.group(1)), None)
    return sorted(found, key=lambda w: output.find(w.name))


def architecture() -> str:
    """Debian's name for this machine's architecture."""
    machine = platform.machine()
    return {"x86_64": "amd64", "aarch64": "arm64", "armv7l": "armhf", "i686": "i386"}.get(
        machine, machine
    )


KEEP = 7 * 24 * 3600
"""How long a downloaded index is used before it is fetched again (seconds)."""


def cache_dir() -> Path:
    base = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    return base / "replay" / "debian-contents"


def _index(mirror: str, suite: str, name: str, say: Callable[[str], None]) -> Path:
    url = f"{mirror.rstrip('/')}/dists/{suite}/main/{name}"
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", url.split("://", 1)[-1])
    path = cache_dir() / safe
    if path.is_file() and time.time() - path.stat().st_mtime < KEEP:
        return path
    say(f"reading Debian {suite}'s index of package contents ({url})")
    path.parent.mkdir(parents=True, exist_ok=True)
    part = path.with_name(path.name + f".{os.getpid()}.part")
    try:
        with urllib.request.urlopen(url, timeout=120) as answer, part.open("wb") as out:
            while chunk := answer.read(1 << 20):
                out.write(chunk)
    except OSError as exc:
        part.unlink(missing_ok=True)
        raise ToolError(f"could not read Debian's index of package contents {url}: {exc}") from exc
    part.replace(path)
    return path


def _holders(path: Path, wants: Sequence[Lacking]) -> dict[Lacking, list[tuple[str, list[str]]]]:
    """Each wanted thing's (file, packages) found in one contents index."""
    found: dict[Lacking, list[tuple[str, list[str]]]] = {w: [] for w in wants}
    patterns = [(w, w.path()) for w in wants]
    names = {w.key() for w in wants}
    try:
        with gzip.open(path, "rt", encoding="utf-8", errors="replace") as lines:
            for line in lines:
                if not any(n in line for n in names):
                    continue
                file, _, location = line.rstrip().rpartition(" ")
                file = file.strip()
                for want, pattern in patterns:
                    if pattern.fullmatch(file):
                        packages = [p.rsplit("/", 1)[-1] for p in location.split(",")]
                        found[want].append((file, packages))
    except (OSError, EOFError) as exc:
        path.unlink(missing_ok=True)  # a broken download: fetched again next time
        raise ToolError(f"Debian's index of package contents {path} cannot be read: {exc}") from exc
    return found


def _choose(want: Lacking, holders: Iterable[tuple[str, list[str]]]) -> str | None:
    """The package to add: the one holding the file nearest the top of its tree, a ``-dev``
    package first for what a compiler or linker reads, then by name."""
    dev = want.kind != "command"
    ranked = sorted(
        (file.count("/"), dev and not package.endswith("-dev"), package)
        for file, packages in holders
        for package in packages
    )
    return ranked[0][2] if ranked else None


def installed(image: str) -> frozenset[str]:
    """The Debian packages installed in ``image``, as its dpkg lists them (none when it cannot
    be read): a package already there cannot be what a build lacks."""
    try:
        done = subprocess.run(
            ["docker", "run", "--rm", "--pull", "never", "--network", "none",
             "--entrypoint", "dpkg-query", image, "-W", "-f=${Package}\\n"],
            capture_output=True, text=True, check=False, timeout=300,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        return frozenset()
    return frozenset(done.stdout.split()) if done.returncode == 0 else frozenset()


def contents_mirror(suite: str) -> str:
    """Where Debian's index of package contents is read: ``REPLAY_DEBIAN_CONTENTS``, else the
    mirror the base images' packages come from."""
    from replay.images.base import apt_mirror

    return os.environ.get("REPLAY_DEBIAN_CONTENTS") or apt_mirror(suite=suite)


def packages_for(
    wants: Sequence[Lacking],
    suite: str,
    mirror: str,
    arch: str | None = None,
    say: Callable[[str], None] = lambda _: None,
) -> dict[Lacking, str]:
    """The Debian package of ``suite`` that holds each wanted thing (those no package holds
    are left out), looked up in the architecture's index, then in the index of packages
    for every architecture."""
    chosen: dict[Lacking, str] = {}
    left = list(wants)
    for name in (f"Contents-{arch or architecture()}.gz", "Contents-all.gz"):
        if not left:
            break
        holders = _holders(_index(mirror, suite, name, say), left)
        for want in list(left):
            package = _choose(want, holders[want])
            if package is not None:
                chosen[want] = package
                left.remove(want)
    return chosen
