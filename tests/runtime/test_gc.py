"""A runner killed with SIGKILL mid-run leaves nothing that ``replay gc`` does not remove."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import uuid
from datetime import UTC, datetime
from pathlib import Path

import docker
import pytest
from typer.testing import CliRunner

from replay.cli import app as replay_app
from replay.cli.gc import app
from replay.results import Store
from replay.results.models import RunRow
from replay.runtime import Runtime
from replay.runtime.base import (
    ENV_IMAGE_LABEL,
    IMAGE_KIND_LABEL,
    ROOT_LABEL,
    RUN_LABEL,
    Owner,
    process_start,
    run_labels,
)
from replay.runtime.docker import DockerRuntime

ROOT = Path(__file__).resolve().parents[2]

RUNNER = """
import json, sys, time
from pathlib import Path
from replay.runtime import Sandbox, SandboxConfig, get_runtime
from replay.runtime.base import run_labels

image, ca, run_id = sys.argv[1:4]
rt = get_runtime("docker")
state = {"proxy": "http://127.0.0.1:9", "ca_bundle": ca, "env": {}}
box = Sandbox(rt, state, SandboxConfig(image=image, run_id=run_id)).start()
labels = run_labels(run_id)
rt.client.networks.create(f"replay-net-{run_id}", driver="bridge", internal=True, labels=labels)
rt.client.volumes.create(f"replay-vol-{run_id}", labels=labels)
print("started", box.container.id, box.dir, flush=True)
box.exec(["sleep", "600"])
"""


def resources(runtime: DockerRuntime, run_id: str) -> dict[str, list[str]]:
    flt = {"label": f"{RUN_LABEL}={run_id}"}
    return {
        "containers": [c.name for c in runtime.client.containers.list(all=True, filters=flt)],
        "networks": [n.name for n in runtime.client.networks.list(filters=flt)],
        "volumes": [v.name for v in runtime.client.volumes.list(filters=flt)],
    }


def test_gc_removes_what_a_killed_runner_left(
    runtime: Runtime, base_image: str, run_root: Path, tmp_path: Path
) -> None:
    assert isinstance(runtime, DockerRuntime)
    ca = tmp_path / "ca.pem"
    ca.write_text("not a real CA\n")
    runner = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(RUNNER), base_image, str(ca), "killed-run"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert runner.stdout is not None
    line = runner.stdout.readline().decode().split()
    assert line and line[0] == "started", line
    run_dir = Path(line[2])
    # Mid-run: the sandbox's command is still running when the runner dies.
    dead_start = process_start(runner.pid)
    os.kill(runner.pid, signal.SIGKILL)
    runner.wait()
    runner.stdout.close()
    left = resources(runtime, "killed-run")
    # The sandbox and the keeper of its bounded volumes (workspace, $HOME, /tmp).
    assert len(left["containers"]) == 2
    scratch = [v for v in left["volumes"] if v.startswith("replay-scratch-")]
    assert len(scratch) == 3
    assert left == {
        "containers": left["containers"],
        "networks": ["replay-net-killed-run"],
        "volumes": sorted(["replay-vol-killed-run", *scratch], key=left["volumes"].index),
    }
    assert run_dir.is_dir()

    # The killed run's row in the results store still says it is running.
    db = f"sqlite:///{tmp_path / 'results.db'}"
    store = Store.open(db)
    now = datetime.now(UTC)
    me = Owner.current()
    owners = {
        "killed-run": f"{runner.pid}@{me.host}#{dead_start}",
        "live-run": f"{me.pid}@{me.host}#{me.start}",  # this process: alive
        "elsewhere-run": f"{runner.pid}@another-host#{dead_start}",  # cannot be checked
    }
    for run_id, owner in owners.items():
        store.add_run(
            RunRow(id=run_id, case_id="c", harness="h", model="m", started_at=now, owner=owner)
        )

    # A live run (owned by this process) is kept by a plain gc.
    live = runtime.client.volumes.create("replay-vol-live-run", labels=run_labels("live-run"))
    try:
        # Other sessions may share this engine: look for our names, not for counts.
        result = CliRunner().invoke(replay_app, ["--db", db, "gc"])
        assert result.exit_code == 0, result.output
        # Its row is marked abandoned; a run gc did not collect is left as it was.
        status = {r.id: (r.status, r.stop_reason) for r in store.runs()}
        store.close()
        assert status["killed-run"][0] == "abandoned"
        assert "replay gc" in (status["killed-run"][1] or "")
        assert status["live-run"] == status["elsewhere-run"] == ("running", None)
        assert "marked 1 run(s) abandoned in the results store" in result.output
        assert resources(runtime, "killed-run") == {"containers": [], "networks": [], "volumes": []}
        assert not run_dir.exists()
        for name in (*left["containers"], "replay-net-killed-run", *left["volumes"]):
            assert f"  {name}\n" in result.output
        (kept,) = [ln for ln in result.output.splitlines() if ln.startswith("kept ")]
        assert "live-run" in kept.split(": ")[1].split(", ")
        assert resources(runtime, "live-run")["volumes"] == ["replay-vol-live-run"]

        # --all takes live runs too (restricted here to ours, so others' runs are untouched).
        result = CliRunner().invoke(app, ["--all", "--run", "live-run"])
        assert result.exit_code == 0, result.output
        assert resources(runtime, "live-run")["volumes"] == []
    finally:
        if resources(runtime, "live-run")["volumes"]:
            live.remove(force=True)


def test_next_sandbox_start_collects_a_dead_runs_leftovers(
    runtime: Runtime, base_image: str, run_root: Path
) -> None:
    """A run whose owner is gone (a pid that does not exist) is removed by the next start."""
    from replay.runtime import Sandbox, SandboxConfig
    from replay.runtime.base import ContainerSpec, Owner

    assert isinstance(runtime, DockerRuntime)
    dead = Owner(pid=2**22 + 1, host=Owner.current().host, start="1")
    ghost = DockerRuntime(runtime.client, owner=dead).create(
        ContainerSpec(image=base_image, command=["sleep", "600"]), "ghost-run"
    )
    assert resources(runtime, "ghost-run")["containers"]
    ca = run_root.parent / f"{run_root.name}-ca.pem"
    ca.write_text("x\n")
    try:
        state = {"proxy": "http://127.0.0.1:9", "ca_bundle": str(ca), "env": {}}
        with Sandbox(runtime, state, SandboxConfig(image=base_image)):
            assert resources(runtime, "ghost-run")["containers"] == []
    finally:
        ca.unlink()
        ghost.remove()


def test_a_gc_takes_only_what_dead_runners_of_its_own_run_root_left(
    runtime: Runtime, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Two run roots share the engine (two installations, or a batch given a root of its
    own): a sweep under one never takes the other's leftovers, as it never takes its run
    directories; a resource made before the label existed counts as of every root."""
    dead = Owner(pid=2**22 + 3, host=Owner.current().host, start="1")
    tag = uuid.uuid4().hex[:8]
    theirs, mine, older = (f"{tag}-{n}" for n in ("theirs", "mine", "older"))
    monkeypatch.setenv("REPLAY_RUN_ROOT", str(tmp_path / "other"))
    labels = {theirs: run_labels(theirs, dead)}
    monkeypatch.setenv("REPLAY_RUN_ROOT", str(tmp_path / "mine"))
    labels[mine] = run_labels(mine, dead)
    labels[older] = {k: v for k, v in run_labels(older, dead).items() if k != ROOT_LABEL}
    assert labels[theirs][ROOT_LABEL] == str(tmp_path / "other")
    volumes = {
        run: runtime.client.volumes.create(f"replay-vol-{run}", labels=labels[run])
        for run in labels
    }
    try:
        # Restricted to this test's runs: other sessions may share this engine.
        report = runtime.gc(runs=list(labels))
        assert sorted(report.volumes) == sorted(f"replay-vol-{r}" for r in (mine, older))
        assert resources(runtime, theirs)["volumes"] == [f"replay-vol-{theirs}"]
        # A sweep under their root takes them.
        monkeypatch.setenv("REPLAY_RUN_ROOT", str(tmp_path / "other"))
        assert runtime.gc(runs=[theirs]).volumes == [f"replay-vol-{theirs}"]
    finally:
        for volume in volumes.values():
            with contextlib.suppress(docker.errors.NotFound):
                volume.remove(force=True)


