"""npm, unmodified, against the registry served as of T; packuments checked on the wire."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from replay.base.manifest import NpmVersion, RegistryIndex
from replay.registry import BlobStore, Registry, host_apps, registry_app
from tests.registry.helpers import T, call_like_mitmproxy, standard_npm
from tests.serving import serving

ABBREVIATED = "application/vnd.npm.install-v1+json"

NPM = shutil.which("npm")


@pytest.fixture(scope="module")
def npm_registry(tmp_path_factory: pytest.TempPathFactory) -> Registry:
    blobs = BlobStore(tmp_path_factory.mktemp("npm-blobs"))
    entries = [
        NpmVersion(
            package=v.name,
            version=v.version,
            publish_time=v.published,
            manifest=v.manifest,
            tarball_sha256=blobs.put_bytes(v.tarball),
        )
        for v in standard_npm()
    ]
    return Registry(RegistryIndex(schema=1, npm=entries), T, blobs)


@pytest.fixture()
def npm_url(npm_registry: Registry) -> Iterator[str]:
    with serving(registry_app(npm_registry)) as url:
        yield url + "/npm/"


def npm(tmp_path: Path, registry: str, *args: str) -> subprocess.CompletedProcess[str]:
    assert NPM is not None, "npm is needed for the registry tests (.ci/run installs it)"
    (tmp_path / "npmrc").write_text("")
    (tmp_path / "global-npmrc").write_text("")
    env = {k: v for k, v in os.environ.items() if not k.lower().startswith(("npm_", "http"))}
    env.update(
        npm_config_userconfig=str(tmp_path / "npmrc"),
        npm_config_globalconfig=str(tmp_path / "global-npmrc"),
        npm_config_cache=str(tmp_path / "npm-cache"),
        npm_config_registry=registry,
        npm_config_update_notifier="false",
        npm_config_audit="false",
        npm_config_fund="false",
        HOME=str(tmp_path),
    )
    return subprocess.run(
        [NPM, *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )


def test_npm_view_sees_the_registry_as_of_t(npm_url: str, tmp_path: Path) -> None:
    done = npm(tmp_path, npm_url, "view", "widget", "--json")
    assert done.returncode == 0, done.stderr
    view = json.loads(done.stdout)
    # latest is recomputed: 2.0.0 came after T and 1.2.0-beta.1 is a prerelease.
    assert view["dist-tags"] == {"latest": "1.1.0"}
    assert view["version"] == "1.1.0"
    assert view["versions"] == ["1.0.0", "1.1.0", "1.2.0-beta.1"]
    assert set(view["time"]) == {"created", "modified", "1.0.0", "1.1.0", "1.2.0-beta.1"}
    assert view["time"]["modified"] == view["time"]["1.2.0-beta.1"]
    assert view["description"] == "widget for the registry tests"


def test_npm_install_gets_the_newest_at_t_and_not_later(npm_url: str, tmp_path: Path) -> None:
    done = npm(tmp_path, npm_url, "install", "widget")
    assert done.returncode == 0, done.stderr
    modules = tmp_path / "node_modules"
    assert json.loads((modules / "widget/package.json").read_text())["version"] == "1.1.0"
    # ^0.1.0 picks 0.1.1, published before T; 0.2.0 came later and is out of range anyway.
    assert json.loads((modules / "@acme/util/package.json").read_text())["version"] == "0.1.1"
    lock = json.loads((tmp_path / "package-lock.json").read_text())
    resolved = lock["packages"]["node_modules/widget"]["resolved"]
    assert resolved == f"{npm_url}widget/-/widget-1.1.0.tgz"

    (tmp_path / "other").mkdir()
    later = npm(tmp_path / "other", npm_url, "install", "widget@2.0.0")
    assert later.returncode != 0
    assert "ETARGET" in later.stderr
    scoped = npm(tmp_path, npm_url, "install", "@acme/util@0.2.0")
    assert scoped.returncode != 0
    assert "ETARGET" in scoped.stderr


@pytest.fixture()
def registry_host(npm_registry: Registry) -> Iterator[TestClient]:
    app = host_apps(npm_registry)["registry.npmjs.org"]
    with TestClient(app, base_url="https://registry.npmjs.org") as client:
        yield client


def test_abbreviated_and_full_packuments(registry_host: TestClient) -> None:
    corgi = registry_host.get(
        "/widget",
        headers={
            "Accept": "application/vnd.npm.install-v1+json; q=1.0, application/json; q=0.8, */*"
        },
    )
    assert corgi.headers["content-type"] == "application/vnd.npm.install-v1+json"
    doc = corgi.json()
    assert set(doc) == {"name", "modified", "dist-tags", "versions"}
    assert doc["dist-tags"] == {"latest": "1.1.0"}
    assert list(doc["versions"]) == ["1.0.0", "1.1.0", "1.2.0-beta.1"]
    v = doc["versions"]["1.1.0"]
    assert "description" not in v
    assert v["dependencies"] == {"@acme/util": "^0.1.0"}
    # Behind the gateway, tarball URLs stay as upstream had them.
    assert v["dist"]["tarball"] == "https://registry.npmjs.org/widget/-/widget-1.1.0.tgz"
    assert v["dist"]["integrity"].startswith("sha512-")

    full = registry_host.get("/widget", headers={"Accept": "application/json"}).json()
    assert full["_id"] == "widget"
    assert full["dist-tags"] == {"latest": "1.1.0"}
    assert "2.0.0" not in full["versions"]
    assert "2.0.0" not in full["time"]
    assert full["versions"]["1.1.0"]["description"] == "widget for the registry tests"


def test_scoped_names_tarballs_and_404s(registry_host: TestClient, npm_registry: Registry) -> None:
    for path in ("/@acme%2futil", "/@acme%2Futil", "/@acme/util"):
        doc = registry_host.get(path).json()
        assert doc["dist-tags"] == {"latest": "0.1.1"}, path
        assert list(doc["versions"]) == ["0.1.0", "0.1.1"]
    one = registry_host.get("/@acme%2futil/latest").json()
    assert one["version"] == "0.1.1"
    assert registry_host.get("/@acme%2futil/0.2.0").status_code == 404

    tgz = registry_host.get("/@acme/util/-/util-0.1.1.tgz")
    assert tgz.status_code == 200
    entry = next(
        v for v in npm_registry.npm.packages["@acme/util"].versions if v.version == "0.1.1"
    )
    assert tgz.content == npm_registry.blobs.read(entry.tarball_sha256)
    assert registry_host.head("/widget/-/widget-1.1.0.tgz").status_code == 200
    ranged = registry_host.get("/widget/-/widget-1.1.0.tgz", headers={"Range": "bytes=0-1"})
    assert ranged.status_code == 206
    assert ranged.content == b"\x1f\x8b"  # gzip

    assert registry_host.get("/widget/-/widget-2.0.0.tgz").status_code == 404
    assert registry_host.get("/@acme/util/-/util-0.2.0.tgz").status_code == 404
    missing = registry_host.get("/no-such-package")
    assert missing.status_code == 404
    assert missing.json() == {"error": "Not found"}


def test_scoped_names_through_mitmproxys_asgi_scope(npm_registry: Registry) -> None:
    # The gateway mounts these apps with mitmproxy's ASGIApp, which hands the path over
    # percent-encoded: "/@acme%2futil" arrives as "/%40acme%252futil".
    app = host_apps(npm_registry)["registry.npmjs.org"]
    status, headers, body = call_like_mitmproxy(
        app, b"/@acme%2futil", {"Host": "registry.npmjs.org", "Accept": ABBREVIATED}
    )
    assert status == 200, body
    assert headers["content-type"] == ABBREVIATED
    assert json.loads(body)["dist-tags"] == {"latest": "0.1.1"}
    status, _, body = call_like_mitmproxy(app, b"/@acme/util/-/util-0.1.1.tgz")
    assert status == 200
    assert body[:2] == b"\x1f\x8b"


def test_host_from_the_server_when_there_is_no_host_header(npm_registry: Registry) -> None:
    # An HTTP/2 request has :authority, not Host; the gateway passes the host as the server.
    app = registry_app(npm_registry)
    status, _, body = call_like_mitmproxy(app, b"/widget", server=("registry.npmjs.org", 443))
    assert status == 200
    tarball = json.loads(body)["versions"]["1.1.0"]["dist"]["tarball"]
    assert tarball == "https://registry.npmjs.org/widget/-/widget-1.1.0.tgz"
