"""Stand-ins for "the outside": TCP and UDP listeners that log every connection and datagram.

Run as ``python listeners.py LOG ADDR...`` (in a network namespace or on the host); each ADDR
is ``tcp:HOST:PORT`` or ``udp:HOST:PORT`` (HOST may be an IPv6 address in brackets). Prints
``ready`` once every socket listens; appends one JSON line per hit to LOG.
"""

from __future__ import annotations

import contextlib
import json
import socket
import sys
import threading


def log(path: str, lock: threading.Lock, **hit: object) -> None:
    with lock, open(path, "a") as fh:
        fh.write(json.dumps(hit) + "\n")


def serve_tcp(sock: socket.socket, path: str, lock: threading.Lock, name: str) -> None:
    while True:
        conn, peer = sock.accept()
        conn.settimeout(2)
        try:
            data = conn.recv(512)
        except OSError:
            data = b""
        log(path, lock, listener=name, peer=str(peer[0]), data=data[:80].decode("latin-1"))
        with contextlib.suppress(OSError):
            conn.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: 7\r\n\r\nOUTSIDE")
        conn.close()


def serve_udp(sock: socket.socket, path: str, lock: threading.Lock, name: str) -> None:
    while True:
        data, peer = sock.recvfrom(2048)
        log(path, lock, listener=name, peer=str(peer[0]), data=data[:80].decode("latin-1"))


def main() -> None:
    path, addrs = sys.argv[1], sys.argv[2:]
    lock = threading.Lock()
    for spec in addrs:
        proto, rest = spec.split(":", 1)
        host, _, port = rest.rpartition(":")
        host = host.strip("[]")
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        kind = socket.SOCK_STREAM if proto == "tcp" else socket.SOCK_DGRAM
        sock = socket.socket(family, kind)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, int(port)))
        target = serve_tcp if proto == "tcp" else serve_udp
        if proto == "tcp":
            sock.listen(16)
        threading.Thread(target=target, args=(sock, path, lock, spec), daemon=True).start()
    print("ready", flush=True)
    threading.Event().wait()


if __name__ == "__main__":
    main()
