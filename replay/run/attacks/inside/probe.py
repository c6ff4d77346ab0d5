"""Hand-made requests through the sandbox's proxy, run inside it: ``python3 probe.py SPEC.json``.

What a hostile agent would send, byte for byte: no client library normalises the path
(``/./``, ``//``, ``%5F`` and ``%255F`` go out exactly as written). SPEC holds ``needles``
(hex-encoded strings to look for in every answer) and ``requests``, each with:

- ``id``; ``mode``: ``connect`` (CONNECT host:port, then the request inside the tunnel, over
  TLS when ``tls``) or ``absolute`` (``METHOD http://host:port/target`` to the proxy);
- ``method``, ``host``, ``port``, ``target`` (the request target inside a tunnel, or the
  absolute URL's path; ``url`` overrides the whole absolute-form target), ``headers``;
- ``body`` (text) or ``body_mb`` (that many MiB of ``x``, sent one MiB at a time).

Prints one JSON object: id -> ``connect`` (the CONNECT status), ``status``, ``headers``,
``body`` (decoded from gzip/deflate when the answer says so, first 20,000 characters),
``found`` (needles present anywhere in the answer, base64 file contents of a JSON answer
decoded too) and ``error``. Stdlib only.
"""

from __future__ import annotations

import base64
import contextlib
import gzip
import http.client
import json
import os
import socket
import ssl
import sys
import zlib
from urllib.parse import urlsplit

PROXY = urlsplit(os.environ.get("HTTPS_PROXY", "http://127.0.0.1:3128"))
MIB = 1024 * 1024


def read_head(sock: socket.socket) -> tuple[int, bytes]:
    """The CONNECT answer's status line and headers, read byte by byte (nothing beyond)."""
    data = b""
    while b"\r\n\r\n" not in data and len(data) < 65536:
        byte = sock.recv(1)
        if not byte:
            break
        data += byte
    line = data.split(b"\r\n", 1)[0].split()
    if len(line) < 2 or not line[1].isdigit():
        raise OSError(f"no CONNECT answer: {data[:200]!r}")
    return int(line[1]), data


def decoded(body: bytes, encoding: str) -> bytes:
    encoding = encoding.lower().strip()
    try:
        if encoding == "gzip":
            return gzip.decompress(body)
        if encoding == "deflate":
            return zlib.decompress(body)
    except (OSError, zlib.error, EOFError):
        return body
    return body


def embedded(text: bytes) -> bytes:
    """File contents an API hands out base64-encoded (GitHub's ``content``), decoded."""
    try:
        data = json.loads(text)
    except ValueError:
        return b""
    out: list[bytes] = []
    stack = [data]
    while stack and len(out) < 10000:
        item = stack.pop()
        if isinstance(item, dict):
            if item.get("encoding") == "base64" and isinstance(item.get("content"), str):
                with contextlib.suppress(ValueError):
                    out.append(base64.b64decode(item["content"]))
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return b"\n".join(out)


def one(req: dict, needles: list[str]) -> dict:  # type: ignore[type-arg]
    out: dict = {"connect": None, "status": None, "headers": [], "body": "", "found": []}  # type: ignore[type-arg]
    method, host, port = req["method"], req["host"], int(req["port"])
    timeout = float(req.get("timeout", 20))
    sock = socket.create_connection((PROXY.hostname, PROXY.port), timeout=timeout)
    raw = b""
    try:
        bracketed = f"[{host}]" if ":" in host else host
        if req["mode"] == "connect":
            authority = f"{bracketed}:{port}"
            sock.sendall(f"CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\n\r\n".encode())
            status, head = read_head(sock)
            out["connect"] = status
            raw += head
            if status != 200:
                rest = sock.recv(65536)
                out["body"] = rest.decode("latin-1")[:20000]
                raw += rest
                return out
            if req.get("tls"):
                context = ssl._create_unverified_context()
                sock = context.wrap_socket(sock, server_hostname=host)
            target = req["target"]
        else:
            target = req.get("url") or f"http://{bracketed}:{port}{req['target']}"
        default_port = 443 if req.get("tls") else 80
        host_header = bracketed if port == default_port else f"{bracketed}:{port}"
        headers = {"Host": host_header, "Connection": "close", **req.get("headers", {})}
        body = req.get("body")
        size = int(req.get("body_mb", 0)) * MIB if body is None else len(body.encode())
        if body is not None or size or method in ("POST", "PUT", "PATCH"):
            headers["Content-Length"] = str(size)
        lines = f"{method} {target} HTTP/1.1\r\n"
        lines += "".join(f"{k}: {v}\r\n" for k, v in headers.items()) + "\r\n"
        try:
            sock.sendall(lines.encode("latin-1"))
            if body is not None:
                sock.sendall(body.encode())
            else:
                chunk = b"x" * MIB
                for _ in range(int(req.get("body_mb", 0))):
                    sock.sendall(chunk)
        except OSError as exc:
            # The gateway may answer and close before the body is all sent: read its answer.
            out["send_error"] = f"{type(exc).__name__}: {exc}"
        response = http.client.HTTPResponse(sock, method=method)
        response.begin()
        out["status"] = response.status
        out["headers"] = [[k, v] for k, v in response.getheaders()]
        data = response.read(8 * MIB)
        text = decoded(data, response.getheader("content-encoding") or "")
        raw += (
            data
            + text
            + embedded(text)
            + "\n".join(f"{k}: {v}" for k, v in out["headers"]).encode("latin-1")
        )
        out["body"] = text.decode("utf-8", "replace")[:20000]
    except Exception as exc:
        out["error"] = f"{type(exc).__name__}: {exc}"
    finally:
        out["found"] = [n for n in needles if n.encode() in raw]
        sock.close()
    return out


def main() -> None:
    with open(sys.argv[1]) as fh:
        spec = json.load(fh)
    needles = [bytes.fromhex(n).decode() for n in spec.get("needles", [])]
    print(json.dumps({req["id"]: one(req, needles) for req in spec["requests"]}))


if __name__ == "__main__":
    main()
