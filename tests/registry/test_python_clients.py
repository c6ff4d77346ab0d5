"""pip and uv, unmodified, against the registry recorded after T and served as of T."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from replay.base.manifest import RegistryIndex
from replay.registry import BlobStore, Registry, record_python, registry_app
from tests.registry.conftest import Recorded
from tests.registry.helpers import PythonUpstream, RequestLog, T, after, before
from tests.serving import serving

UV = shutil.which("uv", path=str(Path(sys.executable).parent))


def _env(tmp_path: Path) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PIP_", "UV_")) and k.lower() not in ("http_proxy", "https_proxy")
    }
    env.update(
        PIP_CONFIG_FILE=os.devnull,
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        UV_NO_CONFIG="1",
        UV_HTTP_RETRIES="0",  # a 500 is final here (the corrupt-blob test)
        NO_PROXY="*",
        HOME=str(tmp_path),
    )
    return env


def pip(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pip", *args],
        capture_output=True,
        text=True,
        env=_env(tmp_path),
        timeout=120,
        check=False,
    )


def uv(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    assert UV is not None, "uv is a test dependency: it must be installed in the venv"
    return subprocess.run(
        [UV, *args],
        capture_output=True,
        text=True,
        env=_env(tmp_path),
        timeout=120,
        check=False,
    )


def _installed(target: Path) -> set[str]:
    return {p.name.removesuffix(".dist-info") for p in target.glob("*.dist-info")}


def test_pip_installs_the_newest_version_at_t(served: str, tmp_path: Path) -> None:
    target = tmp_path / "t"
    done = pip(
        tmp_path,
        "install",
        "--no-cache-dir",
        "--index-url",
        f"{served}/simple/",
        "--target",
        str(target),
        "alpha",
    )
    assert done.returncode == 0, done.stderr
    # alpha 2.0 and beta 1.6 exist upstream (and in the recording) but came after T.
    assert _installed(target) == {"alpha-1.1", "beta-1.5"}
    assert (target / "alpha/__init__.py").read_text() == "VERSION = '1.1'\n"


def test_pip_does_not_see_versions_after_t(served: str, tmp_path: Path) -> None:
    listed = pip(tmp_path, "index", "versions", "--index-url", f"{served}/simple/", "alpha")
    assert listed.returncode == 0, listed.stderr
    assert "Available versions: 1.1, 1.0" in listed.stdout
    assert "2.0" not in listed.stdout
    done = pip(
        tmp_path,
        "install",
        "--no-cache-dir",
        "--index-url",
        f"{served}/simple/",
        "--target",
        str(tmp_path / "t"),
        "alpha==2.0",
    )
    assert done.returncode != 0
    assert "No matching distribution found for alpha==2.0" in done.stderr
    assert "from versions: 1.0, 1.1" in done.stderr


def test_pip_installs_a_pinned_older_version(served: str, tmp_path: Path) -> None:
    target = tmp_path / "t"
    done = pip(
        tmp_path,
        "install",
        "--no-cache-dir",
        "--index-url",
        f"{served}/simple/",
        "--target",
        str(target),
        "alpha==1.0",
        "GAMMA.pkg",
    )
    assert done.returncode == 0, done.stderr
    assert _installed(target) == {"alpha-1.0", "gamma_pkg-0.3"}


def test_uv_installs_the_newest_version_at_t(served: str, tmp_path: Path) -> None:
    target = tmp_path / "t"
    done = uv(
        tmp_path,
        "pip",
        "install",
        "--no-cache",
        "--index-url",
        f"{served}/simple/",
        "--python",
        sys.executable,
        "--target",
        str(target),
        "alpha",
    )
    assert done.returncode == 0, done.stderr
    assert _installed(target) == {"alpha-1.1", "beta-1.5"}
    later = uv(
        tmp_path,
        "pip",
        "install",
        "--no-cache",
        "--index-url",
        f"{served}/simple/",
        "--python",
        sys.executable,
        "--target",
        str(tmp_path / "t2"),
        "alpha==2.0",
    )
    assert later.returncode != 0
    assert "alpha==2.0" in later.stderr
    assert "no version" in later.stderr.lower()


def test_uv_reads_wheels_by_range_when_there_is_no_metadata_file(
    recorded: Recorded, tmp_path: Path
) -> None:
    # Without PEP 658 metadata, uv reads a wheel's METADATA with HTTP range requests.
    bare = [f.model_copy(update={"metadata_sha256": None}) for f in recorded.files]
    registry = recorded.registry()
    registry.python = type(registry.python)(bare, registry.at)
    logged = RequestLog(registry_app(registry))
    with serving(logged) as url:
        done = uv(
            tmp_path,
            "pip",
            "install",
            "--no-cache",
            "--index-url",
            f"{url}/simple/",
            "--python",
            sys.executable,
            "--target",
            str(tmp_path / "t"),
            "alpha",
        )
    assert done.returncode == 0, done.stderr
    assert _installed(tmp_path / "t") == {"alpha-1.1", "beta-1.5"}
    # uv asks HEAD for the size and Accept-Ranges, then reads the zip's directory by range.
    wheels = [(m, p.rsplit("/", 1)[-1], r) for m, p, r in logged.seen if p.endswith(".whl")]
    assert ("HEAD", "alpha-1.1-py3-none-any.whl", None) in wheels, logged.seen
    assert any(m == "GET" and r and r.startswith("bytes=") for m, _, r in wheels), logged.seen


@pytest.mark.parametrize("client", ["pip", "uv"])
def test_a_corrupt_blob_is_never_installed(recorded: Recorded, tmp_path: Path, client: str) -> None:
    blobs = type(recorded.blobs)(tmp_path / "blobs")
    shutil.copytree(recorded.blobs.root, blobs.root)
    beta = next(f for f in recorded.files if f.filename == "beta-1.5-py3-none-any.whl")
    path = blobs.path(beta.sha256)
    path.chmod(0o644)
    path.write_bytes(path.read_bytes()[:-10] + b"0123456789")
    registry = recorded.registry()
    registry.blobs = blobs
    with serving(registry_app(registry)) as url:
        index = f"{url}/simple/"
        target = str(tmp_path / "t")
        if client == "pip":
            done = pip(
                tmp_path,
                "install",
                "--no-cache-dir",
                "--retries",
                "0",
                "--index-url",
                index,
                "--target",
                target,
                "alpha",
            )
        else:
            done = uv(
                tmp_path,
                "pip",
                "install",
                "--no-cache",
                "--index-url",
                index,
                "--python",
                sys.executable,
                "--target",
                target,
                "alpha",
            )
    assert done.returncode != 0
    assert "500" in done.stderr
    assert not (tmp_path / "t" / "beta").exists()


TINY_BACKEND = '''"""A PEP 517 build backend in a few lines: it wheels the package named in NAME."""
import base64, hashlib, os, zipfile


def _hash(data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"sha256={digest},{len(data)}"


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    name, version = open("NAME").read().split()
    dist = name.replace("-", "_")
    info = f"{dist}-{version}.dist-info"
    files = {
        f"{dist}/__init__.py": b"BUILT_BY = 'tinyback'\\n",
        f"{info}/METADATA": f"Metadata-Version: 2.1\\nName: {name}\\nVersion: {version}\\n"
        .encode(),
        f"{info}/WHEEL": b"Wheel-Version: 1.0\\nGenerator: tinyback\\nRoot-Is-Purelib: true\\n"
        b"Tag: py3-none-any\\n",
    }
    record = "".join(f"{p},{_hash(d)}\\n" for p, d in files.items()) + f"{info}/RECORD,,\\n"
    filename = f"{dist}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, filename), "w") as zf:
        for path, data in files.items():
            zf.writestr(path, data)
        zf.writestr(f"{info}/RECORD", record)
    return filename


def build_sdist(sdist_directory, config_settings=None):
    raise NotImplementedError
'''


def test_pip_builds_an_sdist_only_dependency_from_what_was_recorded(tmp_path: Path) -> None:
    """The recorder's build requirements are enough for pip's isolated build, offline: app
    needs tinylib, which has only an sdist built by tinyback (a wheel, from the index)."""

    up = PythonUpstream()
    up.add("app", "1.0", before(days=2), requires=("tinylib",))
    up.add("tinyback", "1.0", before(days=30), code=TINY_BACKEND)
    up.add("tinyback", "2.0", after(days=1), code="raise RuntimeError('after T')\n")
    pyproject = '[build-system]\nrequires = ["tinyback>=1"]\nbuild-backend = "tinyback"\n'
    up.add_sdist(
        "tinylib", "0.3", before(days=10), {"pyproject.toml": pyproject, "NAME": "tinylib 0.3\n"}
    )
    blobs = BlobStore(tmp_path / "blobs")
    with serving(up.app()) as url:
        files = record_python(["app"], T, url + "/simple/", blobs)
    assert {f.filename for f in files} == {
        "app-1.0-py3-none-any.whl",
        "tinylib-0.3.tar.gz",
        "tinyback-1.0-py3-none-any.whl",
    }
    registry = Registry(RegistryIndex(schema=1, python=files), T, blobs)
    with serving(registry_app(registry)) as served:
        target = tmp_path / "t"
        done = pip(
            tmp_path,
            "install",
            "--no-cache-dir",
            "--index-url",
            f"{served}/simple/",
            "--target",
            str(target),
            "app",
        )
    assert done.returncode == 0, done.stdout + done.stderr
    assert _installed(target) == {"app-1.0", "tinylib-0.3"}
    assert (target / "tinylib/__init__.py").read_text() == "BUILT_BY = 'tinyback'\n"
