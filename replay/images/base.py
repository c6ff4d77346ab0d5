"""The base images, built without a container registry: one per Debian release, plus toolchains.

``debootstrap --variant=minbase`` makes a Debian root filesystem from the Debian mirror this
machine's apt already uses, with Python, git, curl, CA certificates, gh and libfaketime, and
the unprivileged user the harness runs as (``agent``, uid 1000, home ``/home/agent``); the
tree is then ``docker import``-ed with a few image settings as ``replay-base:<release>``. The
image carries the hash of its recipe as a label, and a build is skipped when an image with that
hash exists; a second label (:data:`PLATFORM_LABEL`) names its release, Python and toolchains.

The releases (:data:`RELEASES`) give the interpreter of their time: bullseye Python 3.9,
bookworm 3.11, trixie 3.13; :func:`choose_release` picks the one for a case's T and project.
Their recipes differ only where the suites do: Debian bullseye has no ``gh`` package, so its
image takes bookworm's ``gh`` with bookworm's C library (:data:`GRAFTABLE`); and only Python
3.11 and later are marked EXTERNALLY-MANAGED, a file the recipe removes (bullseye has none).

A toolchain (:data:`TOOLCHAINS`, e.g. ``node``: Debian's ``nodejs`` and ``npm`` of the same
release) is a layer on top of the release's image, not a debootstrap of its own: a container
of ``replay-base:<release>`` installs the packages with apt from the same mirror and is
committed as ``replay-base:<release>-node``. Only the node packages are installed, not a whole
tree again; and ``debootstrap --include=nodejs,npm bookworm`` fails outright (dpkg leaves npm's
node-* dependencies unconfigured: a dependency on a package another one provides). The
layer's recipe hash covers the base image's ID and the packages, so a rebuilt base rebuilds
it. The plain images, which every Python case uses, carry no toolchain.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import tomllib
import uuid
from collections.abc import Iterable, Iterator
from configparser import ConfigParser
from configparser import Error as ConfigError
from dataclasses import asdict, dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import get_args

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from replay.base.case import (
    BASE_REPOSITORY,
    DEBIAN_NAME,
    PACKAGES_PART,
    Environment,
    Toolchain,
    packages_part,
)
from replay.base.errors import InputError, ToolError
from replay.runtime.base import IMAGE_KIND_LABEL, Runtime, SandboxError

RECIPE_LABEL = "replay.recipe"
PLATFORM_LABEL = "replay.platform"
"""``release=<name>;python=<major.minor>;toolchains=<a,b>`` (toolchains empty for none)."""
KIND_LABEL = IMAGE_KIND_LABEL
DEFAULT_MIRROR = "http://deb.debian.org/debian"


@dataclass(frozen=True)
class Release:
    """A Debian release a base image is built from, and what it ships."""

    name: str
    python: tuple[int, int]
    glibc: tuple[int, int]
    released: date

    @property
    def python_version(self) -> str:
        return f"{self.python[0]}.{self.python[1]}"


RELEASES: tuple[Release, ...] = (
    Release("bullseye", (3, 9), (2, 31), date(2021, 8, 14)),
    Release("bookworm", (3, 11), (2, 36), date(2023, 6, 10)),
    Release("trixie", (3, 13), (2, 41), date(2025, 8, 9)),
)
"""Oldest first."""
DEFAULT_RELEASE = "bookworm"
BASE_IMAGE = f"{BASE_REPOSITORY}:{DEFAULT_RELEASE}"

TOOLCHAINS: dict[str, tuple[str, ...]] = {
    "build": ("build-essential", "python3-dev", "python3-setuptools", "libffi-dev", "libssl-dev"),
    "node": ("nodejs", "npm"),
}
"""Debian packages each toolchain adds (of the image's own release): ``build`` for projects or
sdists with C extensions (compilers, make, the interpreter's headers, and setuptools, which
trixie's python3-pip no longer brings: a case with extensions rebuilds them with ``python
setup.py build_ext`` before its tests, offline), plus the headers sdists most often compile
against (libffi for cffi, OpenSSL), ``node`` for JavaScript."""
assert set(TOOLCHAINS) == set(get_args(Toolchain))

_ABSENT: dict[str, frozenset[str]] = {"bullseye": frozenset({"gh"})}
"""Packages of :data:`PACKAGES` a suite does not have."""
PACKAGES = (
    "python3",
    "python3-venv",
    "python3-pip",
    "python-is-python3",
    "git",
    "ca-certificates",
    "curl",
    "gh",
    "faketime",
    "libfaketime",
)


@dataclass(frozen=True)
class BaseRecipe:
    """What goes into the base image; its hash names the build."""

    suite: str = "bookworm"
    variant: str = "minbase"
    packages: tuple[str, ...] = PACKAGES
    changes: tuple[str, ...] = (
        "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        "ENV LANG=C.UTF-8",
        "ENV PIP_DISABLE_PIP_VERSION_CHECK=1",
        "ENV PIP_NO_INPUT=1",
        "WORKDIR /workspace",
        'CMD ["/bin/bash"]',
    )
    removed: tuple[str, ...] = (
        # The container's Python belongs to the project at T; pip may install into it.
        "usr/lib/python3.11/EXTERNALLY-MANAGED",
        "var/cache/apt/archives",
        "var/lib/apt/lists",
    )
    user: tuple[str, int, str] = ("agent", 1000, "/home/agent")
    """The unprivileged user (name, uid = gid, home) the harness runs as in a sandbox."""
    grafts: tuple[str, ...] = ()
    """Tools the suite does not package, copied from the default release's image with the C
    library they were built against (``gh`` on bullseye): the agent's tools come from the
    present, like the harness; the project's interpreter and libraries stay the release's."""
    version: int = 2
    mirror: str = field(default=DEFAULT_MIRROR, compare=False)
    """Where packages come from; not part of the hash (any mirror serves the same suite)."""

    def digest(self) -> str:
        data = asdict(self)
        data.pop("mirror")
        if not data["grafts"]:
            data.pop("grafts")  # recipes without grafts hash as they did before grafts existed
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]

    @classmethod
    def for_release(cls, release: Release | str, mirror: str = DEFAULT_MIRROR) -> BaseRecipe:
        """The recipe of ``release``'s image (bookworm's is the default recipe, unchanged)."""
        rel = release_named(release) if isinstance(release, str) else release
        absent = _ABSENT.get(rel.name, frozenset())
        marker = (
            (f"usr/lib/python{rel.python_version}/EXTERNALLY-MANAGED",)
            if rel.python >= (3, 11)
            else ()
        )
        return cls(
            suite=rel.name,
            grafts=tuple(sorted(absent & set(GRAFTABLE))),
            packages=tuple(p for p in PACKAGES if p not in absent),
            removed=(*marker, "var/cache/apt/archives", "var/lib/apt/lists"),
            mirror=mirror,
        )

    @property
    def release(self) -> Release:
        return release_named(self.suite)


GRAFTABLE = {"gh": "/usr/bin/gh"}
"""Tools a base image may take from the default release's image, and where they live there."""
GRAFT_DIR = "opt/replay-tools"
_LOADER = "/lib64/ld-linux-x86-64.so.2"
_LIBC = "/lib/x86_64-linux-gnu/libc.so.6"


