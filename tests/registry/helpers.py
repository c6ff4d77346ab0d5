"""A stand-in upstream for the registry tests: real wheels and tarballs, served on loopback.

The upstream index is written here independently of ``replay.registry`` (its own tiny PEP 691
app), so recording from it checks our reading of the protocol against a second spelling.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import tarfile
import zipfile
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

T = datetime(2026, 3, 12, 9, 0, tzinfo=UTC)


def before(**kw: float) -> datetime:
    return T - timedelta(**kw)


def after(**kw: float) -> datetime:
    return T + timedelta(**kw)


# ----------------------------------------------------------------------------- wheels


def _record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"sha256={digest},{len(data)}"


def metadata_text(
    name: str, version: str, requires: tuple[str, ...] = (), requires_python: str | None = None
) -> str:
    lines = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
    lines.append(f"Summary: {name} for the registry tests")
    if requires_python:
        lines.append(f"Requires-Python: {requires_python}")
    lines += [f"Requires-Dist: {r}" for r in requires]
    return "\n".join(lines) + "\n\n"


def make_wheel(
    name: str,
    version: str,
    requires: tuple[str, ...] = (),
    requires_python: str | None = None,
    code: str | None = None,
) -> tuple[str, bytes, bytes]:
    """A real, installable pure-Python wheel: (filename, bytes, METADATA bytes); ``code``
    is its package's ``__init__.py`` (default: ``VERSION = ...``)."""
    dist = name.replace("-", "_").lower()
    info = f"{dist}-{version}.dist-info"
    metadata = metadata_text(name, version, requires, requires_python).encode()
    files = {
        f"{dist}/__init__.py": (code or f"VERSION = {version!r}\n").encode(),
        f"{info}/METADATA": metadata,
        f"{info}/WHEEL": (
            b"Wheel-Version: 1.0\nGenerator: replay-tests\nRoot-Is-Purelib: true\n"
            b"Tag: py3-none-any\n"
        ),
    }
    record = "".join(f"{path},{_record_hash(data)}\n" for path, data in files.items())
    record += f"{info}/RECORD,,\n"
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for path, data in files.items():
            zf.writestr(path, data)
        zf.writestr(f"{info}/RECORD", record)
    return f"{dist}-{version}-py3-none-any.whl", buf.getvalue(), metadata


def make_sdist(
    name: str, version: str, files: dict[str, str], fmt: str = "tar.gz"
) -> tuple[str, bytes]:
    """An sdist (``.tar.gz``, ``.tar.bz2``, ``.tar.xz`` or ``.zip``) with ``files`` under
    ``<name>-<version>/``."""
    base = f"{name.replace('-', '_').lower()}-{version}"
    members = {f"{base}/{path}": text.encode() for path, text in files.items()}
    members[f"{base}/{name.replace('-', '_')}/__init__.py"] = f"VERSION = {version!r}\n".encode()
    buf = io.BytesIO()
    if fmt == "zip":
        with zipfile.ZipFile(buf, "w") as zf:
            for path, data in members.items():
                zf.writestr(path, data)
    else:
        mode = {"tar.gz": "w:gz", "tar.bz2": "w:bz2", "tar.xz": "w:xz"}[fmt]
        with tarfile.open(fileobj=buf, mode=mode) as tar:  # type: ignore[call-overload]
            for path, data in members.items():
                info = tarfile.TarInfo(path)
                info.size = len(data)
                info.mtime = 499162500
                tar.addfile(info, io.BytesIO(data))
    return f"{base}.{fmt}", buf.getvalue()


@dataclass
class UpFile:
    project: str
    version: str
    filename: str
    data: bytes
    metadata: bytes | None
    upload_time: datetime
    requires_python: str | None = None
    yanked: bool | str = False

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()


