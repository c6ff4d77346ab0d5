"""The PyPI wire as the gateway serves it, host by host: what pip and uv do not show directly."""

from __future__ import annotations

import hashlib
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from replay.base.blobs import BlobStore
from replay.base.manifest import RegistryIndex
from replay.registry import Registry, host_apps, registry_app
from tests.registry.conftest import Recorded
from tests.registry.helpers import T

PIP_ACCEPT = (
    "application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html; q=0.1, "
    "text/html; q=0.01"
)
# As sent by pip 26 and uv 0.13 (checked against both).
UV_ACCEPT = (
    "application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html;q=0.2, "
    "text/html;q=0.01"
)
JSON_V1 = "application/vnd.pypi.simple.v1+json"


@pytest.fixture()
def index(recorded: Recorded) -> Iterator[TestClient]:
    with TestClient(registry_app(recorded.registry()), base_url="https://pypi.org") as client:
        yield client


@pytest.fixture()
def files(recorded: Recorded) -> Iterator[TestClient]:
    app = host_apps(recorded.registry())["files.pythonhosted.org"]
    with TestClient(app, base_url="https://files.pythonhosted.org") as client:
        yield client


def _path(url: str) -> str:
    return re.sub(r"^https://files\.pythonhosted\.org", "", url)


@pytest.mark.parametrize(
    ("accept", "expected"),
    [
        (PIP_ACCEPT, JSON_V1),
        (UV_ACCEPT, JSON_V1),
        ("text/html", "text/html"),
        ("application/vnd.pypi.simple.v1+html", "application/vnd.pypi.simple.v1+html"),
        ("application/vnd.pypi.simple.latest+json", JSON_V1),
        ("text/html;q=0.9, application/vnd.pypi.simple.v1+json;q=0.5", "text/html"),
        (None, "text/html"),
        ("*/*", "text/html"),
    ],
)
def test_content_negotiation(index: TestClient, accept: str | None, expected: str) -> None:
    headers = {"Accept": accept} if accept else {}
    resp = index.get("/simple/alpha/", headers=headers)
    assert resp.status_code == 200
    assert resp.headers["content-type"].split(";")[0] == expected
    assert "Accept" in resp.headers["vary"]


def test_unacceptable_and_format_parameter(index: TestClient) -> None:
    assert index.get("/simple/alpha/", headers={"Accept": "application/json"}).status_code == 406
    resp = index.get("/simple/alpha/", params={"format": JSON_V1}, headers={"Accept": "text/html"})
    assert resp.headers["content-type"] == JSON_V1


def test_json_project_page_is_pep_691_and_700_as_of_t(
    index: TestClient, recorded: Recorded
) -> None:
    body = index.get("/simple/alpha/", headers={"Accept": PIP_ACCEPT}).json()
    assert body["meta"]["api-version"] == "1.1"
    assert body["name"] == "alpha"
    assert body["versions"] == ["1.0", "1.1"]
    assert [f["filename"] for f in body["files"]] == [
        "alpha-1.0-py3-none-any.whl",
        "alpha-1.1-py3-none-any.whl",
    ]
    upstream = {f.filename: f for f in recorded.upstream.files}
    for f in body["files"]:
        source = upstream[f["filename"]]
        assert f["hashes"] == {"sha256": source.sha256}
        assert f["size"] == len(source.data)
        assert f["upload-time"] == source.upload_time.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        assert f["url"].startswith("https://files.pythonhosted.org/packages/")
        assert f["yanked"] is False
        assert f["core-metadata"] == f["data-dist-info-metadata"]
        assert set(f["core-metadata"]) == {"sha256"}


def test_html_project_page_is_pep_503(index: TestClient) -> None:
    page = index.get("/simple/beta/", headers={"Accept": "text/html"}).text
    assert '<meta name="pypi:repository-version" content="1.1">' in page
    anchors = re.findall(r"<a ([^>]*)>([^<]*)</a>", page)
    assert [name for _, name in anchors] == ["beta-1.5-py3-none-any.whl"]
    attrs = anchors[0][0]
    assert re.search(
        r'href="https://files\.pythonhosted\.org/packages/[^"]+#sha256=[0-9a-f]{64}"', attrs
    )
    assert re.search(r'data-core-metadata="sha256=[0-9a-f]{64}"', attrs)
    assert re.search(r'data-dist-info-metadata="sha256=[0-9a-f]{64}"', attrs)
    gamma = index.get("/simple/gamma-pkg/", headers={"Accept": "text/html"}).text
    assert "data-requires-python" not in gamma
    listing = index.get("/simple/", headers={"Accept": "text/html"}).text
    assert re.findall(r'href="/simple/([^/]+)/"', listing) == ["alpha", "beta", "gamma-pkg"]
    assert [
        p["name"] for p in index.get("/simple/", headers={"Accept": JSON_V1}).json()["projects"]
    ] == [
        "alpha",
        "beta",
        "gamma-pkg",
    ]


