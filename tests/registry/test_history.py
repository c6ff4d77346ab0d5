"""Files uploaded after T that the index held at T (issue 34: upload time is not availability).

The loopback index serves projects shaped like the real case: atomicwrites, deleted by its
maintainer on 2022-07-08 (1.4.1 uploaded that evening), every older file restored the next
morning within fifteen minutes, each wheel still dated by its build years before; and
pytest 5.2, uploaded in 2019, requiring ``atomicwrites>=1.0`` on every platform.
"""

from __future__ import annotations

import io
import os
import sys
import zipfile
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount, Route

from replay.base.errors import InputError
from replay.base.manifest import RegistryIndex
from replay.registry import BlobStore, RecordError, Registry, record_python, registry_app
from replay.registry.choice import candidates
from replay.registry.pypi import simple_project_json
from replay.registry.record import PythonRecorder
from tests.cli_helpers import assert_one_line_error, run_cli
from tests.registry.helpers import (
    PythonUpstream,
    RequestLog,
    T,
    UpFile,
    after,
    before,
    make_wheel,
)
from tests.registry.test_python_clients import uv
from tests.serving import serving

RESTORED = after(days=100)
"""When the index restored the re-uploaded project's files."""


def dated_wheel(
    name: str,
    version: str,
    built: datetime,
    requires: tuple[str, ...] = (),
    same_date: bool = False,
    padding: int = 0,
) -> tuple[str, bytes, bytes]:
    """A wheel whose entries are dated as ``wheel`` dates them: the package's files at their
    last edit (20 minutes before the build), the dist-info entries at the build (UTC, no
    extended-timestamp field); ``same_date``: every entry at one date, as a reproducible
    build writes it. ``padding`` adds that many incompressible bytes (a large wheel)."""
    filename, data, metadata = make_wheel(name, version, requires)
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            source = ".dist-info/" not in info.filename and not same_date
            when = built - timedelta(minutes=20) if source else built
            entry = zipfile.ZipInfo(info.filename, when.timetuple()[:6])
            entry.compress_type = zipfile.ZIP_DEFLATED
            dst.writestr(entry, src.read(info))
        if padding:
            entry = zipfile.ZipInfo(
                f"{name}/blob.bin", (built - timedelta(hours=1)).timetuple()[:6]
            )
            dst.writestr(entry, os.urandom(padding))
    return filename, out.getvalue(), metadata


def add_dated(
    up: PythonUpstream,
    name: str,
    version: str,
    built: datetime,
    uploaded: datetime,
    requires: tuple[str, ...] = (),
    same_date: bool = False,
    padding: int = 0,
) -> UpFile:
    filename, data, metadata = dated_wheel(name, version, built, requires, same_date, padding)
    file = UpFile(name, version, filename, data, metadata, uploaded)
    up.files.append(file)
    return file


def restored(up: PythonUpstream, name: str, built: list[tuple[str, datetime]]) -> None:
    """Versions of ``name`` built when given, every file uploaded again after T within
    minutes (the index's restore), and a last release genuinely made the evening before."""
    for i, (version, when) in enumerate(built):
        add_dated(up, name, version, when, RESTORED + timedelta(minutes=i))
    add_dated(up, name, "9.0", RESTORED - timedelta(hours=10), RESTORED - timedelta(hours=10))


def atomic_upstream() -> PythonUpstream:
    up = PythonUpstream()
    restored(
        up,
        "atomicw",
        [
            ("0.1", before(days=1500)),
            ("1.0", before(days=900)),
            ("1.3", before(days=400)),
            ("1.4", after(days=40)),  # built after T: not there at T, restore or not
        ],
    )
    up.add("pytester", "5.3", before(days=100), requires=("atomicw>=1.0", "plugg>=0.12"))
    up.add("pytester", "5.4", after(days=10), requires=("plugg>=0.12",))
    up.add("plugg", "0.13", before(days=200))
    return up


@pytest.fixture(scope="module")
def atomic() -> Iterator[tuple[PythonUpstream, str]]:
    up = atomic_upstream()
    with serving(up.app()) as url:
        yield up, url + "/simple/"