@dataclass
class PythonUpstream:
    """A tiny PEP 691 index (api-version 1.1) with files on both sides of T."""

    files: list[UpFile] = field(default_factory=list)

    def add(
        self,
        name: str,
        version: str,
        uploaded: datetime,
        requires: tuple[str, ...] = (),
        requires_python: str | None = None,
        with_metadata: bool = True,
        code: str | None = None,
    ) -> UpFile:
        filename, data, metadata = make_wheel(name, version, requires, requires_python, code)
        up = UpFile(
            name,
            version,
            filename,
            data,
            metadata if with_metadata else None,
            uploaded,
            requires_python,
        )
        self.files.append(up)
        return up

    def add_sdist(
        self,
        name: str,
        version: str,
        uploaded: datetime,
        files: dict[str, str],
        fmt: str = "tar.gz",
    ) -> UpFile:
        """An sdist whose top directory holds ``files`` (``pyproject.toml``, ``setup.py``...)."""
        up = UpFile(name, version, *make_sdist(name, version, files, fmt), None, uploaded)
        self.files.append(up)
        return up

    def app(self) -> Starlette:
        def norm(name: str) -> str:
            return name.lower().replace("_", "-").replace(".", "-")

        async def project(request: Request) -> Response:
            name = request.path_params["name"]
            mine = [f for f in self.files if norm(f.project) == name]
            if not mine:
                return Response("not found", status_code=404)
            files = []
            for f in mine:
                entry: dict[str, object] = {
                    "filename": f.filename,
                    "url": f"../../files/{f.filename}",  # relative, as PEP 691 allows
                    "hashes": {"sha256": f.sha256},
                    "requires-python": f.requires_python,
                    "size": len(f.data),
                    "upload-time": f.upload_time.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
                    "yanked": f.yanked,
                }
                if f.metadata is not None:
                    entry["core-metadata"] = {"sha256": hashlib.sha256(f.metadata).hexdigest()}
                files.append(entry)
            body = {"meta": {"api-version": "1.1"}, "name": name, "files": files}
            return Response(json.dumps(body), media_type="application/vnd.pypi.simple.v1+json")

        async def download(request: Request) -> Response:
            name = request.path_params["filename"]
            for f in self.files:
                if name == f.filename:
                    return Response(f.data, media_type="application/octet-stream")
                if name == f.filename + ".metadata" and f.metadata is not None:
                    return Response(f.metadata, media_type="application/octet-stream")
            return Response("not found", status_code=404)

        return Starlette(
            routes=[
                Route("/simple/{name}/", project),
                Route("/files/{filename}", download),
            ]
        )


def standard_upstream() -> PythonUpstream:
    """alpha and beta, each with a release after T; alpha 1.0 has no PEP 658 metadata."""
    up = PythonUpstream()
    up.add("alpha", "1.0", before(days=30), with_metadata=False)
    up.add("alpha", "1.1", before(days=1), requires=("beta>=1.0", 'gamma; python_version < "3"'))
    up.add("alpha", "2.0", after(days=1), requires=("beta>=1.6",))
    up.add("beta", "1.0", before(days=60), requires_python=">=3.8")
    up.add("beta", "1.5", before(hours=2), requires=('delta; extra == "fast"',))
    up.add("beta", "1.6", after(hours=1))
    up.add("beta", "1.7", before(days=3), requires_python="<3")  # never installable on 3.11
    up.add("Gamma_Pkg", "0.3", before(days=5))
    return up


# ----------------------------------------------------------------------------- npm


def make_tarball(name: str, version: str, deps: dict[str, str] | None = None) -> bytes:
    """A real npm tarball: ``package/package.json`` and an index.js."""
    manifest = {"name": name, "version": version, "main": "index.js"}
    if deps:
        manifest["dependencies"] = deps  # type: ignore[assignment]
    files = {
        "package/package.json": json.dumps(manifest, indent=2).encode(),
        "package/index.js": f"module.exports = {json.dumps(version)};\n".encode(),
    }
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for path, data in files.items():
            info = tarfile.TarInfo(path)
            info.size = len(data)
            info.mtime = 499162500
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def npm_integrity(data: bytes) -> str:
    return "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()


# ----------------------------------------------------------------------------- serving