def test_requires_python_is_listed_and_escaped(recorded: Recorded) -> None:
    files = [f.model_copy(update={"requires_python": ">=3.8"}) for f in recorded.files]
    registry = Registry(RegistryIndex(schema=1, python=files), T, recorded.blobs)
    with TestClient(registry_app(registry), base_url="https://pypi.org") as client:
        page = client.get("/simple/beta/", headers={"Accept": "text/html"}).text
        assert 'data-requires-python="&gt;=3.8"' in page
        body = client.get("/simple/beta/", headers={"Accept": JSON_V1}).json()
        assert body["files"][0]["requires-python"] == ">=3.8"


def test_names_are_normalised_as_pypi_does(index: TestClient) -> None:
    for asked in ("/simple/Gamma_Pkg/", "/simple/GAMMA.pkg/", "/simple/gamma-pkg"):
        resp = index.get(asked, follow_redirects=False)
        assert resp.status_code == 301, asked
        assert resp.headers["location"] == "https://pypi.org/simple/gamma-pkg/"
    assert (
        index.get("/simple/Gamma_Pkg/", headers={"Accept": JSON_V1}).json()["name"] == "gamma-pkg"
    )
    assert index.get("/simple/no-such/").status_code == 404
    resp = index.get("/pypi/Gamma_Pkg/json", follow_redirects=False)
    assert resp.status_code == 301
    assert resp.headers["location"] == "https://pypi.org/pypi/gamma-pkg/json"


def test_downloads_head_and_range(index: TestClient, files: TestClient, recorded: Recorded) -> None:
    body = index.get("/simple/alpha/", headers={"Accept": JSON_V1}).json()
    entry = body["files"][1]
    path = _path(entry["url"])
    data = next(f.data for f in recorded.upstream.files if f.filename == entry["filename"])

    got = files.get(path)
    assert got.status_code == 200
    assert got.content == data
    assert got.headers["accept-ranges"] == "bytes"

    head = files.head(path)
    assert head.status_code == 200
    assert head.content == b""
    assert int(head.headers["content-length"]) == len(data)

    part = files.get(path, headers={"Range": "bytes=10-19"})
    assert part.status_code == 206
    assert part.content == data[10:20]
    assert part.headers["content-range"] == f"bytes 10-19/{len(data)}"

    tail = files.get(path, headers={"Range": "bytes=-22"})  # uv reads the zip's end this way
    assert tail.status_code == 206
    assert tail.content == data[-22:]

    beyond = files.get(path, headers={"Range": f"bytes={len(data) + 5}-"})
    assert beyond.status_code == 416

    meta = files.get(path + ".metadata")
    assert meta.status_code == 200
    assert hashlib.sha256(meta.content).hexdigest() == entry["core-metadata"]["sha256"]
    assert meta.content.startswith(b"Metadata-Version: 2.1\nName: alpha\nVersion: 1.1\n")

    # The index host does not serve files, as on PyPI.
    assert index.get(path, headers={"Host": "pypi.org"}).status_code == 404


def test_pypi_paths_of_the_same_file_are_accepted(files: TestClient, recorded: Recorded) -> None:
    alpha = next(f for f in recorded.upstream.files if f.filename == "alpha-1.1-py3-none-any.whl")
    b2 = hashlib.blake2b(alpha.data, digest_size=32).hexdigest()
    pypi_path = f"/packages/{b2[:2]}/{b2[2:4]}/{b2[4:]}/{alpha.filename}"
    assert files.get(pypi_path).content == alpha.data
    assert files.head(pypi_path + ".metadata").status_code == 200
    wrong = f"/packages/00/11/{'2' * 60}/{alpha.filename}"
    assert files.get(wrong).status_code == 404


