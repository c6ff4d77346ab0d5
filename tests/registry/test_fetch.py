"""A recorded registry's files brought back into an empty blob store, from a loopback index."""

from __future__ import annotations

from pathlib import Path

from replay.base.blobs import BlobStore
from replay.base.manifest import RegistryIndex
from replay.registry import record_python
from replay.registry.fetch import fetch_missing, missing
from replay.registry.upstream import Upstream
from tests.registry.helpers import PythonUpstream, T, before, make_wheel
from tests.serving import serving


def _upstream() -> PythonUpstream:
    up = PythonUpstream()
    up.add("alpha", "1.0", before(days=9), requires=("beta",))
    up.add("beta", "2.0", before(days=30), with_metadata=False)  # no PEP 658 file
    return up


def test_what_a_case_recorded_comes_back_byte_for_byte(tmp_path: Path) -> None:
    up = _upstream()
    with serving(up.app()) as url:
        first = BlobStore(tmp_path / "recorded")
        files = record_python(["alpha"], T, url + "/simple/", first)
        index = RegistryIndex(schema=1, python=files)
        empty = BlobStore(tmp_path / "empty")
        assert len(missing(files, empty)) == 2
        said: list[str] = []
        done = fetch_missing([index, index], empty, Upstream(url + "/simple/"), said.append)
        again = fetch_missing([index], empty, Upstream(url + "/simple/"))
    assert (done.files, done.failed) == (2, [])
    assert said[0].startswith("[1/2] alpha-1.0-py3-none-any.whl (")
    for f in files:
        assert empty.read(f.sha256) == first.read(f.sha256)
        assert f.metadata_sha256 is not None  # beta's read out of its wheel, as recorded
        assert empty.read(f.metadata_sha256) == first.read(f.metadata_sha256)
    assert (again.files, again.present) == (0, 2)


def test_a_file_deleted_or_reuploaded_since_is_named_not_replaced(tmp_path: Path) -> None:
    up = _upstream()
    with serving(up.app()) as url:
        files = record_python(["alpha"], T, url + "/simple/", BlobStore(tmp_path / "recorded"))
    later = PythonUpstream()
    # alpha 1.0 re-uploaded with other bytes under the same name; beta deleted.
    name, data, _ = make_wheel("alpha", "1.0", ("beta",), code="CHANGED = 1\n")
    later.add("alpha", "1.0", before(days=9), requires=("beta",), code="CHANGED = 1\n")
    assert later.files[0].filename == name and later.files[0].data == data != up.files[0].data
    empty = BlobStore(tmp_path / "empty")
    with serving(later.app()) as url:
        done = fetch_missing(
            [RegistryIndex(schema=1, python=files)], empty, Upstream(url + "/simple/")
        )
    assert done.files == 0
    assert any("alpha-1.0-py3-none-any.whl: the index gives it sha256" in f for f in done.failed)
    assert any("re-uploaded with other bytes" in f for f in done.failed)
    assert any(f.startswith("beta-2.0-py3-none-any.whl:") for f in done.failed)
    assert all(not empty.has(f.sha256) for f in files)
