"""Serving an in-process ASGI app (a fake, the registry) as the answer to a proxied request.

mitmproxy ships ``addons.asgiapp.serve``, but it unquotes the query string, upper-cases the
scheme and hides an app's exception behind a 500. We build the scope ourselves, as uvicorn
would (the path percent-decoded with undecodable bytes replaced, so an app sees the same
strings behind the gateway as when served directly), and hand an app's exception back to the
caller, who records it: the request is answered (with what the app sent, or a 500), never left
hanging, and the failure is never silent.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any
from urllib.parse import unquote

from mitmproxy import http
from mitmproxy.net.http import status_codes

from fakes.core.net import FAILURE


def scope_for(flow: http.HTTPFlow) -> dict[str, Any]:
    raw_path = flow.request.data.path  # bytes, as the client sent it
    path_bytes, _, query = raw_path.partition(b"?")

    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": {"HTTP/1.0": "1.0", "HTTP/2.0": "2"}.get(flow.request.http_version, "1.1"),
        "method": flow.request.method,
        "scheme": flow.request.scheme,
        "path": unquote(path_bytes.decode("ascii", "replace"), errors="replace"),
        "raw_path": path_bytes,
        "root_path": "",
        "query_string": query,
        "headers": [(k.lower(), v) for k, v in flow.request.headers.fields],
        "client": flow.client_conn.peername,
        "server": (flow.request.pretty_host, flow.request.port),
    }


async def serve(app: Any, flow: http.HTTPFlow) -> str | None:
    """Run ``app`` on the flow's request and set the flow's response.

    Returns what went wrong in the app, if anything: an exception it raised (the flow is
    answered all the same, with the response the app had sent, as Starlette sends its 500 and
    then re-raises, or a plain 500), or one a fake's last-resort net caught and answered in
    the vendor's shape (:data:`fakes.core.net.FAILURE`).
    """
    body = flow.request.raw_content or b""
    sent_body = False
    finished = asyncio.Event()
    status: int | None = None
    headers: list[tuple[bytes, bytes]] = []
    chunks: list[bytes] = []

    async def receive() -> dict[str, Any]:
        nonlocal sent_body
        if not sent_body:
            sent_body = True
            return {"type": "http.request", "body": body, "more_body": False}
        await finished.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = int(message["status"])
            headers.extend(message.get("headers", []))
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                finished.set()

    failure: str | None = None
    scope = scope_for(flow)
    try:
        await app(scope, receive, send)
    except Exception as exc:
        failure = f"{type(exc).__name__}: {exc}"
    finally:
        finished.set()
    if failure is None and isinstance(scope.get(FAILURE), str):
        failure = scope[FAILURE]
    if status is None:
        failure = failure or f"the app for {flow.request.pretty_host} sent no response"
        status, chunks = 500, [b'{"message":"Server Error"}']
        headers[:] = [(b"content-type", b"application/json; charset=utf-8")]
    data = b"".join(chunks)
    # Keep the bytes exactly as the app sent them (a gzip body stays gzip); the body is
    # complete here, so it goes out with a Content-Length rather than chunked.
    fields = http.Headers(headers)
    fields.pop("transfer-encoding", None)
    if flow.request.method != "HEAD" or "content-length" not in fields:
        fields["content-length"] = str(len(data))
    now = time.time()
    reason = status_codes.RESPONSES.get(status, "").encode()
    flow.response = http.Response(b"HTTP/1.1", status, reason, fields, data, None, now, now)
    return failure
