"""The red team's world: one real gateway, one locked sandbox per demo case, listeners of our own.

Everything here is what the harness really runs: ``replay world up`` on the demo snapshot
with the scripted people of a case and a model route to :class:`~tests.redteam.listeners.Upstream`
(on 127.0.0.1, holding the runner's "real" keys, made up per session), and
:class:`replay.runtime.Sandbox` on each case's environment image (built as the runner builds
it, through a world of its own). The attacks run inside the sandbox (``probe.py``,
``seek.py``: the red-team corpus's own scripts, :data:`replay.run.attacks.carry.INSIDE`); what
the world recorded is read through the runner's control socket, never through the proxy.
Shared by the whole package: one world, one sandbox per case.

``$REDTEAM_GATEWAY_PYTHON`` runs the attacked world's gateway (only that one) with another
interpreter, e.g. one that imports an older checkout: how to see each attack succeed against
a gateway that has the hole.
"""

from __future__ import annotations

import json
import os
import socket
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from replay.base.case import load_case
from replay.images.env import EnvImage, build_env_image
from replay.run.attacks.carry import INSIDE
from replay.runtime import Runtime, Sandbox, SandboxConfig
from replay.world import running_world
from tests.gateway import conftest as gateway_conftest
from tests.gateway.conftest import DEMO, ROOT, Gateway, start_gateway, stop_gateway
from tests.redteam.listeners import Trap, Upstream
from tests.runtime.conftest import base_image, outside, runtime

__all__ = ["base_image", "outside", "runtime"]

HERE = Path(__file__).resolve().parent
CARET = ROOT / "cases" / "demo-caret-zero" / "case.yaml"
HUMANS = ROOT / "cases" / "demo-build-metadata-sort" / "case.yaml"
"""The demo case with a scripted person: its world plays Dana's reply."""
CASES = {"demo-caret-zero": CARET, "demo-build-metadata-sort": HUMANS}

PLACEHOLDER_GH = "ghp_replayPlaceholderToken000000000000000"


@dataclass(frozen=True)
class Keys:
    """The runner's "real" model keys: made up per session, so finding one means a leak."""

    openai: str
    anthropic: str

    @property
    def all(self) -> list[str]:
        return [self.openai, self.anthropic]


@dataclass
class World:
    """The running world as the runner sees it: its gateway, and its log read off the socket."""

    gateway: Gateway

    @property
    def state(self) -> dict[str, Any]:
        return self.gateway.state

    def events(self) -> list[dict[str, Any]]:
        return self.gateway.events()

    def last_seq(self) -> int:
        events = self.events()
        return int(events[-1]["seq"]) if events else 0

    def since(self, seq: int) -> list[dict[str, Any]]:
        return [e for e in self.events() if int(e["seq"]) > seq]

    def control_raw(self, method: str, target: str) -> tuple[int, bytes]:
        """A request straight to the control socket, the path sent byte for byte."""
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(20)
            s.connect(self.state["control"])
            s.sendall(
                f"{method} {target} HTTP/1.1\r\nHost: control\r\nContent-Length: 0\r\n"
                "Connection: close\r\n\r\n".encode()
            )
            data = b""
            while chunk := s.recv(65536):
                data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        return int(head.split()[1]), body