def _graft(root: Path, tools: Iterable[str], donor: str) -> None:
    """Copy each tool out of the image ``donor`` with that image's C library and loader, and
    put a wrapper on PATH that runs it with them (so a binary built against a newer glibc runs
    on an older release; ``gh`` needs only libc)."""
    lib = root / GRAFT_DIR / "lib"
    lib.mkdir(parents=True, exist_ok=True)
    created = subprocess.run(["docker", "create", donor], capture_output=True, text=True)
    if created.returncode != 0:
        raise ToolError(f"docker create {donor} failed: {created.stderr.strip()}")
    cid = created.stdout.strip()
    try:
        wanted = [(_LOADER, lib / "ld-linux-x86-64.so.2"), (_LIBC, lib / "libc.so.6")]
        wanted += [(GRAFTABLE[t], root / GRAFT_DIR / t) for t in tools]
        for src, dest in wanted:
            _run(["docker", "cp", "-L", f"{cid}:{src}", str(dest)], f"copying {src} from {donor}")
    finally:
        subprocess.run(["docker", "rm", cid], capture_output=True, check=False)
    for tool in tools:
        wrapper = root / GRAFTABLE[tool].lstrip("/")
        wrapper.write_text(
            "#!/bin/sh\n"
            f"# {tool} from {donor}, run with that image's C library (see replay/images/base.py)\n"
            f"exec /{GRAFT_DIR}/lib/ld-linux-x86-64.so.2 --library-path /{GRAFT_DIR}/lib "
            f'/{GRAFT_DIR}/{tool} "$@"\n'
        )
        wrapper.chmod(0o755)


