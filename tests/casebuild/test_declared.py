"""A module the tests import that the given test requirements do not install is looked up in
the project's own declarations (its extras, its requirements files) and added: found by the
fourth held-out corpus (starlette 2019-2025 keep their test requirements in a requirements.txt
nothing else names; anyio 2019's tests import curio, which its ``curio`` extra installs)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from replay.base.case import load_case
from replay.casebuild.create import create_case
from replay.casebuild.declared import declared_for, dependency_groups, provides
from replay.casebuild.environment import Wanted
from replay.casebuild.testlists import MeasureError
from replay.registry.serve import Registry, registry_app
from replay.runtime import get_runtime
from replay.snapshot import load_snapshot
from tests.casebuild.repos import shapes_repo, shapes_source
from tests.serving import serving

ROOT = Path(__file__).resolve().parents[2]

ANYIO_2019_SETUP_CFG = """\
[metadata]
name = anyio

[options]
packages = find:
install_requires =
    idna >= 2.8

[options.extras_require]
curio = curio >= 0.10
trio = trio >= 0.12
test =
    anyio[curio,trio]; python_version < '3.8'
    hypothesis >= 4.0
    pytest >= 3.7.2
"""


def test_a_distribution_is_matched_to_its_module_by_name() -> None:
    assert provides("requests", "requests")
    assert provides("python-multipart", "multipart")
    assert provides("PyYAML", "yaml")
    assert provides("msgpack-python", "msgpack")
    assert provides("typing_extensions", "typing_extensions")
    assert provides("Typing-Extensions", "typing_extensions")
    assert not provides("beautifulsoup4", "bs4")  # a name alone cannot tell
    assert not provides("attr", "attrs") and not provides("requests", "httpx")


def test_the_projects_extras_come_first_then_its_requirements_files(tmp_path: Path) -> None:
    (tmp_path / "setup.cfg").write_text(ANYIO_2019_SETUP_CFG)
    (tmp_path / "setup.py").write_text("from setuptools import setup\nsetup()\n")
    (tmp_path / "requirements.txt").write_text("-e .\ncurio==0.9\nrequests\n")
    (tmp_path / "requirements").mkdir()
    (tmp_path / "requirements" / "testing.txt").write_text("pytest\nPyYAML>=5  # fixtures\n")
    found = declared_for(tmp_path, ["curio"], extras=("test",))
    assert found is not None
    assert (found.module, found.extras, found.requires) == ("curio", ("curio",), ())
    assert found.where == "the project's extra 'curio' (curio)"
    # An extra already given is not offered again: the requirements file naming it is next.
    found = declared_for(tmp_path, ["curio"], extras=("test", "curio"))
    assert found is not None and found.requires == ("-r requirements.txt",)
    assert found.where == "requirements.txt (curio)"
    # A file named for tests comes before requirements.txt.
    found = declared_for(tmp_path, ["yaml", "requests"])
    assert found is not None and found.requires == ("-r requirements/testing.txt",)
    assert (found.module, found.where) == ("yaml", "requirements/testing.txt (PyYAML)")
    given = ("pytest", "-r requirements/testing.txt")
    found = declared_for(tmp_path, ["yaml", "requests"], requires=given)
    assert found is not None and found.requires == ("-r requirements.txt",)
    assert found.module == "requests"
    # Nothing the project declares installs it.
    assert declared_for(tmp_path, ["httpx"]) is None


# cattrs 2023's pyproject.toml (python-attrs/cattrs 4a1d4c4^, MIT), in part: its test
# requirements are a PDM dev-dependency group (sixth held-out corpus, README 13.3).
CATTRS_2023_PYPROJECT = """\
[project]
name = "cattrs"
dynamic = ["version"]
dependencies = ["attrs>=20"]

[tool.pdm.dev-dependencies]
lint = ["isort>=5.11.5", "black>=23.3.0"]
test = [
    "hypothesis>=6.79.4",
    "pytest>=7.4.0",
    "immutables>=0.20",
    "-e file:///${PROJECT_ROOT}/vendored",
]

