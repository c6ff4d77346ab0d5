"""Capture records the registry and docs caches as they stood at T, end to end over HTTP.

Three servers on 127.0.0.1: the GitHub fake serving a world cut after T, a PyPI stand-in
(PEP 691 JSON with upload times) holding releases on both sides of T, and a Wayback-like
archive that answers a request for T's stamp with its nearest copy: one page it holds from
before T, one it holds only from after T (reached by a redirect, as the Wayback Machine does).
"""

from __future__ import annotations

import hashlib
import re
import shutil
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route
from typer.testing import CliRunner

from fakes.core import build_world
from replay.base.blobs import BlobStore
from replay.capture.common import CaptureError
from replay.capture.snapshot import CaptureConfig, GitHubSource, capture_snapshot
from replay.docs.cache import DocsError
from replay.snapshot import build_snapshot, load_snapshot
from replay.snapshot.audit import audit
from tests import worlds
from tests.capture.serving import HostAs, serve
from tests.cli_helpers import assert_one_line_error, run_cli
from tests.registry.helpers import PythonUpstream, after, before
from tests.serving import serving

T = datetime.fromisoformat(worlds.T)
LATER = datetime(2026, 3, 20, tzinfo=UTC)
GH_TOKEN = "ghp_capturetoken0000000000000000000000"

GUIDE = "https://docs.example.test/guide.html"
"""The archive holds a copy from before T."""
NEWS = "https://docs.example.test/news.html"
"""The archive's only copy is from after T: asked for T, it redirects there."""
GUIDE_AT = datetime(2026, 3, 10, 8, 0, tzinfo=UTC)
NEWS_AT = datetime(2026, 3, 15, 12, 0, tzinfo=UTC)
GUIDE_BODY = b"<h1>Guide</h1><p>as of March 10</p>"


def _http_date(when: datetime) -> str:
    return when.strftime("%a, %d %b %Y %H:%M:%S GMT")


