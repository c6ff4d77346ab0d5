"""A harness layer: the candidate harness as it is today, in its own prefix, on the env image.

The harness is from the present and the project is from T (see DESIGN.md). For a spec with
``install.pip``, the wheels are downloaded on the host from today's package index (never
through the world's registry frozen at T) into a wheelhouse cached under
``.replay/wheelhouse/<hash>``. A container from the case's environment image, with no network
at all, then gets ``/opt/harness/venv`` from the image's own ``python3 -m venv``, the wheels
installed with ``pip install --no-index``, and the spec's ``install.files``; it is committed as
``replay-harness:<spec>-<key>``, where the key hashes the env image ID, the spec and the
resolved wheel set, so a rebuild happens only when one of them changes.

The harness's interpreter and packages live under ``/opt/harness`` alone: the system Python,
where the repository's dependencies as of T are installed, is not touched, and the venv does
not see the system's site-packages.

A harness that needs a newer Python than the env image's brings its own (``install.python``: a
Debian release): that release's ``python3.X`` packages and the libraries they need, its C
library included, downloaded from the Debian mirror on the host (the suite's ``InRelease``
checked with ``gpgv`` against the Debian archive keyring, every file against the hashes it
signs), unpacked under ``/opt/harness/python`` in the build container, and the interpreter
pointed at its own loader and libraries with that release's ``patchelf`` (run by the same
loader). Nothing of it is on the system's paths: the agent's commands still find the env
image's ``python3``. It leaves out ``tomllib`` (:data:`PYTHON_OMIT`): a tomli case's future.

Any other harness that installs from PyPI has its wheels resolved for Python 3.11 (pip checks
every ``Requires-Python`` against it and picks ``cp311`` binary wheels), so its venv must run
3.11: the env image's ``python3`` when that is 3.11 (bookworm), else, automatically, bookworm's
Python brought the same way (a bullseye case's 3.9 is too old for aider, Claude Code's SDK and
mini-swe-agent; the project keeps its own 3.9). The env image's Python is read from its
platform label (:data:`~replay.images.base.PLATFORM_LABEL`), or asked of the image when it has
none.
"""

from __future__ import annotations

import hashlib
import io
import json
import lzma
import posixpath
import re
import shutil
import subprocess
import sys
import tempfile
import urllib.request
import uuid
import zipfile
from dataclasses import dataclass
from pathlib import Path

from replay.base.errors import ReplayError
from replay.harness.spec import PREFIX, HarnessSpec
from replay.images.base import (
    KIND_LABEL,
    RECIPE_LABEL,
    RELEASES,
    Release,
    apt_mirror,
    image_platform,
)
from replay.runtime.base import (
    ENV_IMAGE_LABEL,
    OWNER_LABEL,
    OWNER_START_LABEL,
    ROOT_LABEL,
    RUN_LABEL,
    Container,
    ContainerSpec,
    Limits,
    Runtime,
)

