"""The base image: debootstrapped from this machine's Debian mirror, imported, cached by recipe."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

import replay.images
import replay.runtime
from replay.cli.image import app
from replay.images.base import (
    BASE_IMAGE,
    PACKAGES,
    RECIPE_LABEL,
    BaseRecipe,
    apt_mirror,
    ensure_base_image,
)
from replay.runtime import ContainerSpec, Runtime


def test_mirror_comes_from_apt_sources_in_both_formats(tmp_path: Path) -> None:
    etc = tmp_path / "apt"
    (etc / "sources.list.d").mkdir(parents=True)
    (etc / "sources.list.d" / "debian.sources").write_text(
        "Types: deb\n# a comment\nURIs: http://mirror.example/debian\n"
        "Suites: bookworm bookworm-updates\nComponents: main\n\n"
        "Types: deb\nURIs: http://mirror.example/debian-security\n"
        "Suites: bookworm-security\nComponents: main\n"
    )
    assert apt_mirror(etc) == "http://mirror.example/debian"
    (etc / "sources.list.d" / "debian.sources").unlink()
    (etc / "sources.list").write_text("deb [arch=amd64] http://old.example/debian bookworm main\n")
    assert apt_mirror(etc) == "http://old.example/debian"
    assert apt_mirror(tmp_path / "none") == "http://deb.debian.org/debian"


def test_recipe_hash_ignores_the_mirror_but_not_the_packages() -> None:
    a = BaseRecipe(mirror="http://a.example/debian")
    b = BaseRecipe(mirror="http://b.example/debian")
    assert a.digest() == b.digest()
    assert BaseRecipe(packages=(*PACKAGES, "socat")).digest() != a.digest()


def test_base_image_has_the_tools_and_settings(runtime: Runtime, base_image: str) -> None:
    labels = runtime.image_labels(BASE_IMAGE)
    assert labels[RECIPE_LABEL] == BaseRecipe().digest()
    assert labels["replay.image"] == "base"
    c = runtime.create(ContainerSpec(image=base_image, command=["sleep", "120"]), "base-check")
    try:
        r = c.exec(
            [
                "sh",
                "-c",
                "python --version && git --version && curl --version | head -1 && gh --version"
                " && test -e /usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1"
                " && test ! -e /usr/lib/python3.11/EXTERNALLY-MANAGED && pwd && echo $LANG"
                " && ls /var/lib/apt/lists | wc -l",
            ]
        )
        assert r.ok, r.err
        lines = r.out.splitlines()
        assert lines[0].startswith("Python 3.11")
        assert lines[-3:] == ["/workspace", "C.UTF-8", "0"]
        # The unprivileged user the harness runs as, with a home of its own.
        who = c.exec(["sh", "-c", "id agent && stat -c '%u %g %a' /home/agent"])
        assert who.out.split("\n")[:2] == [
            "uid=1000(agent) gid=1000(agent) groups=1000(agent)",
            "1000 1000 755",
        ], who.out
    finally:
        c.remove()


def test_a_second_build_is_skipped_and_the_cli_says_so(runtime: Runtime, base_image: str) -> None:
    image, built = ensure_base_image(runtime)
    assert (image, built) == (base_image, False)
    result = CliRunner().invoke(app, ["base"])
    assert result.exit_code == 0, result.output
    assert f"up to date: {BASE_IMAGE} {base_image}" in result.output


def test_env_cli_names_a_missing_base_image(tmp_path: Path) -> None:
    """``replay image env`` refuses a case whose base image does not exist, naming the fix."""
    case = Path(__file__).resolve().parents[2] / "cases" / "demo-caret-zero" / "case.yaml"
    text = case.read_text().replace("replay-base:bookworm", "replay-base:missing")
    (tmp_path / "case").mkdir()
    bad = tmp_path / "case" / "case.yaml"
    bad.write_text(text.replace("../../snapshots/demo", str(case.parents[2] / "snapshots/demo")))
    for name in ("gold.patch", "hidden_tests.patch"):
        (tmp_path / "case" / name).write_bytes((case.parent / name).read_bytes())
    state = tmp_path / "world.json"
    state.write_text(json.dumps({"proxy": "http://127.0.0.1:9", "ca_bundle": "/x", "env": {}}))
    result = CliRunner().invoke(app, ["env", str(bad), "--gateway", str(state)])
    assert result.exit_code != 0
    assert "no base image 'replay-base:missing' here: run `replay image base`" in str(
        result.exception
    )


def test_exports_are_complete() -> None:
    for module in (replay.runtime, replay.images):
        public = {n for n in vars(module) if not n.startswith("_") and n[0].isupper()}
        public -= {"annotations"}
        for name in module.__all__:
            assert hasattr(module, name), name
        assert public <= set(module.__all__), public - set(module.__all__)
