"""A new case's environment as of T: the setup proposed, pip's misses read, the branch found."""

from __future__ import annotations

import shlex
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from xml.etree import ElementTree

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.version import Version

from replay.base import gitrepo
from replay.base.blobs import BlobStore
from replay.base.manifest import PythonFile
from replay.casebuild.casedir import DEFAULT_COMMAND, default_branch
from replay.casebuild.environment import (
    RUNNER_WHY,
    SettleError,
    Wanted,
    export_tree,
    missing_requirements,
    names_runner,
    plan_environment,
    read_conflict,
    settle,
    setup_command,
)
from replay.images.base import release_named
from replay.registry.record import Target
from replay.runtime.base import SandboxError
from tests.casebuild.repos import commit
from tests.registry.helpers import PythonUpstream, T, after, before, make_wheel
from tests.serving import serving

PIP_20 = """\
ERROR: Could not find a version that satisfies the requirement flit_core<4,>=3.2.0
ERROR: No matching distribution found for flit_core<4,>=3.2.0
"""
PIP_25 = """\
  ╰─> [2 lines of output]
      ERROR: Could not find a version that satisfies the requirement editables~=0.3
      ERROR: No matching distribution found for editables~=0.3
      [end of output]
"""


def test_pip_misses_are_read_in_pips_words_old_and_new() -> None:
    assert missing_requirements(PIP_20) == ["flit_core<4,>=3.2.0"]
    assert missing_requirements(PIP_25 + PIP_25) == ["editables~=0.3"]
    assert missing_requirements("ERROR: some other failure") == []


def test_setup_installs_the_project_and_the_test_requirements(tmp_path: Path) -> None:
    wanted = Wanted(requires=("pytest", "-r tests/requirements.txt", "pytest-cov>=2.12"))
    bookworm = release_named("bookworm")
    bullseye = release_named("bullseye")
    assert setup_command(tmp_path, bookworm, wanted) == (
        "python -m pip install -e . pytest -r tests/requirements.txt 'pytest-cov>=2.12'"
    )
    # pip 20.3 (bullseye) installs editable only through a setup.py.
    assert setup_command(tmp_path, bullseye, Wanted(extras=("tests",))) == (
        "python -m pip install .[tests]"
    )
    (tmp_path / "setup.py").write_text("from setuptools import setup\nsetup()\n")
    # With no [build-system], setup.py develop runs with whatever setuptools the command put
    # there first, a requirement's own dependency (webargs 2022: pyramid requires setuptools,
    # 62 as of T, which linked webargs into /usr/lib/python3.9/site-packages, a directory
    # Debian's Python does not search): Debian's distutils, as below, links it where it does.
    assert setup_command(tmp_path, bullseye, Wanted(extras=("tests", "docs"))) == (
        "SETUPTOOLS_USE_DISTUTILS=stdlib python -m pip install -e .[tests,docs]"
    )
    assert setup_command(tmp_path, bookworm, Wanted(extras=("tests",))) == (
        "python -m pip install -e .[tests]"
    )
    setuptools = (
        '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n'
    )
    (tmp_path / "pyproject.toml").write_text(setuptools)
    # pip 20.3 runs setup.py develop with the setuptools [build-system] asks for, whose own
    # distutils links the project where Debian's Python does not look (cachetools 2023):
    # Debian's distutils, which setuptools uses when told to, links it where it does.
    assert setup_command(tmp_path, bullseye, Wanted()) == (
        "SETUPTOOLS_USE_DISTUTILS=stdlib python -m pip install -e ."
    )
    assert setup_command(tmp_path, bookworm, Wanted()) == "python -m pip install -e ."
    # A setup.py shim beside flit (more-itertools 2023): pip 20.3 would run setup.py develop
    # in an isolated build environment holding flit_core only ("No module named 'setuptools'").
    flit = (
        '[build-system]\nrequires = ["flit_core >=3.2,<4"]\nbuild-backend = "flit_core.buildapi"\n'
    )
    (tmp_path / "pyproject.toml").write_text(flit)
    assert setup_command(tmp_path, bullseye, Wanted()) == "python -m pip install ."
    assert setup_command(tmp_path, bookworm, Wanted()) == "python -m pip install -e ."


