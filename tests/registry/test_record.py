from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest
from starlette.testclient import TestClient
from typer.testing import CliRunner

from replay.base.manifest import RegistryIndex
from replay.cli.registry import app
from replay.registry import BlobStore, RecordError, record_python, serve_snapshot
from replay.registry.record import NothingAtT, Target, default_index_url, record_for_project
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


def _why(files: list) -> dict[str, str]:  # type: ignore[type-arg]
    return {f.project: f.chosen_because or "" for f in files}


BULLSEYE = Target.for_debian("bullseye")


def test_debian_targets_carry_their_python_and_glibc() -> None:
    assert (BULLSEYE.python, BULLSEYE.full_version, BULLSEYE.glibc_max) == ((3, 9), "3.9.2", 31)
    bookworm, trixie = Target.for_debian("bookworm"), Target.for_debian("trixie")
    assert (bookworm.python, bookworm.glibc_max) == ((3, 11), 36)
    assert (trixie.python, trixie.glibc_max) == ((3, 13), 41)
    tags = {str(t) for t in BULLSEYE.tags()}
    assert "cp39-cp39-manylinux_2_31_x86_64" in tags
    assert "cp39-cp39-manylinux_2_32_x86_64" not in tags
    with pytest.raises(RecordError, match="bullseye, bookworm, trixie"):
        Target.for_debian("buster")


def test_sdist_only_dependencies_bring_their_build_requirements(tmp_path: Path) -> None:
    """tinylib has only an sdist, built with buildy, itself only an sdist built with flit_core:
    pip at T builds both in isolated environments, so all of them are recorded. oldlib's zip
    sdist has no pyproject.toml: pip's fallback, setuptools>=40.8.0 and wheel."""
    up = PythonUpstream()
    up.add("app", "1.0", before(days=3), requires=("tinylib", "oldlib"))
    up.add_sdist(
        "tinylib",
        "0.3",
        before(days=20),
        {
            "pyproject.toml": '[build-system]\nrequires = ["buildy>=1"]\n'
            'build-backend = "buildy.api"\n[project]\nname = "tinylib"\nversion = "0.3"\n'
            'dependencies = ["helper>=1"]\n',
        },
    )
    up.add_sdist(
        "buildy",
        "1.2",
        before(days=40),
        {"pyproject.toml": '[build-system]\nrequires = ["flit_core>=3.2,<4"]\n'},
    )
    up.add("flit_core", "3.1", before(days=300))
    up.add("flit_core", "3.9", before(days=100))
    up.add("flit_core", "4.0", before(days=10))
    up.add("flit_core", "3.10", after(days=1))
    up.add("helper", "1.0", before(days=50))
    up.add_sdist(
        "oldlib",
        "1.0",
        before(days=500),
        {"setup.py": "from setuptools import setup\nsetup(install_requires=['helper'])\n"},
        fmt="zip",
    )
    up.add("setuptools", "39.0", before(days=900))
    up.add("setuptools", "65.0", before(days=90))
    up.add("setuptools", "70.0", after(days=1))
    up.add("wheel", "0.37.0", before(days=200))
    with serving(up.app()) as url:
        blobs = BlobStore(tmp_path)
        files = record_python(["app"], T, url + "/simple/", blobs)
    assert _versions(files) == {
        ("app", "1.0"),
        ("tinylib", "0.3"),
        ("buildy", "1.2"),
        ("flit-core", "3.9"),
        ("helper", "1.0"),
        ("oldlib", "1.0"),
        ("setuptools", "65.0"),
        ("wheel", "0.37.0"),
    }
    assert {f.filename for f in files} >= {"tinylib-0.3.tar.gz", "oldlib-1.0.zip"}
    why = _why(files)
    assert why["buildy"].startswith("buildy>=1 (build requirement of tinylib 0.3, [build-system]")
    assert "build requirement of buildy 1.2" in why["flit-core"]
    assert "newest final release at T satisfying <4,>=3.2" in why["flit-core"]
    assert "build requirement of oldlib 1.0, pip's fallback: no pyproject.toml" in why["setuptools"]
    assert why["wheel"].startswith("wheel (build requirement of oldlib 1.0")
    # helper: tinylib's [project].dependencies (no wheel metadata to read) named it first.
    assert why["helper"].startswith("helper>=1 (dependency of tinylib 0.3)")
    for f in files:
        assert blobs.has(f.sha256)


def _project(root: Path) -> Path:
    root.mkdir()
    (root / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["hatchling"]\nbuild-backend = "hatchling.build"\n'
        '[project]\nname = "mylib"\nversion = "0.1"\n'
        'dependencies = ["helper>=1", "py39only; python_version < \\"3.10\\""]\n'
        '[project.optional-dependencies]\ntest = ["checker"]\ndocs = ["docsy"]\n'
    )
    (root / "requirements-test.txt").write_text(
        "# tools\n--index-url https://example.invalid/simple\n-r ci/more.txt\n"
        'newonly; python_version >= "3.12"\n'
    )
    (root / "ci").mkdir()
    (root / "ci" / "more.txt").write_text("mylib-plugin  # needs mylib itself\n")
    return root