def release_named(name: str) -> Release:
    for rel in RELEASES:
        if rel.name == name:
            return rel
    known = ", ".join(r.name for r in RELEASES)
    raise InputError("--release", f"no base image for Debian {name!r}; choose one of {known}")


def base_tag(
    release: Release | str, toolchains: Iterable[str] = (), packages: Iterable[str] = ()
) -> str:
    """``replay-base:<release>``, with ``-<toolchain>`` for each toolchain (sorted) and
    ``-deb.<hash>`` for Debian packages added (:func:`packages_part`)."""
    name = release if isinstance(release, str) else release.name
    part = packages_part(packages)
    return "-".join(
        [f"{BASE_REPOSITORY}:{name}", *sorted(set(toolchains)), *([part] if part else [])]
    )


def parse_base_tag(reference: str) -> tuple[Release, tuple[str, ...]] | None:
    """(release, toolchains) of a tag :func:`base_tag` makes; ``None`` for any other name.
    (The packages part, a hash, is read with :func:`base_tag_packages`.)"""
    repository, _, tag = reference.partition(":")
    if repository != BASE_REPOSITORY:
        return None
    name, *parts = tag.split("-")
    tools = [p for p in parts if not p.startswith(PACKAGES_PART)]
    if name not in {r.name for r in RELEASES} or not set(tools) <= set(TOOLCHAINS):
        return None
    if len(parts) - len(tools) > 1:
        return None
    return release_named(name), tuple(tools)


def platform_label(release: Release, toolchains: Iterable[str] = ()) -> str:
    tools = ",".join(sorted(set(toolchains)))
    return f"release={release.name};python={release.python_version};toolchains={tools}"


def image_platform(labels: dict[str, str]) -> dict[str, str] | None:
    """The release, python and toolchains an image's label names (``None`` without one)."""
    value = labels.get(PLATFORM_LABEL)
    if not value:
        return None
    return dict(part.partition("=")[::2] for part in value.split(";"))


def image_toolchains(labels: dict[str, str]) -> set[str]:
    """The toolchains a base image carries; an image without the label carries none (images
    built before the label existed had only Python)."""
    platform = image_platform(labels) or {}
    return {t for t in platform.get("toolchains", "").split(",") if t}


# ----------------------------------------------------------------------------- T and Python


def choose_release(
    at: datetime, requires_python: str | None = None, python: str | None = None
) -> Release:
    """The release whose image a case at ``at`` runs on.

    The release current at T (the newest released on or before T's date; bullseye for earlier
    T); if the project's ``requires_python`` excludes its Python, the nearest older release
    that fits, else the nearest newer one. An explicit ``python`` ("3.9") overrides both.
    """
    if python is not None:
        for rel in RELEASES:
            if rel.python_version == python.strip():
                return rel
        known = ", ".join(f"{r.python_version} ({r.name})" for r in RELEASES)
        raise InputError("--python", f"no base image has Python {python}; choose one of {known}")
    day = at.date()
    current = max((i for i, r in enumerate(RELEASES) if r.released <= day), default=0)
    if not requires_python:
        return RELEASES[current]
    try:
        spec = SpecifierSet(requires_python)
    except InvalidSpecifier as exc:
        raise InputError("requires-python", f"{requires_python!r} is not a specifier") from exc
    older = RELEASES[current::-1]
    newer = RELEASES[current + 1 :]
    for rel in (*older, *newer):
        if spec.contains(rel.python_version, prereleases=True):
            return rel
    known = ", ".join(f"{r.python_version} ({r.name})" for r in RELEASES)
    raise InputError(
        "requires-python", f"{requires_python!r} admits no base image's Python: {known}"
    )


_SETUP_PY = re.compile(r"""python_requires\s*=\s*(?P<q>['"])(?P<spec>[^'"]*)(?P=q)""")