def test_default_branch_is_the_repositorys_own(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    repo.mkdir()
    gitrepo.run(repo, "init", "-q", "-b", "master")
    base = commit(repo, "2021-07-01T10:00:00+00:00", "first", {"a.txt": "a\n"})
    assert default_branch(repo, base) == "master"
    clone = tmp_path / "clone"
    gitrepo.run(tmp_path, "clone", "-q", str(repo), str(clone))
    gitrepo.run(clone, "checkout", "-q", "-b", "topic")
    assert default_branch(clone, base) == "master"  # origin/HEAD, not the checked-out branch


def _file(project: str) -> PythonFile:
    return PythonFile(
        project=project,
        version="1.0",
        filename=f"{project}-1.0-py3-none-any.whl",
        sha256="0" * 64,
        size=1,
        upload_time=datetime(2021, 1, 1, tzinfo=UTC),
    )


def test_settle_records_what_pip_missed_and_rebuilds(monkeypatch, tmp_path: Path) -> None:
    import replay.casebuild.environment as environment

    recorded: list[list[str]] = []
    added: list[list[PythonFile]] = []
    monkeypatch.setattr(
        environment,
        "record_python",
        lambda specs, *a, **k: recorded.append(list(specs)) or [_file("editables")],
    )
    monkeypatch.setattr(environment, "_add_to_registry", lambda path, files: added.append(files))
    builds = iter([SandboxError(PIP_25), None])

    def build(path: Path) -> None:
        outcome = next(builds)
        if outcome is not None:
            raise outcome

    at = datetime(2025, 2, 17, tzinfo=UTC)
    got = settle(
        tmp_path / "case.yaml",
        build,
        at,
        release_named("bookworm"),
        BlobStore(tmp_path),
        "http://x",
    )
    assert got == ["editables~=0.3"]
    assert recorded == [["editables~=0.3"]]
    assert "pip asked for it" in (added[0][0].chosen_because or "")


def test_settle_stops_when_a_recorded_miss_is_still_missed(monkeypatch, tmp_path: Path) -> None:
    import replay.casebuild.environment as environment

    monkeypatch.setattr(environment, "record_python", lambda *a, **k: [])
    monkeypatch.setattr(environment, "_add_to_registry", lambda path, files: None)

    def build(path: Path) -> None:
        raise SandboxError(PIP_20)

    at = datetime(2021, 7, 30, tzinfo=UTC)
    with pytest.raises(SettleError, match="still finds no distribution for flit_core"):
        settle(
            tmp_path / "case.yaml",
            build,
            at,
            release_named("bullseye"),
            BlobStore(tmp_path),
            "http://x",
        )


PYENCHANT_PIP_20 = """\
Collecting pyenchant==2.0.0
  Downloading pyenchant-2.0.0.tar.gz (64 kB)
    ERROR: Command errored out with exit status 1:
     command: /usr/bin/python3 -c 'import setuptools' egg_info
    Traceback (most recent call last):
      File "/tmp/pip-install-z76f8gi4/pyenchant/enchant/_enchant.py", line 145, in <module>
        raise ImportError(msg)
    ImportError: The 'enchant' C library was not found. Please install it via your OS package \
manager, or use a pre-built binary wheel from PyPI.
    ----------------------------------------
WARNING: Discarding https://files.pythonhosted.org/packages/fc/31/pyenchant-2.0.0.tar.gz#sha256=fc\
31 (from https://pypi.org/simple/pyenchant/). Command errored out with exit status 1: python \
setup.py egg_info Check the logs for full command output.
ERROR: Could not find a version that satisfies the requirement pyenchant==2.0.0
ERROR: No matching distribution found for pyenchant==2.0.0
""".replace("\\\n", "")
PYENCHANT_PIP_23 = """\
Collecting pyenchant==2.0.0
  Preparing metadata (setup.py) ... error
  error: subprocess-exited-with-error
  \u00d7 python setup.py egg_info did not run successfully.
      ImportError: The 'enchant' C library was not found.
error: metadata-generation-failed
ERROR: No matching distribution found for pyenchant==2.0.0
"""


@pytest.mark.parametrize("output", [PYENCHANT_PIP_20, PYENCHANT_PIP_23], ids=["pip20", "pip23"])
def test_a_source_distribution_that_does_not_build_is_told_as_such(
    monkeypatch, tmp_path: Path, output: str
) -> None:
    """Found by the third held-out corpus (multidict 2019: ``requirements/dev.txt`` pins
    pyenchant 2.0.0, an sdist that needs the enchant C library): pip discards the sdist it
    cannot build and says "No matching distribution"; the stop said "nothing at T fits the
    interpreter", which was not the cause. It now names the build's own error and what to
    change."""
    import replay.casebuild.environment as environment

    monkeypatch.setattr(environment, "record_python", lambda *a, **k: [])
    monkeypatch.setattr(environment, "_add_to_registry", lambda path, files: None)
    seen: list[int] = []

    def build(path: Path) -> None:
        seen.append(1)
        raise SandboxError(output)

    at = datetime(2019, 12, 12, tzinfo=UTC)
    with pytest.raises(SettleError) as stop:
        settle(
            tmp_path / "case.yaml", build, at, release_named("bullseye"), BlobStore(tmp_path), ""
        )
    first = str(stop.value).splitlines()[0]
    assert first.startswith(
        "pip at T found pyenchant==2.0.0 only as a source distribution that does not build "
        "here (ImportError: The 'enchant' C library was not found."
    )
    assert "name the test requirements without it (--requires)" in first
    assert "nothing at T fits" not in first
    assert len(seen) == 2  # recorded once as of T, then told


def test_settle_passes_other_failures_on_untouched(tmp_path: Path) -> None:
    def build(path: Path) -> None:
        raise SandboxError("environment setup 'make' exited 2: no rule")

    at = datetime(2021, 7, 30, tzinfo=UTC)
    with pytest.raises(SandboxError, match="no rule"):
        settle(
            tmp_path / "case.yaml",
            build,
            at,
            release_named("bullseye"),
            BlobStore(tmp_path),
            "http://x",
        )


# ----------------------------------------------------------------------------- the runner

UNITTEST_TEST = """\
import unittest

from mylib import double


class DoubleTest(unittest.TestCase):
    def test_doubles(self):
        self.assertEqual(double(2), 4)
"""


def _unittest_project(root: Path, extra_test: str = "") -> tuple[Path, str]:
    """A project tested with unittest: its test requirements name coverage, not pytest."""
    gitrepo.init(root)
    base = commit(
        root,
        "2026-03-01T10:00:00Z",
        "mylib",
        {
            "pyproject.toml": '[build-system]\nrequires = ["hatchling"]\n'
            'build-backend = "hatchling.build"\n'
            '[project]\nname = "mylib"\nversion = "0.1"\ndependencies = []\n'
            f"[project.optional-dependencies]\ntest = [{extra_test}]\n",
            "mylib/__init__.py": "def double(x):\n    return 2 * x\n",
            "tests/test_mylib.py": UNITTEST_TEST,
            "requirements-test.txt": "coverage\n",
        },
    )
    return root, base


def _runner_upstream() -> PythonUpstream:
    up = PythonUpstream()
    up.add("hatchling", "1.5", before(days=30))
    up.add("coverage", "7.0", before(days=10))
    up.add("pytest", "8.0", before(days=20), requires=("iniconfig",))
    up.add("pytest", "9.0", after(days=1))  # after T: never the one chosen
    up.add("iniconfig", "2.0", before(days=100))
    return up


def _why(files: list[PythonFile]) -> dict[tuple[str, str], str]:
    return {(f.project, f.version): f.chosen_because or "" for f in files}


def test_a_project_tested_with_unittest_gets_pytest_as_of_t(tmp_path: Path) -> None:
    repo, base = _unittest_project(tmp_path / "mylib")
    with serving(_runner_upstream().app()) as url:
        wanted = Wanted(requires=("-r requirements-test.txt",), index_url=url + "/simple/")
        planned = plan_environment(repo, base, T, wanted, BlobStore(tmp_path / "blobs"))
    # T is March 2026: trixie, whose Debian packages pip cannot uninstall.
    assert planned.setup == [
        "python -m pip install --ignore-installed -e . -r requirements-test.txt pytest"
    ]
    why = _why(planned.files)
    assert set(why) == {
        ("hatchling", "1.5"),
        ("coverage", "7.0"),
        ("pytest", "8.0"),
        ("iniconfig", "2.0"),
    }
    assert why[("pytest", "8.0")].startswith(
        "added by case create: the hidden tests are run with pytest (which runs unittest "
        "TestCases too and writes the JUnit report the grader reads), and the project's test "
        "requirements do not name it; pytest: newest"
    )
    assert "dependency of pytest 8.0" in why[("iniconfig", "2.0")]
    assert planned.notes == [f"pytest added to the test requirements, as of T: {RUNNER_WHY}"]


def test_a_project_that_names_pytest_keeps_its_own_requirements(tmp_path: Path) -> None:
    repo, base = _unittest_project(tmp_path / "mylib", extra_test='"pytest>=7"')
    with serving(_runner_upstream().app()) as url:
        wanted = Wanted(extras=("test",), index_url=url + "/simple/")
        planned = plan_environment(repo, base, T, wanted, BlobStore(tmp_path / "blobs"))
    assert planned.setup == ["python -m pip install --ignore-installed -e .[test]"]
    assert planned.notes == []
    assert "added by" not in _why(planned.files)[("pytest", "8.0")]
    # A note about something else (a requirement by URL left out) adds no runner either: the
    # pytest the project names is still the project's, not "added by case create".
    base = commit(
        repo, "2026-03-02T10:00:00Z", "ci", {"ci.txt": "coverage\nhttps://example.test/x.tar.gz\n"}
    )
    with serving(_runner_upstream().app()) as url:
        wanted = Wanted(requires=("pytest", "-r ci.txt"), index_url=url + "/simple/")
        planned = plan_environment(repo, base, T, wanted, BlobStore(tmp_path / "blobs"))
    assert planned.notes and not any("pytest added" in n for n in planned.notes), planned.notes
    assert "added by" not in _why(planned.files)[("pytest", "8.0")]


def test_names_runner_reads_requirement_files_extras_and_the_project(tmp_path: Path) -> None:
    repo, base = _unittest_project(tmp_path / "mylib", extra_test='"pytest-cov", "PyTest==8.0"')
    checkout = tmp_path / "checkout"
    export_tree(repo, base, checkout)
    target = Target.for_debian("bookworm")
    assert not names_runner(checkout, Wanted(requires=("-r requirements-test.txt",)), target)
    assert not names_runner(checkout, Wanted(requires=("pytest-cov",)), target)
    assert names_runner(checkout, Wanted(extras=("test",)), target)
    assert names_runner(checkout, Wanted(requires=("pytest[testing]>=7",)), target)
    (checkout / "ci.txt").write_text("-r requirements-test.txt\npytest==8.0\n")
    assert names_runner(checkout, Wanted(requires=("-r ci.txt",)), target)


def test_the_default_command_runs_a_unittest_testcase_into_junit(tmp_path: Path) -> None:
    repo, base = _unittest_project(tmp_path / "mylib")
    checkout = export_tree(repo, base, tmp_path / "checkout")
    junit = tmp_path / "junit.xml"
    command = DEFAULT_COMMAND.format(junit=junit) + " tests/test_mylib.py"
    argv = [sys.executable, *shlex.split(command)[1:]]  # this interpreter, with its pytest
    done = subprocess.run(argv, cwd=checkout, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    cases = ElementTree.parse(junit).getroot().iter("testcase")
    assert [(c.get("classname"), c.get("name")) for c in cases] == [
        ("tests.test_mylib.DoubleTest", "test_doubles")
    ]


def test_what_the_fix_adds_to_the_test_requirements_is_installed_too(tmp_path: Path) -> None:
    """Issue 34 (arrow, 2019): the fix added ``dateparser`` to requirements.txt beside the
    test that imports it; the environment, built at the base, lacked it, so the hidden test
    failed before and after the gold patch alike and case create stopped at measure. What the
    fix adds to the declared test requirements (a ``-r`` file, an extra) is installed too; a
    requirement the base already names keeps the base's version."""
    repo, base = _unittest_project(tmp_path / "mylib", extra_test='"coverage"')
    fix = commit(
        repo,
        "2026-03-02T10:00:00Z",
        "Fix double; test it with iniconfig",
        {
            "requirements-test.txt": "coverage>=7\niniconfig\n",
            "pyproject.toml": (repo / "pyproject.toml")
            .read_text()
            .replace('test = ["coverage"]', 'test = ["coverage", "pytest"]'),
            "tests/test_mylib.py": UNITTEST_TEST + "\nimport iniconfig\n",
        },
    )
    with serving(_runner_upstream().app()) as url:
        wanted = Wanted(
            requires=("-r requirements-test.txt",), extras=("test",), index_url=url + "/simple/"
        )
        blobs = BlobStore(tmp_path / "blobs")
        planned = plan_environment(repo, base, T, wanted, blobs, fix)
        plain = plan_environment(repo, base, T, wanted, blobs)
    assert planned.setup == [
        "python -m pip install --ignore-installed -e .[test] -r requirements-test.txt "
        "iniconfig pytest"
    ]
    assert ("iniconfig", "2.0") in _why(planned.files)
    assert planned.notes[0] == (
        "iniconfig, pytest added to the test requirements, as of T: the fix declares them for "
        "its tests (the hidden tests may need it), the base does not"
    )
    assert "iniconfig" not in plain.setup[0]


PIP_CONFLICT = """\
ERROR: Cannot install mylib and mylib-plugin==0.2 because these package versions have \
conflicting dependencies.

The conflict is caused by:
    The user requested mylib 0.1.dev3 (from /workspace/repo)
    mylib-plugin 0.2 depends on mylib>=1.4

To fix this you could try to:
1. loosen the range of package versions you've specified
2. remove package versions to allow pip attempt to solve the dependency conflict

ERROR: ResolutionImpossible: for help visit https://pip.pypa.io/en/latest/user_guide/#fixing-conflicting-dependencies
"""


def test_pips_resolution_impossible_is_told_in_the_projects_terms(tmp_path: Path) -> None:
    """Issue 34 (cause 3's message): pip's ResolutionImpossible named neither the cause nor
    what to change; settling passed it on as it came."""

    def build(path: Path) -> None:
        raise SandboxError("environment setup 'python -m pip install -e .' exited 1: "
                           + PIP_CONFLICT)  # fmt: skip

    case = tmp_path / "case.yaml"
    case.write_text("environment:\n  setup: [python -m pip install -e . mylib-plugin]\n")
    said: list[str] = []
    with pytest.raises(SettleError) as exc:
        settle(case, build, T, release_named("bookworm"), BlobStore(tmp_path), "http://x",
               say=said.append)  # fmt: skip
    # First the project is installed after its test requirements (as tox does); when pip
    # still cannot, the stop says why.
    assert "installed first and the project over them" in said[0]
    assert yaml.safe_load(case.read_text())["environment"]["setup"] == [
        "python -m pip install mylib-plugin",
        "python -m pip install -e .",
    ]
    assert str(exc.value) == (
        "pip at T cannot install the project and its test requirements together: the checkout "
        "builds as mylib 0.1.dev3, and mylib-plugin 0.2 requires mylib>=1.4. Give the build the "
        "version the project had at the base (for a version from git tags: the repository's "
        "tags, or SETUPTOOLS_SCM_PRETEND_VERSION in the setup), or leave that test requirement "
        "out"
    )
    other = PIP_CONFLICT.replace("The user requested mylib 0.1.dev3 (from /workspace/repo)",
                                 "The user requested attrs==19.1")  # fmt: skip
    assert read_conflict(other) == (
        "pip at T cannot install the project and its test requirements together: The user "
        "requested attrs==19.1; mylib-plugin 0.2 depends on mylib>=1.4. These are the "
        "project's own ranges as of T: name a requirement with a version that fits "
        "(--requires), or choose another T (--at)"
    )
    assert read_conflict("ERROR: No matching distribution found for x") is None


def test_a_requirements_file_that_installs_the_project_itself_goes_first(tmp_path: Path) -> None:
    """Found by the second held-out corpus (referencing 2023): test-requirements.txt, written
    by pip-compile, holds the project's own line ``file:.#egg=referencing``; with ``-e .`` in
    the same pip command pip stopped ("Cannot install referencing 0.26.2.dev1 (from .) and
    referencing 0.26.2.dev1 (from /workspace/repo)"), which case create told as a version
    missing from tags. That file is now installed first, then the project with the rest."""
    from replay.casebuild.environment import setup_commands

    (tmp_path / "test-requirements.txt").write_text(
        "# autogenerated by pip-compile\npytest==7.2.2\n    # via -r test-requirements.in\n"
        "file:.#egg=referencing\n    # via -r test-requirements.in\n"
    )
    (tmp_path / "ci").mkdir()
    (tmp_path / "ci" / "all.txt").write_text("-r ../dev.txt\n")
    (tmp_path / "dev.txt").write_text("-e .[tests]  # the project\n")
    (tmp_path / "plain.txt").write_text("pytest\n./vendored/pkg\n")
    bookworm = release_named("bookworm")
    trixie = release_named("trixie")
    wanted = Wanted(requires=("-r test-requirements.txt", "pytest-cov"), extras=("x",))
    assert setup_commands(tmp_path, bookworm, wanted) == [
        "python -m pip install -r test-requirements.txt",
        "python -m pip install -e .[x] pytest-cov",
    ]
    assert setup_commands(tmp_path, trixie, Wanted(requires=("-r ci/all.txt",))) == [
        "python -m pip install --ignore-installed -r ci/all.txt",
        "python -m pip install --ignore-installed -e .",
    ]
    plain = Wanted(requires=("-r plain.txt",))
    assert setup_commands(tmp_path, bookworm, plain) == ["python -m pip install -e . -r plain.txt"]
    # charset-normalizer 2026 (fourth corpus): `uv export` pins hashes; pip then refuses the
    # project's directory in the same command ("cannot be installed when requiring hashes").
    (tmp_path / "dev-requirements.txt").write_text(
        "# autogenerated by uv\npytest==8.3.5 \\\n    --hash=sha256:" + "0" * 64 + "\n"
    )
    (tmp_path / "all-dev.txt").write_text("-r dev-requirements.txt\n")
    for name in ("dev-requirements.txt", "all-dev.txt"):
        hashed = Wanted(requires=(f"-r {name}", "coverage"))
        assert setup_commands(tmp_path, bookworm, hashed) == [
            f"python -m pip install -r {name}",
            "python -m pip install -e . coverage",
        ]
    from replay.casebuild.environment import read_conflict

    said = read_conflict(
        "ERROR: Cannot install referencing 0.26.2.dev1+gbaef09b (from .) and referencing "
        "0.26.2.dev1+gbaef09b (from /workspace/repo) because these package versions have "
        "conflicting dependencies.\nERROR: ResolutionImpossible: for help visit https://pip"
    )
    assert said == (
        "pip at T cannot install the project and its test requirements together: referencing "
        "is asked for from two places in one command (. and /workspace/repo): a test "
        "requirements file names the project's own directory; name that file alone in a setup "
        "command before the project's"
    )


def test_bullseye_installs_a_hatchling_project_editable_with_the_pip_of_t(tmp_path: Path) -> None:
    """Found by the third held-out corpus (platformdirs 2022, hatchling, a src/ layout, T on
    bullseye): pip 20.3 installs editable only through setup.py, so the project was installed
    as a wheel, the tests imported that copy, and the gold patch had no effect (the fix's
    tests failed before and after it). After pip learnt PEP 660 (21.3, October 2021) the setup
    first installs pip as of T, recorded in the registry, then the project editable. Before
    that, a wheel it stays: no pip at T could do better."""
    from replay.casebuild.environment import setup_command

    repo, base = _unittest_project(tmp_path / "mylib", extra_test='"pytest"')
    up = _runner_upstream()
    up.add("pip", "24.0", before(days=40))
    up.add("pip", "26.0", after(days=2))
    with serving(up.app()) as url:
        wanted = Wanted(extras=("test",), python="3.9", index_url=url + "/simple/")
        planned = plan_environment(repo, base, T, wanted, BlobStore(tmp_path / "blobs"))
    assert planned.release.name == "bullseye"
    assert planned.setup == [
        "python -m pip install 'pip>=21.3'",
        "python -m pip install -e .[test]",
    ]
    assert ("pip", "24.0") in _why(planned.files)
    assert any(note.startswith("pip>=21.3 installed first, as of T") for note in planned.notes)
    checkout = export_tree(repo, base, tmp_path / "checkout")
    before_pep660 = datetime(2021, 6, 1, tzinfo=UTC)
    from replay.casebuild.environment import needs_pep660_pip

    assert needs_pep660_pip(checkout, release_named("bullseye"), T)
    assert not needs_pep660_pip(checkout, release_named("bullseye"), before_pep660)
    assert not needs_pep660_pip(checkout, release_named("bookworm"), T)
    assert setup_command(checkout, release_named("bullseye"), Wanted()) == (
        "python -m pip install ."
    )


def test_a_test_file_that_cannot_be_imported_does_not_stop_the_others(tmp_path: Path) -> None:
    """Found by the third held-out corpus (lark 2019): one changed test file imported a test
    dependency that does not run on the case's interpreter, pytest stopped at collection
    ("Interrupted: 1 error during collection"), and the fix's tests in another file never
    ran: case create stopped at measure. The default command runs the others."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_broken.py").write_text("import no_such_module_here\n")
    (tmp_path / "tests" / "test_fine.py").write_text("def test_fine():\n    assert True\n")
    junit = tmp_path / "junit.xml"
    command = DEFAULT_COMMAND.format(junit=junit) + " tests/test_broken.py tests/test_fine.py"
    argv = [sys.executable, *shlex.split(command)[1:]]
    done = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, check=False)
    assert done.returncode != 0  # the broken file still fails the run
    cases = ElementTree.parse(junit).getroot().iter("testcase")
    passed = [c.get("name") for c in cases if not list(c)]
    assert passed == ["test_fine"], done.stdout


WEBSOCKETS_CONFLICT = """\
ERROR: Cannot install -r requirements/test.txt (line 3) and mitmproxy==12.2.3 because these \
package versions have conflicting dependencies.

The conflict is caused by:
    The user requested mitmproxy==12.2.3
    mitmproxy 12.2.3 depends on cryptography<=48.1 and >=42.0
    aioquic 1.2.0 depends on cryptography>=42.0.0
    pyopenssl 26.3.0 depends on cryptography<50 and >=49.0.0

To fix this you could try to:
1. loosen the range of package versions you've specified
2. remove package versions to allow pip to attempt to solve the dependency conflict

ERROR: ResolutionImpossible: for help visit https://pip.pypa.io/en/latest/topics/dependency-resolution/
"""


MARKDOWN_IT_2020_CONFLICT = """\
The conflict is caused by:
    markdown-it-py[testing] 0.6.0 depends on pytest<4 and >=3.6
    pytest-benchmark 3.2.3 depends on pytest>=3.8
    pytest-cov 2.10.1 depends on pytest>=4.6
    markdown-it-py[testing] 0.6.0 depends on pytest<4 and >=3.6
    pytest-benchmark 3.2.3 depends on pytest>=3.8
    pytest-cov 2.10.0 depends on pytest>=4.6

ERROR: ResolutionImpossible: for help visit https://pip.pypa.io/en/latest/topics/dependency-resolution/
"""


def test_settle_records_an_older_dependent_when_the_newest_ones_conflict(
    monkeypatch, tmp_path: Path
) -> None:
    """Found by the third held-out corpus (websockets 2026): the registry held, per
    requirement, the newest version at T, so pip could not backtrack from pyOpenSSL 26.3.0
    (cryptography>=49) to one that fits mitmproxy's cryptography<=48.1, and case create stopped
    on the conflict. The dependent asking for the newest is recorded one version older, as of
    T, and the build tried again; a requirement the user gave is never stepped back."""
    import replay.casebuild.environment as environment
    from replay.casebuild.environment import step_back

    assert step_back(WEBSOCKETS_CONFLICT) == "pyopenssl<26.3.0"
    user_only = (
        "The conflict is caused by:\n    The user requested mitmproxy==12.2.3\n"
        "    mitmproxy 12.2.3 depends on cryptography<=48.1 and >=42.0\n"
    )
    assert step_back(user_only) is None
    assert step_back(PIP_CONFLICT) is None  # the checkout's own version: not a registry gap
    # jsonpickle 2022: an extra's line names the project the user pinned.
    coverage = (
        "The conflict is caused by:\n    The user requested coverage<5\n"
        "    coverage[toml] 7.0.1 depends on coverage==7.0.1\n"
        "    pytest-cov 4.0.0 depends on coverage[toml]>=5.2.1\n"
    )
    assert step_back(coverage) == "pytest-cov<4.0.0"
    # markdown-it-py 2020 (seventh corpus): the second round shows the version recorded in
    # the first too; stepping back below the newest again would repeat the first round.
    assert step_back(MARKDOWN_IT_2020_CONFLICT) == "pytest-cov<2.10.0"
    recorded: list[list[str]] = []
    monkeypatch.setattr(
        environment, "record_python", lambda reqs, *a, **k: recorded.append(list(reqs)) or []
    )
    monkeypatch.setattr(environment, "_add_to_registry", lambda path, files: None)
    monkeypatch.setattr(environment, "_registry_files", lambda path: [])  # nothing to read
    builds: list[int] = []

    def build(path: Path) -> None:
        builds.append(1)
        if len(builds) == 1:
            raise SandboxError(WEBSOCKETS_CONFLICT)

    said: list[str] = []
    at = datetime(2026, 2, 1, tzinfo=UTC)
    got = settle(
        tmp_path / "case.yaml", build, at, release_named("trixie"), BlobStore(tmp_path), "",
        say=said.append,
    )  # fmt: skip
    assert recorded == [["pyopenssl<26.3.0"]]
    assert got == ["pyopenssl<26.3.0"]
    assert "pyopenssl<26.3.0 recorded as of T too" in said[0]
    always = SandboxError(WEBSOCKETS_CONFLICT)

    def stuck(path: Path) -> None:
        raise always

    with pytest.raises(SettleError, match="cannot install the project and its test requirements"):
        settle(tmp_path / "case.yaml", stuck, at, release_named("trixie"), BlobStore(tmp_path), "")


def test_the_extras_a_requirements_file_installs_with_the_project_are_recorded(
    tmp_path: Path,
) -> None:
    """Found by the third held-out corpus (jsonpickle 2024 and 2026): requirements-dev.txt is
    ``.[dev,docs,testing]``; the recorder skips a path line, so the extras' requirements were
    never recorded, pip asked for them one by one, and settling gave up after six rounds."""
    from replay.casebuild.environment import own_extras

    repo, base = _unittest_project(tmp_path / "mylib", extra_test='"attrs"')
    commit(repo, "2026-03-01T11:00:00Z", "dev requirements", {"requirements-dev.txt": ".[test]\n"})
    base = gitrepo.run(repo, "rev-parse", "HEAD").strip()
    checkout = export_tree(repo, base, tmp_path / "checkout")
    assert own_extras(checkout, ["-r requirements-dev.txt", "pytest"]) == ["test"]
    (checkout / "ci.txt").write_text("-r requirements-dev.txt\n-e .[docs, test]\n")
    assert own_extras(checkout, ["-r ci.txt"]) == ["test", "docs"]
    up = _runner_upstream()
    up.add("attrs", "23.1", before(days=5))  # what only the extra asks for
    with serving(up.app()) as url:
        wanted = Wanted(requires=("-r requirements-dev.txt",), index_url=url + "/simple/")
        planned = plan_environment(repo, base, T, wanted, BlobStore(tmp_path / "blobs"))
    assert ("attrs", "23.1") in _why(planned.files)
    assert planned.setup[0] == "python -m pip install --ignore-installed -r requirements-dev.txt"


PIP_20_3_CONFLICT = """\
ERROR: Cannot install -r requirements-dev.txt (line 5) and coverage<5 because these package \
versions have conflicting dependencies.

The conflict is caused by:
    The user requested coverage<5
    coverage[toml] 7.0 depends on coverage==7.0

To fix this you could try to:
1. loosen the range of package versions you've specified
2. remove package versions to allow pip to attempt to solve the dependency conflict

ERROR: ResolutionImpossible: for help visit https://pip.pypa.io/en/latest/user_guide/\
#fixing-conflicting-dependencies
"""


def test_a_conflict_pip_names_no_dependent_for_is_stepped_back_from_the_registry(
    monkeypatch, tmp_path: Path
) -> None:
    """Found by the third held-out corpus (jsonpickle 2022, bullseye's pip 20.3): the project
    pins ``coverage<5``; the newest pytest-cov at T asks for ``coverage[toml]>=5.2.1``, and
    pip 20.3 names only ``coverage[toml] 7.0 depends on coverage==7.0``, never pytest-cov, so
    nothing was stepped back and case create stopped. The registry's recorded metadata names
    the dependent; its versions are read back one by one (without a build each) until one
    fits, here the third version older, and the build is tried again."""
    import replay.casebuild.environment as environment
    from replay.casebuild.conflicts import step_back
    from replay.registry.record import record_python

    up = PythonUpstream()
    up.add("coverage", "4.5", before(days=400))
    up.add("coverage", "7.0", before(days=10))
    up.add("pytest-cov", "2.10", before(days=300), requires=("coverage>=4.4",))
    for version, days in (("2.12", 200), ("3.0", 100), ("4.0", 20)):
        up.add("pytest-cov", version, before(days=days), requires=("coverage[toml]>=5.2.1",))
    up.add("pytest-cov", "5.0", after(days=1), requires=("coverage>=4",))  # after T
    blobs = BlobStore(tmp_path / "blobs")
    registry: list[PythonFile] = []
    target = Target.for_debian("bullseye")
    assert step_back(PIP_20_3_CONFLICT) is None  # pip's words name no dependent
    with serving(up.app()) as url:
        index = url + "/simple/"
        registry += record_python(["pytest-cov", "coverage<5"], T, index, blobs, target)
        assert {(f.project, f.version) for f in registry} >= {("pytest-cov", "4.0")}
        monkeypatch.setattr(environment, "_registry_files", lambda path: list(registry))
        monkeypatch.setattr(environment, "_add_to_registry", lambda p, fs: registry.extend(fs))
        builds: list[set[tuple[str, str]]] = []

        def build(path: Path) -> None:
            held = {(f.project, f.version) for f in registry}
            builds.append(held)
            if ("pytest-cov", "2.10") not in held:
                raise SandboxError(PIP_20_3_CONFLICT)

        said: list[str] = []
        got = settle(
            tmp_path / "case.yaml", build, T, release_named("bullseye"), blobs, index,
            say=said.append,
        )  # fmt: skip
    assert len(builds) == 2  # one failed build, then one that found pytest-cov 2.10
    assert got == ["pytest-cov<4.0"]
    versions = sorted(f.version for f in registry if f.project == "pytest-cov")
    assert versions == ["2.10", "2.12", "3.0", "4.0"]  # never 5.0, uploaded after T
    assert "the registry's metadata does: pytest-cov<2.12 recorded as of T" in said[0]
    stepped = [f for f in registry if (f.project, f.version) == ("pytest-cov", "2.10")]
    assert "pip could not fit the newest versions at T together" in (
        stepped[0].chosen_because or ""
    )


MKDOCS_CONFLICT = """\
ERROR: Cannot install portray because these package versions have conflicting dependencies.

The conflict is caused by:
    portray 1.7.0 depends on mkdocs<1.2 and >=1.1
    mkdocs-material 7.3.6 depends on mkdocs>=1.2.3

To fix this you could try to:
1. loosen the range of package versions you've specified
2. remove package versions to allow pip to attempt to solve the dependency conflict

ERROR: ResolutionImpossible: for help visit https://pip.pypa.io/en/latest/topics/dependency-resolution/
"""


def test_a_dependent_whose_older_versions_ask_the_same_is_stepped_back_in_one_round(
    monkeypatch, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Found by the eighth held-out corpus (dataclasses-json 2022): portray asks for
    ``mkdocs<1.2``, the newest mkdocs-material at T for ``mkdocs>=1.2.3``, and so does each of
    its versions back to 7.2; each round recorded one version older and built again, and six
    rounds ended the case ("still misses distributions after 6 rounds"). The older versions
    are now read from their metadata while they ask for the same, and one build follows. The
    log now keeps the failed build's last lines (the stop's log had only the tool's words)."""
    import replay.casebuild.environment as environment
    from replay.casebuild.conflicts import step_back, stepped_floor

    caplog.set_level("INFO", logger="replay.casebuild.environment")

    assert step_back(MKDOCS_CONFLICT) == "mkdocs-material<7.3.6"
    assert stepped_floor(MKDOCS_CONFLICT) == ("mkdocs", Version("1.2.3"))
    up = PythonUpstream()
    up.add("mkdocs", "1.1.2", before(days=400))
    up.add("mkdocs", "1.2.3", before(days=30))
    up.add("mkdocs-material", "7.1.0", before(days=300), requires=("mkdocs>=1.1",))
    for version, days in (("7.2.0", 200), ("7.3.0", 100), ("7.3.6", 20)):
        up.add("mkdocs-material", version, before(days=days), requires=("mkdocs>=1.2.3",))
    blobs = BlobStore(tmp_path / "blobs")
    registry: list[PythonFile] = []
    with serving(up.app()) as url:
        index = url + "/simple/"
        monkeypatch.setattr(environment, "_registry_files", lambda path: list(registry))
        monkeypatch.setattr(environment, "_add_to_registry", lambda p, fs: registry.extend(fs))
        builds: list[int] = []

        def build(path: Path) -> None:
            builds.append(1)
            if ("mkdocs-material", "7.1.0") not in {(f.project, f.version) for f in registry}:
                raise SandboxError(MKDOCS_CONFLICT)

        said: list[str] = []
        got = settle(
            tmp_path / "case.yaml", build, T, release_named("bookworm"), blobs, index,
            say=said.append,
        )  # fmt: skip
    assert len(builds) == 2  # one failed build, then one with mkdocs-material 7.1.0
    assert got == ["mkdocs-material<7.3.6"]
    versions = sorted(f.version for f in registry if f.project == "mkdocs-material")
    assert versions == ["7.1.0", "7.2.0", "7.3.0"]
    assert "mkdocs-material<7.3.6 recorded as of T too" in said[0]
    assert "then older while each still asked for mkdocs>=1.2.3" in said[0]
    assert "to mkdocs-material<7.2.0" in said[0]
    # The log keeps pip's own words of the failed round (the stop names only the cause).
    kept = [r.getMessage() for r in caplog.records if "its output ends" in r.getMessage()]
    assert len(kept) == 1 and "mkdocs-material 7.3.6 depends on mkdocs>=1.2.3" in kept[0]


def test_a_test_requirement_pinning_another_version_of_the_project_is_installed_first(
    tmp_path: Path,
) -> None:
    """Found by the fourth held-out corpus (pyflakes 2019 and 2021): tox's deps are
    ``flake8==3.6.0``, which asks for ``pyflakes<2.1.0``, while the checkout is pyflakes 2.2.0;
    one pip command refuses both ("ResolutionImpossible"), and the fixes stopped at
    ``create: environment``. tox installs the deps, then the package: the setup does the same,
    and real pip, from a loopback index, accepts it (it warns about flake8's range) where the
    one command fails."""
    from replay.casebuild.environment import install_project_last

    case = tmp_path / "case.yaml"
    setup = "SETUPTOOLS_USE_DISTUTILS=stdlib python -m pip install --ignore-installed -e .[t] "
    case.write_text(
        yaml.safe_dump({"environment": {"setup": ["echo first", setup + "-r req.txt 'lint==1.0'"]}})
    )
    assert install_project_last(case)
    assert yaml.safe_load(case.read_text())["environment"]["setup"] == [
        "echo first",
        "python -m pip install --ignore-installed -r req.txt lint==1.0",
        "SETUPTOOLS_USE_DISTUTILS=stdlib python -m pip install --ignore-installed -e '.[t]'",
    ]
    assert not install_project_last(case)  # nothing left to split
    case.write_text(yaml.safe_dump({"environment": {"setup": ["pip install -e . -e ./vendor x"]}}))
    assert install_project_last(case)  # another editable requirement stays with the others
    assert yaml.safe_load(case.read_text())["environment"]["setup"] == [
        "pip install -e ./vendor x",
        "pip install -e .",
    ]

    up = PythonUpstream()
    up.add("mylib", "2.0", before(days=300))  # the project's own release, on the index
    up.add("lint", "1.0", before(days=100), requires=("mylib<2.1",))
    # The checkout: version 2.2.0, built by an in-tree backend (no build requirement to fetch).
    project = tmp_path / "mylib"
    (project / "dist").mkdir(parents=True)
    wheel, data, _ = make_wheel("mylib", "2.2.0")
    (project / "dist" / wheel).write_bytes(data)
    (project / "pyproject.toml").write_text(
        '[build-system]\nrequires = []\nbuild-backend = "backend"\nbackend-path = ["."]\n'
    )
    (project / "backend.py").write_text(
        "import os, shutil\n"
        "def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):\n"
        f"    shutil.copy(os.path.join('dist', {wheel!r}), wheel_directory)\n"
        f"    return {wheel!r}\n"
    )
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    with serving(up.app()) as url:
        index = ["--index-url", url + "/simple/", "-q"]
        together = subprocess.run(
            [python, "-m", "pip", "install", *index, ".", "lint==1.0"],
            cwd=project, capture_output=True, text=True, check=False,
        )  # fmt: skip
        assert together.returncode != 0 and "ResolutionImpossible" in together.stderr
        for words in (["lint==1.0"], ["."]):
            done = subprocess.run(
                [python, "-m", "pip", "install", *index, *words],
                cwd=project, capture_output=True, text=True, check=False,
            )  # fmt: skip
            assert done.returncode == 0, done.stderr
    version = subprocess.run(
        [python, "-c", "import mylib, lint; print(mylib.VERSION)"],
        cwd=tmp_path, capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert version.stdout.strip() == "2.2.0"  # the checkout, over the release lint brought


def test_a_requirement_the_index_lost_is_left_out_of_a_requirements_file(tmp_path: Path) -> None:
    """Found by the fifth held-out corpus (cloudpickle 2019 and 2022): dev-requirements.txt
    names codecov, whose every file on the index was uploaded in 2023 (the project was deleted
    and uploaded again), so nothing installs as of T and case create stopped. A requirement
    only a requirements file names, of a project with no file at T at all, is now left out
    (the rest of the file installed, the extras of its line for the project kept), saying so;
    one named directly, or one the index had other versions of at T, still stops the case."""
    from replay.registry.errors import NothingAtT

    repo, base = _unittest_project(tmp_path / "mylib", extra_test='"attrs"')
    files = {
        "dev-requirements.txt": "# tests\n-e .[test]\npytest\ncoverage\n# the uploader\ncodecov\n"
        "./tests/helperpkg\n",
        "other.txt": "-r dev-requirements.txt\n",
        "tests/helperpkg/setup.py": "from setuptools import setup\nsetup(name='helperpkg')\n",
    }
    commit(repo, "2026-03-01T11:00:00Z", "dev requirements", files)
    base = gitrepo.run(repo, "rev-parse", "HEAD").strip()
    up = _runner_upstream()
    up.add("attrs", "23.1", before(days=5))
    up.add("codecov", "2.1.13", after(days=400))  # the only file: uploaded long after T
    blobs = BlobStore(tmp_path / "blobs")
    with serving(up.app()) as url:
        index = url + "/simple/"
        wanted = Wanted(requires=("-r other.txt",), index_url=index)
        planned = plan_environment(repo, base, T, wanted, blobs)
        assert planned.notes[0].startswith(
            "codecov left out of the test requirements (other.txt names it; the rest of it is "
            "installed): the index holds no file of it from at or before T"
        )
        # The local helper package the file installs stays (cloudpickle 2022's
        # ./tests/cloudpickle_testpkg: without it the tests could not import it).
        assert planned.setup == [
            "python -m pip install --ignore-installed -e .[test] pytest coverage ./tests/helperpkg"
        ]
        chosen = {f.project for f in planned.files}
        assert {"attrs", "pytest", "coverage"} <= chosen and "codecov" not in chosen
        # Named directly, it is not left out.
        named = Wanted(requires=("pytest", "codecov"), index_url=index)
        with pytest.raises(NothingAtT, match="codecov had no file on the index at T"):
            plan_environment(repo, base, T, named, blobs)
        # A project the index had at T, in no version that fits: not left out either.
        up.add("coverage", "1.0", before(days=900))
        commit(repo, "2026-03-01T12:00:00Z", "pin", {"other.txt": "coverage>=7.5\n"})
        base = gitrepo.run(repo, "rev-parse", "HEAD").strip()
        up.add("coverage", "7.5", after(days=3))
        with pytest.raises(NothingAtT, match=r"coverage>=7\.5"):
            plan_environment(repo, base, T, wanted, blobs)


def test_a_requirement_by_url_is_left_out_of_a_requirements_file(tmp_path: Path) -> None:
    """Found by the fifth held-out corpus (asn1crypto 2026): ``requires/ci`` names
    ``https://github.com/wbond/asn1crypto/archive/master.zip`` (the project itself), and
    pip, fetching it from the internet the world does not reach, stopped the setup. A file
    that installs anything by URL is replaced by its other requirements, saying so."""
    from replay.casebuild.environment import without_urls

    repo, base = _unittest_project(tmp_path / "mylib")
    files = {
        "requires/ci": "-r ./lint\nhttps://github.com/acme/mylib/archive/master.zip\n",
        "requires/lint": "coverage\n# git+https://example.invalid/x.git in a comment is none\n"
        "tool @ git+https://example.invalid/tool.git\n",
    }
    commit(repo, "2026-03-01T11:00:00Z", "ci requirements", files)
    base = gitrepo.run(repo, "rev-parse", "HEAD").strip()
    checkout = export_tree(repo, base, tmp_path / "checkout")
    assert without_urls(checkout, Wanted(requires=("-r requirements-test.txt",))) is None
    with serving(_runner_upstream().app()) as url:
        wanted = Wanted(requires=("-r requires/ci", "pytest"), index_url=url + "/simple/")
        planned = plan_environment(repo, base, T, wanted, BlobStore(tmp_path / "blobs"))
    assert planned.notes[0] == (
        "tool @ git+https://example.invalid/tool.git, "
        "https://github.com/acme/mylib/archive/master.zip left out of the test requirements "
        "(requires/ci; "
        "the rest is installed): a requirement by URL is fetched from the internet, which the "
        "world does not reach, and is no version on the index as of T; tests that import what "
        "it installs stop the measure, naming it"
    )
    assert planned.setup == ["python -m pip install --ignore-installed -e . coverage pytest"]


SETUPTOOLS_TOO_OLD = """\
  Running setup.py develop for asn1crypto
    Traceback (most recent call last):
      File "<string>", line 1, in <module>
      File "/usr/local/lib/python3.9/dist-packages/setuptools/__init__.py", line 14, in <module>
        from setuptools.dist import Distribution, Feature
      File "/usr/local/lib/python3.9/dist-packages/setuptools/py33compat.py", line 54, in <module>
        unescape = getattr(html, 'unescape', html_parser.HTMLParser().unescape)
    AttributeError: 'HTMLParser' object has no attribute 'unescape'
"""


def test_a_setuptools_pin_too_old_for_the_interpreter_is_left_out(monkeypatch, tmp_path) -> None:
    """Found by the fifth held-out corpus (asn1crypto 2019): its lint requirements pin
    ``setuptools == 39.0.1``, which does not import on Python 3.9 (the oldest interpreter
    here), and the setup stopped inside setuptools. The file that pins it is replaced by its
    other requirements and the environment built again, saying so."""
    import contextlib

    import replay.casebuild.environment as environment
    from replay.casebuild.environment import breaks_on_interpreter
    from replay.images.env import SetupError

    assert breaks_on_interpreter(SETUPTOOLS_TOO_OLD)
    assert not breaks_on_interpreter("AttributeError: 'x' object has no attribute 'y'\n")
    checkout = tmp_path / "repo"
    (checkout / "requires").mkdir(parents=True)
    (checkout / "requires" / "ci").write_text("-r ./coverage\n-r ./lint\n")
    (checkout / "requires" / "coverage").write_text("coverage >= 4.3.4\n")
    (checkout / "requires" / "lint").write_text(
        "setuptools == 39.0.1 ; python_version >= '3.3'\nflake8 == 3.5.0\n"
    )
    case = tmp_path / "case.yaml"
    setup = ["python -m pip install -e . -r requires/ci pytest"]
    case.write_text(yaml.safe_dump({"environment": {"setup": setup}}))
    monkeypatch.setattr(environment, "_checkout_of", lambda path: contextlib.nullcontext(checkout))
    builds: list[list[str]] = []

    def build(path: Path) -> None:
        builds.append(yaml.safe_load(path.read_text())["environment"]["setup"])
        if len(builds) == 1:
            raise SetupError("setup failed", setup[0], SETUPTOOLS_TOO_OLD)

    said: list[str] = []
    at = datetime(2019, 11, 4, tzinfo=UTC)
    got = settle(case, build, at, release_named("bullseye"), BlobStore(tmp_path), "", said.append)
    assert got == []
    assert builds[1] == ["python -m pip install -e . pytest 'coverage>=4.3.4' flake8==3.5.0"]
    assert said[0].startswith("setuptools left out of requires/ci (the rest installed): the "
                              "version it pins does not run on Python 3.9")  # fmt: skip
    # Nothing to leave out: the failure stands.
    monkeypatch.setattr(environment, "drop_tool_pin", lambda path: [])
    builds.clear()

    def always(path: Path) -> None:
        raise SetupError("setup failed", setup[0], SETUPTOOLS_TOO_OLD)

    with pytest.raises(SetupError):
        settle(case, always, at, release_named("bullseye"), BlobStore(tmp_path), "")


# pip 20.3 on bullseye installing deepdiff 2019's requirements-dev.txt (seperman/deepdiff
# 269fa49^, MIT), in part: numpy 1.16.2 has no wheel for Python 3.9 and its sdist does not
# build there (sixth held-out corpus).
NUMPY_1_16_ON_PY39 = (
    "    Running setup.py install for numpy: started\n"
    "    Running setup.py install for numpy: finished with status 'error'\n"
    "    numpy/core/include/numpy/npy_endian.h:12:14: fatal error: sys/endian.h: "
    "No such file or directory\n"
    "    ERROR: Command errored out with exit status 1:\n"
    "     command: /usr/bin/python -u -c 'import sys, setuptools, tokenize; sys.argv[0] = "
    "'/tmp/pip-install-3y4_gd2_/numpy_ada30aae24904fbfa3ee46eb7249466c/setup.py'\n"
)


def test_a_requirement_whose_sdist_does_not_build_here_is_left_out(monkeypatch, tmp_path) -> None:
    """Found by the sixth held-out corpus (deepdiff 2019 and 2020): their requirements-dev.txt
    pins numpy as of T, which has no wheel for Python 3.9 (the oldest interpreter here) and
    whose sdist does not build on it; the setup stopped. A requirement only the project's
    requirements files ask for is left out of them, saying so, and the rest installed."""
    import contextlib

    import replay.casebuild.environment as environment
    from replay.images.env import SetupError

    checkout = tmp_path / "repo"
    checkout.mkdir()
    (checkout / "requirements.txt").write_text("jsonpickle==1.2\n")
    (checkout / "requirements-dev.txt").write_text(
        "-r requirements.txt\npytest==4.3.1\nnumpy==1.16.2\nmmh3==2.5.1\n"
    )
    case = tmp_path / "case.yaml"
    setup = ["python -m pip install -e . -r requirements-dev.txt"]
    case.write_text(yaml.safe_dump({"environment": {"setup": setup, "toolchains": ["build"]}}))
    monkeypatch.setattr(environment, "_checkout_of", lambda path: contextlib.nullcontext(checkout))
    builds: list[list[str]] = []

    def build(path: Path) -> None:
        builds.append(yaml.safe_load(path.read_text())["environment"]["setup"])
        if len(builds) == 1:
            raise SetupError("setup failed", setup[0], NUMPY_1_16_ON_PY39)

    said: list[str] = []
    at = datetime(2019, 4, 17, tzinfo=UTC)
    got = settle(case, build, at, release_named("bullseye"), BlobStore(tmp_path), "", said.append)
    assert got == []
    assert builds[1] == ["python -m pip install -e . jsonpickle==1.2 pytest==4.3.1 mmh3==2.5.1"]
    assert said[0].startswith(
        "numpy left out of requirements-dev.txt (the rest installed): its source "
        "distribution as of T does not build here (building numpy: fatal error: sys/endian.h"
    )
    # Asked for by name, not by a file: the failure stands, naming the build's error.
    named = ["python -m pip install -e . numpy==1.16.2"]
    case.write_text(yaml.safe_dump({"environment": {"setup": named, "toolchains": ["build"]}}))

    def always(path: Path) -> None:
        raise SetupError("setup failed", named[0], NUMPY_1_16_ON_PY39)

    with pytest.raises(SetupError):
        settle(case, always, at, release_named("bullseye"), BlobStore(tmp_path), "")


def test_a_requirement_the_index_lost_is_left_out_of_an_extra(tmp_path: Path) -> None:
    """Found by the sixth held-out corpus (cmd2 2019): its ``test`` extra names codecov, whose
    every file on the index is from 2023, and the case stopped. The extra is replaced by its
    other requirements, given by name (their markers kept), saying so; an extra that names the
    project itself is not replaced (only the extra installs it from the checkout)."""
    from replay.registry.errors import NothingAtT

    repo, base = _unittest_project(
        tmp_path / "mylib",
        extra_test='"codecov", "pytest", "attrs; sys_platform == \'darwin\'"',
    )
    up = _runner_upstream()
    up.add("attrs", "23.1", before(days=5))
    up.add("codecov", "2.1.13", after(days=400))  # the only file: uploaded long after T
    blobs = BlobStore(tmp_path / "blobs")
    with serving(up.app()) as url:
        wanted = Wanted(extras=("test",), index_url=url + "/simple/")
        planned = plan_environment(repo, base, T, wanted, blobs)
        assert planned.notes[0].startswith(
            "codecov left out of the test requirements (the project's extra 'test' names it; "
            "the rest of it is installed): the index holds no file of it from at or before T"
        )
        assert planned.setup == [
            "python -m pip install --ignore-installed -e . pytest "
            "'attrs; sys_platform == \"darwin\"'"
        ]
        assert "codecov" not in {f.project for f in planned.files}
        commit(
            repo,
            "2026-03-01T12:00:00Z",
            "the test extra installs another extra",
            {
                "pyproject.toml": '[build-system]\nrequires = ["hatchling"]\n'
                'build-backend = "hatchling.build"\n'
                '[project]\nname = "mylib"\nversion = "0.1"\ndependencies = []\n'
                '[project.optional-dependencies]\ntest = ["codecov", "mylib[fast]"]\n'
                "fast = []\n"
            },
        )
        base = gitrepo.run(repo, "rev-parse", "HEAD").strip()
        with pytest.raises(NothingAtT, match="codecov had no file on the index at T"):
            plan_environment(repo, base, T, wanted, blobs)


def test_a_tree_with_a_blob_the_clone_lacks_is_told_as_such(tmp_path: Path) -> None:
    """Found by the seventh held-out corpus (XlsxWriter 2019 and 2023): the mirror lacked the
    blob of ``docs/XlsxWriter.pdf`` in the base tree, and the stop was git's own words
    ("git archive ...: error: invalid object 100644 ..."). It names the missing object and
    what to do, as copying a history with a missing object already did."""
    from replay.base.errors import InputError

    repo = tmp_path / "repo"
    repo.mkdir()
    gitrepo.run(repo, "init", "-q")
    base = commit(repo, "2020-01-01T00:00:00+00:00", "base", {"a.py": "x = 1\n", "big.pdf": "%"})
    blob = gitrepo.run(repo, "rev-parse", f"{base}:big.pdf")
    (repo / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    with pytest.raises(InputError) as caught:
        export_tree(repo, base, tmp_path / "checkout")
    said = str(caught.value)
    assert f"lacks object {blob}" in said, said
    assert "incomplete clone or mirror" in said and "Fetch the repository again" in said, said


_NO_EDITABLE_BACKEND = """\
import base64, hashlib, os, zipfile


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    name = "tiny-1.0-py3-none-any.whl"
    files = {
        "tiny.py": b"X = 1\\n",
        "tiny-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\\nName: tiny\\nVersion: 1.0\\n",
        "tiny-1.0.dist-info/WHEEL": (
            b"Wheel-Version: 1.0\\nGenerator: t\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n"
        ),
    }
    record = []
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w") as z:
        for path, data in files.items():
            z.writestr(path, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            record.append(f"{path},sha256={digest.decode()},{len(data)}")
        record.append("tiny-1.0.dist-info/RECORD,,")
        z.writestr("tiny-1.0.dist-info/RECORD", "\\n".join(record) + "\\n")
    return name
"""
"""A build backend of the project's own tree with no ``build_editable`` hook (PEP 660), as
the poetry-core of early 2022 had none."""


def test_a_backend_without_build_editable_is_installed_as_a_wheel(tmp_path: Path) -> None:
    """Found by the seventh held-out corpus (tinydb 2022): its poetry-core as of T cannot
    install the project editable and the setup stopped at ``create: environment``. Real pip's
    refusal is recognised, and the setup installs the project as a wheel, which real pip
    then does."""
    import shlex
    import subprocess
    import sys

    from replay.casebuild.environment import install_not_editable, lacks_build_editable

    project = tmp_path / "project"
    project.mkdir()
    (project / "backend.py").write_text(_NO_EDITABLE_BACKEND)
    (project / "pyproject.toml").write_text(
        '[build-system]\nrequires = []\nbuild-backend = "backend"\nbackend-path = ["."]\n'
    )
    prefix = tmp_path / "prefix"
    command = f"python -m pip install --no-index --prefix {prefix} -e ."
    case = tmp_path / "case.yaml"
    case.write_text(yaml.safe_dump({"environment": {"setup": ["echo first", command]}}))

    def pip(line: str) -> subprocess.CompletedProcess[str]:
        words = shlex.split(line)
        return subprocess.run(
            [sys.executable, *words[1:]],
            cwd=project,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )

    refused = pip(command)
    assert refused.returncode != 0 and lacks_build_editable(refused.stdout + refused.stderr)
    assert install_not_editable(case)
    setup = yaml.safe_load(case.read_text())["environment"]["setup"]
    assert setup == ["echo first", f"python -m pip install --no-index --prefix {prefix} ."]
    done = pip(setup[1])
    assert done.returncode == 0, done.stdout + done.stderr
    assert list(prefix.rglob("tiny.py"))
    assert not install_not_editable(case)  # nothing editable left
    # Extras stay with the project; older pip's words, across lines, are recognised too.
    case.write_text(yaml.safe_dump({"environment": {"setup": ["pip install -e '.[t]' x"]}}))
    assert install_not_editable(case)
    assert yaml.safe_load(case.read_text())["environment"]["setup"] == ["pip install '.[t]' x"]
    assert lacks_build_editable(
        "ERROR: Project file:///w has a 'pyproject.toml' and its build backend is missing\n"
        "the 'build_editable' hook. Since it does not have a 'setup.py' nor a 'setup.cfg',"
    )
    assert not lacks_build_editable("ERROR: No matching distribution found for tiny")


def test_an_extras_requirement_that_brings_an_unbuildable_sdist_is_left_out(
    monkeypatch, tmp_path: Path
) -> None:
    """Found by the eighth held-out corpus (dataclasses-json 2019): the ``dev`` extra names
    mypy, whose typed-ast of T has no wheel for Python 3.9 and whose sdist does not build
    there; the setup ``pip install -e .[dev]`` failed and case create stopped. The extra is
    installed by its other requirements, given by name, without mypy; an extra that brings
    nothing broken stays an extra, and a setup without one is left as it was."""
    import contextlib

    import replay.casebuild.environment as environment
    from replay.casebuild.environment import drop_from_extras

    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / "pyproject.toml").write_text(
        '[project]\nname = "lib"\nversion = "1.0"\n[project.optional-dependencies]\n'
        'dev = ["pytest>=6", "mypy>=0.710", "simplejson"]\ndocs = ["sphinx"]\n'
    )
    case = tmp_path / "case.yaml"
    setup = "SETUPTOOLS_USE_DISTUTILS=stdlib python -m pip install -e '.[dev,docs]' extra-tool"
    case.write_text(yaml.safe_dump({"environment": {"setup": ["echo first", setup]}}))
    files = {
        name: PythonFile(
            project=name, version=version, filename=f"{name}.whl", sha256=str(n) * 64, size=1,
            upload_time=before(days=100),
        )
        for n, (name, version) in enumerate([("mypy", "0.720"), ("typed-ast", "1.4.0")])
    }  # fmt: skip
    asks = {"mypy": ["typed-ast<1.5.0,>=1.4.0", "mypy-extensions"], "typed-ast": []}
    monkeypatch.setattr(environment, "_registry_files", lambda path: list(files.values()))
    monkeypatch.setattr(
        environment,
        "requirements_of",
        lambda f, blobs: [Requirement(r) for r in asks.get(f.project, [])],
    )
    monkeypatch.setattr(environment, "_checkout_of", lambda path: contextlib.nullcontext(checkout))
    blobs = BlobStore(tmp_path / "blobs")
    assert drop_from_extras(case, ["typed-ast"], blobs) == ["mypy>=0.710"]
    assert yaml.safe_load(case.read_text())["environment"]["setup"] == [
        "echo first",
        "SETUPTOOLS_USE_DISTUTILS=stdlib python -m pip install -e '.[docs]' extra-tool "
        "'pytest>=6' simplejson",
    ]
    assert drop_from_extras(case, ["typed-ast"], blobs) == []  # nothing left that brings it
    assert drop_from_extras(case, ["numpy"], blobs) == []


def test_an_extra_given_as_toxs_substitution_is_taken_as_tox_takes_it() -> None:
    """Found by the eighth held-out corpus (natsort 2020, 2021, 2023): tox.ini's ``extras =
    {env:WITH_EXTRAS:}`` was given as the extra, and pip stopped on ``.[{env:WITH_EXTRAS:}]``
    with a parser's traceback. tox with the variable unset installs no extra; a default is
    taken; an extra that is no name is one line naming it (exit 2 from the CLI)."""
    from replay.base.errors import InputError
    from replay.casebuild.environment import given_extras

    wanted, notes = given_extras(Wanted(requires=("pytest",), extras=("{env:WITH_EXTRAS:}",)))
    assert wanted.extras == () and wanted.requires == ("pytest",)
    assert notes == [
        "the extra {env:WITH_EXTRAS:} is tox's substitution of an environment variable: taken "
        "as tox takes it with the variable unset (no extra)"
    ]
    wanted, _ = given_extras(Wanted(extras=("tests", "{env:X:fast,icu}", "tests")))
    assert wanted.extras == ("tests", "fast", "icu")
    assert given_extras(Wanted(extras=("dev",))) == (Wanted(extras=("dev",)), [])
    with pytest.raises(InputError) as exc:
        given_extras(Wanted(extras=("tests]",)))
    assert exc.value.field == "--extra" and "is not an extra's name" in exc.value.problem
