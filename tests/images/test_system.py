"""What a build lacks of the system, read from its own words, and the Debian package holding
it, looked up in Debian's index of package contents (served here on loopback).

The agate fixes of the eighth held-out corpus (2020, 2024, 2026) stopped because PyICU, which
agate's tests need, builds only with ``pkg-config`` and ICU's headers; the words are real pip
building the real PyICU 2.4.2 sdist in replay's base image (``data/README.md``)."""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from replay.base.case import load_case
from replay.base.errors import ToolError
from replay.images.system import Lacking, lacking, packages_for
from tests.serving import serving

DATA = Path(__file__).parent / "data"

# Lines of Debian bookworm's own indexes (dists/bookworm/main/Contents-{amd64,all}.gz, read
# 2026-12-05): the files a build looked for, and other packages holding a file of the same
# name deeper in their tree.


def index(*lines: tuple[str, str]) -> str:
    """Lines of a contents index, in its columns (the file, then the packages)."""
    return "".join(f"{path:<56}{where}\n" for path, where in lines)


AMD64 = index(
    ("bin/ps", "admin/procps"),
    ("usr/bin/pkg-config", "devel/pkgconf"),
    ("usr/include/CUnit/Basic.h", "libdevel/libcunit1-dev,libdevel/libcunit1-ncurses-dev"),
    ("usr/include/argon2.h", "libdevel/libargon2-dev"),
    ("usr/include/botan-2/botan/argon2.h", "libdevel/libbotan-2-dev"),
    ("usr/include/mozjs-102/unicode/utypes.h", "libdevel/libmozjs-102-dev"),
    ("usr/include/unicode/utypes.h", "libdevel/libicu-dev"),
    ("usr/lib/x86_64-linux-gnu/libyaml.so", "libdevel/libyaml-dev"),
    ("usr/lib/x86_64-linux-gnu/pkgconfig/icu-i18n.pc", "libdevel/libicu-dev"),
    ("usr/lib/locale/de_DE.utf8/LC_CTYPE", "localization/locales-all"),
    ("usr/lib/locale/en_US.utf8/LC_CTYPE", "localization/locales-all"),
)
ALL = index(("usr/bin/autoconf", "devel/autoconf"), ("usr/bin/pip3", "python/python3-pip"))


def test_what_a_build_lacks_is_read_from_its_words() -> None:
    without_pkg_config = (DATA / "pyicu-2.4.2-without-pkg-config.txt").read_text()
    assert lacking(without_pkg_config) == [
        Lacking("command", "icu-config"),
        Lacking("command", "pkg-config"),
    ]
    without_icu = (DATA / "pyicu-2.4.2-without-icu.txt").read_text()
    assert lacking(without_icu) == [
        Lacking("pkg-config module", "icu-i18n"),
        Lacking("command", "icu-config"),
    ]
    # gcc's, clang's, the linker's and the shell's words.
    said = (
        "src/argon2.c:1:10: fatal error: argon2.h: No such file or directory\n"
        "ext.c:2:10: fatal error: 'unicode/utypes.h' file not found\n"
        "/usr/bin/ld: cannot find -lyaml: No such file or directory\n"
        "sh: 1: autoconf: not found\n"
        "/bin/sh: ps: command not found\n"
        "No package 'libffi' found\n"
        "E   locale.Error: unsupported locale setting\n"
    )
    assert lacking(said) == [
        Lacking("header", "argon2.h"),
        Lacking("header", "unicode/utypes.h"),
        Lacking("library", "yaml"),
        Lacking("command", "autoconf"),
        Lacking("command", "ps"),
        Lacking("pkg-config module", "libffi"),
        Lacking("locale", "unsupported locale setting"),
    ]
    assert lacking("ERROR: No matching distribution found for agate") == []