def read_requires_python(checkout: Path) -> str | None:
    """A project's requires-python: pyproject.toml ``[project].requires-python``, else
    setup.cfg ``[options] python_requires``, else a ``python_requires="..."`` literal in
    setup.py; ``None`` if none says."""
    pyproject = checkout / "pyproject.toml"
    if pyproject.is_file():
        try:
            project = tomllib.loads(pyproject.read_text()).get("project", {})
        except (tomllib.TOMLDecodeError, UnicodeDecodeError):
            project = {}
        value = project.get("requires-python") if isinstance(project, dict) else None
        if isinstance(value, str) and value.strip():
            return value.strip()
    setup_cfg = checkout / "setup.cfg"
    if setup_cfg.is_file():
        parser = ConfigParser(interpolation=None)
        try:
            parser.read_string(setup_cfg.read_text())
            value = parser.get("options", "python_requires", fallback=None)
        except (ConfigError, UnicodeDecodeError):
            value = None
        if value and value.strip():
            return value.strip()
    setup_py = checkout / "setup.py"
    if setup_py.is_file():
        found = _SETUP_PY.search(setup_py.read_text(errors="replace"))
        if found and found["spec"].strip():
            try:
                SpecifierSet(found["spec"].strip())
            except InvalidSpecifier:
                # A string setup.py formats before use (psutil: ">={}.{}".format(...)):
                # computed when it runs, so not read here, as if not declared.
                return None
            return found["spec"].strip()
    return None


def apt_mirror(etc: Path = Path("/etc/apt"), suite: str = "bookworm") -> str:
    """The Debian mirror this machine's apt uses for ``suite`` (one-line or deb822 sources)."""
    override = os.environ.get("REPLAY_DEBIAN_MIRROR")
    if override:
        return override
    sources = [(uri, suites) for uri, suites in _apt_sources(etc) if "security" not in uri]
    for uri, suites in sources:
        if suite in suites:
            return uri
    # A Debian mirror serves every release: the one apt uses for another of ours will do.
    names = {r.name for r in RELEASES}
    for uri, suites in sources:
        if names & set(suites):
            return uri
    return DEFAULT_MIRROR


def _apt_sources(etc: Path) -> Iterator[tuple[str, list[str]]]:
    files = [etc / "sources.list"]
    listdir = etc / "sources.list.d"
    if listdir.is_dir():
        files += sorted(listdir.glob("*.list")) + sorted(listdir.glob("*.sources"))
    for path in files:
        try:
            text = path.read_text()
        except OSError:
            continue
        if path.suffix == ".sources":
            for stanza in re.split(r"\n\s*\n", text):
                fields: dict[str, str] = {}
                for line in stanza.splitlines():
                    if line.startswith("#") or ":" not in line:
                        continue
                    key, _, value = line.partition(":")
                    fields[key.strip().lower()] = value.strip()
                if "deb" in fields.get("types", "").split() and fields.get("enabled") != "no":
                    for uri in fields.get("uris", "").split():
                        yield uri, fields.get("suites", "").split()
        else:
            for line in text.splitlines():
                words = re.sub(r"\[[^]]*\]", "", line).split()
                if len(words) >= 3 and words[0] == "deb":
                    yield words[1], [words[2]]


def ensure_base_image(
    runtime: Runtime,
    release: Release | str = DEFAULT_RELEASE,
    toolchains: Iterable[str] = (),
    *,
    recipe: BaseRecipe | None = None,
    force: bool = False,
    packages: Iterable[str] = (),
) -> tuple[str, bool]:
    """``replay-base:<release>[-<toolchains>][-deb.<hash>]``'s ID, built unless one from the
    same recipe exists; ``(id, built)``. ``force`` rebuilds the top image only (the layer
    when toolchains or ``packages``, Debian packages of the release, are given); ``recipe``
    replaces the release's (its suite must be the release)."""
    rel = release_named(release) if isinstance(release, str) else release
    recipe = recipe or BaseRecipe.for_release(rel, apt_mirror(suite=rel.name))
    if recipe.suite != rel.name:
        raise ValueError(f"a {recipe.suite} recipe for the {rel.name} image")
    tools = tuple(sorted(set(toolchains)))
    for tool in tools:
        if tool not in TOOLCHAINS:
            known = ", ".join(TOOLCHAINS)
            raise InputError("--toolchain", f"no toolchain {tool!r}; choose one of {known}")
    for name in packages:
        if not re.match(DEBIAN_NAME, name):
            raise InputError("--package", f"{name!r} is not a Debian package name")
    added = tuple(sorted(set(packages)))
    tag = base_tag(rel)
    digest = recipe.digest()
    base_force = force and not tools and not added
    if not base_force and runtime.image_labels(tag).get(RECIPE_LABEL) == digest:
        image = runtime.image_id(tag)
        assert image is not None
        built = False
    else:
        donor = None
        if recipe.grafts:
            donor, _ = ensure_base_image(runtime, DEFAULT_RELEASE)
        image, built = build_base_image(recipe, tag, donor=donor), True
    if not tools and not added:
        return image, built
    layer = toolchain_digest(image, tools, added)
    top = base_tag(rel, tools, added)
    if not force and runtime.image_labels(top).get(RECIPE_LABEL) == layer:
        found = runtime.image_id(top)
        assert found is not None
        return found, built
    return build_toolchain_image(image, recipe, tools, top, added), True