class RequestLog:
    """ASGI middleware that notes each request's method, path and Range header."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.seen: list[tuple[str, str, str | None]] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = dict(scope["headers"])
            rng = headers.get(b"range")
            self.seen.append((scope["method"], scope["path"], rng.decode() if rng else None))
        await self.app(scope, receive, send)


@dataclass
class NpmUpFile:
    name: str
    version: str
    published: datetime
    tarball: bytes
    manifest: dict[str, object]


def npm_version(
    name: str, version: str, published: datetime, deps: dict[str, str] | None = None
) -> NpmUpFile:
    """One published version as registry.npmjs.org lists it: its manifest and tarball."""
    data = make_tarball(name, version, deps)
    bare = name.rsplit("/", 1)[-1]
    manifest: dict[str, object] = {
        "name": name,
        "version": version,
        "main": "index.js",
        "description": f"{name} for the registry tests",
        "license": "MIT",
        "_id": f"{name}@{version}",
        "dist": {
            "tarball": f"https://registry.npmjs.org/{name}/-/{bare}-{version}.tgz",
            "shasum": hashlib.sha1(data).hexdigest(),
            "integrity": npm_integrity(data),
        },
    }
    if deps:
        manifest["dependencies"] = deps
    return NpmUpFile(name, version, published, data, manifest)


def standard_npm() -> list[NpmUpFile]:
    """widget and @acme/util, each with versions on both sides of T and a prerelease."""
    return [
        npm_version("@acme/util", "0.1.0", before(days=5)),
        npm_version("@acme/util", "0.1.1", before(days=2)),
        npm_version("@acme/util", "0.2.0", after(days=2)),
        npm_version("widget", "1.0.0", before(days=10)),
        npm_version("widget", "1.1.0", before(days=1), {"@acme/util": "^0.1.0"}),
        npm_version("widget", "1.2.0-beta.1", before(hours=2)),
        npm_version("widget", "2.0.0", after(days=1), {"@acme/util": "^0.2.0"}),
    ]


def npm_upstream_app(versions: list[NpmUpFile]) -> Starlette:
    """A stand-in for registry.npmjs.org: full packuments with ``time``, and tarballs.

    Its ``latest`` is the newest version of all, as the live registry's would be today.
    """

    def tarball_path(v: NpmUpFile) -> str:
        return f"/{v.name}/-/{v.name.rsplit('/', 1)[-1]}-{v.version}.tgz"

    async def anything(request: Request) -> Response:
        path = "/" + request.path_params["path"]
        origin = f"http://{request.url.netloc}"
        for v in versions:
            if path == tarball_path(v):
                return Response(v.tarball, media_type="application/octet-stream")
        mine = [v for v in versions if v.name == path.lstrip("/")]
        if not mine:
            return Response('{"error":"Not found"}', status_code=404)
        docs = {}
        for v in mine:
            manifest = json.loads(json.dumps(v.manifest))
            manifest["dist"]["tarball"] = origin + tarball_path(v)
            docs[v.version] = manifest
        stamp = {v.version: v.published.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z" for v in mine}
        body = {
            "_id": mine[0].name,
            "name": mine[0].name,
            "dist-tags": {"latest": mine[-1].version},
            "versions": docs,
            "time": {"created": min(stamp.values()), "modified": max(stamp.values()), **stamp},
        }
        return Response(json.dumps(body), media_type="application/json")

    return Starlette(routes=[Route("/{path:path}", anything)])


def call_like_mitmproxy(
    app: ASGIApp,
    raw_path: bytes,
    headers: dict[str, str] | None = None,
    method: str = "GET",
    server: tuple[str, int] | None = None,
) -> tuple[int, dict[str, str], bytes]:
    """Call ``app`` with the scope mitmproxy 11's ``ASGIApp`` builds (its ``make_scope``).

    mitmproxy percent-encodes the path it passes (``quote_from_bytes``), gives ``raw_path``
    as a str with the query, an upper-case scheme, and no ``server``.
    """
    import asyncio
    import urllib.parse

    quoted = urllib.parse.quote_from_bytes(raw_path).split("%3F", maxsplit=1)
    scope = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.1"},
        "http_version": "1.1",
        "method": method,
        "scheme": "HTTPS",
        "path": quoted[0],
        "raw_path": raw_path.decode(),
        "query_string": urllib.parse.unquote(quoted[1]).encode() if len(quoted) > 1 else b"",
        "headers": [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()],
        "client": ("127.0.0.1", 50000),
        "extensions": {},
    }
    if server is not None:
        scope["server"] = server
    out: dict[str, object] = {"body": b""}
    received: list[bool] = []

    async def receive() -> dict[str, object]:
        if not received:  # as mitmproxy: the body once, then wait (it never disconnects)
            received.append(True)
            return {"type": "http.request", "body": b""}
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    async def send(event: dict[str, object]) -> None:
        if event["type"] == "http.response.start":
            out["status"] = event["status"]
            out["headers"] = {
                k.decode(): v.decode()
                for k, v in event.get("headers", [])  # type: ignore[attr-defined]
            }
        else:
            out["body"] = out["body"] + event.get("body", b"")  # type: ignore[operator]

    asyncio.run(app(scope, receive, send))  # type: ignore[arg-type]
    return out["status"], out["headers"], out["body"]  # type: ignore[return-value]
