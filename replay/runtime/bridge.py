"""The gateway bridge: the one way out of a container that has no network.

Host side, :class:`HostBridge` listens on a Unix socket in the run's directory and forwards
each connection to the gateway's TCP port (asyncio, in a thread of the runner). The directory
is bind-mounted read-only into the container at :data:`MOUNT`, where :data:`FORWARDER` (run by
the container's ``python3`` as its main command) listens on ``127.0.0.1:3128`` and forwards
each connection to that socket. The proxy variables inside point at ``127.0.0.1:3128``.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from pathlib import Path
from urllib.parse import urlsplit

from replay.runtime.base import SandboxError

MOUNT = "/run/replay"
"""Where the run's directory appears inside the container."""
SOCKET = "proxy.sock"
PROXY_PORT = 3128
INNER_PROXY = f"http://127.0.0.1:{PROXY_PORT}"
FORWARDER_FILE = "forward.py"
READY = b"replay-bridge-ready"

FORWARDER = f'''\
"""127.0.0.1:{PROXY_PORT} -> {MOUNT}/{SOCKET}: the container's only way to the gateway."""
import asyncio, signal, sys

async def pipe(reader, writer):
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except OSError:
        pass
    finally:
        try:
            writer.close()
        except OSError:
            pass

async def handle(reader, writer):
    try:
        up_r, up_w = await asyncio.open_unix_connection("{MOUNT}/{SOCKET}")
    except OSError:
        writer.close()
        return
    await asyncio.gather(pipe(reader, up_w), pipe(up_r, writer))

async def main():
    server = await asyncio.start_server(handle, "127.0.0.1", {PROXY_PORT})
    loop = asyncio.get_running_loop()
    stop = loop.create_future()
    loop.add_signal_handler(signal.SIGTERM, stop.set_result, None)
    print("{READY.decode()}", flush=True)
    async with server:
        await stop

asyncio.run(main())
'''


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            writer.close()


class HostBridge:
    """Forwards connections on ``<run dir>/proxy.sock`` to the gateway's TCP address."""

    def __init__(self, run_dir: Path, proxy_url: str) -> None:
        parts = urlsplit(proxy_url)
        if parts.hostname is None or parts.port is None:
            raise SandboxError(f"the gateway's proxy URL {proxy_url!r} has no host and port")
        self.host, self.port = parts.hostname, parts.port
        self.path = run_dir / SOCKET
        (run_dir / FORWARDER_FILE).write_text(FORWARDER)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._server: asyncio.AbstractServer | None = None
        self.connections = 0

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            up_r, up_w = await asyncio.open_connection(self.host, self.port)
        except OSError:
            writer.close()
            return
        await asyncio.gather(_pipe(reader, up_w), _pipe(up_r, writer))

    def start(self) -> HostBridge:
        self._thread.start()

        async def listen() -> asyncio.AbstractServer:
            server = await asyncio.start_unix_server(self._handle, str(self.path))
            self.path.chmod(0o666)  # any user inside may connect; only the mount exposes it
            return server

        self._server = asyncio.run_coroutine_threadsafe(listen(), self._loop).result(10)
        return self

    def close(self) -> None:
        if self._server is not None:
            server = self._server

            async def shut() -> None:
                server.close()
                # Abort connections still open, or wait_closed() waits for them.
                with contextlib.suppress(AttributeError):
                    server.close_clients()  # type: ignore[attr-defined]
                for task in asyncio.all_tasks():
                    if task is not asyncio.current_task():
                        task.cancel()

            asyncio.run_coroutine_threadsafe(shut(), self._loop).result(10)
            self._server = None
        if self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)
        self._loop.close()
        self.path.unlink(missing_ok=True)

    def __enter__(self) -> HostBridge:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()