def ensure_case_base_image(runtime: Runtime, environment: Environment) -> str:
    """The base image a case's environment names, built when it is one of ours and missing
    or stale; an image of another name must exist and carry the case's toolchains."""
    parsed = parse_base_tag(environment.base_image)
    if parsed is None:
        image = runtime.image_id(environment.base_image)
        if image is None:
            raise SandboxError(
                f"no base image {environment.base_image!r} here: run `replay image base`"
            )
        check_toolchains(runtime, environment)
        return image
    release, tools = parsed
    image, _ = ensure_base_image(runtime, release, tools, packages=environment.packages)
    return image


def check_toolchains(runtime: Runtime, environment: Environment) -> None:
    """Refuse a base image that lacks a toolchain the case declares, naming the build."""
    labels = runtime.image_labels(environment.base_image)
    missing = sorted(set(environment.toolchains) - image_toolchains(labels))
    if not missing:
        return
    platform = image_platform(labels) or {}
    release = platform.get("release") or DEFAULT_RELEASE
    wanted = sorted(image_toolchains(labels) | set(environment.toolchains))
    options = " ".join(f"--toolchain {t}" for t in wanted)
    raise SandboxError(
        f"base image {environment.base_image!r} lacks the toolchain(s) {', '.join(missing)}"
        f" the case declares: build {base_tag(release, wanted)} with `replay image base"
        f" --release {release} {options}` and name it in environment.base_image"
    )


def toolchain_digest(base_id: str, toolchains: Iterable[str], added: Iterable[str] = ()) -> str:
    tools = sorted(set(toolchains))
    data: dict[str, object] = {
        "base": base_id,
        "toolchains": tools,
        "packages": [p for t in tools for p in TOOLCHAINS[t]],
        "version": 1,
    }
    if extra := sorted(set(added)):
        data["added"] = extra  # layers without added packages hash as they did before
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]


