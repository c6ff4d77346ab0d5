"""Real curl in a sandbox reads the docs cache through the gateway, over HTTP/2 and HTTP/1.1."""

from __future__ import annotations

import shutil
from datetime import timedelta
from pathlib import Path

import pytest

from replay.base.blobs import BlobStore
from replay.docs import record_pages
from replay.docs.cache import Fetched
from replay.runtime import Runtime, Sandbox, SandboxConfig
from replay.snapshot import load_snapshot
from tests.gateway.conftest import DEMO, start_gateway, stop_gateway

HOST = "docs.semverkit.test"
PAGE = b"<h1>Ranges</h1><p>recorded at T</p>\n"


def _docs_world(tmp: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """The demo snapshot with one docs page recorded, in a blob store of its own (a copy of
    the repository's: nothing is written there)."""
    blobs = tmp / "blobs"
    shutil.copytree(DEMO.parents[0] / "blobs", blobs)
    monkeypatch.setenv("REPLAY_BLOBS", str(blobs))
    snap = tmp / "snap"
    shutil.copytree(DEMO, snap)
    at = load_snapshot(snap, blobs).at

    def fetch(url: str) -> Fetched:
        return Fetched(200, "text/html; charset=utf-8", PAGE, at - timedelta(days=1))

    record_pages(snap, [f"https://{HOST}/guide/ranges.html"], blobs=BlobStore(blobs), fetch=fetch)
    return snap, blobs


def test_curl_reads_the_docs_cache_over_http2_and_http1(
    runtime: Runtime,
    base_image: str,
    run_root: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``curl --http2`` gets HTTP/2 from the gateway (ALPN ``h2``) and the page recorded at
    T; a page not recorded is a 404 naming its full URL, host included (HTTP/2 carries the
    host in ``:authority``); ``curl --http1.1`` gets the same page."""
    snap, blobs = _docs_world(tmp_path, monkeypatch)
    (tmp_path / "gw").mkdir()
    gw = start_gateway(tmp_path / "gw", str(snap), env={"REPLAY_BLOBS": str(blobs)})
    try:
        with Sandbox(runtime, gw.state, SandboxConfig(image=base_image)) as box:
            url = f"https://{HOST}/guide/ranges.html"
            fmt = "'%{http_version} %{http_code}'"
            h2 = box.sh(f"curl --http2 -sS -o /tmp/page -w {fmt} {url}", timeout=30)
            assert h2.out == "2 200", h2.err
            assert box.exec(["cat", "/tmp/page"]).out.encode() == PAGE
            h1 = box.sh(f"curl --http1.1 -sS -o /tmp/page1 -w {fmt} {url}", timeout=30)
            assert h1.out == "1.1 200", h1.err
            assert box.exec(["cat", "/tmp/page1"]).out.encode() == PAGE
            miss = box.sh(
                f"curl --http2 -sS -o /tmp/miss -w {fmt} https://{HOST}/guide/none.html",
                timeout=30,
            )
            assert miss.out == "2 404", miss.err
            body = box.exec(["cat", "/tmp/miss"]).out
            assert body == f"not in the documentation cache at T: https://{HOST}/guide/none.html\n"
        misses = [e for e in gw.events() if e["kind"] == "docs.miss"]
        assert [e["data"] for e in misses] == [
            {"url": f"https://{HOST}/guide/none.html", "host": HOST}
        ]
    finally:
        stop_gateway(gw)
