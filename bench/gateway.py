"""The gateway's cost: a fake through mitmproxy (TLS intercepted) vs the same fake served
directly, one client (p50) and 16 (throughput), and pip installing from the frozen registry
through it vs a plain static server of the same files."""

from __future__ import annotations

import asyncio
import functools
import http.server
import os
import shutil
import ssl
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

from bench.common import (
    ROOT_DIR,
    Measured,
    Pair,
    at_most,
    overhead_at_most,
    sized,
    suite,
    throughput_at_least,
)
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


# ------------------------------------------------------------------ 16 clients, keep-alive
#
# Hand-written on asyncio streams: at 16 clients on a small machine an httpx client spends
# more CPU per request than the servers under test, and the ratio would measure the client.
# Through the gateway each client opens its CONNECT tunnel and TLS session once, as a
# keep-alive HTTP client (gh, octokit, requests) does, then sends its requests back to back.

Tunnel = tuple[str, ssl.SSLContext]


async def _exchange(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, request: bytes
) -> None:
    writer.write(request)
    head = await reader.readuntil(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    body = await reader.readexactly(length)
    if head[9:12] != b"200":
        raise RuntimeError(f"{head[:12]!r}: {body[:300]!r}")


async def _connect(
    port: int, tunnel: Tunnel | None
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    if tunnel is not None:
        host, context = tunnel
        writer.write(f"CONNECT {host}:443 HTTP/1.1\r\nhost: {host}:443\r\n\r\n".encode())
        head = await reader.readuntil(b"\r\n\r\n")
        if head[9:12] != b"200":
            raise RuntimeError(f"CONNECT {host}: {head!r}")
        await writer.start_tls(context, server_hostname=host)
    return reader, writer


async def _load(
    port: int, tunnel: Tunnel | None, request: bytes, total: int, clients: int
) -> float:
    connections = [await _connect(port, tunnel) for _ in range(clients)]
    for reader, writer in connections:  # warm: tunnels, TLS, the server's caches
        await _exchange(reader, writer, request)
    shared = iter(range(total))  # the clients split ``total`` between them

    async def client(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        for _ in shared:
            await _exchange(reader, writer, request)

    start = time.perf_counter()
    await asyncio.gather(*(client(r, w) for r, w in connections))
    elapsed = time.perf_counter() - start
    for _, writer in connections:
        writer.close()
    return elapsed / total


def seconds_per_request(
    port: int, request: bytes, total: int, clients: int = 16, tunnel: Tunnel | None = None
) -> float:
    """Wall seconds per request (1 / throughput) with ``clients`` concurrent connections."""
    return asyncio.run(_load(port, tunnel, request, total, clients))


def _cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process so far (Linux's /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _sixteen_clients(
    name: str,
    gateway: tuple[int, Tunnel, int],
    direct: tuple[int, int],
    request: bytes,
    rounds: int = 7,
    total: int = 300,
) -> list[Measured]:
    """Interleaved rounds of the same load through the gateway and direct: wall seconds per
    request (the goal's figure; the spread of the per-round throughput ratios in the row's
    name), and each server's CPU seconds per request (what the throughput would be with a
    core free for each: on a busy machine the wall figures move with the neighbours)."""
    port, tunnel, gateway_pid = gateway
    direct_port, direct_pid = direct
    wall: dict[str, list[float]] = {"gateway": [], "direct": []}
    cpu: dict[str, list[float]] = {"gateway": [], "direct": []}
    rounds, total = sized(rounds, 1), sized(total, 32)
    for _ in range(rounds):
        for side, pid, run in (
            (
                "gateway",
                gateway_pid,
                lambda: seconds_per_request(port, request, total, tunnel=tunnel),
            ),
            ("direct", direct_pid, lambda: seconds_per_request(direct_port, request, total)),
        ):
            before = _cpu_seconds(pid)
            wall[side].append(run())
            cpu[side].append((_cpu_seconds(pid) - before) / total)
    ratios = sorted(d / g for g, d in zip(wall["gateway"], wall["direct"], strict=True))
    return [
        Measured(
            f"{name} ({ratios[0]:.2f}-{ratios[-1]:.2f})",
            statistics.median(wall["gateway"]),
            statistics.median(wall["direct"]),
            goal=throughput_at_least(0.65),
        ),
        Measured(
            "  the same, server CPU per request",
            statistics.median(cpu["gateway"]),
            statistics.median(cpu["direct"]),
        ),
    ]


# ------------------------------------------------------------------ mitmproxy's own floor
#
# The same one-client exchange with nothing of ours in it: stock mitmdump whose addon
# answers the request itself, against a bare ASGI app answering directly. What mitmproxy
# alone adds on this machine, beside what the gateway adds (its goal is +1 ms).

_ANSWER = b'{"ok":true,"url":"https://bench.slack.com/","user":"bench"}'

# Nothing leaves the machine: mitmdump connects upstream lazily (only for a request no addon
# answered: none here), and this addon refuses any upstream connection all the same.
_ADDON = f"""
from mitmproxy import http

def request(flow):
    flow.response = http.Response.make(
        200, {_ANSWER!r}, {{"content-type": "application/json; charset=utf-8"}}
    )

def server_connect(data):
    data.server.error = "the benchmark connects nowhere"
"""

_APP = f"""
import uvicorn

async def app(scope, receive, send):
    if scope["type"] != "http":
        return
    while (await receive()).get("more_body"):
        pass
    await send({{"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"application/json; charset=utf-8")]}})
    await send({{"type": "http.response.body", "body": {_ANSWER!r}}})

uvicorn.run(app, host="127.0.0.1", port=int(__import__("sys").argv[1]), log_level="warning")
"""


def _bare_mitmproxy() -> Pair:
    from bench.servers import GATEWAY_PYTHON

    tmp = Path(tempfile.mkdtemp(prefix="replay-bench-mitm-"))
    (tmp / "answer.py").write_text(_ADDON)
    (tmp / "app.py").write_text(_APP)
    proxy_port, app_port = free_port(), free_port()
    mitmdump = GATEWAY_PYTHON.parent / "mitmdump"
    serve_in_subprocess(
        [
            str(mitmdump),
            "-q",
            "--listen-host",
            "127.0.0.1",
            "--listen-port",
            str(proxy_port),
            "--set",
            f"confdir={tmp / 'conf'}",
            "--set",
            "connection_strategy=lazy",
            "--set",
            "upstream_cert=false",
            "-s",
            str(tmp / "answer.py"),
        ],
        proxy_port,
    )
    serve_in_subprocess([sys.executable, str(tmp / "app.py"), str(app_port)], app_port)
    context = ssl.create_default_context(cafile=str(tmp / "conf" / "mitmproxy-ca-cert.pem"))
    through = httpx.Client(proxy=f"http://127.0.0.1:{proxy_port}", verify=context)
    direct = httpx.Client(base_url=f"http://127.0.0.1:{app_port}", headers={"host": "slack.com"})

    def via_mitmproxy() -> None:
        assert through.post("https://slack.com/api/auth.test").content == _ANSWER

    def served_directly() -> None:
        assert direct.post("/api/auth.test").content == _ANSWER

    return Pair(
        "  for reference: stock mitmdump answering vs a bare app",
        via_mitmproxy,
        served_directly,
        rounds=100,
        goal="mitmproxy's floor",
    )


@suite
def gateway() -> list[Pair | Measured]:
    from replay.base.blobs import BlobStore
    from replay.snapshot import load_snapshot

    state = start_gateway(str(DEMO))
    env = state["env"]
    context = ssl.create_default_context(cafile=state["ca_bundle"])
    through = httpx.Client(proxy=state["proxy"], verify=context)
    snapshot = load_snapshot(DEMO)
    direct_port = free_port()
    direct_server = serve_in_subprocess(
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
            "--service",
            "github",
        ],
        direct_port,
    )
    direct = httpx.Client(base_url=f"http://127.0.0.1:{direct_port}", headers={"host": "slack.com"})
    token = {"authorization": f"Bearer {env['SLACK_BOT_TOKEN']}"}
    repo = (
        "GET /repos/acme/semverkit HTTP/1.1\r\nhost: api.github.com\r\n"
        f"authorization: Bearer {env['GITHUB_TOKEN']}\r\naccept: application/json\r\n\r\n"
    ).encode()
    proxy_port = int(state["proxy"].rsplit(":", 1)[1])
    sixteen = _sixteen_clients(
        "repo read, 16 clients: gateway (TLS) vs direct",
        (proxy_port, ("api.github.com", context), int(state["pid"])),
        (direct_port, direct_server.pid),
        repo,
    )

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
            goal=overhead_at_most(1.0),
        ),
        _bare_mitmproxy(),
        *sixteen,
        Pair(
            "pip install pytest: frozen registry via gateway vs static files",
            lambda: _pip(work / "a", env=pip_env),
            lambda: _pip(work / "b", "--no-index", "--find-links", static),
            rounds=3,
            goal=at_most(1.1),  # 1.0x before issue 19: must not regress
        ),
    ]