def build_toolchain_image(
    base_id: str,
    recipe: BaseRecipe,
    toolchains: Iterable[str],
    tag: str,
    added: Iterable[str] = (),
) -> str:
    """The base image plus the toolchains' Debian packages and those ``added``, installed
    with apt from the recipe's mirror in a container (the default bridge network: a build,
    not a sandbox)."""
    if shutil.which("docker") is None:
        raise ToolError("docker is not installed")
    tools = sorted(set(toolchains))
    extra = sorted(set(added))
    packages = " ".join([*(p for t in tools for p in TOOLCHAINS[t]), *extra])
    script = (
        f"printf 'deb {recipe.mirror} {recipe.suite} main\\n' > /etc/apt/sources.list"
        " && rm -f /etc/apt/sources.list.d/*"
        " && apt-get update -q"
        " && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends"
        " -o Dpkg::Options::=--force-unsafe-io"
        f" {packages}"
        " && apt-get clean && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*"
    )
    name = f"replay-toolchain-build-{uuid.uuid4().hex[:12]}"
    proxies = [
        arg
        for key in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "no_proxy")
        if key in os.environ
        for arg in ("-e", key)
    ]
    try:
        _run(["docker", "run", "--name", name, *proxies, base_id, "sh", "-c", script], "apt-get")
        changes = [
            'CMD ["/bin/bash"]',
            f"LABEL {KIND_LABEL}=base {RECIPE_LABEL}={toolchain_digest(base_id, tools, extra)}"
            f" {PLATFORM_LABEL}={platform_label(recipe.release, tools)}",
        ]
        args = ["docker", "commit"]
        for change in changes:
            args += ["--change", change]
        done = subprocess.run([*args, name, tag], capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise ToolError(f"docker commit failed: {done.stderr.strip()}")
        return done.stdout.strip()
    finally:
        subprocess.run(["docker", "rm", "-f", name], capture_output=True, check=False)


def build_base_image(recipe: BaseRecipe, tag: str = BASE_IMAGE, donor: str | None = None) -> str:
    """debootstrap, trim, graft (from the image ``donor``), and import; the new image's ID."""
    if recipe.grafts and donor is None:
        raise ValueError(f"{recipe.suite}'s recipe grafts {recipe.grafts}: name a donor image")
    for tool in ("debootstrap", "docker", "tar"):
        if shutil.which(tool) is None:
            raise ToolError(f"{tool} is not installed (apt-get install {tool})")
    with tempfile.TemporaryDirectory(prefix="replay-base-", dir=_scratch()) as tmp:
        root = Path(tmp) / "root"
        _run(
            [
                "debootstrap",
                f"--variant={recipe.variant}",
                f"--include={','.join(recipe.packages)}",
                recipe.suite,
                str(root),
                recipe.mirror,
            ],
            "debootstrap",
        )
        for rel in recipe.removed:
            target = root / rel
            if target.is_dir():
                for child in target.iterdir():
                    if child.is_dir():
                        shutil.rmtree(child)
                    else:
                        child.unlink()
            else:
                target.unlink(missing_ok=True)
        _add_user(root, *recipe.user)
        if recipe.grafts:
            assert donor is not None
            _graft(root, recipe.grafts, donor)
        changes = [
            *recipe.changes,
            f"LABEL {KIND_LABEL}=base {RECIPE_LABEL}={recipe.digest()}"
            f" {PLATFORM_LABEL}={platform_label(recipe.release)}",
        ]
        args = ["docker", "import"]
        for change in changes:
            args += ["--change", change]
        tar = subprocess.Popen(["tar", "-C", str(root), "-c", "."], stdout=subprocess.PIPE)
        try:
            done = subprocess.run(
                [*args, "-", tag], stdin=tar.stdout, capture_output=True, text=True, check=False
            )
        finally:
            assert tar.stdout is not None
            tar.stdout.close()
            tar.wait()
        if done.returncode != 0 or tar.returncode != 0:
            raise ToolError(f"docker import failed: {done.stderr.strip()}")
        return done.stdout.strip()


def _add_user(root: Path, name: str, uid: int, home: str) -> None:
    """An unprivileged user and its group, written into the tree (no chroot, no useradd)."""
    etc = root / "etc"
    with (etc / "passwd").open("a") as fh:
        fh.write(f"{name}:x:{uid}:{uid}::{home}:/bin/bash\n")
    with (etc / "group").open("a") as fh:
        fh.write(f"{name}:x:{uid}:\n")
    with (etc / "shadow").open("a") as fh:
        fh.write(f"{name}:!:19000:0:99999:7:::\n")
    if (etc / "gshadow").exists():
        with (etc / "gshadow").open("a") as fh:
            fh.write(f"{name}:!::\n")
    target = root / home.lstrip("/")
    target.mkdir(parents=True, exist_ok=True)
    skel = etc / "skel"
    if skel.is_dir():
        shutil.copytree(skel, target, dirs_exist_ok=True)
    for path in [target, *target.rglob("*")]:
        os.lchown(path, uid, uid)
    target.chmod(0o755)


def _scratch() -> str:
    # A large disk, not a tmpfs: the tree is a few hundred megabytes.
    return os.environ.get("REPLAY_BUILD_DIR", "/var/tmp")


def _run(cmd: list[str], what: str) -> None:
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    except FileNotFoundError as exc:
        raise ToolError(f"{cmd[0]} is not installed") from exc
    if done.returncode != 0:
        tail = (done.stdout + done.stderr).strip()[-2000:]
        raise ToolError(f"{what} failed ({done.returncode}): {tail}")
