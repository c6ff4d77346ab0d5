"""Issue 34 (arrow 2019-09, pyrsistent 2019-01): the oldest interpreter here is bullseye's
Python 3.9, released 2020-10-05, and the test runner as of a T before it does not start on it
(pytest 5.1, importlib_metadata as of January 2019). pytest and the packages it requires are
the grader's tool, not the project under test: they are taken as of the interpreter's release,
except a package the project itself requires, which keeps T."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from replay.base.blobs import BlobStore
from replay.base.manifest import PythonFile
from replay.registry.pypi import Catalog
from replay.registry.record import Target, record_for_project
from tests.registry.helpers import PythonUpstream
from tests.serving import serving

T = datetime(2019, 9, 1, 12, 0, tzinfo=UTC)
BULLSEYE = Target.for_debian("bullseye")


def _day(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(hour=8, tzinfo=UTC)


def _upstream() -> PythonUpstream:
    """pytest and pluggy on both sides of T and of Python 3.9's release; attrs, which the
    project and pytest both require; a plugin and its own dependency."""
    up = PythonUpstream()
    up.add("pytest", "5.1.2", _day("2019-08-30"), requires=("pluggy>=0.12", "attrs>=17.4.0"))
    up.add(
        "pytest",
        "6.1.1",
        _day("2020-10-03"),
        requires=("pluggy<1.0,>=0.12", "attrs>=17.4.0", "iniconfig"),
    )
    up.add("pytest", "6.2.0", _day("2020-12-13"), requires=("pluggy<1.0.0a1,>=0.12",))
    up.add("pluggy", "0.12.0", _day("2019-05-27"))
    up.add("pluggy", "0.13.1", _day("2019-11-21"))
    up.add("pluggy", "1.0.0", _day("2021-08-25"))
    up.add("attrs", "19.1.0", _day("2019-03-03"))
    up.add("attrs", "20.2.0", _day("2020-09-05"))
    up.add("iniconfig", "1.0.1", _day("2020-07-20"))
    up.add("pytest-cov", "2.7.1", _day("2019-05-03"), requires=("pytest>=3.6", "coverage>=4.4"))
    up.add("pytest-cov", "2.10.1", _day("2020-08-14"), requires=("pytest>=4.6", "coverage>=4.4"))
    up.add("coverage", "4.5.4", _day("2019-07-29"))
    up.add("coverage", "5.3", _day("2020-09-13"))
    up.add("flit_core", "2.3", _day("2019-04-29"))
    return up


def _project(root: Path) -> Path:
    root.mkdir()
    (root / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["flit_core>=2"]\nbuild-backend = "flit_core.buildapi"\n'
        '[project]\nname = "mylib"\nversion = "0.1"\ndependencies = ["attrs>=17"]\n'
    )
    return root


def _record(
    tmp_path: Path, at: datetime, target: Target = BULLSEYE, up: PythonUpstream | None = None
) -> list[PythonFile]:
    with serving((up or _upstream()).app()) as url:
        return record_for_project(
            _project(tmp_path / "mylib"),
            ["pytest", "pytest-cov"],
            at,
            target,
            BlobStore(tmp_path / "blobs"),
            url + "/simple/",
        )


def _versions(files: list[PythonFile]) -> set[tuple[str, str]]:
    return {(f.project, f.version) for f in files}


def _why(files: list[PythonFile]) -> dict[str, str]:
    return {f.project: f.chosen_because or "" for f in files}


def test_the_runner_is_taken_as_of_the_interpreters_release(tmp_path: Path) -> None:
    files = _record(tmp_path, T)
    assert _versions(files) == {
        ("pytest", "6.1.1"),  # not 5.1.2 (T's), not 6.2.0 (after Python 3.9's release)
        ("pluggy", "0.13.1"),  # pytest's own dependency: lifted too
        ("iniconfig", "1.0.1"),  # only the lifted pytest needs it
        ("attrs", "19.1.0"),  # the project requires it: T's, though pytest does too
        ("pytest-cov", "2.7.1"),  # a plugin: T's
        ("coverage", "4.5.4"),  # the plugin's dependency: T's
        ("flit-core", "2.3"),  # the project's build system
    }
    why = _why(files)
    lifted = (
        "taken as of 2020-10-05 (Python 3.9's release), not T 2019-09-01: the test runner "
        "as of T predates the interpreter"
    )
    assert why["pytest"].startswith(f"pytest: {lifted}; newest final release at 2020-10-05")
    assert why["pluggy"].startswith(f"pluggy<1.0,>=0.12 (dependency of pytest 6.1.1): {lifted}")
    assert why["iniconfig"].startswith(f"iniconfig (dependency of pytest 6.1.1): {lifted}")
    assert why["attrs"].startswith("attrs>=17 (dependency of the project")
    assert "newest final release at T" in why["attrs"]
    for name in ("attrs", "pytest-cov", "coverage", "flit-core"):
        assert "taken as of" not in why[name]
    # Uploaded after T, the lifted files are listed as uploaded at T, so that the registry
    # frozen at T serves them; their reason keeps the real date.
    by_name = {f.project: f for f in files}
    assert by_name["pytest"].upload_time == T
    assert "uploaded 2020-10-03, after T: listed as uploaded at T" in why["pytest"]
    assert by_name["attrs"].upload_time == _day("2019-03-03")
    served = Catalog(files, T)
    for name, version in _versions(files):
        project = served.project(name)
        assert project is not None and {f.version for f in project.files} == {version}


def test_nothing_is_lifted_when_the_interpreter_is_older_than_t(tmp_path: Path) -> None:
    at = datetime(2021, 1, 15, tzinfo=UTC)  # after Python 3.9's release: everything as of T
    files = _record(tmp_path, at)
    assert _versions(files) == {
        ("pytest", "6.2.0"),
        ("pluggy", "0.13.1"),
        ("attrs", "20.2.0"),
        ("pytest-cov", "2.10.1"),
        ("coverage", "5.3"),
        ("flit-core", "2.3"),
    }
    for f in files:
        assert "taken as of" not in (f.chosen_because or "")
        assert f.upload_time <= at


def test_the_lift_follows_the_interpreter_of_the_release(tmp_path: Path) -> None:
    """On bookworm (Python 3.11, 2022-10-24) a T of 2021 lifts the runner to 3.11's release."""
    at = datetime(2021, 1, 15, tzinfo=UTC)
    up = _upstream()
    up.add("pytest", "7.1.3", _day("2022-09-02"), requires=("pluggy<2.0,>=0.12", "iniconfig"))
    files = _record(tmp_path, at, Target.for_debian("bookworm"), up)
    assert ("pytest", "7.1.3") in _versions(files)
    assert ("pluggy", "1.0.0") in _versions(files)  # lifted with it
    assert _why(files)["pytest"].startswith(
        "pytest: taken as of 2022-10-24 (Python 3.11's release), not T 2021-01-15"
    )
    assert ("attrs", "20.2.0") in _versions(files)
    # Where the lift would choose what T chooses (6.2.0), nothing of the runner is lifted:
    # its dependencies keep T too.
    (tmp_path / "same").mkdir()
    files = _record(tmp_path / "same", at, Target.for_debian("bookworm"))
    assert ("pytest", "6.2.0") in _versions(files)
    assert ("pluggy", "1.0.0") not in _versions(files)  # uploaded after T
    assert not any("taken as of" in why for why in _why(files).values())


def test_a_runner_pinned_where_t_has_it_keeps_its_dependencies_at_t(tmp_path: Path) -> None:
    """Found by the fifth held-out corpus (h2 2019): the project pins ``pytest==3.4.2``; the
    lift could not move pytest, but it took pytest's dependencies as of Python 3.9's release:
    attrs 20.2, which has no ``attr.ib(convert=...)``, and pytest 3.4 did not start. When the
    lift would choose the runner T chooses, nothing of it is lifted."""
    with serving(_upstream().app()) as url:
        files = record_for_project(
            _project(tmp_path / "mylib"),
            ["pytest==5.1.2", "pytest-cov"],
            T,
            BULLSEYE,
            BlobStore(tmp_path / "blobs"),
            url + "/simple/",
        )
    assert _versions(files) >= {("pytest", "5.1.2"), ("pluggy", "0.12.0"), ("attrs", "19.1.0")}
    assert not any("taken as of" in why for why in _why(files).values())
    assert ("pluggy", "0.13.1") not in _versions(files)