HARNESS_REPOSITORY = "replay-harness"
WHEELHOUSE = Path(".replay") / "wheelhouse"
VENV = f"{PREFIX}/venv"
PYTHON_VERSION = "3.11"
PLATFORMS = ("manylinux2014_x86_64", "manylinux_2_17_x86_64", "manylinux_2_28_x86_64", "any")
PLATFORMS_2_28 = PLATFORMS
"""For a harness's own Python: its C library (2.36 or newer) runs manylinux_2_28 wheels too
(so does every env image's: bullseye's is 2.31, and the harness layer needs 2.28 for
tiktoken's wheels)."""
PYTHON_HOME = f"{PREFIX}/python"
"""Where a harness's own Python (``install.python``) is unpacked."""
DEBS_STAGE = "/tmp/replay-python-debs"
DEBIAN_KEYRING = Path("/usr/share/keyrings/debian-archive-keyring.gpg")
ARCH_LIBS = "usr/lib/x86_64-linux-gnu"
# Debian's python3.X and what it loads (from the packages' Depends), with the C library, and
# patchelf (with the C++ runtime it needs) to point the interpreter at them. Data packages
# (tzdata, media-types, netbase) are left to the env image. {t64}: the suffix trixie's
# 64-bit time_t transition gave some library packages. Bookworm's libnsl2 and libtirpc3 (and
# the Kerberos libraries behind them), only for the deprecated ``nis`` module, are left out.
PYTHON_DEBS = (
    "python{v}-minimal",
    "libpython{v}-minimal",
    "libpython{v}-stdlib",
    "python{v}",
    "libc6",
    "libgcc-s1",
    "libssl3{t64}",
    "libffi8",
    "zlib1g",
    "libexpat1",
    "libsqlite3-0",
    "libbz2-1.0",
    "liblzma5",
    "libncursesw6",
    "libtinfo6",
    "libreadline8{t64}",
    "libuuid1",
    "libdb5.3{t64}",
    "libzstd1",
    "libcrypt1",
    "patchelf",
    "libstdc++6",
)
T64_RELEASES = frozenset({"trixie"})
PYTHON_OMIT = ("tomllib",)
"""Standard-library packages a brought Python leaves out. ``tomllib`` is tomli, a project real
cases are about (on bullseye, whose Python 3.9 predates it), as of the Python's release: a
tomli case's future fix, which the image audit finds there and refuses the run for. Removed
once the wheels are installed (pip needs it; the venv's pip is not used after); no harness
here imports it (pydantic-settings and others do only to read TOML files they are not given),
and one that did would fail with ImportError, not silently."""
# Generous: on a loaded machine (a load of 20 on 2 cores here) installing OpenHands' 200 wheels
# took over the 10 minutes a step had before.
BUILD_LIMITS = Limits(cpus=None, memory=4 * 1024**3, pids=4096, wall_time=3600)
STEP_TIMEOUT = 1800
STAGE = "/tmp/replay-wheelhouse"
COMPLETE = ".complete"
# 1: venv + wheels + files, committed on the env image. 2: a brought Python without tomllib
# (and bookworm's /lib merged into /usr/lib).
LAYER_VERSION = 2


class HarnessInstallError(ReplayError):
    """The harness could not be downloaded or installed."""


@dataclass(frozen=True)
class HarnessImage:
    """A built (or reused) harness image."""

    reference: str
    """``replay-harness:<spec>-<key>``."""
    id: str
    """The image ID (``sha256:...``)."""
    key: str
    """Hash of the env image ID, the spec and the resolved wheel set."""
    wheelhouse: Path
    built: bool


# ----------------------------------------------------------------------------- wheels


def wheelhouse_key(
    requirements: list[str],
    python_version: str = PYTHON_VERSION,
    *,
    platforms: tuple[str, ...] = PLATFORMS,
    build: tuple[str, ...] = (),
    ignore_requires_python: bool = False,
) -> str:
    data: dict[str, object] = {
        "requirements": requirements,
        "python": python_version,
        "platforms": platforms,
    }
    if build:
        data["build"] = list(build)
    if ignore_requires_python:
        data["ignore_requires_python"] = True
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]


