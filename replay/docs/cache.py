"""Recording documentation pages into a snapshot, and serving them back, read-only.

Recording fetches each URL once (with the network, on the machine that builds the case),
stores the body in the shared blob store and lists it in the snapshot's ``docs/index.json``.
A page fetched today is today's page: for a T in the past, record through a web archive
(``archive=`` a URL template such as ``https://web.archive.org/web/{stamp}id_/{url}``), whose
capture time (``Memento-Datetime``) becomes the page's ``fetched_at``. Through an archive,
a page it cannot date at or before T is refused (an archive with no copy at T redirects to the
nearest one, which may be later: recording then steps back along the archive's
``prev memento`` links, RFC 7089, to the latest copy at or before T). Without one, the page
is stamped now, and the snapshot audit flags any page fetched after T.
Serving never touches the network: a recorded URL gets its recorded body; any other path on
a recorded host is a 404 and a ``docs.miss`` event; anything but GET or HEAD is a 405.
"""

from __future__ import annotations

import re
import urllib.request
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any, NamedTuple
from urllib.parse import urljoin, urlsplit

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
    """An ASGI app answering for every recorded host.

    The host is the ``Host`` header, else the scope's ``server``: an HTTP/2 request carries
    ``:authority`` instead of ``Host``, and the gateway passes it as the server. A page is
    found under the scheme the request came with, else under the other one (a page recorded
    as ``http://`` is served to an ``https://`` request and the other way round: a site that
    moved to HTTPS serves the same page on both)."""
    app = FastAPI(docs_url=None, redoc_url=None, openapi_url=None)

    @app.api_route("/{path:path}", methods=["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"])
    def page(request: Request, path: str) -> Response:
        host = (request.url.hostname or "").lower()
        scheme = "http" if request.url.scheme.lower() == "http" else "https"
        query = request.url.query
        tail = f"{host}/{path}" + (f"?{query}" if query else "")
        url = f"{scheme}://{tail}"
        if request.method not in ("GET", "HEAD"):
            return PlainTextResponse(
                "read-only documentation cache\n", status_code=405, headers={"allow": "GET, HEAD"}
            )
        other = "https" if scheme == "http" else "http"
        found = cache.lookup(url) or cache.lookup(f"{other}://{tail}")
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


class Fetched(NamedTuple):
    """A fetched page, and what an archive said of its copy."""

    status: int
    content_type: str
    body: bytes
    captured: datetime | None = None
    """The copy's capture time (``Memento-Datetime``), when an archive served it."""
    prev: str | None = None
    """The archive's previous copy (RFC 7089 ``Link: <...>; rel="prev memento"``)."""


Fetch = Callable[[str], Fetched]
MAX_STEPS_BACK = 5
"""How many ``prev memento`` links recording follows back towards T before giving up."""

_LINK = re.compile(r'<([^>]*)>\s*((?:;\s*[\w-]+\s*=\s*(?:"[^"]*"|[^;,]*)\s*)*)')


def prev_memento(link: str | None, base: str) -> str | None:
    """The ``prev memento`` target of a ``Link`` header (absolute), if it has one."""
    for target, params in _LINK.findall(link or ""):
        rel = re.search(r'rel\s*=\s*"?([^";]*)"?', params)
        if rel and {"prev", "memento"} <= set(rel.group(1).split()):
            return str(urljoin(base, target))
    return None


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
        prev = prev_memento(response.headers.get("link"), response.geturl())
        return Fetched(response.status, ctype, response.read(), captured, prev)


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
        got = _fetch(fetch, url, source)
        # An archive with no copy at T serves the nearest one, which may be later although
        # an earlier one exists: step back along its "prev memento" links to the latest copy
        # at or before T.
        steps = 0
        while archive is not None and got.prev and _after(got.captured, at):
            if steps == MAX_STEPS_BACK:
                break
            source, steps = got.prev, steps + 1
            got = _fetch(fetch, url, source)
        status, content_type, body, captured = got[:4]
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


def _fetch(fetch: Fetch, url: str, source: str) -> Fetched:
    try:
        return fetch(source)
    except OSError as exc:
        raise DocsError(f"{url}: could not fetch {source}: {exc}") from exc


def _after(captured: datetime | None, at: datetime) -> bool:
    if captured is None:
        return False
    return (captured if captured.tzinfo else captured.replace(tzinfo=UTC)) > at