def test_files_after_t_are_not_served(files: TestClient, recorded: Recorded) -> None:
    later = [f for f in recorded.files if f.upload_time > T]
    assert {f.filename for f in later} == {
        "alpha-2.0-py3-none-any.whl",
        "beta-1.6-py3-none-any.whl",
    }
    for f in later:
        s = f.sha256
        path = f"/packages/{s[:2]}/{s[2:4]}/{s[4:]}/{f.filename}"
        assert files.get(path).status_code == 404
        assert files.head(path + ".metadata").status_code == 404
        b2 = hashlib.blake2b(recorded.blobs.read(s), digest_size=32).hexdigest()
        assert files.get(f"/packages/{b2[:2]}/{b2[2:4]}/{b2[4:]}/{f.filename}").status_code == 404
    # ...and they are, to a registry frozen after them: the filter is T, not the recording.
    later_app = host_apps(recorded.registry(max(f.upload_time for f in later)))
    with TestClient(later_app["files.pythonhosted.org"]) as client:
        s = later[0].sha256
        assert (
            client.get(f"/packages/{s[:2]}/{s[2:4]}/{s[4:]}/{later[0].filename}").status_code == 200
        )


def test_json_api(index: TestClient, recorded: Recorded) -> None:
    body = index.get("/pypi/alpha/json").json()
    assert body["info"]["name"] == "alpha"
    assert body["info"]["version"] == "1.1"
    assert body["info"]["summary"] == "alpha for the registry tests"
    assert body["info"]["requires_dist"] == ["beta>=1.0", 'gamma; python_version < "3"']
    assert sorted(body["releases"]) == ["1.0", "1.1"]
    assert [u["filename"] for u in body["urls"]] == ["alpha-1.1-py3-none-any.whl"]
    url = body["urls"][0]
    source = next(f for f in recorded.upstream.files if f.filename == url["filename"])
    assert url["upload_time_iso_8601"] == source.upload_time.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    assert url["upload_time"] == source.upload_time.strftime("%Y-%m-%dT%H:%M:%S")
    assert url["digests"] == {
        "sha256": source.sha256,
        "md5": hashlib.md5(source.data).hexdigest(),
        "blake2b_256": hashlib.blake2b(source.data, digest_size=32).hexdigest(),
    }
    assert url["packagetype"] == "bdist_wheel"
    assert url["python_version"] == "py3"
    assert url["size"] == len(source.data)

    old = index.get("/pypi/alpha/1.0/json").json()
    assert old["info"]["version"] == "1.0"
    assert "releases" not in old
    assert [u["filename"] for u in old["urls"]] == ["alpha-1.0-py3-none-any.whl"]

    missing = index.get("/pypi/alpha/2.0/json")
    assert missing.status_code == 404
    assert missing.json() == {"message": "Not Found"}
    assert index.get("/pypi/no-such/json").status_code == 404


def test_a_corrupt_blob_is_refused_and_named(recorded: Recorded, tmp_path: Path) -> None:
    blobs = BlobStore(tmp_path / "blobs")
    shutil.copytree(recorded.blobs.root, blobs.root)
    registry = Registry(RegistryIndex(schema=1, python=recorded.files), T, blobs)
    gamma = next(f for f in recorded.files if f.project == "gamma-pkg")
    path = blobs.path(gamma.sha256)
    path.chmod(0o644)
    path.write_bytes(b"not the wheel")
    with TestClient(host_apps(registry)["files.pythonhosted.org"]) as client:
        s = gamma.sha256
        resp = client.get(f"/packages/{s[:2]}/{s[2:4]}/{s[4:]}/{gamma.filename}")
    assert resp.status_code == 500
    assert str(path) in resp.text
    assert b"not the wheel" not in resp.content


def test_yanked_files_are_marked(recorded: Recorded) -> None:
    files = [
        f.model_copy(update={"yanked": "broken <build>"})
        if f.filename.startswith("alpha-1.1")
        else f
        for f in recorded.files
    ]
    registry = Registry(RegistryIndex(schema=1, python=files), T, recorded.blobs)
    with TestClient(registry_app(registry), base_url="https://pypi.org") as client:
        page = client.get("/simple/alpha/", headers={"Accept": "text/html"}).text
        assert 'data-yanked="broken &lt;build&gt;">alpha-1.1-py3-none-any.whl' in page
        body = client.get("/simple/alpha/", headers={"Accept": JSON_V1}).json()
        assert [f["yanked"] for f in body["files"]] == [False, "broken <build>"]
        info = client.get("/pypi/alpha/json").json()["info"]
        assert info["version"] == "1.0"  # the current release skips a wholly yanked one