@pytest.fixture()
def mirror(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, list[str]]]:
    """A Debian mirror on loopback serving bookworm's two indexes; the paths asked."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    files = {
        "/debian/dists/bookworm/main/Contents-amd64.gz": gzip.compress(AMD64.encode()),
        "/debian/dists/bookworm/main/Contents-all.gz": gzip.compress(ALL.encode()),
        "/debian/dists/trixie/main/Contents-amd64.gz": b"not gzip at all",
    }
    asked: list[str] = []

    async def serve(request: Request) -> Response:
        asked.append(request.url.path)
        body = files.get(request.url.path)
        return Response(body, 200) if body is not None else Response("Not Found", 404)

    app = Starlette(routes=[Route("/{path:path}", serve)])
    with serving(app) as url:
        yield f"{url}/debian", asked


def test_each_lacking_thing_is_found_in_the_releases_index(
    mirror: tuple[str, list[str]],
) -> None:
    url, asked = mirror
    wants = [
        Lacking("command", "pkg-config"),
        Lacking("pkg-config module", "icu-i18n"),
        Lacking("header", "argon2.h"),  # libbotan-2-dev holds one deeper
        Lacking("header", "unicode/utypes.h"),  # as do mozjs's
        Lacking("header", "CUnit/Basic.h"),  # two packages hold the file
        Lacking("library", "yaml"),
        Lacking("command", "ps"),
        Lacking("command", "autoconf"),  # an Architecture: all package
        Lacking("command", "icu-config"),  # no package of bookworm has it
        Lacking("locale", "unsupported locale setting"),  # which one, the error does not say
    ]
    said: list[str] = []
    found = packages_for(wants, "bookworm", url, arch="amd64", say=said.append)
    assert found == {
        Lacking("command", "pkg-config"): "pkgconf",
        Lacking("pkg-config module", "icu-i18n"): "libicu-dev",
        Lacking("header", "argon2.h"): "libargon2-dev",
        Lacking("header", "unicode/utypes.h"): "libicu-dev",
        Lacking("header", "CUnit/Basic.h"): "libcunit1-dev",
        Lacking("library", "yaml"): "libyaml-dev",
        Lacking("command", "ps"): "procps",
        Lacking("command", "autoconf"): "autoconf",
        Lacking("locale", "unsupported locale setting"): "locales-all",
    }
    assert asked == [
        "/debian/dists/bookworm/main/Contents-amd64.gz",
        "/debian/dists/bookworm/main/Contents-all.gz",
    ]
    assert [s.split(" (")[0] for s in said] == [
        "reading Debian bookworm's index of package contents"
    ] * 2
    # Kept: asked again, nothing is fetched.
    assert packages_for(wants[:1], "bookworm", url, arch="amd64") == {wants[0]: "pkgconf"}
    assert len(asked) == 2


def test_an_index_that_cannot_be_read_is_named(mirror: tuple[str, list[str]]) -> None:
    url, _ = mirror
    with pytest.raises(ToolError, match=r"index of package contents .*trixie.* cannot be read"):
        packages_for([Lacking("command", "ps")], "trixie", url, arch="amd64")
    with pytest.raises(ToolError, match=r"could not read Debian's index .*bullseye.*404"):
        packages_for([Lacking("command", "ps")], "bullseye", url, arch="amd64")


def test_settling_adds_what_the_build_lacks_and_builds_again(
    tmp_path: Path, mirror: tuple[str, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """PyICU's build as agate's tests need it: first ``pkg-config``, then ICU's module; each
    added from Debian's index with the build toolchain, in the base image's tag, and the
    image built again until it builds."""
    from replay.base.blobs import BlobStore
    from replay.casebuild.casedir import write_case_dir
    from replay.casebuild.create import spec_from_fix
    from replay.casebuild.environment import settle
    from replay.images.base import release_named
    from replay.images.system import architecture
    from replay.runtime.base import SandboxError
    from tests.casebuild.repos import shapes_repo, shapes_source

    url, _ = mirror
    monkeypatch.setenv("REPLAY_DEBIAN_CONTENTS", url)
    if architecture() != "amd64":
        pytest.skip("the loopback mirror serves the amd64 index only")
    repo, _, fix = shapes_repo(tmp_path / "shapes")
    path, _ = write_case_dir(spec_from_fix("shapes", shapes_source(repo, fix)), tmp_path / "c")
    seen: list[tuple[str, list[str]]] = []

    def build(case_path: Path) -> None:
        environment = load_case(case_path).environment
        seen.append((environment.base_image, environment.packages))
        if "pkgconf" not in environment.packages:
            raise SandboxError((DATA / "pyicu-2.4.2-without-pkg-config.txt").read_text())
        if "libicu-dev" not in environment.packages:
            raise SandboxError((DATA / "pyicu-2.4.2-without-icu.txt").read_text())

    said: list[str] = []
    at = datetime.fromisoformat("2026-03-12T09:00:00Z")
    settle(
        path,
        build,
        at,
        release_named("bookworm"),
        BlobStore(tmp_path / "b"),
        "http://x",
        say=said.append,
    )
    assert seen == [
        ("replay-base:bookworm", []),
        ("replay-base:bookworm-build-deb.ca27ad8b", ["pkgconf"]),
        ("replay-base:bookworm-build-deb.fd32cedd", ["libicu-dev", "pkgconf"]),
    ]
    environment = load_case(path).environment
    assert environment.toolchains == ["build"]
    added = [s for s in said if s.startswith("a build at T looked for what the image lacks")]
    assert len(added) == 2
    assert "(pkg-config (a command): pkgconf)" in added[0]
    assert "(icu-i18n (a pkg-config module): libicu-dev)" in added[1]
    assert "replay-base:bookworm-build-deb.fd32cedd" in added[1]


def test_a_case_names_its_packages_in_its_base_image() -> None:
    """The tag's hash must be that of the packages the case names (one line says which)."""
    from replay.base.case import Environment

    ok = Environment(base_image="replay-base:bookworm-build-deb.ca27ad8b", packages=["pkgconf"])
    assert ok.packages == ["pkgconf"]
    with pytest.raises(ValueError, match=r"name replay-base:bookworm-build-deb\.ca27ad8b"):
        Environment(base_image="replay-base:bookworm-build", packages=["pkgconf"])
    with pytest.raises(ValueError, match=r"adds \(none\): name replay-base:bookworm-build "):
        Environment(base_image="replay-base:bookworm-build-deb.ca27ad8b")
    with pytest.raises(ValueError, match="pattern"):
        Environment(base_image="replay-base:bookworm", packages=["Not A Package"])


def test_a_package_the_image_has_is_not_what_it_lacks(runtime: object, base_image: str) -> None:
    """dpkg's own list of the image: ``git`` is there (a test's FileNotFoundError for a file
    named like a command is no reason to add it); an image not built here has none (never
    pulled)."""
    from replay.images.system import installed

    there = installed(base_image)
    assert {"git", "python3", "ca-certificates"} <= there and "pkgconf" not in there
    assert installed("replay-base:not-built-here") == frozenset()