def _project_upstream() -> PythonUpstream:
    up = PythonUpstream()
    up.add("hatchling", "1.5", before(days=30), requires=("pathspec",))
    up.add("hatchling", "1.6", after(days=30), requires=("pathspec",))
    up.add("pathspec", "0.9", before(days=300))
    up.add("helper", "1.0", before(days=50))
    up.add("py39only", "2.0", before(days=50))
    up.add("checker", "3.0", before(days=5))
    up.add("checker", "3.1rc1", before(days=1))
    up.add("docsy", "1.0", before(days=5))
    up.add("mylib-plugin", "0.2", before(days=5), requires=("mylib>=0.1",))
    up.add("newonly", "1.0", before(days=5))
    return up  # no "mylib": the checkout provides it, looking it up would fail


def test_a_project_checkout_is_recorded_with_its_build_system_and_extras(tmp_path: Path) -> None:
    project = _project(tmp_path / "mylib")
    with serving(_project_upstream().app()) as url:
        files = record_for_project(
            project,
            ["-r requirements-test.txt"],
            T,
            BULLSEYE,
            BlobStore(tmp_path / "blobs"),
            url + "/simple/",
            extras=["test"],
        )
    assert _versions(files) == {
        ("hatchling", "1.5"),
        ("pathspec", "0.9"),
        ("helper", "1.0"),
        ("py39only", "2.0"),  # the marker holds on 3.9
        ("checker", "3.0"),
        ("mylib-plugin", "0.2"),
    }  # not docsy (extra not asked for), not newonly (3.12 and later)
    why = _why(files)
    assert why["hatchling"] == (
        "hatchling (build requirement of the project, [build-system].requires): "
        "newest final release at T satisfying any version"
    )
    assert "dependency of hatchling 1.5" in why["pathspec"]
    assert why["helper"].startswith("helper>=1 (dependency of the project, [project].dependencies)")
    assert why["checker"].startswith("checker (the project's extra 'test'")
    assert "passed over pre-releases 3.1rc1" in why["checker"]
    assert why["mylib-plugin"].startswith("mylib-plugin: newest final release at T")


def test_cli_records_requirement_files_and_a_project(tmp_path: Path) -> None:
    project = _project(tmp_path / "mylib")
    (tmp_path / "top.txt").write_text("-r mylib/requirements-test.txt\ndocsy\n")
    with serving(_project_upstream().app()) as url:
        done = CliRunner().invoke(
            app,
            [
                "record",
                "--at",
                T.isoformat(),
                "--upstream",
                url + "/simple/",
                "--blobs",
                str(tmp_path / "blobs"),
                "--debian",
                "trixie",
                "-r",
                str(tmp_path / "top.txt"),
                "--project",
                str(project),
                "--out",
                str(tmp_path / "index.json"),
            ],
        )
    assert done.exit_code == 0, done.output
    index = RegistryIndex.model_validate_json((tmp_path / "index.json").read_text())
    # On trixie (3.13): newonly applies, py39only does not; no --extra, so no checker.
    assert _versions(index.python) == {
        ("hatchling", "1.5"),
        ("pathspec", "0.9"),
        ("helper", "1.0"),
        ("docsy", "1.0"),
        ("mylib-plugin", "0.2"),
        ("newonly", "1.0"),
    }
    done = CliRunner().invoke(app, ["record", "--at", T.isoformat()])
    assert done.exit_code != 0
    assert "give requirements, -r FILE or --project" in str(done.exception)


def test_requires_python_of_each_file_is_honoured_for_the_target(tmp_path: Path) -> None:
    """On Python 3.9, a project whose newest release at T needs 3.10 resolves to the older
    one, as pip does; the index's requires-python or, when the index has none, the wheel's
    own Requires-Python (pip reads both)."""
    up = PythonUpstream()
    up.add("modern", "1.5", before(days=100), requires_python=">=3.7")
    up.add("modern", "2.0", before(days=10), requires_python=">=3.10")
    up.add("sneaky", "1.0", before(days=100))
    quiet = up.add("sneaky", "2.0", before(days=10), requires_python=">=3.10")
    quiet.requires_python = None  # only the metadata says so
    with serving(up.app()) as url:
        old = record_python(
            ["modern", "sneaky"], T, url + "/simple/", BlobStore(tmp_path), BULLSEYE
        )
        new = record_python(
            ["modern", "sneaky"],
            T,
            url + "/simple/",
            BlobStore(tmp_path),
            Target.for_debian("bookworm"),
        )
        with pytest.raises(RecordError, match=r"would install on Python 3\.9\.2"):
            record_python(["modern>=2"], T, url + "/simple/", BlobStore(tmp_path), BULLSEYE)
    assert _versions(old) == {("modern", "1.5"), ("sneaky", "1.0")}
    assert _versions(new) == {("modern", "2.0"), ("sneaky", "2.0")}
    why = _why(old)
    assert "requires-python excludes newer 2.0 (>=3.10) on Python 3.9.2" in why["modern"]
    assert "requires-python excludes newer 2.0 (>=3.10) on Python 3.9.2" in why["sneaky"]
    assert "requires-python" not in _why(new)["modern"]


