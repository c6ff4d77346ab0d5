"""Base images of another release and with a toolchain, built here (each a few minutes, cached).

bullseye's image has the interpreter of its time (Python 3.9) and pip without any network; a
JavaScript case on ``replay-base:bookworm-node`` installs its npm dependency through the
gateway from the snapshot's frozen npm registry: the version current at T, and nothing later.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from replay.base import gitrepo
from replay.base.blobs import BlobStore
from replay.base.case import Case, load_case
from replay.base.formats import dump_json
from replay.base.manifest import NpmVersion, RegistryIndex
from replay.images import build_env_image, ensure_base_image, ensure_case_base_image
from replay.images.base import PLATFORM_LABEL, RECIPE_LABEL, BaseRecipe, toolchain_digest
from replay.images.env import _base_id
from replay.runtime import ContainerSpec, Runtime, Sandbox, SandboxConfig
from replay.runtime.base import SandboxError
from replay.snapshot import load_snapshot
from replay.snapshot.build import build_snapshot
from tests import worlds
from tests.gateway.conftest import Gateway, start_gateway, stop_gateway
from tests.registry.helpers import standard_npm


def run(runtime: Runtime, image: str, script: str) -> str:
    """A command in the image with no network at all (``ContainerSpec``'s only network)."""
    c = runtime.create(ContainerSpec(image=image, command=["sleep", "300"]), "release-check")
    try:
        r = c.exec(["sh", "-c", script])
        assert r.ok, r.out + r.err
        return r.out
    finally:
        c.remove()


# ----------------------------------------------------------------------------- bullseye


@pytest.fixture(scope="module")
def bullseye(runtime: Runtime) -> str:
    image, _ = ensure_base_image(runtime, "bullseye")
    return image


def test_bullseye_has_python_3_9_and_pip_offline(runtime: Runtime, bullseye: str) -> None:
    labels = runtime.image_labels("replay-base:bullseye")
    assert labels[RECIPE_LABEL] == BaseRecipe.for_release("bullseye").digest()
    assert labels[PLATFORM_LABEL] == "release=bullseye;python=3.9;toolchains="
    assert labels["replay.image"] == "base"
    out = run(
        runtime,
        bullseye,
        "python3 --version && python --version && python3 -m pip --version"
        " && ldd --version | head -1 && id -u agent && gh --version | head -1",
    ).splitlines()
    assert out[0].startswith("Python 3.9.") and out[1] == out[0]
    assert out[2].startswith("pip ") and out[2].endswith("(python 3.9)")
    assert out[3].endswith(" 2.31")  # glibc
    # The harness's user; gh, which bullseye does not package, grafted from bookworm's image
    # with its own C library (it needs glibc 2.34).
    assert out[4] == "1000" and out[5].startswith("gh version 2.")
    again, built = ensure_base_image(runtime, "bullseye")
    assert (again, built) == (bullseye, False)


# ----------------------------------------------------------------------------- node

PACKAGE_JSON = {
    "name": "tiny-js",
    "version": "1.0.0",
    "private": True,
    "dependencies": {"widget": "^1.0.0"},
}


def _js_repository(dest: Path) -> Path:
    """A one-commit JavaScript project, committed before T, as a bundle."""
    scratch = dest / "repo"
    gitrepo.init(scratch)
    (scratch / "package.json").write_text(json.dumps(PACKAGE_JSON, indent=2) + "\n")
    (scratch / "index.js").write_text("module.exports = require('widget');\n")
    gitrepo.run(scratch, "add", "-A")
    when = {"GIT_AUTHOR_DATE": "2026-03-01T10:00:00Z", "GIT_COMMITTER_DATE": "2026-03-01T10:00:00Z"}
    gitrepo.run(scratch, "commit", "-q", "-m", "A tiny JS project", env=when)
    bundle = dest / "sources" / "repo.bundle"
    gitrepo.bundle_create(scratch, bundle, "main", "main")
    return bundle


@pytest.fixture(scope="module")
def js_world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Case, Gateway]]:
    """A snapshot whose registry holds widget and @acme/util on both sides of T; a case on it
    declaring ``toolchains: [node]``; its world running with the test's own blob store."""
    root = tmp_path_factory.mktemp("js")
    blobs = BlobStore(root / "blobs")
    src = root / "sources"
    src.mkdir()
    _js_repository(root)
    world = worlds.world()
    world["repository"] = {"name": "acme/tiny", "default_branch": "main", "bundle": "repo.bundle"}
    world["github"]["pulls"] = []  # the pull names commits of the Python history
    (src / "world.yaml").write_text(yaml.safe_dump(world, sort_keys=False))
    entries = [
        NpmVersion(
            package=v.name,
            version=v.version,
            publish_time=v.published,
            manifest=v.manifest,
            tarball_sha256=blobs.put_bytes(v.tarball),
        )
        for v in standard_npm()
    ]
    index = RegistryIndex(schema=1, npm=entries)
    (src / "registry").mkdir()
    (src / "registry" / "index.json").write_text(
        dump_json(index.model_dump(mode="json", by_alias=True))
    )
    snap = root / "snap"
    build_snapshot(src, snap)
    base = load_snapshot(snap).manifest.repositories[0].base_commit
    case_file = worlds.write_case(root / "case", snap, base)
    data = yaml.safe_load(case_file.read_text())
    data["id"] = "tiny-js"
    data["environment"] = {
        "base_image": "replay-base:bookworm-node",
        "toolchains": ["node"],
        "setup": ["npm install --no-audit --no-fund"],
    }
    case_file.write_text(yaml.safe_dump(data, sort_keys=False))
    (root / "gw-run").mkdir()
    gw = start_gateway(root / "gw-run", str(snap), env={"REPLAY_BLOBS": str(blobs.root)})
    try:
        yield load_case(case_file), gw
    finally:
        stop_gateway(gw)


