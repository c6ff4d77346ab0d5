from __future__ import annotations

from pathlib import Path

import pytest
from starlette.testclient import TestClient

from replay.base.manifest import RegistryIndex
from replay.registry import BlobStore, RecordError, Registry, host_apps, registry_app
from replay.registry.record_npm import record_npm, split_spec
from tests.registry.helpers import T, npm_upstream_app, standard_npm
from tests.registry.test_npm import npm
from tests.serving import serving


def test_split_spec() -> None:
    assert split_spec("widget") == ("widget", "latest")
    assert split_spec("widget@^1.0") == ("widget", "^1.0")
    assert split_spec("@acme/util") == ("@acme/util", "latest")
    assert split_spec("@acme/util@0.1.0") == ("@acme/util", "0.1.0")


def test_record_then_install_with_npm(tmp_path: Path) -> None:
    blobs = BlobStore(tmp_path / "blobs")
    upstream = standard_npm()
    with serving(npm_upstream_app(upstream)) as url:
        recorded = record_npm(["widget", "@acme/util@0.1.0"], T, url, blobs)
        with pytest.raises(RecordError, match="no version published at or before"):
            record_npm(["widget@^2"], T, url, blobs)
        with pytest.raises(RecordError, match="only semver ranges"):
            record_npm(["widget@next"], T, url, blobs)
    # Upstream's latest is 2.0.0 (after T); the recorder picks latest as of T, then
    # widget 1.1.0's dependency ^0.1.0 gives 0.1.1; 0.1.0 was asked for by name.
    assert [(v.package, v.version) for v in recorded] == [
        ("@acme/util", "0.1.0"),
        ("@acme/util", "0.1.1"),
        ("widget", "1.1.0"),
    ]
    source = {(v.name, v.version): v for v in upstream}
    for v in recorded:
        assert v.publish_time == source[(v.package, v.version)].published
        assert blobs.read(v.tarball_sha256) == source[(v.package, v.version)].tarball

    registry = Registry(RegistryIndex(schema=1, npm=recorded), T, blobs)
    with serving(registry_app(registry)) as served:
        done = npm(tmp_path, served + "/npm/", "install", "widget")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "node_modules/widget/index.js").read_text() == 'module.exports = "1.1.0";\n'

    # Behind the gateway, tarballs are on the registry's host whatever upstream was used.
    with TestClient(host_apps(registry)["registry.npmjs.org"]) as client:
        doc = client.get("/widget").json()
    tarball = doc["versions"]["1.1.0"]["dist"]["tarball"]
    assert tarball == "https://registry.npmjs.org/widget/-/widget-1.1.0.tgz"