[build-system]
requires = ["hatchling", "hatch-vcs"]
build-backend = "hatchling.build"
"""


def test_a_dependency_group_names_the_module_pep_735_or_pdms(tmp_path: Path) -> None:
    """Found by the sixth held-out corpus (cattrs 2023): the tests import hypothesis, which
    only PDM's ``[tool.pdm.dev-dependencies] test`` names; the stop said no declaration of the
    project names it. A group's requirements are added whole; PEP 735's groups are read the
    same way, an ``include-group`` through."""
    (tmp_path / "pyproject.toml").write_text(CATTRS_2023_PYPROJECT)
    found = declared_for(tmp_path, ["hypothesis"], requires=("pytest",))
    assert found is not None
    assert found.requires == ("hypothesis>=6.79.4", "pytest>=7.4.0", "immutables>=0.20")
    assert found.where == "the project's dependency group 'test' (hypothesis)"
    # Already given whole: nothing more to add.
    assert declared_for(tmp_path, ["hypothesis"], requires=found.requires) is None
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\n[dependency-groups]\ncore = ["trio>=0.22"]\n'
        'test = ["pytest", {include-group = "core"}]\nloop = [{include-group = "loop"}]\n'
    )
    assert dependency_groups(tmp_path) == {"test": ["pytest", "trio>=0.22"], "core": ["trio>=0.22"]}
    found = declared_for(tmp_path, ["trio"], requires=("pytest",))
    assert found is not None and found.requires == ("trio>=0.22",)
    assert found.where == "the project's dependency group 'test' (trio)"


# cattrs 2026's pyproject.toml (python-attrs/cattrs 3d07082^, MIT), in part: its tests import
# bson, which the extra named after it installs as pymongo (sixth held-out corpus, README 13.3).
CATTRS_2026_PYPROJECT = """\
[project]
name = "cattrs"
dynamic = ["version"]
dependencies = ["attrs>=25.4.0"]

[project.optional-dependencies]
ujson = ["ujson>=5.10.0"]
msgpack = ["msgpack>=1.0.5"]
pyyaml = ["PyYAML>=6.0"]
bson = ["pymongo>=4.4.0"]

