"""The test's own listeners on loopback: a model upstream that records everything, and a trap.

:class:`Upstream` stands in for the model provider behind ``--model-upstream``: it records
each connection it accepts and each request (method, path, headers) as soon as the headers
are read, before any body, so a request the gateway should never have sent shows up even if
its body never finishes. Its answers are chosen by the request (the ``model`` field): plain
JSON that quotes the credential it received, an event stream that splits the credential
across two writes, the same stream gzip-encoded when the client accepts gzip, a 401 that
quotes the credential, as real providers' error messages do, or (``slow``, ``slow-stream``)
an answer that keeps the caller waiting before its headers or in the middle of its stream.

:class:`Trap` is a TCP listener on 127.0.0.1 and ::1 (same port) that nothing should ever
reach: it logs every connection it accepts.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import selectors
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

INFERENCE = ("/v1/chat/completions", "/v1/responses", "/v1/messages")
SLOW = 4.0
"""Seconds the ``slow`` models keep a call waiting (a client giving up after 1 s leaves it)."""
MAX_BODY = 100 * 1024 * 1024


class Upstream(ThreadingHTTPServer):
    """The model provider of the test: on 127.0.0.1, recording every connection and request."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.lock = threading.Lock()
        self.connections = 0
        self.requests: list[dict[str, Any]] = []
        self.thread = threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.1})
        self.thread.daemon = True

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    def verify_request(self, request: Any, client_address: Any) -> bool:
        with self.lock:
            self.connections += 1
        return True

    def record(self, entry: dict[str, Any]) -> None:
        with self.lock:
            self.requests.append(entry)

    def snapshot(self) -> tuple[int, int]:
        """(connections, requests) so far, to compare before and after an attempt."""
        with self.lock:
            return self.connections, len(self.requests)

    def since(self, count: int) -> list[dict[str, Any]]:
        with self.lock:
            return list(self.requests[count:])

    def start(self) -> Upstream:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.shutdown()
        self.server_close()
        self.thread.join(10)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: Upstream

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _credential(self) -> str:
        auth = self.headers.get("authorization", "")
        return self.headers.get("x-api-key") or auth.removeprefix("Bearer ").strip()

    def _any(self) -> None:
        entry = {
            "method": self.command,
            "path": self.path,
            "headers": {k.lower(): v for k, v in self.headers.items()},
            "body_bytes": 0,
        }
        self.server.record(entry)
        body = self._body()
        entry["body_bytes"] = len(body)
        path = self.path.split("?")[0]
        if self.command == "POST" and path in INFERENCE:
            self._inference(body)
        elif self.command == "GET" and path == "/v1/models":
            self._send(200, json.dumps({"object": "list", "data": [{"id": "echo"}]}).encode())
        else:
            self._send(200, f"UPSTREAM REACHED {self.command} {self.path}\n".encode(), "text/plain")

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = _any

    def _body(self) -> bytes:
        if self.headers.get("transfer-encoding", "").lower() == "chunked":
            parts: list[bytes] = []
            total = 0
            while total <= MAX_BODY:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    break
                parts.append(self.rfile.read(size))
                total += size
                self.rfile.readline()
            return b"".join(parts)
        length = int(self.headers.get("content-length") or 0)
        return self.rfile.read(min(length, MAX_BODY)) if length else b""

    def _send(
        self,
        status: int,
        body: bytes,
        content_type: str = "application/json",
        headers: dict[str, str] | None = None,
    ) -> None:
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def _inference(self, raw: bytes) -> None:
        try:
            model = str(json.loads(raw or b"{}").get("model", "echo"))
        except (ValueError, AttributeError):
            model = "echo"
        key = self._credential()
        if model == "slow":
            time.sleep(SLOW)
            model = "echo"
        if model == "slow-stream":
            self._stream([_delta("thinking", end=False), _delta("... done")], pause=SLOW)
        elif model == "reject":
            message = f"Incorrect API key provided: {key}. You can find your API key at ..."
            error = {"message": message, "type": "invalid_request_error", "code": "invalid_api_key"}
            self._send(401, json.dumps({"error": error}).encode())
        elif model == "split":
            self._stream([_delta(key[: len(key) // 2], end=False), _delta(key[len(key) // 2 :])])
        elif model == "gzip":
            accepts = "gzip" in self.headers.get("accept-encoding", "").lower()
            self._stream([_delta(key) + b"data: [DONE]\n\n"], compress=accepts)
        else:
            answer = {
                "id": "chatcmpl-redteam",
                "object": "chat.completion",
                "model": model,
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": f"you sent: {key}"},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            }
            self._send(200, json.dumps(answer).encode(), headers={"x-echo-credential": key})

    def _stream(self, writes: list[bytes], *, compress: bool = False, pause: float = 0.5) -> None:
        """An event stream in chunked encoding, one flushed chunk per write."""
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        if compress:
            self.send_header("content-encoding", "gzip")
            writes = [gzip.compress(b"".join(writes))]
        self.end_headers()
        for i, data in enumerate(writes):
            if i:
                # Two reads on the gateway's side, so two chunks for its stream hook.
                time.sleep(pause)
            try:
                self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                self.wfile.flush()
            except OSError:
                return  # the gateway hung up (its client abandoned the call)
        with contextlib.suppress(OSError):
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()


def _delta(text: str, *, end: bool = True) -> bytes:
    """Half of an SSE line when ``end`` is false: the rest comes in the next write."""
    head = b'data: {"choices":[{"index":0,"delta":{"content":"'
    if not end:
        return head + text.encode()
    return text.encode() + b'"}}]}\n\n'


class Trap:
    """A TCP listener on 127.0.0.1, 127.0.0.2 and ::1 (one port) that logs every connection;
    nothing may reach it."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.hits: list[dict[str, Any]] = []
        self.sockets: list[socket.socket] = []
        self.port = self._bind()
        self.selector = selectors.DefaultSelector()
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)

    def _bind(self) -> int:
        for _ in range(20):
            v4 = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            v4.bind(("127.0.0.1", 0))
            port = int(v4.getsockname()[1])
            v6 = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
            v6.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            second = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            try:
                v6.bind(("::1", port))
                second.bind(("127.0.0.2", port))
            except OSError:
                for s in (v4, v6, second):
                    s.close()
                continue
            for s in (v4, v6, second):
                s.listen(16)
                s.setblocking(False)
            self.sockets = [v4, v6, second]
            return port
        raise RuntimeError("no port free on 127.0.0.1, 127.0.0.2 and ::1 at once")

    def start(self) -> Trap:
        for s in self.sockets:
            self.selector.register(s, selectors.EVENT_READ)
        self.thread.start()
        return self

    def _serve(self) -> None:
        while not self.stopping.is_set():
            for key, _ in self.selector.select(timeout=0.1):
                sock: socket.socket = key.fileobj  # type: ignore[assignment]
                with contextlib.suppress(BlockingIOError):
                    conn, peer = sock.accept()
                    conn.settimeout(1)
                    try:
                        data = conn.recv(200)
                    except OSError:
                        data = b""
                    with self.lock:
                        self.hits.append({"peer": str(peer[0]), "data": data.decode("latin-1")})
                    with contextlib.suppress(OSError):
                        conn.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: 4\r\n\r\nTRAP")
                    conn.close()

    def seen(self) -> list[dict[str, Any]]:
        with self.lock:
            return list(self.hits)

    def stop(self) -> None:
        self.stopping.set()
        self.thread.join(10)
        for s in self.sockets:
            s.close()
        self.selector.close()
