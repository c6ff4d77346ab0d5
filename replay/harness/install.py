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
"""

from __future__ import annotations

import hashlib
import io
import json
import posixpath
import shutil
import subprocess
import sys
import tempfile
import uuid
import zipfile
from dataclasses import dataclass
from pathlib import Path

from replay.base.errors import ReplayError
from replay.harness.spec import PREFIX, HarnessSpec
from replay.images.base import KIND_LABEL, RECIPE_LABEL
from replay.runtime.base import (
    ENV_IMAGE_LABEL,
    OWNER_LABEL,
    OWNER_START_LABEL,
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
BUILD_LIMITS = Limits(cpus=None, memory=4 * 1024**3, pids=4096, wall_time=900)
STAGE = "/tmp/replay-wheelhouse"
COMPLETE = ".complete"
# 1: venv + wheels + files, committed on the env image.
LAYER_VERSION = 1


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


def wheelhouse_key(requirements: list[str], python_version: str = PYTHON_VERSION) -> str:
    data = {"requirements": requirements, "python": python_version, "platforms": PLATFORMS}
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]


def download_wheels(
    requirements: list[str], root: Path = WHEELHOUSE, python_version: str = PYTHON_VERSION
) -> Path:
    """The wheels for ``requirements`` and their dependencies, from today's index (cached)."""
    dest = (root / wheelhouse_key(requirements, python_version)).resolve()
    if (dest / COMPLETE).is_file():
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=dest.name + ".", dir=dest.parent))
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
        *(arg for p in PLATFORMS for arg in ("--platform", p)),
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
    try:
        tmp.rename(dest)  # atomic: a wheelhouse is there complete or not at all
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)
        if not (dest / COMPLETE).is_file():
            raise
        # Another process finished the same download first; its copy is as good.
    return dest


def wheels(wheelhouse: Path) -> list[Path]:
    return sorted(wheelhouse.glob("*.whl"))


def wheel_set_hash(wheelhouse: Path) -> str:
    """Names and contents of the resolved wheels."""
    h = hashlib.sha256()
    for whl in wheels(wheelhouse):
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
    wheelhouse = download_wheels(spec.install.pip, wheelhouse_root)
    key = harness_key(env_image_id, spec, spec_dir, wheel_set_hash(wheelhouse))
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
        _install(container, spec, spec_dir, wheelhouse)
        image = container.commit(
            HARNESS_REPOSITORY,
            tag,
            changes=[
                f"LABEL {KIND_LABEL}=harness {RECIPE_LABEL}={key} replay.harness={spec.name}"
                f" {ENV_IMAGE_LABEL}={env_image_id}",
                f"LABEL {RUN_LABEL}= {OWNER_LABEL}= {OWNER_START_LABEL}=",
            ],
        )
    finally:
        container.remove()
    return HarnessImage(reference, image, key, wheelhouse, built=True)


def _install(container: Container, spec: HarnessSpec, spec_dir: Path, wheelhouse: Path) -> None:
    with tempfile.TemporaryDirectory(prefix="replay-harness-") as tmp:
        stage = Path(tmp) / posixpath.basename(STAGE)
        stage.mkdir()
        for whl in wheels(wheelhouse):
            shutil.copyfile(whl, stage / whl.name)
        container.copy_in(stage, posixpath.dirname(STAGE))
        prefix = Path(tmp) / posixpath.basename(PREFIX)
        prefix.mkdir()
        for dest, src in spec.install.files.items():
            target = prefix / posixpath.relpath(dest, PREFIX)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(spec_dir / src, target)
        container.copy_in(prefix, posixpath.dirname(PREFIX))
    want = tuple(int(part) for part in PYTHON_VERSION.split("."))
    version = f"import sys; sys.exit(sys.version_info[:2] != {want})"
    steps = [
        (["python3", "-m", "venv", VENV], "creating the venv"),
        ([f"{VENV}/bin/python", "-c", version], f"checking the venv is Python {PYTHON_VERSION}"),
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
                *spec.install.pip,
            ],
            "installing the wheels",
        ),
        (["rm", "-rf", STAGE], "removing the wheelhouse"),
    ]
    # No index, no config: only the wheelhouse is consulted, and there is no network anyway.
    env = {"PIP_CONFIG_FILE": "/dev/null", "PIP_NO_INDEX": "1"}
    for argv, what in steps:
        done = container.exec(argv, env=env, timeout=600)
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
    for name in builtin_names():
        spec, _ = load_harness(name)
        if spec.install.pip:
            found.append(download_wheels(list(spec.install.pip), root))
    return found