def test_a_restored_project_is_recorded_with_the_evidence_that_it_was_there(
    atomic: tuple[PythonUpstream, str], tmp_path: Path
) -> None:
    """pytester 5.3 (before T) needs atomicw, whose every file was uploaded after T: the
    recorder takes atomicw 1.3, built before T and restored with three other versions,
    says so, and records the build time as its upload time so the registry serves it at T."""
    up, url = atomic
    blobs = BlobStore(tmp_path)
    files = record_python(["pytester"], T, url, blobs)
    got = {(f.project, f.version): f for f in files}
    assert set(got) == {("pytester", "5.3"), ("plugg", "0.13"), ("atomicw", "1.3")}
    atomicw = got["atomicw", "1.3"]
    source = next(f for f in up.files if f.filename == atomicw.filename)
    assert source.upload_time > T
    assert atomicw.sha256 == source.sha256
    built = before(days=400).replace(microsecond=0)
    assert atomicw.upload_time == built
    why = atomicw.chosen_because or ""
    assert why.startswith("atomicw>=1.0 (dependency of pytester 5.3): newest final release at T")
    assert f"uploaded {RESTORED.date()} with the files of 5 versions within 10 hours" in why
    assert f"built {built.date()} (its wheel's entries), before T" in why
    assert f"pytester 5.3 (uploaded {before(days=100).date()}, before T) requires" in why
    # atomicw 1.4 was restored too but built after T: passed over, as pip at T never saw it.
    registry = Registry(RegistryIndex(schema=1, python=files), T, blobs)
    project = registry.python.project("atomicw")
    assert project is not None
    page = simple_project_json(project, lambda pf: pf.filename)
    assert page["versions"] == ["1.3"]
    # uv, told to take nothing newer than T, installs it from the registry served at T.
    with serving(registry_app(registry)) as served:
        target = tmp_path / "t"
        done = uv(
            tmp_path, "pip", "install", "--no-cache", "--exclude-newer", T.isoformat(),
            "--index-url", f"{served}/simple/", "--python", sys.executable,
            "--target", str(target), "pytester",
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert {p.name.removesuffix(".dist-info") for p in target.glob("*.dist-info")} == {
        "pytester-5.3",
        "atomicw-1.3",
        "plugg-0.13",
    }
    # Files uploaded before T keep their upload time and their reason unchanged.
    assert got["plugg", "0.13"].chosen_because == (
        "plugg>=0.12 (dependency of pytester 5.3): newest final release at T satisfying >=0.12"
    )


def test_a_requirement_on_a_restored_project_needs_only_the_burst(
    atomic: tuple[PythonUpstream, str], tmp_path: Path
) -> None:
    _, url = atomic
    files = record_python(["atomicw<1.3"], T, url, BlobStore(tmp_path))
    assert [(f.project, f.version) for f in files] == [("atomicw", "1.0")]
    why = files[0].chosen_because or ""
    assert "with the files of 5 versions" in why and "requires" not in why


def test_a_restored_newer_version_beats_an_older_upload_before_t(tmp_path: Path) -> None:
    """Part of a project restored after T: pip at T saw the newest restored version, not
    just what still carries an upload time before T."""
    up = PythonUpstream()
    up.add("partly", "0.9", before(days=800))
    restored(up, "partly", [("1.0", before(days=500)), ("1.1", before(days=300))])
    with serving(up.app()) as url:
        files = record_python(["partly"], T, url + "/simple/", BlobStore(tmp_path))
    assert [(f.project, f.version) for f in files] == [("partly", "1.1")]


def test_a_project_first_published_after_t_is_refused_in_its_own_terms(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """latecomer was built and uploaded after T, though needy (uploaded before T) already
    required it: nothing of it was on the index at T, and the stop says so, names the step
    and the one change, in the project's terms rather than a resolver's."""
    up = PythonUpstream()
    up.add("needy", "2.0", before(days=3), requires=("latecomer>=1.0",))
    add_dated(up, "latecomer", "1.0", after(days=5), after(days=5, hours=1))
    with serving(up.app()) as url:
        with pytest.raises(RecordError) as caught:
            record_python(["needy"], T, url + "/simple/", BlobStore(tmp_path))
        error = caught.value
        assert isinstance(error, InputError)  # one line, exit status 2 at the CLI
        text = str(error)
        assert text.startswith(
            "recording the registry as of T: latecomer>=1.0 (dependency of needy 2.0): "
            f"no version uploaded at or before T ({T.isoformat()}): latecomer had no file on "
            "the index at T, its only file was uploaded after T"
        )
        assert f"built {after(days=5).date()}, its wheel's entries): it was first published" in text
        assert f"change T (--at) to {after(days=5, hours=1).isoformat()} or later" in text
        assert "ResolutionImpossible" not in text
        at = T.isoformat()
        blobs = str(tmp_path / "cli")
        result = run_cli(
            capsys, "registry", "record", "--at", at, "--upstream", url + "/simple/",
            "--blobs", blobs, "needy",
        )  # fmt: skip
    assert_one_line_error(result, "latecomer had no file on the index at T", "--at")


def test_a_burst_of_reproducible_builds_shows_nothing_about_t(tmp_path: Path) -> None:
    """Every entry at one date (a reproducible build's) says nothing about when the file
    was built: a burst of such files after T stays after T."""
    up = PythonUpstream()
    for i, version in enumerate(["1.0", "1.1", "1.2"]):
        add_dated(up, "repro", version, before(days=900), RESTORED + timedelta(minutes=i), (), True)
    with serving(up.app()) as url, pytest.raises(RecordError) as caught:
        record_python(["repro"], T, url + "/simple/", BlobStore(tmp_path))
    text = str(caught.value)
    assert "with the files of 3 versions within 2 minutes (a re-upload)" in text
    assert "repro-1.2-py3-none-any.whl carries one date throughout" in text


def test_one_restored_version_counts_with_a_dependent_only(tmp_path: Path) -> None:
    """A lone file uploaded after T and built before it is no burst: only a dependent
    uploaded before T shows that the project was on the index then."""
    up = PythonUpstream()
    add_dated(up, "lone", "1.0", before(days=300), RESTORED)
    up.add("user", "1.0", before(days=10), requires=("lone",))
    with serving(up.app()) as url:
        index = url + "/simple/"
        files = record_python(["user"], T, index, BlobStore(tmp_path / "a"))
        assert ("lone", "1.0") in {(f.project, f.version) for f in files}
        with pytest.raises(RecordError, match="not a re-upload and no dependent at T requires it"):
            record_python(["lone"], T, index, BlobStore(tmp_path / "b"))


def test_a_direct_requirement_is_told_what_the_index_had(
    atomic: tuple[PythonUpstream, str], tmp_path: Path
) -> None:
    _, url = atomic
    with pytest.raises(RecordError) as caught:
        record_python(["pytester>=5.4"], T, url, BlobStore(tmp_path))
    assert str(caught.value).endswith(
        "change pytester>=5.4 to what the index had at T (its newest then: 5.3)"
    )
    # Nothing of atomicw carries an upload time before T: the change is T, to when the
    # oldest version that fits was built (its zone unknown: 14 hours later), not restored.
    with pytest.raises(RecordError) as caught:
        record_python(["atomicw>=1.4"], T, url, BlobStore(tmp_path))
    assert str(caught.value).endswith(
        f"change T (--at) to {after(days=40, hours=14).isoformat()} or later"
    )


def test_build_times_are_read_with_ranges_not_whole_files(tmp_path: Path) -> None:
    """A large restored wheel is dated from its central directory: a couple of range reads,
    not the file (which is downloaded only when it is recorded)."""
    up = PythonUpstream()
    size = 2_000_000
    restored(up, "big", [("1.0", before(days=500)), ("1.1", before(days=300))])
    add_dated(up, "big", "1.2", before(days=200), RESTORED + timedelta(minutes=5), padding=size)
    by_name = {f.filename: f for f in up.files}

    async def ranged(request: Request) -> Response:
        name = request.path_params["filename"]
        if name.endswith(".metadata"):
            return Response(by_name[name.removesuffix(".metadata")].metadata)
        data = by_name[name].data
        spec = request.headers.get("range", "")
        if not spec.startswith("bytes="):
            return Response(data)
        first, _, last = spec.removeprefix("bytes=").partition("-")
        start, end = int(first), min(int(last) + 1, len(data))
        headers = {"Content-Range": f"bytes {start}-{end - 1}/{len(data)}"}
        return Response(data[start:end], status_code=206, headers=headers)

    app = RequestLog(Starlette(routes=[Route("/files/{filename}", ranged), Mount("/", up.app())]))
    with serving(app) as url:
        recorder = PythonRecorder(url + "/simple/", T, BlobStore(tmp_path))
        plan = recorder.plan(["big"])
    assert list(plan.chosen) == [("big", "1.2")]
    wheel = "/files/big-1.2-py3-none-any.whl"
    reads = [rng for method, path, rng in app.seen if path == wheel]
    assert reads and all(rng is not None for rng in reads), app.seen
    assert len(reads) <= 3


def test_a_zoneless_build_time_hours_before_t_is_not_evidence() -> None:
    """A zip's local time may be up to 14 hours behind UTC: a wheel stamped six hours
    before T may have been built after it, unless an extended timestamp says UTC."""
    # Imported here, not above, so that the tests of the symptom run, and fail, on code
    # from before the history existed.
    from replay.registry.buildtime import ZONE_SLACK, BuildTime
    from replay.registry.history import History

    files = [
        {
            "filename": f"x-{v}-py3-none-any.whl",
            "url": f"x-{v}-py3-none-any.whl",
            "hashes": {"sha256": f"{i:064x}"},
            "upload-time": (RESTORED + timedelta(minutes=i)).isoformat(),
        }
        for i, v in enumerate(["1.0", "1.1", "1.2"])
    ]
    history = History("x", T, candidates("x", "http://index.invalid/x/", files))
    newest = history.files[-1]
    assert history.burst_of(newest) is not None
    when = before(hours=6)
    assert (
        history.justify(newest, BuildTime(when, when + ZONE_SLACK, "its wheel's entries"), None)
        is None
    )
    evidence = history.justify(newest, BuildTime(when, when, "its wheel's entries"), None)
    assert evidence is not None and evidence.available == when
