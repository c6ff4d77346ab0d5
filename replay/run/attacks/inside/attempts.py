"""Escape attempts, run inside a container: ``python3 attempts.py TARGETS_JSON``.

Prints one JSON object: attempt name -> ``"reached"`` (the attempt got an answer from outside)
or ``"blocked: <error>"``. Targets: ``tcp`` and ``udp`` lists of ``[host, port]``, ``dns`` (a
server address), ``http`` (a URL to fetch with the proxy variables unset).
"""

from __future__ import annotations

import json
import os
import socket
import struct
import subprocess
import sys
from collections.abc import Callable
from functools import partial

TIMEOUT = 3


def attempt(fn: Callable[[], object]) -> str:
    try:
        got = fn()
    except Exception as exc:
        return f"blocked: {type(exc).__name__}: {exc}"
    return f"reached: {got!r}"[:200]


def tcp(host: str, port: int) -> bytes:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.settimeout(TIMEOUT)
        s.connect((host, port))
        s.sendall(b"GET / HTTP/1.0\r\n\r\n")
        return s.recv(100)


def udp(host: str, port: int) -> str:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_DGRAM) as s:
        s.settimeout(TIMEOUT)
        sent = s.sendto(b"replay-escape", (host, port))
    # A datagram has no answer here; whether it arrived is for the listener's log to say.
    return f"sent {sent} bytes"


def dns_query(name: str) -> bytes:
    header = struct.pack(">HHHHHH", 0x1234, 0x0100, 1, 0, 0, 0)
    labels = b"".join(bytes([len(p)]) + p.encode() for p in name.split(".")) + b"\0"
    return header + labels + struct.pack(">HH", 1, 1)


def dns_udp(server: str) -> bytes:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.settimeout(TIMEOUT)
        s.sendto(dns_query("escape.example.com"), (server, 53))
        return s.recv(512)


def dns_tcp(server: str) -> bytes:
    q = dns_query("escape-tcp.example.com")
    with socket.create_connection((server, 53), timeout=TIMEOUT) as s:
        s.sendall(struct.pack(">H", len(q)) + q)
        return s.recv(512)


def resolver(server: str) -> object:
    with open("/etc/resolv.conf", "w") as fh:
        fh.write(f"nameserver {server}\noptions timeout:1 attempts:1\n")
    return socket.getaddrinfo("resolver.example.com", 80)


def raw() -> object:
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    s.close()
    return "raw socket opened"


def curl(url: str) -> str:
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower() and k != "ALL_PROXY"}
    done = subprocess.run(
        ["curl", "-sS", "--max-time", str(TIMEOUT), url],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if done.returncode != 0:
        raise OSError(f"curl exit {done.returncode}: {done.stderr.strip()}")
    return done.stdout


def main() -> None:
    targets = json.loads(sys.argv[1])
    results: dict[str, str] = {}
    for host, port in targets["tcp"]:
        results[f"tcp {host} {port}"] = attempt(partial(tcp, host, port))
    for host, port in targets["udp"]:
        results[f"udp {host} {port}"] = attempt(partial(udp, host, port))
    server = targets["dns"]
    results["dns udp"] = attempt(lambda: dns_udp(server))
    results["dns tcp"] = attempt(lambda: dns_tcp(server))
    results["dns resolver"] = attempt(lambda: resolver(server))
    results["raw socket"] = attempt(raw)
    for url in targets["http"]:
        results[f"http no proxy {url}"] = attempt(partial(curl, url))
    print(json.dumps(results))


if __name__ == "__main__":
    main()