def download_wheels(
    requirements: list[str],
    root: Path = WHEELHOUSE,
    python_version: str = PYTHON_VERSION,
    *,
    platforms: tuple[str, ...] = PLATFORMS,
    build: tuple[str, ...] = (),
    ignore_requires_python: bool = False,
) -> Path:
    """The wheels for ``requirements`` and their dependencies, from today's index (cached).

    ``build``: requirements the index has only as source, built into wheels here first (pure
    Python: the wheel fits any platform). ``ignore_requires_python``: resolve although a
    package's ``Requires-Python`` excludes ``python_version``.
    """
    key = wheelhouse_key(
        requirements,
        python_version,
        platforms=platforms,
        build=build,
        ignore_requires_python=ignore_requires_python,
    )
    dest = (root / key).resolve()
    if (dest / COMPLETE).is_file():
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=dest.name + ".", dir=dest.parent))
    if build:
        built = subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "wheel",
                "--disable-pip-version-check",
                "--no-input",
                "--no-deps",
                "--no-binary=:all:",
                "-w",
                str(tmp),
                *build,
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        if built.returncode != 0:
            shutil.rmtree(tmp, ignore_errors=True)
            raise HarnessInstallError(
                f"pip wheel {' '.join(build)} failed: {(built.stdout + built.stderr)[-3000:]}"
            )
        if not all(w.name.endswith("-py3-none-any.whl") for w in wheels(tmp)):
            shutil.rmtree(tmp, ignore_errors=True)
            raise HarnessInstallError(f"{' '.join(build)}: not pure Python, cannot be built here")
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--disable-pip-version-check",
        "--no-input",
        "--only-binary=:all:",
        "--implementation",
        "cp",
        "--python-version",
        python_version,
        *(arg for p in platforms for arg in ("--platform", p)),
        *(["--find-links", str(tmp)] if build else []),
        *(["--ignore-requires-python"] if ignore_requires_python else []),
        "-d",
        str(tmp),
        *requirements,
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        shutil.rmtree(tmp, ignore_errors=True)
        raise HarnessInstallError(
            f"pip download {' '.join(requirements)} failed: {(done.stdout + done.stderr)[-3000:]}"
        )
    (tmp / COMPLETE).write_text(json.dumps({"requirements": requirements}) + "\n")
    return _settle(tmp, dest)


def _settle(tmp: Path, dest: Path) -> Path:
    try:
        tmp.rename(dest)  # atomic: a download is there complete or not at all
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)
        if not (dest / COMPLETE).is_file():
            raise
        # Another process finished the same download first; its copy is as good.
    return dest


def python_release(spec: HarnessSpec) -> Release | None:
    """The Debian release whose Python the harness brings (``install.python``), if any."""
    name = spec.install.python
    if name is None:
        return None
    for release in RELEASES:
        if release.name == name:
            return release
    known = ", ".join(r.name for r in RELEASES)
    raise HarnessInstallError(f"harness {spec.name}: install.python: no release {name!r} ({known})")


def fallback_release() -> Release:
    """The Debian release whose Python is :data:`PYTHON_VERSION` (bookworm)."""
    for release in RELEASES:
        if release.python_version == PYTHON_VERSION:
            return release
    raise AssertionError(f"no release has Python {PYTHON_VERSION}")  # pragma: no cover


def venv_python(spec: HarnessSpec, env_python: str | None) -> Release | None:
    """The release whose Python the harness's venv is made from; None: the env image's.

    ``install.python`` when the spec names one. Otherwise a spec that installs from PyPI has
    its wheels resolved for :data:`PYTHON_VERSION` and needs that Python: the env image's
    ``python3`` when it is that version, else (``env_python`` older, newer or None, for an
    image without ``python3``) the release that ships it, brought into the harness's prefix.
    """
    release = python_release(spec)
    if release is not None or not spec.install.pip or env_python == PYTHON_VERSION:
        return release
    return fallback_release()


def harness_wheels(spec: HarnessSpec, root: Path = WHEELHOUSE) -> Path:
    """The wheelhouse of ``spec``: for Python 3.11, or for the Python ``install.python`` names
    (the same whether the venv's 3.11 is the env image's or one brought for it)."""
    release = python_release(spec)
    if release is None and not spec.install.build and not spec.install.ignore_requires_python:
        return download_wheels(list(spec.install.pip), root)
    version = release.python_version if release else PYTHON_VERSION
    modern = release is not None and release.glibc >= (2, 28)
    return download_wheels(
        list(spec.install.pip),
        root,
        version,
        platforms=PLATFORMS_2_28 if modern else PLATFORMS,
        build=tuple(spec.install.build),
        ignore_requires_python=spec.install.ignore_requires_python,
    )


def pip_wheels(release: Release, root: Path = WHEELHOUSE) -> Path:
    """pip's own wheel, for a venv made from a brought Python (Debian's interpreter comes
    without ``ensurepip``, so the venv is made ``--without-pip`` and pip installed from here)."""
    return download_wheels(["pip"], root, release.python_version)


