"""Recording documentation pages into a snapshot, and serving them back, read-only.

Recording fetches each URL once (with the network, on the machine that builds the case),
stores the body in the shared blob store and lists it in the snapshot's ``docs/index.json``.
A page fetched today is today's page: for a T in the past, record through a web archive
(``archive=`` a URL template such as ``https://web.archive.org/web/{stamp}id_/{url}``), whose
capture time (``Memento-Datetime``) becomes the page's ``fetched_at``. Through an archive,
a page it cannot date at or before T is refused (an archive with no copy at T redirects to the
nearest one, which may be later). Without one, the page is stamped now, and the snapshot audit
flags any page fetched after T.
Serving never touches the network: a recorded URL gets its recorded body; any other path on
a recorded host is a 404 and a ``docs.miss`` event; anything but GET or HEAD is a 405.
"""

from __future__ import annotations

import urllib.request
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import urlsplit

from fastapi import FastAPI, Request
from fastapi.responses import PlainTextResponse, Response

from replay.base.blobs import BlobStore
from replay.base.errors import ReplayError
from replay.base.formats import dump_json
from replay.base.manifest import DocsIndex, DocsPage
from replay.base.snapshot import Snapshot, load_snapshot
from replay.snapshot.edit import write_part

INDEX = "docs/index.json"
Recorder = Callable[[str, str, str, dict[str, Any]], None]
"""(service, kind, url, data): how the serving app reports a miss to the event log."""


class DocsError(ReplayError):
    """A page could not be recorded."""


def _key(url: str) -> str:
    parts = urlsplit(url)
    path = parts.path or "/"
    return f"{parts.scheme}://{(parts.hostname or '').lower()}{path}" + (
        f"?{parts.query}" if parts.query else ""
    )


class DocsCache:
    """The recorded pages of one snapshot, by normalised URL."""

    def __init__(self, index: DocsIndex, blobs: BlobStore) -> None:
        self.blobs = blobs
        self.pages = {_key(p.url): p for p in index.pages}

    @classmethod
    def from_snapshot(cls, snapshot: Snapshot, blobs: BlobStore | None = None) -> DocsCache:
        return cls(snapshot.docs, blobs or BlobStore())

    @property
    def hosts(self) -> frozenset[str]:
        return frozenset((urlsplit(u).hostname or "").lower() for u in self.pages)

    def lookup(self, url: str) -> DocsPage | None:
        return self.pages.get(_key(url))


def docs_app(cache: DocsCache, on_miss: Recorder | None = None) -> FastAPI:
    """An ASGI app answering for every recorded host, by the Host header."""
    app = FastAPI(docs_url=None, redoc_url=None, openapi_url=None)

    @app.api_route("/{path:path}", methods=["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"])
    def page(request: Request, path: str) -> Response:
        host = (request.headers.get("host") or "").split(":")[0].lower()
        query = request.url.query
        url = f"https://{host}/{path}" + (f"?{query}" if query else "")
        if request.method not in ("GET", "HEAD"):
            return PlainTextResponse(
                "read-only documentation cache\n", status_code=405, headers={"allow": "GET, HEAD"}
            )
        found = cache.lookup(url)
        if found is None:
            if on_miss is not None:
                on_miss("docs", "docs.miss", url, {"url": url, "host": host})
            return PlainTextResponse(f"not in the documentation cache at T: {url}\n", 404)
        body = cache.blobs.read(found.sha256)
        return Response(
            body if request.method == "GET" else b"",
            status_code=found.status,
            media_type=found.content_type,
            headers={"content-length": str(len(body))},
        )

    return app


Fetched = tuple[int, str, bytes, datetime | None]
"""status, content type, body, and the capture time an archive reported (if any)."""
Fetch = Callable[[str], Fetched]


def _urllib_fetch(url: str) -> Fetched:
    request = urllib.request.Request(url, headers={"User-Agent": "replay-docs-recorder"})
    with urllib.request.urlopen(request, timeout=30) as response:
        memento = response.headers.get("memento-datetime")
        captured = None
        if memento:
            try:
                captured = parsedate_to_datetime(memento)
            except (TypeError, ValueError) as exc:
                raise DocsError(f"{url}: unreadable Memento-Datetime {memento!r}") from exc
        ctype = response.headers.get("content-type", "text/html")
        return response.status, ctype, response.read(), captured


def archive_source(archive: str, at: datetime, url: str) -> str:
    """Where an archive keeps ``url`` as of ``at``: the template with ``{stamp}`` and ``{url}``.

    ``{stamp}`` is ``at`` in UTC as ``YYYYmmddHHMMSS``, the Wayback Machine's spelling
    (``https://web.archive.org/web/{stamp}id_/{url}``: ``id_`` asks for the page as archived,
    without the archive's toolbar). A template without both fields is an error.
    """
    for needed in ("{stamp}", "{url}"):
        if needed not in archive:
            raise DocsError(f"archive template {archive!r} has no {needed}")
    stamp = at.astimezone(UTC).strftime("%Y%m%d%H%M%S")
    try:
        return archive.format(stamp=stamp, url=url)
    except (KeyError, IndexError, ValueError) as exc:
        raise DocsError(
            f"archive template {archive!r}: only {{stamp}} and {{url}} may be in braces"
        ) from exc


def record_pages(
    snapshot_dir: Any,
    urls: Iterable[str],
    *,
    blobs: BlobStore | None = None,
    fetch: Fetch = _urllib_fetch,
    archive: str | None = None,
    now: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> list[DocsPage]:
    """Fetch ``urls`` and add them to the snapshot's docs index (replacing same-URL entries).

    With ``archive`` (a template with ``{stamp}`` and ``{url}``, see :func:`archive_source`),
    each page is fetched as the archive held it at the snapshot's T, and must be dated by the
    archive (``Memento-Datetime``) at or before T: an archive with no copy at T answers with
    the nearest copy, often a later one, and a page from after T would make every run refuse
    the snapshot (the audit's ``dated_after``). Any error leaves the snapshot unchanged.
    """
    snapshot = load_snapshot(snapshot_dir)
    at = snapshot.at
    store = blobs or BlobStore()
    pages = {_key(p.url): p for p in snapshot.docs.pages}
    added = []
    for url in urls:
        if urlsplit(url).scheme not in ("http", "https"):
            raise DocsError(f"{url}: only http and https pages can be recorded")
        source = url if archive is None else archive_source(archive, at, url)
        try:
            status, content_type, body, captured = fetch(source)
        except OSError as exc:
            raise DocsError(f"{url}: could not fetch {source}: {exc}") from exc
        if captured is not None and captured.tzinfo is None:
            captured = captured.replace(tzinfo=UTC)  # RFC 7089: Memento-Datetime is GMT
        if archive is not None:
            if captured is None:
                raise DocsError(
                    f"{url}: the archive sent no Memento-Datetime for {source}, so the page "
                    f"cannot be dated at or before T ({at.isoformat()})"
                )
            if captured > at:
                raise DocsError(
                    f"{url}: the archive has no copy at or before T ({at.isoformat()}): "
                    f"asked for {source}, it served the copy of {captured.isoformat()}"
                )
        page = DocsPage(
            url=url,
            status=status,
            content_type=content_type,
            sha256=store.put_bytes(body),
            fetched_at=captured or now(),
        )
        pages[_key(url)] = page
        added.append(page)
    index = DocsIndex(schema=1, pages=sorted(pages.values(), key=lambda p: p.url))
    data = dump_json(index.model_dump(mode="json", by_alias=True)).encode()
    write_part(snapshot.path, INDEX, data, slot="docs")
    return added
