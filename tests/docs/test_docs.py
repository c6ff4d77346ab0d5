"""The docs cache: recorded once into a snapshot, served read-only, misses are events."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.responses import HTMLResponse
from fastapi.testclient import TestClient

from replay.base.blobs import BlobStore
from replay.docs import DocsCache, docs_app, record_pages
from replay.docs.cache import DocsError
from replay.snapshot import load_snapshot
from replay.snapshot.audit import dated_after
from tests.serving import serving


def site() -> FastAPI:
    app = FastAPI()

    @app.get("/guide/ranges.html")
    def ranges() -> HTMLResponse:
        return HTMLResponse(
            "<h1>Ranges</h1>", headers={"memento-datetime": "Tue, 10 Mar 2026 08:00:00 GMT"}
        )

    @app.get("/live.html")
    def live() -> HTMLResponse:
        return HTMLResponse("<h1>today</h1>")

    return app


@pytest.fixture()
def snap(tiny_snapshot_dir: Path, tmp_path: Path) -> Path:
    dest = tmp_path / "snap"
    shutil.copytree(tiny_snapshot_dir, dest)
    return dest


def test_record_serve_and_miss(snap: Path, tmp_path: Path) -> None:
    blobs = BlobStore(tmp_path / "blobs")
    with serving(site()) as base:
        # Record through an "archive" (the stand-in), as one would for a T in the past.
        pages = record_pages(
            snap,
            ["https://docs.example.test/guide/ranges.html"],
            blobs=blobs,
            archive=base + "/guide/ranges.html#{stamp}{url}",
        )
    (page,) = pages
    assert page.fetched_at == datetime(2026, 3, 10, 8, tzinfo=UTC)
    snapshot = load_snapshot(snap)  # every hash still verifies
    assert [p.url for p in snapshot.docs.pages] == ["https://docs.example.test/guide/ranges.html"]
    assert dated_after(snapshot) == []
    misses: list[tuple[Any, ...]] = []
    cache = DocsCache.from_snapshot(snapshot, blobs)
    assert cache.hosts == {"docs.example.test"}
    client = TestClient(
        docs_app(cache, lambda *a: misses.append(a)), base_url="https://docs.example.test"
    )
    hit = client.get("/guide/ranges.html", headers={"host": "docs.example.test"})
    assert hit.status_code == 200 and hit.text == "<h1>Ranges</h1>"
    assert hit.headers["content-type"].startswith("text/html")
    head = client.head("/guide/ranges.html", headers={"host": "docs.example.test"})
    assert head.status_code == 200 and head.content == b""
    miss = client.get("/guide/other.html", headers={"host": "docs.example.test"})
    assert miss.status_code == 404
    assert misses == [
        (
            "docs",
            "docs.miss",
            "https://docs.example.test/guide/other.html",
            {"url": "https://docs.example.test/guide/other.html", "host": "docs.example.test"},
        )
    ]
    assert (
        client.post("/guide/ranges.html", headers={"host": "docs.example.test"}).status_code == 405
    )


def test_a_page_fetched_after_t_is_flagged(snap: Path, tmp_path: Path) -> None:
    with serving(site()) as base:
        record_pages(snap, [f"{base}/live.html"], blobs=BlobStore(tmp_path / "blobs"))
    findings = dated_after(load_snapshot(snap))
    assert len(findings) == 1 and "live.html was fetched" in findings[0]


def test_unreachable_page_is_a_clear_error_and_changes_nothing(snap: Path, tmp_path: Path) -> None:
    before = (snap / "manifest.json").read_bytes()
    with pytest.raises(DocsError, match="could not fetch"):
        record_pages(snap, ["http://127.0.0.1:9/nothing"], blobs=BlobStore(tmp_path / "b"))
    with pytest.raises(DocsError, match="only http and https"):
        record_pages(snap, ["ftp://example.test/x"], blobs=BlobStore(tmp_path / "b"))
    assert (snap / "manifest.json").read_bytes() == before


def test_through_an_archive_a_page_not_dated_at_or_before_t_is_refused(
    snap: Path, tmp_path: Path
) -> None:
    """An archive without a copy at T serves its nearest one: later, or undated, is an error."""
    app = FastAPI()

    @app.get("/web/{stamp}/{url:path}")
    def memento(stamp: str, url: str) -> HTMLResponse:
        if url.endswith("/late.html"):
            return HTMLResponse(
                "<h1>late</h1>", headers={"memento-datetime": "Sun, 15 Mar 2026 12:00:00 GMT"}
            )
        return HTMLResponse("<h1>undated</h1>")

    before = (snap / "manifest.json").read_bytes()
    blobs = BlobStore(tmp_path / "blobs")
    with serving(app) as base:
        archive = f"{base}/web/{{stamp}}/{{url}}"
        with pytest.raises(DocsError, match="no copy at or before T") as exc:
            record_pages(snap, ["https://d.test/late.html"], blobs=blobs, archive=archive)
        assert "2026-03-15T12:00:00+00:00" in str(exc.value)
        with pytest.raises(DocsError, match="no Memento-Datetime"):
            record_pages(snap, ["https://d.test/undated.html"], blobs=blobs, archive=archive)
    with pytest.raises(DocsError, match=r"has no \{url\}"):
        record_pages(snap, ["https://d.test/x"], blobs=blobs, archive="http://a.test/{stamp}")
    assert (snap / "manifest.json").read_bytes() == before
    assert not (tmp_path / "blobs" / "sha256").exists()  # nothing of a refused page is kept


def test_an_archive_copy_after_t_steps_back_to_the_one_before(snap: Path, tmp_path: Path) -> None:
    """An archive asked for T serves its nearest copy, here one after T; its ``prev memento``
    link leads to the copy before T, which is recorded (issue 16: recording used to refuse
    the page although an earlier copy existed)."""
    app = FastAPI()

    @app.get("/web/{stamp}/{url:path}")
    def memento(stamp: str, url: str) -> HTMLResponse:
        if stamp == "20260301000000":
            return HTMLResponse(
                "<h1>before T</h1>",
                headers={
                    "memento-datetime": "Sun, 01 Mar 2026 00:00:00 GMT",
                    "link": f'</web/20260315120000/{url}>; rel="next memento"; '
                    'datetime="Sun, 15 Mar 2026 12:00:00 GMT"',
                },
            )
        return HTMLResponse(
            "<h1>after T</h1>",
            headers={
                "memento-datetime": "Sun, 15 Mar 2026 12:00:00 GMT",
                "link": f'<https://example.test/{url}>; rel="original", '
                f'</web/20260301000000/{url}>; rel="prev memento"; '
                'datetime="Sun, 01 Mar 2026 00:00:00 GMT"',
            },
        )

    blobs = BlobStore(tmp_path / "blobs")
    with serving(app) as base:
        (page,) = record_pages(
            snap,
            ["https://d.test/guide.html"],
            blobs=blobs,
            archive=f"{base}/web/{{stamp}}/{{url}}",
        )
    assert page.fetched_at == datetime(2026, 3, 1, tzinfo=UTC)
    assert blobs.read(page.sha256) == b"<h1>before T</h1>"
    assert dated_after(load_snapshot(snap)) == []


def test_http2_and_both_schemes_are_served(snap: Path, tmp_path: Path) -> None:
    """Through the gateway an HTTP/2 request has no Host header (``:authority`` instead), and
    the gateway passes the host as the scope's server; a page recorded as ``http://`` is
    served to ``https://`` requests too, and the other way round."""
    pages = {"/guide/ranges.html": "https", "/old/plain.html": "http"}
    with serving(site()) as base:
        for path, scheme in pages.items():
            record_pages(
                snap,
                [f"{scheme}://docs.example.test{path}"],
                blobs=BlobStore(tmp_path / "blobs"),
                archive=base + "/guide/ranges.html#{stamp}{url}",
            )
    misses: list[tuple[Any, ...]] = []
    app = docs_app(
        DocsCache.from_snapshot(load_snapshot(snap), BlobStore(tmp_path / "blobs")),
        lambda *a: misses.append(a),
    )
    for path in pages:
        status, body = _http2_get(app, path)
        assert (status, body) == (200, b"<h1>Ranges</h1>"), path
    assert _http2_get(app, "/guide/none.html")[0] == 404
    assert misses[-1][3] == {
        "url": "https://docs.example.test/guide/none.html",
        "host": "docs.example.test",
    }


def _http2_get(app: Any, path: str) -> tuple[int, bytes]:
    """GET ``path`` with the scope the gateway builds for an HTTP/2 request over TLS
    (:func:`replay.gateway.asgi.scope_for`): no ``host`` header, the host as the server."""
    import asyncio

    scope = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "2",
        "method": "GET",
        "scheme": "https",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": b"",
        "headers": [(b"user-agent", b"curl/8.14.1"), (b"accept", b"*/*")],
        "client": ("127.0.0.1", 50000),
        "server": ("docs.example.test", 443),
    }
    out: dict[str, Any] = {"body": b""}

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            out["status"] = message["status"]
        elif message["type"] == "http.response.body":
            out["body"] += message.get("body", b"")

    asyncio.run(app(scope, receive, send))
    return int(out["status"]), bytes(out["body"])
