"""Which Debian release (and so which Python) a case runs on; each release's recipe; toolchains."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import get_args

import pytest
import yaml
from pydantic import ValidationError
from typer.testing import CliRunner

from replay.base.case import Environment, Toolchain, load_case
from replay.base.errors import CaseError, InputError
from replay.cli.image import app
from replay.images.base import (
    BASE_IMAGE,
    PACKAGES,
    RELEASES,
    TOOLCHAINS,
    BaseRecipe,
    base_tag,
    choose_release,
    image_toolchains,
    parse_base_tag,
    platform_label,
    read_requires_python,
    release_named,
)

ROOT = Path(__file__).resolve().parents[2]
DEMO_CASE = ROOT / "cases" / "demo-caret-zero" / "case.yaml"


def at(day: str) -> datetime:
    return datetime.fromisoformat(day).replace(tzinfo=UTC)


def test_the_release_table() -> None:
    table = {r.name: (r.python, r.glibc, r.released.isoformat()) for r in RELEASES}
    assert table == {
        "bullseye": ((3, 9), (2, 31), "2021-08-14"),
        "bookworm": ((3, 11), (2, 36), "2023-06-10"),
        "trixie": ((3, 13), (2, 41), "2025-08-09"),
    }
    assert [r.released for r in RELEASES] == sorted(r.released for r in RELEASES)
    assert set(TOOLCHAINS) == set(get_args(Toolchain))


def test_the_release_current_at_t() -> None:
    assert choose_release(at("2019-01-01")).name == "bullseye"  # before bullseye: the oldest
    assert choose_release(at("2021-08-13")).name == "bullseye"
    assert choose_release(at("2023-06-09")).name == "bullseye"
    assert choose_release(at("2023-06-10")).name == "bookworm"  # released that day
    assert choose_release(at("2025-08-08")).name == "bookworm"
    assert choose_release(at("2025-08-09")).name == "trixie"
    assert choose_release(at("2026-03-12")).name == "trixie"


def test_requires_python_moves_to_the_nearest_older_release_that_fits_else_newer() -> None:
    t = at("2026-03-12")  # trixie, Python 3.13
    assert choose_release(t, ">=3.9").name == "trixie"
    assert choose_release(t, ">=3.8,<3.12").name == "bookworm"  # older, nearest first
    assert choose_release(t, "<3.10").name == "bullseye"
    assert choose_release(t, "~=3.9.0").name == "bullseye"
    early = at("2022-01-01")  # bullseye, Python 3.9
    assert choose_release(early, ">=3.10").name == "bookworm"  # nothing older: newer
    assert choose_release(early, ">=3.12").name == "trixie"
    assert choose_release(early, "").name == "bullseye"
    with pytest.raises(InputError, match="admits no base image's Python"):
        choose_release(t, ">=3.14")
    with pytest.raises(InputError, match="is not a specifier"):
        choose_release(t, "three point nine")


def test_an_explicit_python_overrides_t_and_requires_python() -> None:
    t = at("2026-03-12")
    assert choose_release(t, ">=3.12", python="3.9").name == "bullseye"
    assert choose_release(t, python="3.11").name == "bookworm"
    assert choose_release(at("2020-01-01"), python="3.13").name == "trixie"
    with pytest.raises(InputError) as err:
        choose_release(t, python="3.12")
    assert "no base image has Python 3.12; choose one of 3.9 (bullseye), 3.11 (bookworm)," in str(
        err.value
    )


def test_requires_python_is_read_from_pyproject_then_setup_cfg_then_setup_py(
    tmp_path: Path,
) -> None:
    assert read_requires_python(tmp_path) is None
    (tmp_path / "setup.py").write_text(
        "from setuptools import setup\nsetup(name='x', python_requires = '>=3.7',)\n"
    )
    assert read_requires_python(tmp_path) == ">=3.7"
    (tmp_path / "setup.cfg").write_text(
        "[metadata]\nname = x\n[options]\npython_requires = >=3.8\n"
    )
    assert read_requires_python(tmp_path) == ">=3.8"
    (tmp_path / "pyproject.toml").write_text('[build-system]\nrequires = ["hatchling"]\n')
    assert read_requires_python(tmp_path) == ">=3.8"  # pyproject without it: next source
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\nrequires-python = ">=3.10"\n')
    assert read_requires_python(tmp_path) == ">=3.10"
    (tmp_path / "pyproject.toml").write_text("[project\nbroken")
    assert read_requires_python(tmp_path) == ">=3.8"  # unreadable: the next source
    (tmp_path / "setup.cfg").write_text("not an ini file")
    assert read_requires_python(tmp_path) == ">=3.7"


def test_a_requires_python_setup_py_computes_is_not_read(tmp_path: Path) -> None:
    """Found by the eighth held-out corpus (psutil 2026): setup.py passes
    ``python_requires=">={}.{}".format(*MIN_PY_VERSION)``; the literal was read as the
    project's requires-python and case create stopped ("'>={}.{}' is not a specifier"). A
    string that is no specifier is computed when setup.py runs: as if not declared."""
    (tmp_path / "setup.py").write_text(
        "MIN = (3, 7)\nsetup(name='x', python_requires='>={}.{}'.format(*MIN))\n"
    )
    assert read_requires_python(tmp_path) is None


def test_each_release_recipe_differs_only_where_the_suite_does() -> None:
    bookworm = BaseRecipe.for_release("bookworm")
    # bookworm's recipe is the one images were built from before releases existed.
    assert bookworm == BaseRecipe()
    assert bookworm.digest() == BaseRecipe().digest()
    bullseye = BaseRecipe.for_release("bullseye")
    assert bullseye.suite == "bullseye"
    assert bullseye.packages == tuple(p for p in PACKAGES if p != "gh")  # no gh in bullseye
    assert bullseye.grafts == ("gh",) and bookworm.grafts == ()  # taken from bookworm's image
    assert not any("EXTERNALLY-MANAGED" in r for r in bullseye.removed)  # Python 3.9 has none
    trixie = BaseRecipe.for_release("trixie", "http://mirror.example/debian")
    assert (trixie.suite, trixie.packages, trixie.mirror) == (
        "trixie",
        PACKAGES,
        "http://mirror.example/debian",
    )
    assert trixie.removed[0] == "usr/lib/python3.13/EXTERNALLY-MANAGED"
    assert len({bullseye.digest(), bookworm.digest(), trixie.digest()}) == 3
    with pytest.raises(InputError, match="choose one of bullseye, bookworm, trixie"):
        release_named("buster")


def test_tags_and_platform_labels() -> None:
    assert BASE_IMAGE == base_tag("bookworm") == "replay-base:bookworm"
    assert base_tag(release_named("bookworm"), ["node"]) == "replay-base:bookworm-node"
    assert parse_base_tag("replay-base:bullseye-node") == (release_named("bullseye"), ("node",))
    assert parse_base_tag("replay-base:trixie") == (release_named("trixie"), ())
    both = base_tag(release_named("bullseye"), ["node", "build"])
    assert both == "replay-base:bullseye-build-node"
    assert parse_base_tag(both) == (release_named("bullseye"), ("build", "node"))
    for other in ("replay-base:missing", "replay-base:bookworm-rust", "debian:bookworm"):
        assert parse_base_tag(other) is None
    label = platform_label(release_named("bookworm"), ["node"])
    assert label == "release=bookworm;python=3.11;toolchains=node"
    assert image_toolchains({"replay.platform": label}) == {"node"}
    assert image_toolchains({"replay.platform": platform_label(release_named("trixie"))}) == set()
    assert image_toolchains({}) == set()  # built before the label: Python only


def test_a_case_whose_base_image_lacks_its_toolchain_is_refused(tmp_path: Path) -> None:
    env = Environment(base_image="replay-base:bookworm-node", toolchains=["node"])
    assert env.toolchains == ["node"]
    assert Environment(base_image="replay-base:bookworm").toolchains == []
    with pytest.raises(ValidationError, match="Input should be 'build' or 'node'"):
        Environment(base_image="replay-base:bookworm", toolchains=["rust"])  # type: ignore[list-item]

    data = yaml.safe_load(DEMO_CASE.read_text())
    data["environment"]["toolchains"] = ["node"]
    data["snapshot"] = str((DEMO_CASE.parent / data["snapshot"]).resolve())
    (tmp_path / "case.yaml").write_text(yaml.safe_dump(data))
    for name in ("gold.patch", "hidden_tests.patch"):
        (tmp_path / name).write_bytes((DEMO_CASE.parent / name).read_bytes())
    with pytest.raises(CaseError) as err:
        load_case(tmp_path / "case.yaml")
    assert (
        "base_image replay-base:bookworm lacks the toolchain(s) node the case declares:"
        " name replay-base:bookworm-node (built by `replay image base --release bookworm"
        " --toolchain node`)"
    ) in str(err.value)


def test_the_cli_names_the_releases_and_toolchains_it_knows() -> None:
    result = CliRunner().invoke(app, ["base", "--release", "buster"])
    assert result.exit_code != 0
    assert isinstance(result.exception, InputError)
    assert "no base image for Debian 'buster'; choose one of bullseye, bookworm, trixie" in str(
        result.exception
    )
    result = CliRunner().invoke(app, ["base", "--release", "bullseye", "--toolchain", "rust"])
    assert isinstance(result.exception, InputError)
    assert "no toolchain 'rust'; choose one of build, node" in str(result.exception)
    result = CliRunner().invoke(app, ["base", "--package", "Not-Debian"])
    assert isinstance(result.exception, InputError)
    assert "'Not-Debian' is not a Debian package name" in str(result.exception)
