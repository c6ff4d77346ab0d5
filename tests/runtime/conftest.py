"""The real Docker engine, the base image (built once, cached), a gateway, and "the outside"."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from replay.images.base import ensure_base_image
from replay.runtime import Runtime, Sandbox, SandboxConfig, get_runtime
from replay.runtime.base import ContainerSpec, Limits
from replay.runtime.docker import DockerRuntime
from tests.gateway.conftest import DEMO, Gateway, start_gateway, stop_gateway

HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="session")
def runtime() -> Iterator[Runtime]:
    rt = get_runtime("docker")
    yield rt
    rt.close()


@pytest.fixture(scope="session")
def base_image(runtime: Runtime) -> str:
    """``replay image base``'s image: built on first use (a few minutes), reused after."""
    image, _ = ensure_base_image(runtime)
    return image


@pytest.fixture(scope="module")
def demo_gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    gw = start_gateway(tmp_path_factory.mktemp("gw"), str(DEMO))
    yield gw
    stop_gateway(gw)


@pytest.fixture()
def run_root(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Run directories of this test in a root of their own (short: sockets live there).

    Every sandbox removes its own directory; the test asserts that by finding the root empty.
    """
    root = Path("/tmp") / f"rr-{uuid.uuid4().hex[:8]}"
    monkeypatch.setenv("REPLAY_RUN_ROOT", str(root))
    yield root
    left = sorted(p.name for p in root.iterdir()) if root.exists() else []
    shutil.rmtree(root, ignore_errors=True)
    assert left == [], f"run directories left behind: {left}"


@dataclass
class Outside:
    """Listeners standing in for the outside, and where they log what reaches them."""

    log: Path
    tcp: list[tuple[str, int]] = field(default_factory=list)
    udp: list[tuple[str, int]] = field(default_factory=list)
    dns: str = ""
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def hits(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines()]

    def clear(self) -> None:
        self.log.unlink(missing_ok=True)


def _sh(*cmd: str) -> None:
    subprocess.run(cmd, check=True, capture_output=True)


def _start(outside: Outside, prefix: list[str], addrs: list[str]) -> None:
    proc = subprocess.Popen(
        [*prefix, sys.executable, str(HERE / "listeners.py"), str(outside.log), *addrs],
        stdout=subprocess.PIPE,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if line.strip() != b"ready":
        proc.kill()
        raise RuntimeError(f"listeners did not start: {addrs}")
    outside.processes.append(proc)


def _docker0() -> str:
    """The host's address on Docker's default bridge (what containers there see as gateway)."""
    out = subprocess.run(
        ["ip", "-o", "-4", "addr", "show", "dev", "docker0"],
        check=True,
        capture_output=True,
        text=True,
    )
    return out.stdout.split()[3].split("/")[0]


@pytest.fixture(scope="module")
def outside(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Outside]:
    """A namespace playing the internet (198.18.x, fd42::/64 on a veth pair) and the host.

    Listeners: TCP and UDP on the host's loopback and Docker bridge address, TCP and UDP on
    the namespace's IPv4 and IPv6 addresses, and a DNS stand-in (UDP and TCP 53) there.
    Everything stays on this machine, and is removed at the end.
    """
    tag = uuid.uuid4().hex[:6]
    ns, host_if, ns_if = f"replay-inet-{tag}", f"rph{tag}", f"rpn{tag}"
    octet = int(tag[:2], 16)
    host_ip, ns_ip = f"198.18.{octet}.1", f"198.18.{octet}.2"
    host_ip6, ns_ip6 = f"fd42:{tag[:4]}::1", f"fd42:{tag[:4]}::2"
    out = Outside(tmp_path_factory.mktemp("outside") / "hits.jsonl", dns=ns_ip)
    _sh("ip", "netns", "add", ns)
    try:
        _sh("ip", "link", "add", host_if, "type", "veth", "peer", "name", ns_if)
        _sh("ip", "link", "set", ns_if, "netns", ns)
        _sh("ip", "addr", "add", f"{host_ip}/30", "dev", host_if)
        _sh("ip", "-6", "addr", "add", f"{host_ip6}/64", "dev", host_if, "nodad")
        _sh("ip", "link", "set", host_if, "up")
        inns = ["ip", "netns", "exec", ns]
        _sh(*inns, "ip", "addr", "add", f"{ns_ip}/30", "dev", ns_if)
        _sh(*inns, "ip", "-6", "addr", "add", f"{ns_ip6}/64", "dev", ns_if, "nodad")
        _sh(*inns, "ip", "link", "set", ns_if, "up")
        _sh(*inns, "ip", "link", "set", "lo", "up")
        _sh(*inns, "ip", "route", "add", "default", "via", host_ip)
        _sh(*inns, "ip", "-6", "route", "add", "default", "via", host_ip6)
        port = 18000 + octet
        out.tcp = [(ns_ip, port), (ns_ip6, port), (ns_ip, 443)]
        out.udp = [(ns_ip, port), (ns_ip6, port)]
        ns_addrs = [f"tcp:{ns_ip}:{port}", f"tcp:[{ns_ip6}]:{port}", f"tcp:{ns_ip}:443"]
        ns_addrs += [f"udp:{ns_ip}:{port}", f"udp:[{ns_ip6}]:{port}"]
        ns_addrs += [f"udp:{ns_ip}:53", f"tcp:{ns_ip}:53"]
        _start(out, inns, ns_addrs)
        bridge = _docker0()
        host_port = port + 1000
        out.tcp += [("127.0.0.1", host_port), (bridge, host_port)]
        out.udp += [("127.0.0.1", host_port), (bridge, host_port)]
        host_addrs = [f"tcp:127.0.0.1:{host_port}", f"tcp:{bridge}:{host_port}"]
        host_addrs += [f"udp:127.0.0.1:{host_port}", f"udp:{bridge}:{host_port}"]
        _start(out, [], host_addrs)
        time.sleep(0.2)
        yield out
    finally:
        for proc in out.processes:
            proc.kill()
            proc.wait()
            assert proc.stdout is not None
            proc.stdout.close()
        subprocess.run(["ip", "link", "del", host_if], capture_output=True, check=False)
        subprocess.run(["ip", "netns", "del", ns], capture_output=True, check=False)


# ---------------------------------------------------------------- confined sandboxes

MiB = 1024**2
SMALL = Limits(disk=16 * MiB, inodes=2_000, scratch=8 * MiB, scratch_inodes=1_000)

REPO = """
set -e
mkdir -p /workspace/pkg && cd /workspace
git init -q -b main .
printf 'def answer():\\n    return 41\\n' > pkg/core.py
printf 'secret build note\\n' > pkg/notes.txt
git add -A
git -c user.name=t -c user.email=t@example.invalid commit -q -m base
git rev-parse HEAD
"""


@pytest.fixture(scope="session")
def workspace_image(runtime: Runtime, base_image: str) -> Iterator[tuple[str, str]]:
    """An image with a one-commit repository in /workspace (owned by root, like env images)."""
    assert isinstance(runtime, DockerRuntime)
    c = runtime.create(ContainerSpec(image=base_image, command=["sleep", "300"]), "ws-image")
    try:
        made = c.exec(["sh", "-c", REPO])
        assert made.exit_code == 0, made.err
        tag = uuid.uuid4().hex[:10]
        image = c.commit("replay-test-ws", tag, changes=["WORKDIR /workspace"])
    finally:
        c.remove()
    yield image, made.out.strip()
    runtime.client.images.remove(image, force=True)


@pytest.fixture()
def gateway(tmp_path: Path) -> dict[str, Any]:
    ca = tmp_path / "ca.pem"
    ca.write_text("not a real CA\n")
    return {"proxy": "http://127.0.0.1:9", "ca_bundle": str(ca), "env": {}}


def sandbox(runtime: Runtime, gateway: dict[str, Any], image: str, **kw: Any) -> Sandbox:
    config = SandboxConfig(image=image, workdir="/workspace", collect_garbage=False, **kw)
    return Sandbox(runtime, gateway, config)