def _fetch(url: str) -> bytes:
    try:
        with urllib.request.urlopen(url, timeout=120) as response:
            data: bytes = response.read()
    except OSError as exc:
        raise HarnessInstallError(f"downloading {url}: {exc}") from exc
    return data


def _signed_sha256(inrelease: bytes, name: str) -> str:
    """The SHA256 an ``InRelease`` file (already verified) gives for index file ``name``."""
    section = inrelease.decode().split("\nSHA256:\n", 1)[-1]
    for line in section.splitlines():
        parts = line.split()
        if not line.startswith(" "):
            break
        if len(parts) == 3 and parts[2] == name:
            return parts[0]
    raise HarnessInstallError(f"InRelease lists no {name}")


def download_python(release: Release, root: Path = WHEELHOUSE) -> Path:
    """The ``.deb`` files of ``release``'s Python and what it loads, from the Debian mirror
    (cached like a wheelhouse; every file checked against the suite's signed hashes)."""
    version = release.python_version
    t64 = "t64" if release.name in T64_RELEASES else ""
    names = [n.format(v=version, t64=t64) for n in PYTHON_DEBS]
    key = hashlib.sha256(json.dumps([release.name, names]).encode()).hexdigest()[:16]
    dest = (root / f"python-{release.name}-{key}").resolve()
    if (dest / COMPLETE).is_file():
        return dest
    if not DEBIAN_KEYRING.is_file() or shutil.which("gpgv") is None:
        raise HarnessInstallError(
            f"checking Debian's signature needs gpgv and {DEBIAN_KEYRING} (apt-get install gpgv "
            "debian-archive-keyring)"
        )
    mirror = apt_mirror(suite=release.name).rstrip("/")
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=dest.name + ".", dir=dest.parent))
    try:
        inrelease = _fetch(f"{mirror}/dists/{release.name}/InRelease")
        (tmp / "InRelease").write_bytes(inrelease)
        checked = subprocess.run(
            ["gpgv", "--keyring", str(DEBIAN_KEYRING), str(tmp / "InRelease")],
            capture_output=True,
            text=True,
            check=False,
        )
        if checked.returncode != 0:
            raise HarnessInstallError(f"{release.name} InRelease: bad signature: {checked.stderr}")
        index_name = "main/binary-amd64/Packages.xz"
        index = _fetch(f"{mirror}/dists/{release.name}/{index_name}")
        if hashlib.sha256(index).hexdigest() != _signed_sha256(inrelease, index_name):
            raise HarnessInstallError(f"{release.name} {index_name}: hash mismatch")
        packages: dict[str, dict[str, str]] = {}
        for block in lzma.decompress(index).decode().split("\n\n"):
            fields = dict(re.findall(r"^([A-Za-z0-9-]+): (.*)$", block, re.M))
            if fields.get("Package") in names:
                packages[fields["Package"]] = fields
        missing = sorted(set(names) - set(packages))
        if missing:
            raise HarnessInstallError(f"{release.name} has no {', '.join(missing)}")
        record = {}
        for name in names:
            fields = packages[name]
            data = _fetch(f"{mirror}/{fields['Filename']}")
            if hashlib.sha256(data).hexdigest() != fields["SHA256"]:
                raise HarnessInstallError(f"{fields['Filename']}: hash mismatch")
            (tmp / posixpath.basename(fields["Filename"])).write_bytes(data)
            record[name] = fields["Version"]
        (tmp / "InRelease").unlink()
        (tmp / COMPLETE).write_text(json.dumps(record, sort_keys=True) + "\n")
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return _settle(tmp, dest)


def debs(python: Path) -> list[Path]:
    return sorted(python.glob("*.deb"))


def wheels(wheelhouse: Path) -> list[Path]:
    return sorted(wheelhouse.glob("*.whl"))


