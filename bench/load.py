"""A small load generator: N clients on keep-alive HTTP/1.1 connections, each sending its
share of a fixed number of requests back to back; throughput and latency percentiles.

Hand-written on asyncio streams rather than httpx: at 16 clients on a 2-core machine an
httpx client spends more CPU per request than the server under test, and the ratio would
measure the client. This one parses a status line and a ``Content-Length`` body and
nothing else, which is all the servers it is pointed at (uvicorn) send.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from dataclasses import dataclass

Request = Callable[[int], bytes]
"""Builds the i-th request's bytes (each request may differ, e.g. a numbered title)."""


@dataclass(frozen=True)
class Load:
    """What one load run measured."""

    requests: int
    seconds: float
    latencies: list[float]
    """Seconds per request, in completion order."""

    @property
    def rate(self) -> float:
        return self.requests / self.seconds

    def percentile(self, p: float) -> float:
        ordered = sorted(self.latencies)
        return ordered[min(int(p * len(ordered)), len(ordered) - 1)]


def request(
    method: str, path: str, host: str, headers: dict[str, str], body: object | None = None
) -> bytes:
    """One HTTP/1.1 request's bytes (JSON body if ``body`` is given)."""
    data = b"" if body is None else json.dumps(body).encode()
    lines = [
        f"{method} {path} HTTP/1.1",
        f"host: {host}",
        *(f"{k}: {v}" for k, v in headers.items()),
    ]
    if body is not None:
        lines += ["content-type: application/json"]
    lines += [f"content-length: {len(data)}", "", ""]
    return "\r\n".join(lines).encode() + data


async def _exchange(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, data: bytes
) -> tuple[int, bytes]:
    writer.write(data)
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head[9:12])
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    return status, await reader.readexactly(length)


async def _run(port: int, make: Request, total: int, clients: int, expect: int) -> Load:
    counter = iter(range(total))
    latencies: list[float] = []

    async def client() -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            for i in counter:  # shared: the clients split ``total`` between them
                start = time.perf_counter()
                status, body = await _exchange(reader, writer, make(i))
                latencies.append(time.perf_counter() - start)
                if status != expect:
                    raise RuntimeError(f"request {i}: status {status}, wanted {expect}: {body!r}")
        finally:
            writer.close()

    start = time.perf_counter()
    await asyncio.gather(*(client() for _ in range(clients)))
    return Load(total, time.perf_counter() - start, latencies)


def run(port: int, make: Request, total: int, clients: int = 16, expect: int = 200) -> Load:
    """Send ``total`` requests from ``clients`` concurrent connections to 127.0.0.1:port."""
    return asyncio.run(_run(port, make, total, clients, expect))
