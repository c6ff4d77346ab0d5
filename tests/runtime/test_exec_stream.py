"""How an exec's output is read off the connection the engine upgraded.

A Docker exec answers ``101 UPGRADED`` and then writes the command's output on the same
connection. http.client reads the headers through a buffered reader, which takes in what has
arrived with them; when the command is quick or the machine busy, that is all of its output
(docker-py issue 3332: ``exec_run`` answers ``b''`` with exit code 0). A calibration's gold run
was graded ``model_fail`` with an empty diff this way. And the client's read timeout (300 s)
ended the reading of a command that printed nothing for longer, its exit code not yet known.

Here an engine of the test's own on a Unix socket writes the answer exactly so (the headers
and the frames in one write; a pause longer than the client's timeout), and the real engine
is read by a client slowed before it reads the headers.
"""

from __future__ import annotations

import http.client
import json
import socketserver
import struct
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import docker
import pytest

from replay.runtime import Runtime
from replay.runtime.base import ContainerSpec
from replay.runtime.docker import DockerContainer

API = "1.41"
CID = "c" * 64
HEAD = (
    b"HTTP/1.1 101 UPGRADED\r\n"
    b"Content-Type: application/vnd.docker.raw-stream\r\n"
    b"Connection: Upgrade\r\nUpgrade: tcp\r\n\r\n"
)


def frame(stream: int, data: bytes) -> bytes:
    return struct.pack(">BxxxL", stream, len(data)) + data


class Engine(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    """The few routes an exec calls, its ``start`` answered by ``upgrade(write)``."""

    daemon_threads = True

    def __init__(self, path: Path, upgrade: Callable[[Callable[[bytes], None]], None]) -> None:
        self.upgrade = upgrade
        self.running = threading.Event()
        super().__init__(str(path), Handler)


class Handler(socketserver.StreamRequestHandler):
    server: Engine

    def handle(self) -> None:
        while True:
            line = self.rfile.readline()
            if not line:
                return
            method, path, _ = line.decode().split(" ", 2)
            length = 0
            while (header := self.rfile.readline()) not in (b"\r\n", b""):
                name, _, value = header.decode().partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            self.rfile.read(length)
            route = path.split("?")[0].removeprefix(f"/v{API}")
            if method == "POST" and route == f"/containers/{CID}/exec":
                self.answer(201, {"Id": "e1"})
            elif method == "POST" and route == "/exec/e1/start":
                self.server.running.set()
                try:
                    self.server.upgrade(self.wfile.write)
                finally:
                    self.server.running.clear()
                return  # the upgraded connection ends with the stream
            elif method == "GET" and route == "/exec/e1/json":
                running = self.server.running.is_set()
                self.answer(200, {"Running": running, "ExitCode": None if running else 0})
            elif method == "GET" and route == f"/containers/{CID}/json":
                self.answer(200, {"Id": CID, "State": {"Pid": 0, "OOMKilled": False}})
            else:
                self.answer(404, {"message": f"page not found: {method} {route}"})

    def answer(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.wfile.write(
            f"HTTP/1.1 {status} X\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(data)}\r\n\r\n".encode()
            + data
        )


def exec_against(
    upgrade: Callable[[Callable[[bytes], None]], None], timeout: int = 60
) -> tuple[int | None, bytes, bytes]:
    path = Path("/tmp") / f"engine-{uuid.uuid4().hex[:8]}.sock"
    engine = Engine(path, upgrade)
    threading.Thread(target=engine.serve_forever, daemon=True).start()
    client = docker.DockerClient(base_url=f"unix://{path}", version=API, timeout=timeout)
    try:
        sdk = client.containers.prepare_model({"Id": CID})
        box = DockerContainer(client, sdk, "exec-stream", wall=None)
        result = box.exec(["sh", "-c", "echo hello; echo oops >&2"])
        return result.exit_code, result.stdout, result.stderr
    finally:
        client.close()
        engine.shutdown()
        engine.server_close()
        path.unlink(missing_ok=True)


def test_output_that_came_in_with_the_upgrades_headers_is_read() -> None:
    """The headers and every frame in one write: the client's buffered reader holds them all
    by the time the socket is handed over."""

    def upgrade(write: Callable[[bytes], None]) -> None:
        write(HEAD + frame(1, b"hello\n") + frame(2, b"oops\n"))

    assert exec_against(upgrade) == (0, b"hello\n", b"oops\n")


def test_a_command_quiet_for_longer_than_the_clients_timeout_is_read_to_its_end() -> None:
    """The client's read timeout is 1 s; the command prints nothing for 3 s, then its line."""

    def upgrade(write: Callable[[bytes], None]) -> None:
        write(HEAD + frame(1, b"hello\n"))
        time.sleep(3)
        write(frame(2, b"oops\n"))

    assert exec_against(upgrade, timeout=1) == (0, b"hello\n", b"oops\n")


def test_a_quick_commands_output_on_the_real_engine_with_a_slow_client(
    runtime: Runtime, base_image: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every answer's headers read 2 s after its request (a busy machine's client): by then
    the engine has written the exec's answer and all its output."""
    spec = ContainerSpec(image=base_image, command=["sleep", "600"])
    box = runtime.create(spec, "rt-exec-stream")
    assert isinstance(box, DockerContainer)
    try:
        begin = http.client.HTTPResponse.begin

        def late(self: http.client.HTTPResponse) -> None:
            time.sleep(2)
            begin(self)

        monkeypatch.setattr(http.client.HTTPResponse, "begin", late)
        result = box.exec(["sh", "-c", "echo hello; echo oops >&2"])
        monkeypatch.undo()
        assert (result.exit_code, result.stdout, result.stderr) == (0, b"hello\n", b"oops\n")
    finally:
        box.remove()
