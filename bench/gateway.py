"""The gateway's cost: a fake through mitmproxy (TLS intercepted) vs the same fake served
directly, and pip installing from the frozen registry through it vs a plain static server
of the same files."""

from __future__ import annotations

import functools
import http.server
import shutil
import ssl
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import httpx

from bench.common import ROOT_DIR, Pair, suite
from bench.servers import free_port, serve_in_subprocess, start_gateway

DEMO = ROOT_DIR / "snapshots" / "demo"
PACKAGES = ["pytest==8.3.5"]


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


def _static_server(files: Path) -> int:
    handler = functools.partial(_QuietHandler, directory=str(files))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return int(server.server_address[1])


def _pip(target: Path, *args: str, env: dict[str, str] | None = None) -> None:
    shutil.rmtree(target, ignore_errors=True)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--disable-pip-version-check",
            "--no-cache-dir",
            "--target",
            str(target),
            *args,
            *PACKAGES,
        ],
        check=True,
        env=env,
        capture_output=True,
    )


@suite
def gateway() -> list[Pair]:
    from replay.base.blobs import BlobStore
    from replay.snapshot import load_snapshot

    state = start_gateway(str(DEMO))
    env = state["env"]
    context = ssl.create_default_context(cafile=state["ca_bundle"])
    through = httpx.Client(proxy=state["proxy"], verify=context)
    snapshot = load_snapshot(DEMO)
    direct_port = free_port()
    serve_in_subprocess(
        [
            sys.executable,
            "-m",
            "replay",
            "fakes",
            "serve",
            str(DEMO),
            "--port",
            str(direct_port),
            "--service",
            "slack",
        ],
        direct_port,
    )
    direct = httpx.Client(base_url=f"http://127.0.0.1:{direct_port}", headers={"host": "slack.com"})
    token = {"authorization": f"Bearer {env['SLACK_BOT_TOKEN']}"}

    def via_gateway() -> None:
        assert through.post("https://slack.com/api/auth.test", headers=token).json()["ok"]

    def served_directly() -> None:
        assert direct.post("/api/auth.test", headers=token).json()["ok"]

    # The same wheel files, flat, behind python's own static server (pip --find-links).
    files = Path(tempfile.mkdtemp(prefix="replay-bench-files-"))
    blobs = BlobStore()
    for f in snapshot.registry.python:
        shutil.copy(blobs.verified_path(f.sha256), files / f.filename)
    static = f"http://127.0.0.1:{_static_server(files)}/"
    work = Path(tempfile.mkdtemp(prefix="replay-bench-pip-"))
    pip_env = {"PATH": "/usr/bin:/bin", "HOME": str(work), **env}

    return [
        Pair(
            "slack auth.test: through the gateway vs direct",
            via_gateway,
            served_directly,
            rounds=100,
        ),
        Pair(
            "pip install pytest: frozen registry via gateway vs static files",
            lambda: _pip(work / "a", env=pip_env),
            lambda: _pip(work / "b", "--no-index", "--find-links", static),
            rounds=3,
        ),
    ]