[build-system]
requires = ["hatchling", "hatch-vcs"]
build-backend = "hatchling.build"
"""


def test_an_extra_named_after_the_module_installs_it(tmp_path: Path) -> None:
    """Found by the sixth held-out corpus (cattrs 2026): no distribution the project declares
    is named like ``bson``; the extra named ``bson`` says what it is for."""
    (tmp_path / "pyproject.toml").write_text(CATTRS_2026_PYPROJECT)
    found = declared_for(tmp_path, ["bson"], requires=("pytest",))
    assert found is not None
    assert (found.module, found.extras, found.requires) == ("bson", ("bson",), ())
    assert found.where == "the project's extra 'bson', named after the module (pymongo)"
    # A distribution named like the module still comes first; an extra given is not offered.
    yaml = declared_for(tmp_path, ["yaml"])
    assert yaml is not None and yaml.where == "the project's extra 'pyyaml' (PyYAML)"
    assert declared_for(tmp_path, ["bson"], extras=("bson",)) is None
    # A module no extra is named after, nor any distribution, is still not found.
    assert declared_for(tmp_path, ["gridfs"]) is None


def _source(tmp_path: Path, url: str, requirements: str) -> object:
    files = {
        "setup.py": "from setuptools import setup\nsetup(name='shapes', version='0.1', "
        "py_modules=['shapes'])\n",
        "LICENSE": "MIT License\n",
        "requirements-test.txt": requirements,
        # As starlette's conftest imports httpx: every test file stops on it.
        "tests/conftest.py": "import pygments  # the tests print what they compare with it\n",
    }
    repo, _, fix = shapes_repo(tmp_path / "shapes", files=files)
    return dataclasses.replace(
        shapes_source(repo, fix),
        setup=[],
        registry_index=None,
        wanted=Wanted(requires=("pytest==8.3.5",), index_url=f"{url}/simple"),
    )


def test_case_create_adds_the_requirements_file_that_installs_a_missing_module(
    tmp_path: Path,
) -> None:
    """End to end, on the demo's frozen registry: the tests' conftest imports pygments, which
    only requirements-test.txt names; case create is given ``pytest==8.3.5``. The first
    measurement stops on ModuleNotFoundError; the case is made again with
    ``-r requirements-test.txt`` and calibrates. Without the file, the stop says that nothing
    the project declares installs it."""
    registry = Registry.from_snapshot(load_snapshot(ROOT / "snapshots" / "demo"))
    said: list[str] = []
    runtime = get_runtime("docker")
    try:
        with serving(registry_app(registry)) as url:
            src = _source(tmp_path / "declared", url, "pygments\n")
            path, lists = create_case(
                "shapes-area", src, tmp_path / "case", runtime, say=said.append
            )
            assert lists.fail_to_pass == ["tests/test_shapes.py::test_area_multiplies"]
            assert lists.pass_to_pass == ["tests/test_shapes.py::test_perimeter"]
            assert any(
                line.startswith(
                    "the tests cannot import pygments, which requirements-test.txt (pygments) "
                    "installs: making the case again with -r requirements-test.txt added"
                )
                for line in said
            ), said
            setup = " ".join(load_case(path).environment.setup)
            assert "-r requirements-test.txt" in setup
            undeclared = _source(tmp_path / "undeclared", url, "iniconfig\n")
            with pytest.raises(MeasureError) as exc:
                create_case("shapes-bare", undeclared, tmp_path / "bare", runtime)
    finally:
        runtime.close()
    text = str(exc.value)
    assert "the tests cannot import pygments (ModuleNotFoundError, or an error" in text
    said = "the project's extras, dependency groups and requirements files name no distribution"
    assert f"{said} that installs pygments" in text


def test_requirements_files_beside_the_tests_are_searched(tmp_path: Path) -> None:
    """Found by the sixth held-out corpus (authlib 2022): its tox.ini installs
    ``tests/requirements-base.txt`` for every environment and ``tests/requirements-flask.txt``
    for its ``flask`` factor, whose tests the fix adds; flask_sqlalchemy was looked for only in
    top-level requirements files."""
    (tmp_path / "setup.py").write_text("from setuptools import setup\nsetup(name='authlib')\n")
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "requirements-base.txt").write_text("cryptography\npytest\ncoverage\n")
    (tests / "requirements-flask.txt").write_text("Flask\nFlask-SQLAlchemy\n")
    (tests / "requirements-django.txt").write_text("Django\npytest-django\n")
    given = ("-r tests/requirements-base.txt",)
    found = declared_for(tmp_path, ["flask_sqlalchemy"], requires=given)
    assert found is not None and found.requires == ("-r tests/requirements-flask.txt",)
    assert found.where == "tests/requirements-flask.txt (Flask-SQLAlchemy)"
    # Deeper than the tests' own directory is not searched.
    (tests / "flask").mkdir()
    (tests / "requirements-flask.txt").rename(tests / "flask" / "requirements.txt")
    assert declared_for(tmp_path, ["flask_sqlalchemy"], requires=given) is None


# python-fire 2020's setup.py (google/python-fire c1a0450^, Apache-2.0), in part: its tests
# import mock, which only setuptools' tests_require names (sixth held-out corpus).
FIRE_2020_SETUP_PY = """\
from setuptools import setup

DEPENDENCIES = [
    'six',
    'termcolor',
    'enum34; python_version < "3.4"'
]

TEST_DEPENDENCIES = [
    'hypothesis',
    'mock',
    'python-Levenshtein',
]

setup(
    name='fire',
    version='0.3.1',
    install_requires=DEPENDENCIES,
    tests_require=TEST_DEPENDENCIES,
)
"""


def test_setuptools_tests_require_names_the_module(tmp_path: Path) -> None:
    """Found by the sixth held-out corpus (python-fire 2020 and 2022): the tests import mock,
    which only ``tests_require`` names; the stop said no declaration installs it. Only the
    requirement that provides the module is added: added whole, python-Levenshtein came too,
    which the tests do not import and which did not install as of T (the rerun's stop);
    setup.cfg's ``tests_require`` is read too."""
    (tmp_path / "setup.py").write_text(FIRE_2020_SETUP_PY)
    found = declared_for(tmp_path, ["mock"], requires=("pytest",))
    assert found is not None
    assert found.requires == ("mock",)
    assert found.where == "setuptools' tests_require (mock)"
    assert declared_for(tmp_path, ["mock"], requires=("pytest", "mock")) is None
    again = declared_for(tmp_path, ["hypothesis"], requires=("pytest", "mock"))
    assert again is not None and again.requires == ("hypothesis",)
    (tmp_path / "setup.py").write_text("from setuptools import setup\nsetup()\n")
    (tmp_path / "setup.cfg").write_text(
        "[metadata]\nname = x\n[options]\ntests_require = mock; nose\n"
    )
    found = declared_for(tmp_path, ["nose"])
    assert found is not None and found.requires == ("nose",)
