"""A demo case's environment image: the repository at its base commit, dependencies as of T."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from packaging.version import Version
from typer.testing import CliRunner

from replay.base.case import load_case
from replay.cli.image import app
from replay.images import build_env_image
from replay.images.base import RECIPE_LABEL
from replay.runtime import ContainerSpec, Runtime
from replay.snapshot import load_snapshot
from tests.gateway.conftest import Gateway

ROOT = Path(__file__).resolve().parents[2]
CASE = ROOT / "cases" / "demo-caret-zero" / "case.yaml"


@pytest.fixture(scope="module")
def built(
    runtime: Runtime, base_image: str, demo_gateway: Gateway
) -> Iterator[tuple[str, Gateway]]:
    image = build_env_image(load_case(CASE), runtime, demo_gateway.state, force=True)
    assert image.built and image.id.startswith("sha256:")
    yield image.id, demo_gateway


def run(runtime: Runtime, image: str, script: str) -> str:
    """A command in the image, with no network at all (nothing from the world is needed)."""
    c = runtime.create(ContainerSpec(image=image, command=["sleep", "300"]), "env-image-check")
    try:
        r = c.exec(["sh", "-c", script])
        assert r.ok, r.err
        return r.out
    finally:
        c.remove()


def newest_at_t(snapshot_dir: Path) -> dict[str, Version]:
    snap = load_snapshot(snapshot_dir)
    newest: dict[str, Version] = {}
    for f in snap.registry.python:
        if f.upload_time <= snap.at:
            v = Version(f.version)
            newest[f.project] = max(v, newest.get(f.project, v))
    return newest


def test_dependencies_resolve_to_the_versions_current_at_t(
    runtime: Runtime, built: tuple[str, Gateway]
) -> None:
    image, gateway = built
    case = load_case(CASE)
    installed = {
        d["name"].lower(): Version(d["version"])
        for d in json.loads(run(runtime, image, "python -m pip list --format=json"))
    }
    at_t = newest_at_t(case.snapshot)
    # The case pins pytest; everything it pulls in is unpinned, so pip takes the newest it is
    # shown, and the gateway's registry shows nothing uploaded after T.
    assert installed["pytest"] == Version("8.3.5")
    for name in ("pluggy", "iniconfig", "packaging"):
        assert installed[name] == at_t[name], (name, installed[name], at_t[name])
    assert installed["semverkit"]
    # pip's requests went to pypi.org and files.pythonhosted.org, through the gateway.
    denied = [e for e in gateway.events() if e["kind"] == "egress.denied"]
    assert denied == []


def test_the_repository_is_at_the_base_commit_with_no_future(
    runtime: Runtime, built: tuple[str, Gateway]
) -> None:
    image, _ = built
    case = load_case(CASE)
    wd = case.environment.workdir
    out = run(
        runtime,
        image,
        f"cd {wd} && git rev-parse HEAD && git for-each-ref --format='%(refname)'"
        " && git remote | wc -l && git reflog --all | wc -l"
        " && ls .git | grep -c -e ORIG_HEAD -e FETCH_HEAD -e logs;"
        " python -c 'import semverkit; print(semverkit.__file__)'",
    ).split()
    assert out[0] == case.repository.base_commit
    assert out[1:-4] == ["refs/heads/main"]
    assert out[-4:-1] == ["0", "0", "0"]
    assert out[-1].startswith(wd)


def test_the_image_trusts_the_gateway_ca_and_keeps_no_run_settings(
    runtime: Runtime, built: tuple[str, Gateway]
) -> None:
    image, gateway = built
    ca = Path(gateway.ca).read_text().strip()
    bundle = run(runtime, image, "cat /etc/ssl/certs/ca-certificates.crt")
    assert ca in bundle
    env = run(runtime, image, "env")
    assert "PROXY" not in env.upper() and "ghp_" not in env


def test_a_rebuild_with_the_same_recipe_is_skipped(
    runtime: Runtime, built: tuple[str, Gateway]
) -> None:
    image, gateway = built
    again = build_env_image(load_case(CASE), runtime, gateway.state)
    assert not again.built and again.id == image
    assert runtime.image_labels(again.reference)[RECIPE_LABEL] == again.recipe


def test_the_cli_reports_the_cached_image_without_starting_a_world(
    runtime: Runtime, built: tuple[str, Gateway]
) -> None:
    image, _ = built
    result = CliRunner().invoke(app, ["env", str(CASE)])
    assert result.exit_code == 0, result.output
    assert f"up to date: replay-env:demo-caret-zero {image}" in result.output


def test_what_the_setup_leaves_in_the_tree_is_not_in_the_agents_diff(
    runtime: Runtime, built: tuple[str, Gateway]
) -> None:
    """Issue 35: a case made from a repository whose setup writes an egg-info git does not
    ignore (``setup.py develop``) had it in every run's diff, an idle run's too, and the
    grading listed it as put back on each run. The setup's own files are named in the
    image's ``.git/info/exclude``; what the agent changes or adds is still in its diff (the
    runner's ``git add -A`` then ``git diff --cached``), whatever the file is called."""
    _, gateway = built
    case = load_case(CASE)
    setup = [
        *case.environment.setup,
        "mkdir -p src/made.egg-info && echo m > src/made.egg-info/PKG-INFO",
        "echo g > 'gen[1]*.txt' && echo t > 'trailing '",
    ]
    environment = case.environment.model_copy(update={"setup": setup})
    made = case.model_copy(update={"id": "env-image-setup-files", "environment": environment})
    image = build_env_image(made, runtime, gateway.state, force=True)
    try:
        base = case.repository.base_commit
        diff = f"git -c safe.directory='*' add -A && git diff --cached --name-only {base}"
        assert run(runtime, image.id, f"test -f src/made.egg-info/PKG-INFO && {diff}") == ""
        agent = (
            f"echo x >> README.md && echo n > agent.txt && echo n > 'src/made.egg-info/x' && {diff}"
        )
        assert run(runtime, image.id, agent).split() == ["README.md", "agent.txt"]
    finally:
        subprocess.run(["docker", "rmi", "-f", image.reference], check=False, capture_output=True)


def test_a_setup_that_runs_out_of_time_says_where_it_was() -> None:
    """Found by the seventh held-out corpus (python-lsp-server 2019): the setup command ran
    out of its time building 2019's sdists on Python 3.9, and the stop said only "exited
    None". It says the time limit and the last step pip's output shows."""
    from types import SimpleNamespace

    from replay.images.env import SetupError, _check

    output = (
        "Obtaining file:///workspace/repo\nCollecting matplotlib\n"
        "  Downloading matplotlib-3.1.2.tar.gz (40.9 MB)\n"
        "Building wheels for collected packages: numpy\n"
        "  Building wheel for numpy (setup.py): started\n"
    )
    result = SimpleNamespace(
        ok=False, limit=None, timed_out=True, exit_code=None, out=output, err=""
    )
    with pytest.raises(SetupError) as caught:
        _check(result, "python -m pip install -e .[test]", 900)
    said = str(caught.value).splitlines()[0]
    assert "did not finish in 900 s, its time limit" in said, said
    assert "the last step pip's output shows: Building wheel for numpy" in said, said
    assert "exited None" not in said
