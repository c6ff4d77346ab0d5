"""Serving the registry frozen at T: ASGI apps for PyPI's and npm's hosts.

Two ways to mount it:

- :func:`host_apps` gives one app per real host name (``pypi.org``, ``files.pythonhosted.org``,
  ``registry.npmjs.org``); each lists URLs exactly as upstream had them. This is what the
  gateway mounts, routing by host itself.
- :func:`registry_app` is one app that routes by the ``Host`` header: a real host name goes to
  its app; any other host (``127.0.0.1:8000``) gets everything on one origin, with file URLs
  rewritten onto it: ``/simple/``, ``/pypi/``, ``/packages/`` and npm under ``/npm/``.

Serving never touches the network: it reads the snapshot's index and the blob store only.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from urllib.parse import unquote

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import (
    FileResponse,
    HTMLResponse,
    JSONResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
)
from starlette.routing import Mount, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from replay.base.blobs import BlobError, BlobStore
from replay.base.manifest import NpmVersion, PythonFile, RegistryIndex
from replay.base.snapshot import Snapshot
from replay.registry import npm, pypi

log = logging.getLogger(__name__)

HOSTS = (pypi.INDEX_HOST, pypi.FILES_HOST, npm.REGISTRY_HOST)
NPM_PREFIX = "/npm"


class Registry:
    """What one snapshot's registry serves: its files at or before T, and the blob store."""

    def __init__(self, index: RegistryIndex, at: datetime, blobs: BlobStore) -> None:
        self.at = at
        self.blobs = blobs
        self.python = pypi.Catalog(index.python, at)
        self.npm = npm.NpmCatalog(index.npm, at)
        self._digests: dict[str, dict[str, str]] = {}
        self._lock = threading.Lock()

    @classmethod
    def from_snapshot(cls, snapshot: Snapshot, blobs: BlobStore | None = None) -> Registry:
        return cls(snapshot.registry, snapshot.at, blobs or BlobStore())

    def digests(self, sha256: str) -> dict[str, str]:
        """md5 and blake2b-256 of a blob (PyPI lists them; we store by sha256 only)."""
        with self._lock:
            known = self._digests.get(sha256)
        if known is not None:
            return known
        md5, b2 = hashlib.md5(usedforsecurity=False), hashlib.blake2b(digest_size=32)
        with self.blobs.verified_path(sha256).open("rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                md5.update(block)
                b2.update(block)
        out = {"md5": md5.hexdigest(), "blake2b_256": b2.hexdigest()}
        with self._lock:
            self._digests[sha256] = out
        return out

    def find_file(self, path: str) -> tuple[PythonFile, bool] | None:
        """The file (and whether the path asks for its ``.metadata``) at a files-host path.

        Besides the listed path, PyPI's own path for the file is accepted: PyPI names files
        by the blake2b-256 of their content, so lockfiles that hold PyPI URLs keep working.
        """
        metadata = path.endswith(".metadata")
        base = path.removesuffix(".metadata") if metadata else path
        pf = self.python.by_path.get(base)
        if pf is None:
            pf = self.python.by_filename.get(base.rsplit("/", 1)[-1])
            if pf is None:
                return None
            b2 = self.digests(pf.sha256)["blake2b_256"]
            if base != f"/packages/{b2[:2]}/{b2[2:4]}/{b2[4:]}/{pf.filename}":
                return None
        if metadata and not pf.metadata_sha256:
            return None
        return pf, metadata


# ----------------------------------------------------------------------------- helpers


def _origin(request: Request) -> str:
    return f"{request.url.scheme}://{request.url.netloc}"


def _file_url(request: Request, public: bool) -> pypi.FileUrl:
    if public:
        return pypi.file_url
    origin = _origin(request)
    return lambda pf: origin + pypi.file_path(pf)


def _tarball_url(request: Request, public: bool) -> npm.TarballUrl:
    """Tarballs on the registry's host at their original path (which, for packages recorded
    from registry.npmjs.org, is their original URL), or on the local origin."""

    def url(v: NpmVersion) -> str:
        if public:
            return f"https://{npm.REGISTRY_HOST}{npm.tarball_path(v)}"
        root: str = request.scope.get("root_path", "")
        return _origin(request) + root + npm.tarball_path(v)

    return url


def _blob_response(registry: Registry, sha256: str, media_type: str) -> Response:
    try:
        path = registry.blobs.verified_path(sha256)
    except BlobError as exc:
        log.error("refusing to serve: %s", exc)
        return PlainTextResponse(f"500 Internal Server Error: {exc}\n", status_code=500)
    return FileResponse(path, media_type=media_type, headers={"Accept-Ranges": "bytes"})


def _not_found_html() -> Response:
    return HTMLResponse("<html><body><h1>404 Not Found</h1></body></html>\n", status_code=404)


def _json_not_found() -> Response:
    return JSONResponse({"message": "Not Found"}, status_code=404)


# ----------------------------------------------------------------------------- Python


def _simple_response(request: Request, html_body: Callable[[], str], json_body: object) -> Response:
    chosen = pypi.negotiate(request.headers.get("accept"), request.query_params.get("format"))
    headers = {"Vary": "Accept, Accept-Encoding"}
    if chosen is None:
        return PlainTextResponse("406 Not Acceptable\n", status_code=406, headers=headers)
    if chosen == pypi.JSON_V1:
        return JSONResponse(json_body, media_type=chosen, headers=headers)
    return HTMLResponse(html_body(), media_type=chosen, headers=headers)


def python_routes(registry: Registry, public: bool) -> list[Route]:
    catalog = registry.python

    async def index(request: Request) -> Response:
        body = pypi.simple_index_json(catalog)
        return _simple_response(request, lambda: pypi.simple_index_html(catalog), body)

    async def project(request: Request) -> Response:
        name = request.path_params["project"]
        normal = pypi.normalize(name)
        if name != normal or not request.url.path.endswith("/"):
            target = request.url.replace(
                path=f"{request.scope.get('root_path', '')}/simple/{normal}/"
            )
            return RedirectResponse(str(target), status_code=301)
        found = catalog.project(normal)
        if found is None:
            return _not_found_html()
        url = _file_url(request, public)
        body = pypi.simple_project_json(found, url)
        return _simple_response(request, lambda: pypi.simple_project_html(found, url), body)

    async def redirect_index(request: Request) -> Response:
        return RedirectResponse(str(request.url.replace(path=request.url.path + "/")), 301)

    async def json_api(request: Request) -> Response:
        name = request.path_params["project"]
        version = request.path_params.get("version")
        normal = pypi.normalize(name)
        found = catalog.project(normal)
        if found is None:
            return _json_not_found()
        if name != normal:
            tail = f"/{version}/json" if version else "/json"
            return RedirectResponse(
                str(request.url.replace(path=f"/pypi/{normal}{tail}")), status_code=301
            )
        if version is None:
            version = found.latest()
        elif version not in found.versions:
            return _json_not_found()
        assert version is not None  # a project in the catalog has at least one file
        url = _file_url(request, public)
        files = found.files_of(version)
        meta_sha = next((f.metadata_sha256 for f in files if f.metadata_sha256), None)
        try:
            meta = pypi.parse_metadata(registry.blobs.read(meta_sha)) if meta_sha else None
            body: dict[str, object] = {
                "info": pypi.project_info(found, version, meta, f"https://{pypi.INDEX_HOST}"),
                "last_serial": 0,
            }
            if request.path_params.get("version") is None:
                body["releases"] = {
                    v: [
                        pypi.release_file(f, url, registry.digests(f.sha256))
                        for f in found.files_of(v)
                    ]
                    for v in found.versions
                }
            body["urls"] = [pypi.release_file(f, url, registry.digests(f.sha256)) for f in files]
        except BlobError as exc:
            log.error("refusing to serve: %s", exc)
            return PlainTextResponse(f"500 Internal Server Error: {exc}\n", status_code=500)
        body["vulnerabilities"] = []
        return JSONResponse(body)

    return [
        Route("/simple", redirect_index),
        Route("/simple/", index),
        Route("/simple/{project}/", project),
        Route("/simple/{project}", project),
        Route("/pypi/{project}/json", json_api),
        Route("/pypi/{project}/{version}/json", json_api),
    ]


def file_routes(registry: Registry) -> list[Route]:
    async def download(request: Request) -> Response:
        found = registry.find_file("/packages/" + request.path_params["path"])
        if found is None:
            return PlainTextResponse("Not Found\n", status_code=404)
        pf, metadata = found
        if metadata:
            assert pf.metadata_sha256 is not None
            return _blob_response(registry, pf.metadata_sha256, "binary/octet-stream")
        return _blob_response(registry, pf.sha256, "binary/octet-stream")

    return [Route("/packages/{path:path}", download)]


# ----------------------------------------------------------------------------- npm


def npm_routes(registry: Registry, public: bool) -> list[Route]:
    catalog = registry.npm

    def not_found() -> Response:
        return JSONResponse({"error": "Not found"}, status_code=404)

    async def anything(request: Request) -> Response:
        path = "/" + request.path_params["path"]
        if "/-/" in path:
            v = catalog.by_path.get(path) or next(
                (x for p, x in catalog.by_path.items() if unquote(p) == path), None
            )
            if v is None:
                return not_found()
            return _blob_response(registry, v.tarball_sha256, "application/octet-stream")
        parts = path.strip("/").split("/")
        if parts[0].startswith("@") and len(parts) >= 2:
            name, rest = f"{parts[0]}/{parts[1]}", parts[2:]
        else:
            name, rest = parts[0], parts[1:]
        pkg = catalog.packages.get(name)
        if pkg is None or len(rest) > 1:
            return not_found()
        url = _tarball_url(request, public)
        if rest:
            wanted = pkg.dist_tags().get(rest[0], rest[0])
            match = next((v for v in pkg.versions if v.version == wanted), None)
            if match is None:
                return not_found()
            return JSONResponse(npm.version_document(match, url))
        if npm.wants_abbreviated(request.headers.get("accept")):
            return JSONResponse(npm.abbreviated_packument(pkg, url), media_type=npm.ABBREVIATED)
        return JSONResponse(npm.full_packument(pkg, url))

    return [Route("/{path:path}", anything)]


# ----------------------------------------------------------------------------- apps


class DecodedPath:
    """Hands the app a fully percent-decoded ``path``, whoever built the scope.

    uvicorn decodes the path once; mitmproxy's ``ASGIApp`` passes it percent-*encoded*
    (``/@scope%2fname`` arrives as ``/%40scope%252fname``). No name, version or file name
    on these registries may contain ``%``, so decoding until nothing changes is safe.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            path = scope["path"]
            while "%" in path and unquote(path) != path:
                path = unquote(path)
            scope = {**scope, "path": path}
        await self.app(scope, receive, send)


def host_apps(registry: Registry) -> dict[str, ASGIApp]:
    """One app per real host name, each listing upstream's original URLs."""
    return {
        pypi.INDEX_HOST: DecodedPath(Starlette(routes=python_routes(registry, public=True))),
        pypi.FILES_HOST: DecodedPath(Starlette(routes=file_routes(registry))),
        npm.REGISTRY_HOST: DecodedPath(Starlette(routes=npm_routes(registry, public=True))),
    }


def local_app(registry: Registry) -> ASGIApp:
    """Everything on one origin, URLs rewritten onto it; npm's registry is under ``/npm/``."""
    routes: list[Route | Mount] = [*python_routes(registry, False), *file_routes(registry)]
    routes.append(Mount(NPM_PREFIX, routes=npm_routes(registry, public=False)))
    return DecodedPath(Starlette(routes=routes))


class HostRouter:
    """Routes by host: a real host name to its app, any other to the local layout.

    The host is the ``Host`` header, else the scope's ``server`` (HTTP/2 requests carry
    ``:authority`` instead of ``Host``, and a proxy may pass it only as the server).
    """

    def __init__(self, registry: Registry) -> None:
        self.apps = host_apps(registry)
        self.local = local_app(registry)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        app = self.local
        if scope["type"] in ("http", "websocket"):
            host = next((v.decode("latin-1") for k, v in scope["headers"] if k == b"host"), None)
            if host is None and scope.get("server"):
                host = str(scope["server"][0])
            if host:
                app = self.apps.get(host.rsplit(":", 1)[0].lower(), self.local)
        await app(scope, receive, send)


def registry_app(registry: Registry) -> ASGIApp:
    return HostRouter(registry)


def serve_snapshot(snapshot: Snapshot | Path, blobs: BlobStore | None = None) -> ASGIApp:
    """The Host-routing app for a snapshot (a loaded one, or its directory)."""
    if isinstance(snapshot, Path):
        from replay.snapshot import load_snapshot

        snapshot = load_snapshot(snapshot)
    return registry_app(Registry.from_snapshot(snapshot, blobs))


__all__ = [
    "HOSTS",
    "NPM_PREFIX",
    "DecodedPath",
    "HostRouter",
    "Registry",
    "host_apps",
    "local_app",
    "registry_app",
    "serve_snapshot",
]
