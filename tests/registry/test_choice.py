"""pip's choice among an index page's files, without a server: the corner cases."""

from __future__ import annotations

from packaging.requirements import Requirement
from packaging.tags import Tag
from packaging.utils import parse_wheel_filename
from packaging.version import Version

from replay.registry.choice import YANK_TIME_NOTE, Candidate, Chooser
from replay.registry.record import Target
from tests.registry.helpers import before

BULLSEYE = Target.for_debian("bullseye")


def _file(
    filename: str, days: float, yanked: bool | str = False, rp: str | None = None
) -> Candidate:
    tags: frozenset[Tag] | None = None
    if filename.endswith(".whl"):
        _, version, _, tags = parse_wheel_filename(filename)
    else:
        version = Version(filename.rsplit("-", 1)[1].removesuffix(".tar.gz"))
    return Candidate(
        "pkg", version, filename, filename, "0" * 64, 1, before(days=days), rp, None, yanked, tags
    )


def _chooser(declared: dict[str, str] | None = None) -> Chooser:
    def lookup(files: list[Candidate]) -> str | None:
        return (declared or {}).get(str(files[0].version))

    return Chooser(BULLSEYE.tags(), BULLSEYE.full_version, lookup)


def test_a_partly_yanked_version_keeps_its_live_files() -> None:
    files = [
        _file("pkg-2.0-py3-none-any.whl", 5, yanked="bad wheel"),
        _file("pkg-2.0.tar.gz", 5),
        _file("pkg-1.0-py3-none-any.whl", 50),
    ]
    choice = _chooser().choose(Requirement("pkg"), files)
    assert choice is not None
    assert (str(choice.version), [c.filename for c in choice.files]) == ("2.0", ["pkg-2.0.tar.gz"])
    assert "its yanked files left out" in choice.reason
    assert YANK_TIME_NOTE in choice.reason


def test_a_wildcard_is_not_a_pin() -> None:
    files = [
        _file("pkg-1.1-py3-none-any.whl", 5, yanked=True),
        _file("pkg-1.0-py3-none-any.whl", 50),
    ]
    choice = _chooser().choose(Requirement("pkg==1.*"), files)
    assert choice is not None and str(choice.version) == "1.0"
    assert "passed over yanked 1.1" in choice.reason
    only_yanked = [_file("pkg-1.1-py3-none-any.whl", 5, yanked=True)]
    assert _chooser().choose(Requirement("pkg==1.*"), only_yanked) is None
    pinned = _chooser().choose(Requirement("pkg==1.1"), only_yanked)
    assert pinned is not None and str(pinned.version) == "1.1"


def test_platform_and_metadata_requires_python_are_reasons() -> None:
    files = [
        _file("pkg-3.0-cp39-cp39-win_amd64.whl", 2),
        _file("pkg-2.5-cp39-cp39-manylinux_2_34_x86_64.whl", 3),  # glibc 2.34 > bullseye's
        _file("pkg-2.0-py3-none-any.whl", 5),
        _file("pkg-1.0-py3-none-any.whl", 50),
    ]
    choice = _chooser({"2.0": ">=3.10"}).choose(Requirement("pkg>=1"), files)
    assert choice is not None and str(choice.version) == "1.0"
    assert choice.reason == (
        "newest final release at T satisfying >=1; requires-python excludes newer "
        "2.0 (>=3.10) on Python 3.9.2; no file for the target in newer 2.5, 3.0"
    )