@pytest.fixture(scope="module")
def node_image(runtime: Runtime, base_image: str, js_world: tuple[Case, Gateway]) -> str:
    """``replay-base:bookworm-node``, built (as a layer on bookworm) where the case needs it."""
    case, _ = js_world
    return ensure_case_base_image(runtime, case.environment)


def test_the_node_image_is_bookworm_plus_nodejs_and_npm(
    runtime: Runtime, base_image: str, node_image: str
) -> None:
    labels = runtime.image_labels("replay-base:bookworm-node")
    assert labels[RECIPE_LABEL] == toolchain_digest(base_image, ["node"])
    assert labels[PLATFORM_LABEL] == "release=bookworm;python=3.11;toolchains=node"
    out = run(runtime, node_image, "node --version && npm --version && python --version")
    node, npm, python = out.splitlines()
    assert node.startswith("v18.") and npm.startswith("9.") and python.startswith("Python 3.11")
    # The plain image every Python case uses stays without node.
    assert run(runtime, base_image, "command -v node npm || echo none").strip() == "none"
    assert runtime.image_labels("replay-base:bookworm")[RECIPE_LABEL] == BaseRecipe().digest()


def test_npm_install_in_the_case_sandbox_gets_the_version_current_at_t(
    runtime: Runtime, node_image: str, js_world: tuple[Case, Gateway], run_root: Path
) -> None:
    case, gw = js_world
    env = build_env_image(case, runtime, gw.state, force=True)
    wd = case.environment.workdir
    versions = run(
        runtime,
        env.id,
        f"cd {wd} && node -p \"require('widget/package.json').version\""
        " && node -p \"require('@acme/util/package.json').version\""
        " && node -p \"require('./package-lock.json').packages['node_modules/widget'].resolved\"",
    ).split()
    # widget 2.0.0 and @acme/util 0.2.0 came after T; 1.2.0-beta.1 is a prerelease.
    assert versions == ["1.1.0", "0.1.1", "https://registry.npmjs.org/widget/-/widget-1.1.0.tgz"]
    assert [e for e in gw.events() if e["kind"] == "egress.denied"] == []

    # A version published after T is not there to install, asked for by name.
    config = SandboxConfig(image=env.id, confined=False, mount_system_bundle=False)
    with Sandbox(runtime, gw.state, config) as box:
        later = box.sh("npm install --no-audit --no-fund widget@2.0.0", workdir=wd, timeout=300)
        latest = box.sh("npm view widget version", workdir=wd, timeout=300)
    assert not later.ok
    assert "ETARGET" in later.out + later.err and "No matching version" in later.out + later.err
    assert latest.ok and latest.out.strip() == "1.1.0"


def test_a_base_image_without_the_case_toolchain_is_refused(
    runtime: Runtime, base_image: str, js_world: tuple[Case, Gateway]
) -> None:
    case, _ = js_world
    # Not a replay-base tag, so only the image's labels tell what it carries.
    plain = case.environment.model_copy(update={"base_image": base_image})
    bare = case.model_copy(update={"environment": plain})
    with pytest.raises(SandboxError) as err:
        _base_id(bare, runtime)
    assert (
        f"base image {base_image!r} lacks the toolchain(s) node the case declares: build"
        " replay-base:bookworm-node with `replay image base --release bookworm --toolchain node`"
    ) in str(err.value)
    with pytest.raises(SandboxError, match="lacks the toolchain"):
        ensure_case_base_image(runtime, plain)


def test_debian_packages_a_case_names_are_a_layer_on_its_release(
    runtime: Runtime, base_image: str
) -> None:
    """``environment.packages`` (what ``case create`` found a build lacking, in Debian's index
    of package contents): installed with apt on the release's image, named by their hash in
    the tag, and not in the plain image."""
    from replay.base.case import Environment
    from replay.images.base import base_tag

    tag = base_tag("bookworm", (), ["pkgconf"])
    assert tag == "replay-base:bookworm-deb.ca27ad8b"
    image = ensure_case_base_image(runtime, Environment(base_image=tag, packages=["pkgconf"]))
    labels = runtime.image_labels(tag)
    assert labels[RECIPE_LABEL] == toolchain_digest(base_image, [], ["pkgconf"])
    assert labels[PLATFORM_LABEL] == "release=bookworm;python=3.11;toolchains="
    assert run(runtime, image, "pkg-config --version").strip().startswith("1.8.")
    assert run(runtime, base_image, "command -v pkg-config || echo none").strip() == "none"
    # Built once: asked again, the same image.
    assert (
        ensure_case_base_image(runtime, Environment(base_image=tag, packages=["pkgconf"])) == image
    )
