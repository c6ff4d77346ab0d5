from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest
from starlette.testclient import TestClient
from typer.testing import CliRunner

from replay.cli.registry import app
from replay.registry import BlobStore, RecordError, record_python, serve_snapshot
from replay.registry.record import default_index_url
from replay.snapshot import load_snapshot
from tests.registry.conftest import Recorded
from tests.registry.helpers import PythonUpstream, T, after, before
from tests.serving import serving


def _versions(files: list) -> set[tuple[str, str]]:  # type: ignore[type-arg]
    return {(f.project, f.version) for f in files}


def test_records_newest_at_t_pinned_versions_and_dependencies(
    upstream: tuple[PythonUpstream, str], tmp_path: Path
) -> None:
    up, url = upstream
    blobs = BlobStore(tmp_path)
    files = record_python(["alpha", "alpha==1.0"], T, url, blobs)
    # alpha 2.0 and beta 1.6 came after T; beta 1.7 is before T but needs Python < 3;
    # gamma is only for Python 2 and delta only for beta's "fast" extra.
    assert _versions(files) == {("alpha", "1.1"), ("alpha", "1.0"), ("beta", "1.5")}
    by_name = {f.filename: f for f in up.files}
    for f in files:
        source = by_name[f.filename]
        assert f.sha256 == source.sha256
        assert f.size == len(source.data)
        assert f.upload_time == source.upload_time
        assert blobs.read(f.sha256) == source.data
        assert f.metadata_sha256 is not None
        # alpha 1.0 had no PEP 658 file upstream: its METADATA was read out of the wheel.
        assert blobs.read(f.metadata_sha256).startswith(b"Metadata-Version: 2.1")
        assert f.upload_time <= T


def test_extras_follow_their_dependencies(
    upstream: tuple[PythonUpstream, str], tmp_path: Path
) -> None:
    _, url = upstream
    with pytest.raises(RecordError, match="delta"):
        # beta[fast] needs delta, which the upstream does not have: the recorder tries.
        record_python(["beta[fast]"], T, url, BlobStore(tmp_path))


def test_nothing_at_t_is_an_error(upstream: tuple[PythonUpstream, str], tmp_path: Path) -> None:
    _, url = upstream
    with pytest.raises(RecordError, match="no version uploaded at or before"):
        record_python(["alpha>=2"], T, url, BlobStore(tmp_path))
    with pytest.raises(RecordError, match="404"):
        record_python(["no-such-project"], T, url, BlobStore(tmp_path))


def test_later_recording_holds_later_files(recorded: Recorded) -> None:
    assert ("alpha", "2.0") in _versions(recorded.files)
    assert ("beta", "1.6") in _versions(recorded.files)
    assert ("gamma-pkg", "0.3") in _versions(recorded.files)


def test_default_upstream_is_pips(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PIP_INDEX_URL", "http://127.0.0.1:9/simple/")
    assert default_index_url() == "http://127.0.0.1:9/simple/"


def test_cli_records_into_a_snapshot(
    upstream: tuple[PythonUpstream, str], tiny_snapshot_dir: Path, tmp_path: Path
) -> None:
    _, url = upstream
    snap = tmp_path / "snap"
    shutil.copytree(tiny_snapshot_dir, snap)
    blobs = tmp_path / "blobs"
    args = ["record", "--snapshot", str(snap), "--upstream", url, "--blobs", str(blobs)]
    runner = CliRunner()
    done = runner.invoke(app, [*args, "alpha"])
    assert done.exit_code == 0, done.output
    done = runner.invoke(app, [*args, "--out", str(tmp_path / "index.json"), "gamma-pkg"])
    assert done.exit_code == 0, done.output
    loaded = load_snapshot(snap)  # hashes in the manifest were updated
    assert loaded.at == T
    assert _versions(list(loaded.registry.python)) == {
        ("alpha", "1.1"),
        ("beta", "1.5"),
        ("gamma-pkg", "0.3"),
    }
    text = (snap / "registry/index.json").read_text()
    assert (tmp_path / "index.json").read_text() == text
    assert loaded.manifest.parts["registry/index.json"] == hashlib.sha256(text.encode()).hexdigest()
    done = runner.invoke(app, ["record", "--upstream", url, "alpha"])
    assert done.exit_code != 0
    assert "--at" in str(done.exception)

    # What the gateway mounts: the snapshot's registry over the shared blob store.
    with TestClient(serve_snapshot(snap, BlobStore(blobs)), base_url="https://pypi.org") as c:
        page = c.get("/simple/alpha/", headers={"Accept": "application/vnd.pypi.simple.v1+json"})
        assert page.json()["versions"] == ["1.1"]
        assert page.json()["files"][0]["url"].startswith("https://files.pythonhosted.org/")


def test_cli_without_snapshot_prints_the_index(
    upstream: tuple[PythonUpstream, str], tmp_path: Path
) -> None:
    _, url = upstream
    when = after(days=2).isoformat()
    done = CliRunner().invoke(
        app, ["record", "--at", when, "--upstream", url, "--blobs", str(tmp_path), "beta"]
    )
    assert done.exit_code == 0, done.output
    assert '"filename": "beta-1.6-py3-none-any.whl"' in done.output


def test_pre_releases_only_as_pip_takes_them(tmp_path: Path) -> None:
    """The issue's real case (pytest in mid-2021): pluggy 1.0.0.dev0, coverage 5.6b1 and
    pyparsing 3.0.0b2 were the newest files at T, and pip took pluggy 0.13.1, coverage 5.5,
    pyparsing 2.4.7. A pre-release is taken only when the requirement names one with an
    inclusive operator, or when nothing final is in range."""
    up = PythonUpstream()
    up.add("pluggy", "0.13.1", before(days=300))
    up.add("pluggy", "1.0.0.dev0", before(days=30))
    up.add("coverage", "5.5", before(days=90))
    up.add("coverage", "5.6b1", before(days=10))
    up.add("pyparsing", "2.4.7", before(days=400))
    up.add("pyparsing", "3.0.0b2", before(days=20))
    up.add("onlypre", "1.0b1", before(days=5))
    up.add("onlypre", "1.0b2", after(days=1))
    with serving(up.app()) as url:
        files = record_python(
            ["pluggy<1.0.0a1,>=0.12", "coverage>=5.2.1", "pyparsing", "onlypre"],
            T,
            url + "/simple/",
            BlobStore(tmp_path),
        )
        assert _versions(files) == {
            ("pluggy", "0.13.1"),
            ("coverage", "5.5"),
            ("pyparsing", "2.4.7"),
            ("onlypre", "1.0b1"),
        }
        why = {f.project: f.chosen_because or "" for f in files}
        assert "passed over pre-releases 1.0.0.dev0" in why["pluggy"]
        assert "passed over pre-releases 5.6b1" in why["coverage"]
        assert "no final release is in range" in why["onlypre"]
        # The reason is in the index file; an entry without one keeps its old bytes.
        assert "chosen_because" in files[0].model_dump(mode="json")
        unknown = files[0].model_copy(update={"chosen_because": None})
        assert "chosen_because" not in unknown.model_dump(mode="json")
        named = record_python(
            ["coverage>=5.6b1"], T, url + "/simple/", BlobStore(tmp_path / "named")
        )
        assert _versions(named) == {("coverage", "5.6b1")}
        assert "the requirement names one" in (named[0].chosen_because or "")
