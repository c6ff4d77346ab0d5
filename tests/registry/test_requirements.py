"""Reading requirements without running anything: -r files, project checkouts, sdists."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from replay.registry.requirements import (
    LEGACY_BUILD_REQUIRES,
    RequirementsError,
    expand_specs,
    read_project,
    read_requirements_file,
    read_sdist,
)
from tests.registry.helpers import make_sdist


def test_requirements_files_nest_and_read_as_pip_does(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "req.txt").write_text(
        "# the test tools\n"
        "--index-url https://example.invalid/simple\n"
        "pytest>=6  # a comment after the requirement\n"
        "-r sub/more.txt\n"
        "\n"
        "colorama; sys_platform == 'win32'\n"
        "attrs==21.2.0 \\\n"
        "    --hash=sha256:0000000000000000000000000000000000000000000000000000000000000000\n"
        "-e .\n"
        "./vendored/thing\n"
        "thing @ https://example.invalid/thing.whl\n"
    )
    (tmp_path / "sub" / "more.txt").write_text("--requirement=deeper.txt\nhypothesis\n")
    (tmp_path / "sub" / "deeper.txt").write_text("mock<5\n")
    with caplog.at_level(logging.WARNING):
        got = read_requirements_file(tmp_path / "req.txt")
    assert got == [
        "pytest>=6",
        "mock<5",
        "hypothesis",
        'colorama; sys_platform == "win32"',
        "attrs==21.2.0",
    ]
    warned = caplog.text
    assert "--index-url https://example.invalid/simple ignored" in warned
    assert "-e . ignored" in warned
    assert "./vendored/thing" in warned and "thing @ https://example.invalid" in warned
    assert expand_specs(["-r req.txt", "six"], tmp_path) == [*got, "six"]

    (tmp_path / "loop.txt").write_text("-r loop2.txt\n")
    (tmp_path / "loop2.txt").write_text("-r loop.txt\n")
    with pytest.raises(RequirementsError, match="cycle"):
        read_requirements_file(tmp_path / "loop.txt")
    with pytest.raises(RequirementsError, match="cannot read"):
        read_requirements_file(tmp_path / "missing.txt")


def test_a_pyproject_project(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["flit_core >=3.2,<4"]\nbuild-backend = "flit_core.buildapi"\n'
        '[project]\nname = "mylib"\n'
        'dependencies = ["six", "py39only; python_version < \\"3.10\\""]\n'
        '[project.optional-dependencies]\ntest = ["pytest>=6"]\n'
    )
    meta = read_project(tmp_path)
    assert meta.name == "mylib"
    assert meta.build_requires == ["flit_core >=3.2,<4"]
    assert meta.build_source == "[build-system].requires"
    assert meta.requires == [
        "six",
        'py39only; python_version < "3.10"',
        'pytest>=6; extra == "test"',
    ]
    assert meta.requires_source == "[project].dependencies"


def test_legacy_extras_require_keys_with_a_marker_are_read(tmp_path: Path) -> None:
    """Found by the third held-out corpus (wsproto 2019): setuptools' legacy extras_require
    keys carry a marker after a colon (``":python_version == '2.7'"``: no extra at all);
    read as an extra's name, they made a marker packaging refuses, and case create crashed
    ("InvalidMarker") instead of reading the project."""
    (tmp_path / "setup.py").write_text(
        "from setuptools import setup\n"
        "setup(name='wsproto', install_requires=['h11'],\n"
        "      extras_require={':python_version == \"2.7\"': ['enum34'],\n"
        "                      'tests:sys_platform == \"win32\"': ['pywin32'],\n"
        "                      'odd': ['x; python_version >']})\n"
    )
    meta = read_project(tmp_path)
    assert meta.requires == [
        "h11",
        'enum34; python_version == "2.7"',
        'pywin32; sys_platform == "win32" and extra == "tests"',
    ]


def test_a_setup_py_is_parsed_never_run(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    (tmp_path / "setup.py").write_text(
        "from setuptools import setup\n"
        f"open({str(marker)!r}, 'w').write('setup.py was executed')\n"
        "DEPS = ['requests>=2', 'enum34; python_version < \"3.4\"']\n"
        "setup(name='oldlib', install_requires=DEPS,\n"
        "      extras_require={'test': ['pytest'], 'docs': ['sphinx']},\n"
        "      setup_requires=['setuptools_scm'])\n"
    )
    meta = read_project(tmp_path)
    assert not marker.exists()
    assert meta.name == "oldlib"
    assert meta.build_requires == [*LEGACY_BUILD_REQUIRES, "setuptools_scm"]
    assert "no pyproject.toml" in meta.build_source and "setup_requires" in meta.build_source
    assert meta.requires == [
        "requests>=2",
        'enum34; python_version < "3.4"',
        'pytest; extra == "test"',
        'sphinx; extra == "docs"',
    ]
    assert meta.requires_source == "setup.py install_requires (literal)"

    (tmp_path / "setup.py").write_text(
        "from setuptools import setup\nsetup(install_requires=deps())\n"
    )
    assert read_project(tmp_path).requires_source is None  # computed: nothing static to read


def test_setup_cfg_beats_setup_py_and_pyproject_without_build_system(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.black]\nline-length = 100\n")
    (tmp_path / "setup.cfg").write_text(
        "[metadata]\nname = cfglib\n[options]\ninstall_requires =\n    attrs>=19\n"
        "    six\n[options.extras_require]\ntest =\n    pytest\n"
    )
    (tmp_path / "setup.py").write_text(
        "from setuptools import setup\nsetup(install_requires=['nope'])\n"
    )
    meta = read_project(tmp_path)
    assert meta.name == "cfglib"
    assert meta.build_requires == list(LEGACY_BUILD_REQUIRES)
    assert meta.build_source == "pip's fallback: no [build-system] in pyproject.toml"
    assert meta.requires == ["attrs>=19", "six", 'pytest; extra == "test"']


def test_setup_cfg_extras_are_read_without_install_requires(tmp_path: Path) -> None:
    """Found by the second held-out corpus (PyJWT 2.6, 2023): no runtime requirement, so no
    ``install_requires``, and an extra ``tests`` naming ``pytest>=6.0.0,<7.0.0``. The extras
    were read only beside ``install_requires``, so pytest looked undeclared, a bare pytest
    (7.2 at T) was added, and pip could not install both."""
    (tmp_path / "setup.cfg").write_text(
        "[metadata]\nname = PyJWT\n[options]\npython_requires = >=3.7\n"
        "[options.extras_require]\ntests =\n    pytest>=6.0.0,<7.0.0\n"
        "    coverage[toml]==5.0.4\n"
    )
    (tmp_path / "setup.py").write_text("from setuptools import setup\nsetup()\n")
    meta = read_project(tmp_path)
    assert meta.requires_source == "setup.cfg install_requires"
    assert meta.requires == [
        'pytest<7.0.0,>=6.0.0; extra == "tests"',
        'coverage[toml]==5.0.4; extra == "tests"',
    ]


@pytest.mark.parametrize("fmt", ["tar.gz", "zip"])
def test_sdists_are_read_from_the_archive(fmt: str) -> None:
    name, data = make_sdist(
        "tiny",
        "0.3",
        {
            "pyproject.toml": '[build-system]\nrequires = ["hatchling>=1"]\n'
            'build-backend = "hatchling.build"\n',
            "PKG-INFO": "Metadata-Version: 2.1\nName: tiny\nVersion: 0.3\n",
            "tiny.egg-info/requires.txt": (
                "six\n\n[test]\npytest\n\n[:python_version < '3.8']\nimportlib-metadata\n"
            ),
        },
        fmt,
    )
    meta = read_sdist(data, name)
    assert meta.build_requires == ["hatchling>=1"]
    # PKG-INFO 2.1 does not promise its Requires-Dist: setuptools' requires.txt is read.
    assert meta.requires == [
        "six",
        'pytest; extra == "test"',
        'importlib-metadata; python_version < "3.8"',
    ]
    with pytest.raises(RequirementsError, match="not a readable sdist"):
        read_sdist(b"not an archive", name)


def test_static_pkg_info_is_trusted() -> None:
    name, data = make_sdist(
        "tiny",
        "0.4",
        {"PKG-INFO": "Metadata-Version: 2.2\nName: tiny\nVersion: 0.4\nRequires-Dist: six>=1\n"},
    )
    meta = read_sdist(data, name)
    assert meta.requires == ["six>=1"]
    assert meta.build_requires == list(LEGACY_BUILD_REQUIRES)


def test_setuptools_backends_also_get_wheel_and_dynamic_files_are_read(tmp_path: Path) -> None:
    """setuptools before 70.1 asks for wheel when pip runs it; a project whose dependencies
    are dynamic, read by setuptools from a file, has them read from that file."""
    (tmp_path / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools>=42"]\nbuild-backend = "setuptools.build_meta"\n'
        '[project]\nname = "dyn"\ndynamic = ["dependencies", "optional-dependencies"]\n'
        "[tool.setuptools.dynamic]\n"
        'dependencies = {file = ["requirements.txt"]}\n'
        'optional-dependencies.test = {file = ["requirements-test.txt"]}\n'
    )
    (tmp_path / "requirements.txt").write_text("# runtime\nattrs>=19\n")
    (tmp_path / "requirements-test.txt").write_text("pytest\n")
    meta = read_project(tmp_path)
    assert meta.build_requires == ["setuptools>=42", "wheel"]
    assert "wheel, which setuptools before 70.1 asks for" in meta.build_source
    assert meta.requires == ["attrs>=19", 'pytest; extra == "test"']
    assert meta.requires_source == "[tool.setuptools.dynamic] files"

    (tmp_path / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["flit_core>=3.2"]\nbuild-backend = "flit_core.buildapi"\n'
        '[project]\nname = "dyn"\ndynamic = ["dependencies"]\n'
    )
    meta = read_project(tmp_path)
    assert meta.build_requires == ["flit_core>=3.2"]  # not setuptools: nothing added
    assert meta.requires_source is None  # dynamic, and nothing says where from


def test_a_setup_py_literal_spread_over_names_is_read(tmp_path: Path) -> None:
    """Found by the fifth held-out corpus (responses 2023 and 2026): ``extras_require =
    {"tests": tests_require}``, ``tests_require`` a list assigned above, was "computed", so
    the extra's nine requirements were not recorded and pip asked for them one round at a
    time until settling gave up. Names assigned at the top level are read through, and a sum
    of lists is joined; a call stays computed."""
    (tmp_path / "setup.py").write_text(
        "from setuptools import setup\n"
        "install_requires = ['requests>=2.30.0,<3.0']\n"
        "tests_require = ['pytest>=7.0.0', 'coverage >= 6.0.0']\n"
        "extras_require = {'tests': tests_require, 'all': tests_require + ['mypy']}\n"
        "setup(name='responses', install_requires=install_requires,\n"
        "      extras_require=extras_require)\n"
    )
    assert read_project(tmp_path).requires == [
        "requests<3.0,>=2.30.0",
        'pytest>=7.0.0; extra == "tests"',
        'coverage>=6.0.0; extra == "tests"',
        'pytest>=7.0.0; extra == "all"',
        'coverage>=6.0.0; extra == "all"',
        'mypy; extra == "all"',
    ]
    (tmp_path / "setup.py").write_text(
        "from setuptools import setup\n"
        "extras_require = {'tests': sorted(['pytest'])}\n"
        "setup(name='x', install_requires=[], extras_require=extras_require)\n"
    )
    assert read_project(tmp_path).requires == []


# pint 2021's setup.cfg (hgrecco/pint 4d0f842^, BSD-3-Clause), in part (sixth held-out corpus).
PINT_2021_SETUP_CFG = """\
[metadata]
name = Pint

[options]
packages = pint
install_requires =
    packaging
    importlib-metadata; python_version < '3.8'
setup_requires = setuptools; setuptools_scm

[options.extras_require]
numpy = numpy >= 1.17
test =
    pytest
    pytest-subtests
"""


def test_setup_cfg_values_are_read_as_setuptools_reads_them(tmp_path: Path) -> None:
    """A one-line value is split at ``;`` (setuptools' ``list-semi``), a multi-line value is
    one requirement per line, markers kept: pint 2021's ``setup_requires`` stopped case create
    ("'setuptools; setuptools_scm': not a requirement")."""
    (tmp_path / "setup.cfg").write_text(PINT_2021_SETUP_CFG)
    (tmp_path / "setup.py").write_text("from setuptools import setup\nsetup()\n")
    meta = read_project(tmp_path)
    assert meta.build_requires == [*LEGACY_BUILD_REQUIRES, "setuptools", "setuptools_scm"]
    assert meta.requires == [
        "packaging",
        'importlib-metadata; python_version < "3.8"',
        'numpy>=1.17; extra == "numpy"',
        'pytest; extra == "test"',
        'pytest-subtests; extra == "test"',
    ]