def wheel_set_hash(wheelhouse: Path, python: Path | None = None, pip: Path | None = None) -> str:
    """Names and contents of the resolved wheels (and of the Python's packages and pip's
    wheel, if any)."""
    h = hashlib.sha256()
    for whl in wheels(wheelhouse) + (debs(python) if python else []) + (wheels(pip) if pip else []):
        h.update(whl.name.encode() + b"\0" + hashlib.sha256(whl.read_bytes()).digest())
    return h.hexdigest()


# ----------------------------------------------------------------------------- image


def spec_hash(spec: HarnessSpec, spec_dir: Path) -> str:
    """The spec as data, plus the content of the files it installs."""
    # What the runner and grader read (exit codes, transcript format, the harness's own
    # refused requests) changes nothing installed.
    installed = spec.model_dump_json(
        by_alias=True, exclude={"exit_codes", "transcript_format", "own_egress"}
    )
    h = hashlib.sha256(installed.encode())
    for dest, src in sorted(spec.install.files.items()):
        h.update(dest.encode() + b"\0" + (spec_dir / src).read_bytes())
    return h.hexdigest()


def harness_key(env_image_id: str, spec: HarnessSpec, spec_dir: Path, wheel_set: str) -> str:
    data = {
        "env": env_image_id,
        "spec": spec_hash(spec, spec_dir),
        "wheels": wheel_set,
        "version": LAYER_VERSION,
    }
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]


def needs_image(spec: HarnessSpec) -> bool:
    """Specs that install packages get an image of their own; others copy files per run."""
    return bool(spec.install.pip)


def ensure_harness_image(
    runtime: Runtime,
    spec: HarnessSpec,
    spec_dir: Path,
    env_image_id: str,
    *,
    wheelhouse_root: Path = WHEELHOUSE,
    force: bool = False,
) -> HarnessImage:
    """The harness image on top of ``env_image_id``, built unless one with the same key exists."""
    wheelhouse = harness_wheels(spec, wheelhouse_root)
    release = venv_python(spec, env_python(runtime, env_image_id)) if spec.install.pip else None
    python = download_python(release, wheelhouse_root) if release else None
    pip = pip_wheels(release, wheelhouse_root) if release else None
    key = harness_key(env_image_id, spec, spec_dir, wheel_set_hash(wheelhouse, python, pip))
    tag = f"{spec.name}-{key}"
    reference = f"{HARNESS_REPOSITORY}:{tag}"
    if not force and runtime.image_labels(reference).get(RECIPE_LABEL) == key:
        image = runtime.image_id(reference)
        if image is not None:
            return HarnessImage(reference, image, key, wheelhouse, built=False)
    container = runtime.create(
        ContainerSpec(
            image=env_image_id,
            command=["sleep", "infinity"],
            limits=BUILD_LIMITS,
            labels={"replay.role": "harness-build", "replay.harness": spec.name},
        ),
        "harness-" + uuid.uuid4().hex,
    )
    try:
        _install(container, spec, spec_dir, wheelhouse, release, python, pip)
        image = container.commit(
            HARNESS_REPOSITORY,
            tag,
            changes=[
                f"LABEL {KIND_LABEL}=harness {RECIPE_LABEL}={key} replay.harness={spec.name}"
                f" {ENV_IMAGE_LABEL}={env_image_id}",
                f"LABEL {RUN_LABEL}= {OWNER_LABEL}= {OWNER_START_LABEL}= {ROOT_LABEL}=",
            ],
        )
    finally:
        container.remove()
    return HarnessImage(reference, image, key, wheelhouse, built=True)


def env_python(runtime: Runtime, env_image_id: str) -> str | None:
    """The env image's ``python3`` version (``3.9``): from its platform label, else asked of
    the image itself; None if it has no ``python3``."""
    platform = image_platform(runtime.image_labels(env_image_id))
    if platform is not None and platform.get("python"):
        return platform["python"]
    container = runtime.create(
        ContainerSpec(
            image=env_image_id,
            command=["sleep", "infinity"],
            limits=BUILD_LIMITS,
            labels={"replay.role": "harness-build"},
        ),
        "harness-python-" + uuid.uuid4().hex,
    )
    try:
        done = container.exec(
            ["python3", "-c", "import sys; print('%d.%d' % sys.version_info[:2])"], timeout=60
        )
    finally:
        container.remove()
    return done.out.strip() if done.exit_code == 0 else None


