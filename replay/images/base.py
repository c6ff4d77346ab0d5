"""The base image, built without a container registry.

``debootstrap --variant=minbase`` makes a Debian root filesystem from the Debian mirror this
machine's apt already uses, with Python, git, curl, CA certificates, gh and libfaketime, and
the unprivileged user the harness runs as (``agent``, uid 1000, home ``/home/agent``); the
tree is then ``docker import``-ed with a few image settings. The image carries the hash of its
recipe as a label, and a build is skipped when an image with that hash exists.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

from replay.base.errors import ToolError
from replay.runtime.base import IMAGE_KIND_LABEL, Runtime

BASE_IMAGE = "replay-base:bookworm"
RECIPE_LABEL = "replay.recipe"
KIND_LABEL = IMAGE_KIND_LABEL
DEFAULT_MIRROR = "http://deb.debian.org/debian"
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
    version: int = 2
    mirror: str = field(default=DEFAULT_MIRROR, compare=False)
    """Where packages come from; not part of the hash (any mirror serves the same suite)."""

    def digest(self) -> str:
        data = asdict(self)
        data.pop("mirror")
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]


def apt_mirror(etc: Path = Path("/etc/apt"), suite: str = "bookworm") -> str:
    """The Debian mirror this machine's apt uses for ``suite`` (one-line or deb822 sources)."""
    override = os.environ.get("REPLAY_DEBIAN_MIRROR")
    if override:
        return override
    for uri, suites in _apt_sources(etc):
        if suite in suites and "security" not in uri:
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
    runtime: Runtime, recipe: BaseRecipe | None = None, *, force: bool = False
) -> tuple[str, bool]:
    """The base image's ID, built unless one from the same recipe exists; ``(id, built)``."""
    recipe = recipe or BaseRecipe(mirror=apt_mirror())
    digest = recipe.digest()
    if not force and runtime.image_labels(BASE_IMAGE).get(RECIPE_LABEL) == digest:
        image = runtime.image_id(BASE_IMAGE)
        assert image is not None
        return image, False
    return build_base_image(recipe), True


def build_base_image(recipe: BaseRecipe, tag: str = BASE_IMAGE) -> str:
    """debootstrap, trim, and import; returns the new image's ID."""
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
        changes = [
            *recipe.changes,
            f"LABEL {KIND_LABEL}=base {RECIPE_LABEL}={recipe.digest()}",
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
