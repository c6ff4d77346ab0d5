"""The network lock: from inside the agent's sandbox every escape fails, and none arrives.

The same attempts run from a container on Docker's default bridge reach the stand-ins: the
listeners and the attempts work, so their silence under the lock means something.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from replay.run.attacks.carry import INSIDE
from replay.runtime import Runtime, Sandbox, SandboxConfig
from replay.runtime.base import ContainerSpec, Limits
from tests.gateway.conftest import Gateway
from tests.runtime.conftest import Outside

ATTEMPTS = INSIDE / "attempts.py"
"""The escape attempts (the red-team corpus's ``direct-egress`` runs the same)."""


def targets(outside: Outside) -> str:
    tcp_host, tcp_port = outside.tcp[0]
    return json.dumps(
        {
            "tcp": outside.tcp,
            "udp": outside.udp,
            "dns": outside.dns,
            "http": [f"http://{tcp_host}:{tcp_port}/", "http://outside.example.invalid/"],
        }
    )


def run_attempts(box_exec: object, outside: Outside) -> dict[str, str]:
    result = box_exec(["python3", "/tmp/attempts.py", targets(outside)], timeout=120)  # type: ignore[operator]
    assert result.exit_code == 0, result.err
    return dict(json.loads(result.out))


def test_every_escape_fails_and_nothing_arrives(
    runtime: Runtime, base_image: str, demo_gateway: Gateway, outside: Outside, run_root: Path
) -> None:
    outside.clear()
    with Sandbox(runtime, demo_gateway.state, SandboxConfig(image=base_image)) as box:
        assert box.container is not None
        box.container.copy_in(ATTEMPTS, "/tmp")
        results = run_attempts(box.exec, outside)
        reached = {k: v for k, v in results.items() if not v.startswith("blocked")}
        # A datagram "sent" only means it left the socket; the listeners say whether it arrived.
        assert all(k.startswith("udp") for k in reached), reached
        assert "PermissionError" in results["raw socket"]
        assert len(results) == len(outside.tcp) + len(outside.udp) + 4 + 2

        # IPv6: no address but loopback's, no route anywhere.
        v6 = box.sh('python3 -c "import socket; print(socket.if_nameindex())"')
        assert v6.out.strip() == "[(1, 'lo')]"

        # A host outside the world, through the gateway (CONNECT): 403 and an event.
        denied = box.sh(
            "curl -sS -o /dev/null -w '%{http_code}' https://outside.example.invalid/x", timeout=30
        )
        # curl reports the refused CONNECT: "CONNECT tunnel failed, response 403".
        assert denied.exit_code != 0 and "response 403" in denied.err, denied.err
    assert outside.hits() == []
    events = demo_gateway.events()
    assert any(
        e["kind"] == "egress.denied"
        and e["data"]["host"] == "outside.example.invalid"
        and e["data"]["method"] == "CONNECT"
        for e in events
    ), events


def test_the_same_attempts_reach_the_outside_from_an_unlocked_container(
    runtime: Runtime, base_image: str, outside: Outside
) -> None:
    """The control: on Docker's bridge, the attempts do arrive (so the listeners work)."""
    outside.clear()
    from replay.runtime.docker import DockerRuntime

    assert isinstance(runtime, DockerRuntime)
    sdk = runtime.client.containers.run(
        base_image, ["sleep", "300"], detach=True, labels={"replay.test": "control"}
    )
    try:
        with ATTEMPTS.open("rb") as fh:
            import io
            import tarfile

            buf = io.BytesIO()
            with tarfile.open(fileobj=buf, mode="w") as tar:
                info = tar.gettarinfo(fileobj=fh, arcname="attempts.py")
                tar.addfile(info, fh)
            sdk.put_archive("/tmp", buf.getvalue())
        code, output = sdk.exec_run(["python3", "/tmp/attempts.py", targets(outside)])
        assert code == 0, output
        results = json.loads(output)
    finally:
        sdk.remove(force=True)
    bridge_host, bridge_port = outside.tcp[-1]
    assert results[f"tcp {bridge_host} {bridge_port}"].startswith("reached"), results
    listeners = {hit["listener"] for hit in outside.hits()}
    assert f"tcp:{bridge_host}:{bridge_port}" in listeners
    assert f"udp:{bridge_host}:{bridge_port}" in listeners
    # The namespace "internet" is reachable through the host's routing, DNS stand-in included.
    ns_host, ns_port = outside.tcp[0]
    assert f"tcp:{ns_host}:{ns_port}" in listeners, listeners
    assert f"udp:{outside.dns}:53" in listeners, listeners
    assert f"tcp:{outside.dns}:53" in listeners, listeners
    assert results["raw socket"].startswith("reached"), results
    # Docker's bridge has no IPv6 here; the host reaches the namespace's IPv6 listener.
    v6_host, v6_port = outside.tcp[1]
    with socket.create_connection((v6_host, v6_port), timeout=5) as s:
        s.sendall(b"host check\r\n")
        s.recv(10)
    assert f"tcp:[{v6_host}]:{v6_port}" in {hit["listener"] for hit in outside.hits()}


def test_sandbox_container_has_no_network_and_no_raw_capability(
    runtime: Runtime, base_image: str, run_root: Path
) -> None:
    container = runtime.create(
        ContainerSpec(image=base_image, command=["sleep", "60"], limits=Limits()), "lock-inspect"
    )
    try:
        from replay.runtime.docker import DockerContainer

        assert isinstance(container, DockerContainer)
        attrs = runtime.client.api.inspect_container(container.id)  # type: ignore[attr-defined]
        host = attrs["HostConfig"]
        assert host["NetworkMode"] == "none"
        assert "NET_RAW" not in host["CapAdd"] and host["CapDrop"] == ["ALL"]
        assert attrs["NetworkSettings"]["Networks"].keys() == {"none"}
    finally:
        container.remove()


@pytest.fixture(autouse=True)
def _no_leftovers(runtime: Runtime) -> object:
    yield None
    from replay.runtime.docker import DockerRuntime

    assert isinstance(runtime, DockerRuntime)
    left = runtime.client.containers.list(all=True, filters={"label": "replay.test=control"})
    for c in left:
        c.remove(force=True)