class Archive:
    """A stand-in for web.archive.org's ``/web/<stamp>id_/<url>`` (RFC 7089 Memento headers)."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, str]] = []
        self.copies = {
            GUIDE: (GUIDE_AT, GUIDE_BODY),
            NEWS: (NEWS_AT, b"<h1>News</h1><p>the release after T</p>"),
        }

    def app(self) -> Starlette:
        async def memento(request: Request) -> Response:
            # Parsed by hand: the archived URL keeps its "//", which routing would not.
            found = re.fullmatch(r"/web/(\d{14})id_/(.+)", request.url.path)
            if found is None:
                return Response("not found", status_code=404)
            stamp, url = found.groups()
            self.asked.append((stamp, url))
            if url not in self.copies:
                return Response("not archived", status_code=404)
            when, body = self.copies[url]
            nearest = when.strftime("%Y%m%d%H%M%S")
            if stamp != nearest:
                return RedirectResponse(f"/web/{nearest}id_/{url}", status_code=302)
            return Response(
                body,
                media_type="text/html",
                headers={"memento-datetime": _http_date(when), "link": f'<{url}>; rel="original"'},
            )

        return Starlette(routes=[Route("/{path:path}", memento)])


def _upstream() -> PythonUpstream:
    up = PythonUpstream()
    up.add("widget", "1.0", before(days=10), requires=("helper>=1.0",))
    up.add("widget", "2.0", after(days=1), requires=("helper>=2.0",))
    up.add("helper", "1.0", before(days=20))
    up.add("helper", "2.0", after(days=2))
    return up


@pytest.fixture(scope="module")
def github(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("github")
    later = root / "later"
    build_snapshot(worlds.make_sources(root), later, LATER)
    world = build_world(load_snapshot(later), services=("github",))
    try:
        with serve(HostAs(world, "api.github.com")) as url:
            yield url
    finally:
        world.world.engine.dispose()


@pytest.fixture(scope="module")
def upstream() -> Iterator[tuple[PythonUpstream, str]]:
    up = _upstream()
    with serving(up.app()) as url:
        yield up, url + "/simple/"


@pytest.fixture(scope="module")
def archive() -> Iterator[tuple[Archive, str]]:
    arc = Archive()
    with serving(arc.app()) as url:
        yield arc, url + "/web/{stamp}id_/{url}"


def _config(github: str, **caches: Any) -> CaptureConfig:
    source = GitHubSource(
        "acme/tiny", GH_TOKEN, api_url=github, git_url=github, exclude=frozenset({3})
    )
    return CaptureConfig(at=T, github=source, **caches)


@pytest.fixture(scope="module")
def captured(
    github: str,
    upstream: tuple[PythonUpstream, str],
    archive: tuple[Archive, str],
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, BlobStore]:
    root = tmp_path_factory.mktemp("captured")
    blobs = BlobStore(root / "blobs")
    config = _config(
        github,
        requirements=["widget"],
        registry_upstream=upstream[1],
        docs=[GUIDE],
        docs_archive=archive[1],
        blobs=blobs,
    )
    capture_snapshot(config, root / "snap")
    return root / "snap", blobs


def test_registry_holds_exactly_the_releases_of_t(
    captured: tuple[Path, BlobStore], upstream: tuple[PythonUpstream, str]
) -> None:
    snap_dir, blobs = captured
    snap = load_snapshot(snap_dir, blobs.root)
    assert {(f.project, f.version) for f in snap.registry.python} == {
        ("widget", "1.0"),
        ("helper", "1.0"),
    }
    source = {f.filename: f for f in upstream[0].files}
    for f in snap.registry.python:
        up = source[f.filename]
        assert (f.sha256, f.size, f.upload_time) == (up.sha256, len(up.data), up.upload_time)
        # In the blob store given, not the default one, under its sha256, with its bytes.
        stored = blobs.root / "sha256" / f.sha256[:2] / f.sha256[2:]
        assert stored.read_bytes() == up.data
        assert hashlib.sha256(stored.read_bytes()).hexdigest() == f.sha256
        assert f.metadata_sha256 is not None
        assert blobs.read(f.metadata_sha256) == up.metadata


def test_docs_hold_the_archived_page_dated_by_its_memento(
    captured: tuple[Path, BlobStore], archive: tuple[Archive, str]
) -> None:
    snap_dir, blobs = captured
    (page,) = load_snapshot(snap_dir, blobs.root).docs.pages
    assert (page.url, page.status, page.fetched_at) == (GUIDE, 200, GUIDE_AT)
    assert page.content_type.startswith("text/html")
    assert blobs.read(page.sha256) == GUIDE_BODY
    assert ("20260312090000", GUIDE) in archive[0].asked  # asked for the copy at T


def test_captured_snapshot_passes_the_audit(captured: tuple[Path, BlobStore]) -> None:
    snap = load_snapshot(captured[0], captured[1].root)
    assert snap.manifest.parts["registry/index.json"] and snap.manifest.parts["docs/index.json"]
    assert audit(snap) == []


def _leftovers(parent: Path) -> list[str]:
    return sorted(p.name for p in parent.iterdir() if p.name.startswith("."))


def test_a_page_archived_only_after_t_fails_and_writes_nothing(
    github: str,
    upstream: tuple[PythonUpstream, str],
    archive: tuple[Archive, str],
    tmp_path: Path,
) -> None:
    config = _config(
        github,
        requirements=["widget"],
        registry_upstream=upstream[1],
        docs=[GUIDE, NEWS],
        docs_archive=archive[1],
        blobs=BlobStore(tmp_path / "blobs"),
    )
    with pytest.raises(DocsError, match="no copy at or before T") as exc:
        capture_snapshot(config, tmp_path / "snap")
    assert NEWS in str(exc.value) and NEWS_AT.isoformat() in str(exc.value)
    assert not (tmp_path / "snap").exists()
    assert _leftovers(tmp_path) == []


def test_a_failed_capture_leaves_the_previous_snapshot_untouched(
    captured: tuple[Path, BlobStore],
    github: str,
    archive: tuple[Archive, str],
    tmp_path: Path,
) -> None:
    out = tmp_path / "snap"
    shutil.copytree(captured[0], out)
    before_files = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    config = _config(github, docs=[NEWS], docs_archive=archive[1], blobs=captured[1])
    with pytest.raises(DocsError, match="no copy at or before T"):
        capture_snapshot(config, out)
    after_files = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert after_files == before_files
    assert _leftovers(tmp_path) == []


def test_docs_without_an_archive_are_refused_before_anything(tmp_path: Path) -> None:
    # Port 9 (discard) answers nothing: reaching GitHub at all would be a different error.
    dead = "http://127.0.0.1:9"
    out = tmp_path / "nested" / "snap"
    with pytest.raises(CaptureError, match=r"docs_archive \(--docs-archive\)"):
        capture_snapshot(_config(dead, docs=[GUIDE]), out)
    with pytest.raises(CaptureError, match=r"docs_archive .* has no \{stamp\}"):
        capture_snapshot(_config(dead, docs=[GUIDE], docs_archive="http://a.test/{url}"), out)
    assert list(tmp_path.iterdir()) == []


def test_cli_records_caches_with_index_url_and_blobs(
    github: str,
    upstream: tuple[PythonUpstream, str],
    archive: tuple[Archive, str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from replay.cli.snapshot import app

    monkeypatch.setenv("GITHUB_TOKEN", GH_TOKEN)
    blobs = tmp_path / "blobs"
    args = [
        "capture", str(tmp_path / "snap"), "--at", worlds.T, "--repo", "acme/tiny",
        "--exclude", "3", "--github-api", github, "--github-git", github,
        "--requirement", "widget<2", "--index-url", upstream[1],
        "--docs", GUIDE, "--docs-archive", archive[1], "--blobs", str(blobs),
    ]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert f"recorded 2 registry files and 1 docs pages as of T into {blobs}" in result.output
    snap = load_snapshot(tmp_path / "snap", blobs)
    assert {f.filename for f in snap.registry.python} == {
        "widget-1.0-py3-none-any.whl",
        "helper-1.0-py3-none-any.whl",
    }
    assert [p.fetched_at for p in snap.docs.pages] == [GUIDE_AT]
    store = BlobStore(blobs)
    for sha in [f.sha256 for f in snap.registry.python] + [snap.docs.pages[0].sha256]:
        assert hashlib.sha256(store.path(sha).read_bytes()).hexdigest() == sha
    assert audit(snap) == []


def test_cli_refuses_docs_without_an_archive(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", GH_TOKEN)
    out = tmp_path / "snap"
    result = run_cli(
        capsys, "snapshot", "capture", str(out), "--at", worlds.T, "--repo", "acme/tiny",
        "--github-api", "http://127.0.0.1:9", "--docs", GUIDE,
    )  # fmt: skip
    assert_one_line_error(result, "--docs-archive", "--docs needs a web archive")
    assert list(tmp_path.iterdir()) == []