def _install(
    container: Container,
    spec: HarnessSpec,
    spec_dir: Path,
    wheelhouse: Path,
    release: Release | None = None,
    python: Path | None = None,
    pip: Path | None = None,
) -> None:
    with tempfile.TemporaryDirectory(prefix="replay-harness-") as tmp:
        stage = Path(tmp) / posixpath.basename(STAGE)
        stage.mkdir()
        for whl in wheels(wheelhouse) + (wheels(pip) if pip else []):
            shutil.copyfile(whl, stage / whl.name)
        container.copy_in(stage, posixpath.dirname(STAGE))
        prefix = Path(tmp) / posixpath.basename(PREFIX)
        prefix.mkdir()
        for dest, src in spec.install.files.items():
            target = prefix / posixpath.relpath(dest, PREFIX)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(spec_dir / src, target)
        container.copy_in(prefix, posixpath.dirname(PREFIX))
        if python is not None:
            stage = Path(tmp) / posixpath.basename(DEBS_STAGE)
            stage.mkdir()
            for deb in debs(python):
                shutil.copyfile(deb, stage / deb.name)
            container.copy_in(stage, posixpath.dirname(DEBS_STAGE))
    wanted = release.python_version if release else PYTHON_VERSION
    want = tuple(int(part) for part in wanted.split("."))
    version = f"import sys; sys.exit(sys.version_info[:2] != {want})"
    steps: list[tuple[list[str], str]] = [
        (["python3", "-m", "venv", VENV], "creating the venv"),
    ]
    if release is not None:
        libs = f"{PYTHON_HOME}/{ARCH_LIBS}"
        loader = f"{libs}/ld-linux-x86-64.so.2"
        interpreter = f"{PYTHON_HOME}/usr/bin/python{wanted}"
        patchelf = [loader, "--library-path", libs, f"{PYTHON_HOME}/usr/bin/patchelf"]
        steps = [
            (
                [
                    "sh",
                    "-c",
                    f"mkdir -p {PYTHON_HOME} && for d in {DEBS_STAGE}/*.deb;"
                    f' do dpkg-deb -x "$d" {PYTHON_HOME} || exit 1; done',
                ],
                f"unpacking {release.name}'s Python",
            ),
            # Before trixie, the C library and some others are in /lib (Debian's /usr merge
            # was done on the installed system, not in the packages): put them with the rest.
            (
                [
                    "sh",
                    "-c",
                    f"cd {PYTHON_HOME} && if [ -d lib/x86_64-linux-gnu ] && [ ! -L lib ]; then"
                    f" cp -a lib/x86_64-linux-gnu/. {ARCH_LIBS}/ && rm -rf lib lib64; fi",
                ],
                f"merging {release.name}'s /lib into /usr/lib",
            ),
            # Two runs: patchelf 0.18 doing both at once leaves a binary that segfaults.
            (
                [*patchelf, "--force-rpath", "--set-rpath", libs, interpreter],
                "pointing the interpreter at its own libraries",
            ),
            (
                [*patchelf, "--set-interpreter", loader, interpreter],
                "pointing the interpreter at its own C library",
            ),
            (["rm", "-rf", DEBS_STAGE], "removing the packages"),
            ([interpreter, "-m", "venv", "--without-pip", VENV], "creating the venv"),
            (
                [
                    "sh",
                    "-c",
                    # pip runs from its own wheel to install itself.
                    f'set -- {STAGE}/pip-*.whl && {VENV}/bin/python "$1/pip" install --no-index'
                    f" --find-links {STAGE} --disable-pip-version-check --no-input -q pip",
                ],
                "putting pip into the venv",
            ),
        ]
    steps += [
        ([f"{VENV}/bin/python", "-c", version], f"checking the venv is Python {wanted}"),
        (
            [
                f"{VENV}/bin/python",
                "-m",
                "pip",
                "install",
                "--disable-pip-version-check",
                "--no-input",
                "--no-cache-dir",
                "--no-index",
                "--find-links",
                STAGE,
                *(["--ignore-requires-python"] if spec.install.ignore_requires_python else []),
                *spec.install.pip,
            ],
            "installing the wheels",
        ),
        (["rm", "-rf", STAGE], "removing the wheelhouse"),
    ]
    if release is not None:
        # Once the wheels are in: pip itself reads TOML with it (the venv's pip is not used
        # after this; the harness's packages run without it).
        steps.append(
            (
                [
                    "rm",
                    "-rf",
                    *(f"{PYTHON_HOME}/usr/lib/python{wanted}/{name}" for name in PYTHON_OMIT),
                ],
                f"leaving {', '.join(PYTHON_OMIT)} out of {release.name}'s Python",
            )
        )
    # No index, no config: only the wheelhouse is consulted, and there is no network anyway.
    env = {"PIP_CONFIG_FILE": "/dev/null", "PIP_NO_INDEX": "1"}
    for argv, what in steps:
        done = container.exec(argv, env=env, timeout=STEP_TIMEOUT)
        if done.exit_code != 0:
            raise HarnessInstallError(
                f"harness {spec.name}: {what} failed ({done.exit_code}): "
                f"{(done.out + done.err)[-3000:]}"
            )


