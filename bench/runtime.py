"""Sandbox start-up: from starting a run to the agent's first command, against a bare docker run.

Subject: a locked sandbox (run directory, gateway bridge, ``--network none`` container, its
forwarder ready) runs ``true`` and is torn down. Baseline: ``docker run --rm --network none
IMAGE true`` of the same image. Both include creating, starting and removing a container.
"""

from __future__ import annotations

import atexit
import contextlib
import subprocess
import tempfile
from pathlib import Path

from bench.common import ROOT_DIR, Pair, suite


@suite
def runtime() -> list[Pair]:
    from replay.images.base import ensure_base_image
    from replay.runtime import Sandbox, SandboxConfig, get_runtime
    from replay.world import running_world

    rt = get_runtime("docker")
    image, _ = ensure_base_image(rt)
    stack = contextlib.ExitStack()
    atexit.register(stack.close)
    atexit.register(rt.close)
    tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-world-")))
    state = stack.enter_context(running_world(ROOT_DIR / "snapshots" / "demo", tmp))

    def sandbox_first_command() -> None:
        with Sandbox(rt, state, SandboxConfig(image=image)) as box:
            result = box.exec(["true"])
            assert result.ok, result.err

    def bare_docker_run() -> None:
        subprocess.run(
            ["docker", "run", "--rm", "--network", "none", image, "true"],
            check=True,
            capture_output=True,
        )

    return [
        Pair(
            "locked sandbox to first command vs bare docker run",
            sandbox_first_command,
            bare_docker_run,
            rounds=5,
            goal="< 2.0x (the issue's figure)",
        )
    ]
