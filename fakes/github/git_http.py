"""Git smart HTTP on the github.com host: ``git http-backend`` (CGI) behind authentication.

Every request needs a token (the world is private): without one the answer is 401 with
``WWW-Authenticate: Basic realm="GitHub"``, which makes git ask its credential helper, and
nothing runs. Request and response bodies are streamed through the CGI process. A push holds
the backend's push lock, compares the refs before and after ``git-receive-pack``, and records
what moved (branches, pull request heads, ``git.push`` events) before the last byte of the
answer goes out, so whatever the client does next already sees the push.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import subprocess
from collections.abc import Awaitable, Callable

from fakes.core.server import Receive, Scope, Send
from fakes.github.backend import GitHubBackend
from fakes.github.backend_refs import RefUpdate
from fakes.github.errors import NotFound
from fakes.github.gitstore import ZERO
from replay.base.gitrepo import clean_env

GIT_PATH = re.compile(
    r"^/(?P<owner>[\w.-]+)/(?P<repo>[\w.-]+?)(?:\.git)?/"
    r"(?P<rest>info/refs|git-upload-pack|git-receive-pack)$"
)


def is_git_path(path: str) -> bool:
    """Whether ``path`` is one of smart HTTP's endpoints (``info/refs`` and the two services)."""
    return GIT_PATH.match(path) is not None


def _exec_path() -> str:
    return subprocess.run(
        ["git", "--exec-path"], capture_output=True, text=True, check=True
    ).stdout.strip()


class GitHTTP:
    """The ASGI app for smart HTTP; one per backend."""

    def __init__(self, backend: GitHubBackend) -> None:
        self.backend = backend
        self.http_backend = f"{_exec_path()}/git-http-backend"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        match = GIT_PATH.match(scope["path"])
        assert match is not None
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        login = self.backend.authenticate(headers.get("authorization"))
        if login is None:
            await _plain(send, 401, b"", [(b"www-authenticate", b'Basic realm="GitHub"')])
            return
        full_name = await asyncio.to_thread(self._repo_name, match["owner"], match["repo"])
        if full_name is None:
            await _plain(send, 404, b"Repository not found.\n")
            return
        rest = match["rest"]
        query = scope.get("query_string", b"").decode("latin-1")
        pushing = rest == "git-receive-pack" or "service=git-receive-pack" in query
        env = clean_env(
            {
                "GIT_PROJECT_ROOT": str(self.backend.git.root),
                "GIT_HTTP_EXPORT_ALL": "1",
                "PATH_INFO": f"/{full_name}.git/{rest}",
                "QUERY_STRING": query,
                "REQUEST_METHOD": scope["method"],
                "CONTENT_TYPE": headers.get("content-type", ""),
                "REMOTE_USER": login,
                "REMOTE_ADDR": str((scope.get("client") or ("127.0.0.1", 0))[0]),
                "GATEWAY_INTERFACE": "CGI/1.1",
                "SERVER_PROTOCOL": "HTTP/1.1",
            }
        )
        if "git-protocol" in headers:
            env["GIT_PROTOCOL"] = headers["git-protocol"]
        if "content-encoding" in headers:
            env["HTTP_CONTENT_ENCODING"] = headers["content-encoding"]
        if "content-length" in headers:
            env["CONTENT_LENGTH"] = headers["content-length"]
        if pushing and rest == "git-receive-pack":
            await self._receive_pack(env, receive, send, full_name, login)
        else:
            await self._run_cgi(env, receive, send, None)

    async def _receive_pack(
        self, env: dict[str, str], receive: Receive, send: Send, full_name: str, login: str
    ) -> None:
        """A push, under the backend's push lock: the refs it moved are exactly its own."""
        lock = self.backend.push_lock
        await asyncio.to_thread(lock.acquire)
        held = True

        def finish(before: dict[str, str]) -> None:
            nonlocal held
            try:
                after = self.backend.git.heads(full_name)
            finally:
                lock.release()
                held = False
            updates = [
                RefUpdate(ref, before.get(ref, ZERO), after.get(ref, ZERO))
                for ref in sorted(set(before) | set(after))
                if before.get(ref) != after.get(ref)
            ]
            if updates:
                with self.backend.world.session() as s:
                    self.backend.refs.apply_push(s, login, full_name, updates)

        try:
            before = await asyncio.to_thread(self.backend.git.heads, full_name)
            await self._run_cgi(env, receive, send, lambda: asyncio.to_thread(finish, before))
        finally:
            if held:
                lock.release()

    def _repo_name(self, owner: str, name: str) -> str | None:
        with self.backend.world.session() as s:
            try:
                repo = self.backend.repos.get(s, owner, name)
            except NotFound:
                return None
            return repo.full_name if repo.has_git else None

    async def _run_cgi(
        self,
        env: dict[str, str],
        receive: Receive,
        send: Send,
        done: Callable[[], Awaitable[None]] | None,
    ) -> None:
        """Run ``git http-backend``, streaming both bodies; ``done`` runs before the last byte."""
        proc = await asyncio.create_subprocess_exec(
            self.http_backend,
            env=env,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        feeder = asyncio.create_task(_feed(receive, proc.stdin))
        errors = asyncio.create_task(proc.stderr.read())
        try:
            status, headers, rest = await _cgi_head(proc.stdout)
            await send({"type": "http.response.start", "status": status, "headers": headers})
            if rest:
                await send({"type": "http.response.body", "body": rest, "more_body": True})
            while chunk := await proc.stdout.read(65536):
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await proc.wait()
            await feeder
            await errors
            if done is not None:
                await done()
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
            feeder.cancel()
            errors.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await feeder


async def _feed(receive: Receive, stdin: asyncio.StreamWriter) -> None:
    """Copy the request body into the CGI's standard input, then close it."""
    try:
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                break
            body = message.get("body", b"")
            if body:
                stdin.write(body)
                await stdin.drain()
            if not message.get("more_body", False):
                break
    except (BrokenPipeError, ConnectionResetError):
        pass
    finally:
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            stdin.close()
            await stdin.wait_closed()


async def _cgi_head(
    stdout: asyncio.StreamReader,
) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    """Read the CGI header block: (status, headers, the first bytes of the body)."""
    buffer = b""
    while True:
        for sep in (b"\r\n\r\n", b"\n\n"):
            if sep in buffer:
                head, rest = buffer.split(sep, 1)
                return (*_parse_head(head), rest)
        chunk = await stdout.read(65536)
        if not chunk:
            head, rest = buffer, b""
            return (*_parse_head(head), rest)
        buffer += chunk


def _parse_head(head: bytes) -> tuple[int, list[tuple[bytes, bytes]]]:
    status = 200
    headers: list[tuple[bytes, bytes]] = []
    for line in head.replace(b"\r\n", b"\n").split(b"\n"):
        if b":" not in line:
            continue
        key, value = line.split(b":", 1)
        if key.strip().lower() == b"status":
            status = int(value.strip().split()[0])
        else:
            headers.append((key.strip().lower(), value.strip()))
    return status, headers


async def _plain(
    send: Send, status: int, body: bytes, extra: list[tuple[bytes, bytes]] | None = None
) -> None:
    headers: list[tuple[bytes, bytes]] = [(b"content-type", b"text/plain; charset=utf-8")]
    headers += extra or []
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