# ----------------------------------------------------------------------------- audit


def wheel_record(whl: Path) -> dict[str, str]:
    """``path -> sha256=...`` of every hashed file a wheel's RECORD lists."""
    out: dict[str, str] = {}
    with zipfile.ZipFile(whl) as zf:
        name = next(n for n in zf.namelist() if n.endswith(".dist-info/RECORD"))
        for line in io.TextIOWrapper(zf.open(name), encoding="utf-8"):
            path, digest, _ = line.rstrip("\n").rsplit(",", 2)
            if digest and not path.startswith("../"):
                out[path] = digest
    return out


AUDIT = """
import base64, hashlib, json, sys, sysconfig
site = sysconfig.get_paths()["purelib"]
bad = []
for path, digest in json.load(open(sys.argv[1])).items():
    try:
        data = open(site + "/" + path, "rb").read()
    except OSError as exc:
        bad.append(f"{path}: {exc.strerror}")
        continue
    got = "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    if got != digest:
        bad.append(f"{path}: {got} != {digest}")
print(json.dumps(bad))
"""
AUDIT_DIR = "/tmp/replay-audit"


def audit_wheel(container: Container, whl: Path) -> list[str]:
    """Files ``whl`` installed in the harness venv that differ from its RECORD (or are gone)."""
    with tempfile.TemporaryDirectory(prefix="replay-audit-") as tmp:
        stage = Path(tmp) / posixpath.basename(AUDIT_DIR)
        stage.mkdir()
        (stage / "record.json").write_text(json.dumps(wheel_record(whl)))
        container.copy_in(stage, posixpath.dirname(AUDIT_DIR))
    done = container.exec([f"{VENV}/bin/python", "-c", AUDIT, f"{AUDIT_DIR}/record.json"])
    if done.exit_code != 0:
        raise HarnessInstallError(f"auditing {whl.name} failed: {done.err[-2000:]}")
    bad: list[str] = json.loads(done.out)
    return bad


def prefetch_builtin(root: Path = WHEELHOUSE) -> list[Path]:
    """Download the wheels of every built-in harness that installs from PyPI (setup step)."""
    from replay.harness.spec import builtin_names, load_harness

    found = []
    fallback = False
    for name in builtin_names():
        spec, _ = load_harness(name)
        if spec.install.pip:
            found.append(harness_wheels(spec, root))
        release = python_release(spec)
        if release is not None:
            found += [download_python(release, root), pip_wheels(release, root)]
        fallback = fallback or (release is None and bool(spec.install.pip))
    if fallback:
        # For a case whose env image's Python is not 3.11 (the bullseye ones).
        release = fallback_release()
        found += [download_python(release, root), pip_wheels(release, root)]
    return found