def test_yanked_files_only_when_pinned(tmp_path: Path) -> None:
    """PEP 592 as pip applies it. The index says a file is yanked but not since when, so a
    file yanked after T counts as yanked at T: the reason says so."""
    up = PythonUpstream()
    up.add("yank", "1.0", before(days=100))
    up.add("yank", "1.1", before(days=10)).yanked = "broke the API"
    up.add("allyanked", "0.5", before(days=10)).yanked = True
    with serving(up.app()) as url:
        simple = url + "/simple/"
        newest = record_python(["yank"], T, simple, BlobStore(tmp_path))
        pinned = record_python(["yank==1.1", "allyanked===0.5"], T, simple, BlobStore(tmp_path))
        with pytest.raises(RecordError, match="allyanked"):
            record_python(["allyanked>=0.5"], T, simple, BlobStore(tmp_path))
        with pytest.raises(RecordError, match="yank"):
            record_python(["yank>1.0"], T, simple, BlobStore(tmp_path))
    assert _versions(newest) == {("yank", "1.0")}
    assert "passed over yanked 1.1" in _why(newest)["yank"]
    assert "does not publish when a file was yanked" in _why(newest)["yank"]
    assert _versions(pinned) == {("yank", "1.1"), ("allyanked", "0.5")}
    pinned_why = _why(pinned)
    assert "yanked, taken because the requirement pins it (PEP 592)" in pinned_why["yank"]
    assert "does not publish when a file was yanked" in pinned_why["allyanked"]
    assert {f.project: f.yanked for f in pinned} == {"yank": "broke the API", "allyanked": True}


def test_pips_own_fallback_floor_with_nothing_at_t_is_left_out(tmp_path: Path) -> None:
    """Issue 34 (wrapt, January 2019): a project without pyproject.toml gets pip's fallback
    build requirements, ``setuptools>=40.8.0`` and ``wheel``; setuptools 40.8.0 came out after
    T, so recording stopped ("no version uploaded at or before T"), though pip at T built such
    a project with setup.py and never asked for it. Left out now, saying so; a floor the
    project names itself still stops the recording."""
    root = tmp_path / "oldlib"
    root.mkdir()
    (root / "setup.py").write_text(
        "from setuptools import setup\nsetup(name='oldlib', install_requires=['helper'])\n"
    )
    up = PythonUpstream()
    up.add("setuptools", "40.8.0", after(days=20))
    up.add("wheel", "0.32.3", before(days=60))
    up.add("helper", "1.0", before(days=50))
    with serving(up.app()) as url:
        files = record_for_project(
            root, ["helper"], T, BULLSEYE, BlobStore(tmp_path / "blobs"), url + "/simple/"
        )
        assert _versions(files) == {("wheel", "0.32.3"), ("helper", "1.0")}
        (root / "pyproject.toml").write_text(
            '[build-system]\nrequires = ["setuptools>=40.8.0", "wheel"]\n'
            'build-backend = "setuptools.build_meta"\n'
        )
        with pytest.raises(NothingAtT, match=r"setuptools>=40\.8\.0"):
            record_for_project(
                root, ["helper"], T, BULLSEYE, BlobStore(tmp_path / "blobs"), url + "/simple/"
            )


PYPROJECT_FLIT = '[build-system]\nrequires = ["flit_core>=3.2"]\n'


def test_an_sdist_in_any_archive_pip_installs_is_a_file_at_t(tmp_path: Path) -> None:
    """Found by the second held-out corpus (jsonschema 2019, which tests with Twisted):
    Twisted 18.9's only file for Linux is ``Twisted-18.9.0.tar.bz2``, and sdists were read
    only as ``.tar.gz`` or ``.zip``, so "no version at or before T" stopped the case. pip
    installs ``.tar.bz2`` and ``.tar.xz`` sdists too; their requirements are read as well."""
    up = PythonUpstream()
    up.add("app", "1.0", before(days=3), requires=("Twisted", "lzlib"))
    up.add_sdist(
        "Twisted",
        "18.9.0",
        before(days=60),
        {"setup.py": "from setuptools import setup\nsetup(install_requires=['helper'])\n"},
        fmt="tar.bz2",
    )
    up.add("Twisted", "21.2.0", after(days=700))
    up.add_sdist("lzlib", "0.2", before(days=90), {"pyproject.toml": PYPROJECT_FLIT}, fmt="tar.xz")
    up.add("helper", "1.0", before(days=50))
    up.add("flit_core", "3.2", before(days=100))
    up.add("setuptools", "65.0", before(days=90))
    up.add("wheel", "0.37.0", before(days=200))
    with serving(up.app()) as url:
        files = record_python(["app"], T, url + "/simple/", BlobStore(tmp_path))
    assert {f.filename for f in files} >= {"twisted-18.9.0.tar.bz2", "lzlib-0.2.tar.xz"}
    assert ("helper", "1.0") in _versions(files)  # read from the .tar.bz2's setup.py
    assert ("flit-core", "3.2") in _versions(files)  # the .tar.xz's build requirement