def test_a_removal_already_under_way_elsewhere_is_not_an_error() -> None:
    """Two collectors (or a run and a collector) may remove the same container at once."""
    import pytest
    import requests
    from docker.errors import APIError, NotFound

    from replay.runtime.docker import _quietly

    def failing(status: int) -> None:
        response = requests.Response()
        response.status_code = status
        cls = NotFound if status == 404 else APIError
        raise cls(f"status {status}", response=response)

    _quietly(lambda: failing(404))
    _quietly(lambda: failing(409))
    with pytest.raises(APIError):
        _quietly(lambda: failing(500))


def test_gc_images_removes_replaced_env_images_and_the_harnesses_built_on_them(
    runtime: Runtime, base_image: str
) -> None:
    """An env image a rebuild replaced, and harness images on it, go; current ones and images
    a container still uses stay (until it is gone); the base image is never touched."""
    assert isinstance(runtime, DockerRuntime)
    client = runtime.client
    key = uuid.uuid4().hex[:8]
    env_ref = f"replay-env:gc-{key}"

    def commit(source: str, repo: str, tag: str, labels: str) -> str:
        c = client.containers.create(source, command=["true"])
        try:
            image = c.commit(repo, tag, changes=[f"LABEL {labels}"])
        finally:
            c.remove()
        return str(image.id)

    def env() -> str:
        return commit(base_image, "replay-env", f"gc-{key}", f"{IMAGE_KIND_LABEL}=env")

    def harness(on: str, n: int) -> str:
        labels = f"{IMAGE_KIND_LABEL}=harness {ENV_IMAGE_LABEL}={on}"
        return commit(on, "replay-harness", f"gc-{key}-{n}", labels)

    old_env = env()
    old_harness, used_harness = harness(old_env, 1), harness(old_env, 2)
    new_env = env()  # the rebuild: env_ref now names new_env, old_env is untagged
    new_harness = harness(new_env, 3)
    user = client.containers.create(used_harness, command=["true"])
    try:
        before = {i.id for i in client.images.list(all=True)}
        assert {old_env, old_harness, used_harness, new_env, new_harness} <= before
        first = runtime.gc(images=True)
        left = {i.id for i in client.images.list(all=True)}
        assert old_harness not in left
        assert {used_harness, old_env} <= left  # in use, and the parent of what is in use
        assert f"replay-harness:gc-{key}-2" in first.kept_images
        assert f"replay-harness:gc-{key}-1" in first.images
        assert {new_env, new_harness} <= left and runtime.image_id(base_image) is not None
        assert client.images.get(env_ref).id == new_env
    finally:
        user.remove(force=True)
    second = CliRunner().invoke(app, ["--images"])
    assert second.exit_code == 0, second.output
    left = {i.id for i in client.images.list(all=True)}
    assert used_harness not in left and old_env not in left
    assert {new_env, new_harness} <= left
    assert "removed" in second.output and "images" in second.output
    for ref in (f"replay-harness:gc-{key}-3", env_ref):
        client.images.remove(ref)