def denied(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Events that record a refusal (``egress.denied`` and any other ``*.denied`` kind)."""
    return [e for e in events if str(e["kind"]).endswith("denied")]


def refused(result: dict[str, Any]) -> bool:
    """The proxy said no: a 4xx to the CONNECT or to the request itself, from the gateway
    (an answer from our upstream or trap is never a refusal)."""
    if "UPSTREAM REACHED" in result["body"] or result["body"].strip() == "TRAP":
        return False
    connect: int | None = result.get("connect")
    if connect is not None and connect != 200:
        return 400 <= connect < 500
    status: int | None = result.get("status")
    return status is not None and 400 <= status < 500


@dataclass
class Outcome:
    """One attempt from inside the sandbox, and what it left on the world and our listeners."""

    result: dict[str, Any]
    events: list[dict[str, Any]]
    """Events the world recorded during the attempt."""
    upstream_requests: list[dict[str, Any]]
    """Requests our model upstream received during the attempt."""
    upstream_connections: int
    """Connections our model upstream accepted during the attempt."""

    @property
    def denials(self) -> list[dict[str, Any]]:
        return denied(self.events)

    def describe(self) -> str:
        r = self.result
        sent = [(q["method"], q["path"]) for q in self.upstream_requests]
        events = [(e["kind"], e["data"].get("reason")) for e in self.events]
        return (
            f"connect={r.get('connect')} status={r.get('status')} error={r.get('error')} "
            f"body={r['body'][:200]!r} upstream={sent} events={events}"
        )


class Agent:
    """What runs inside one locked sandbox: hand-made requests and the search for answers."""

    def __init__(self, box: Sandbox, case_id: str, workdir: str) -> None:
        self.box = box
        self.case_id = case_id
        self.workdir = workdir
        assert box.container is not None
        box.container.copy_in(INSIDE / "probe.py", "/tmp/redteam")
        box.container.copy_in(INSIDE / "seek.py", "/tmp/redteam")

    def sh(self, script: str, timeout: float = 120) -> Any:
        return self.box.sh(script, timeout=timeout)

    def uid(self) -> int:
        return int(self.sh("id -u").out.strip())

    def _put(self, name: str, data: Any) -> str:
        assert self.box.container is not None
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / name
            path.write_text(json.dumps(data))
            path.chmod(0o644)
            self.box.container.copy_in(path, "/tmp/redteam")
        return f"/tmp/redteam/{name}"

    def probe(
        self, requests: list[dict[str, Any]], needles: list[str], timeout: float = 300
    ) -> dict[str, dict[str, Any]]:
        # Needles travel hex-encoded, so that a search of the sandbox does not find its own.
        hexed = [n.encode().hex() for n in needles]
        spec = self._put(
            f"spec-{uuid.uuid4().hex[:8]}.json", {"requests": requests, "needles": hexed}
        )
        done = self.box.exec(["python3", "/tmp/redteam/probe.py", spec], timeout=timeout)
        assert done.exit_code == 0, done.err[-3000:]
        return dict(json.loads(done.out))

    def attempt(
        self,
        world: World,
        upstream: Upstream,
        request: dict[str, Any],
        needles: list[str],
        timeout: float = 300,
    ) -> Outcome:
        """One request, alone, with what the world and the upstream saw of it."""
        before = world.last_seq()
        connections, count = upstream.snapshot()
        result = self.probe([{**request, "id": "attempt"}], needles, timeout)["attempt"]
        after_connections, _ = upstream.snapshot()
        return Outcome(
            result,
            world.since(before),
            upstream.since(count),
            after_connections - connections,
        )

    def seek(self, needles: list[str], *roots: str, timeout: float = 900) -> dict[str, Any]:
        path = self._put(
            f"needles-{uuid.uuid4().hex[:8]}.json", [n.encode().hex() for n in needles]
        )
        done = self.box.exec(["python3", "/tmp/redteam/seek.py", path, *roots], timeout=timeout)
        assert done.exit_code == 0, done.err[-3000:]
        return dict(json.loads(done.out))


@pytest.fixture(scope="package")
def keys() -> Keys:
    tag = uuid.uuid4().hex
    return Keys(openai=f"sk-redteam-REAL-{tag}", anthropic=f"sk-ant-redteam-REAL-{tag[::-1]}")


@pytest.fixture(scope="package")
def upstream() -> Iterator[Upstream]:
    server = Upstream().start()
    yield server
    server.stop()


@pytest.fixture(scope="package")
def trap() -> Iterator[Trap]:
    listener = Trap().start()
    yield listener
    listener.stop()


@pytest.fixture(scope="package")
def world(
    tmp_path_factory: pytest.TempPathFactory, upstream: Upstream, keys: Keys
) -> Iterator[World]:
    """``replay world up`` as a run starts it: the case's people, the model route to ours."""
    with pytest.MonkeyPatch.context() as mp:
        other = os.environ.get("REDTEAM_GATEWAY_PYTHON")
        if other:
            mp.setattr(gateway_conftest, "GATEWAY_PYTHON", Path(other))
        gw = _start_world(tmp_path_factory, upstream, keys)
    try:
        yield World(gw)
    finally:
        stop_gateway(gw)


def _start_world(
    tmp_path_factory: pytest.TempPathFactory, upstream: Upstream, keys: Keys
) -> Gateway:
    return start_gateway(
        tmp_path_factory.mktemp("redteam-world"),
        str(DEMO),
        "--case",
        str(HUMANS),
        "--model-upstream",
        upstream.url,
        env={"REPLAY_OPENAI_API_KEY": keys.openai, "REPLAY_ANTHROPIC_API_KEY": keys.anthropic},
    )


@pytest.fixture(scope="package")
def env_images(
    runtime: Runtime, base_image: str, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, EnvImage]:
    """Each case's environment image, built (or reused) exactly as ``replay run`` does."""
    images: dict[str, EnvImage] = {}
    for case_id, path in CASES.items():
        tmp = tmp_path_factory.mktemp(f"env-world-{case_id}")
        case = load_case(path)
        with running_world(case.snapshot, tmp) as gateway:
            images[case_id] = build_env_image(case, runtime, gateway)
    return images


@pytest.fixture(scope="package")
def agents(
    runtime: Runtime, world: World, env_images: dict[str, EnvImage]
) -> Iterator[dict[str, Agent]]:
    """One locked sandbox per case, on the world, configured as a run configures it."""
    started: list[Sandbox] = []
    out: dict[str, Agent] = {}
    try:
        for case_id, path in CASES.items():
            case = load_case(path)
            config = SandboxConfig(
                image=env_images[case_id].id,
                workdir=case.environment.workdir,
                labels={"replay.base.case": case.id},
            )
            box = Sandbox(runtime, world.state, config).start()
            started.append(box)
            out[case_id] = Agent(box, case_id, case.environment.workdir)
        yield out
    finally:
        for box in started:
            box.close()


@pytest.fixture(scope="package")
def agent(agents: dict[str, Agent]) -> Agent:
    """The sandbox most attacks run from (demo-caret-zero's)."""
    return agents["demo-caret-zero"]
