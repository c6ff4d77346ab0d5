"""What the tests lack of the system, found and added while measuring (issue 34).

agate 2024 (eighth held-out corpus) built, then stopped: its tests set a German locale, which
the base image lacks, so they errored on both sides (``locale.Error: unsupported locale
setting``) and no test showed the fix. The measure now reads what the tests looked for in
Debian's index of package contents (served here on loopback: a line of bookworm's own), adds
the package holding it (``locales-all``, installed from Debian's mirror as a layer on the
release's image) and measures again. A history made here: a fix that formats money in the
reader's locale, its test in German. Against the real Docker engine."""

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

from replay.base import gitrepo
from replay.base.case import load_case
from replay.casebuild.create import FixSource, create_case
from replay.images.system import architecture
from replay.runtime import get_runtime
from tests.casebuild.repos import REGISTRY, SETUP, commit
from tests.serving import serving

BUGGY = '''\
def money(amount):
    """The amount as the reader's locale writes it."""
    return f"{amount:,.2f}"
'''
FIXED = '''\
import locale


def money(amount):
    """The amount as the reader's locale writes it."""
    return locale.format_string("%.2f", amount, grouping=True)
'''
TEST = """\
import locale

from money import money


def test_money_in_german():
    locale.setlocale(locale.LC_ALL, "de_DE.UTF-8")
    try:
        assert money(1234.5) == "1.234,50"
    finally:
        locale.setlocale(locale.LC_ALL, "C")
"""


def german(path: Path) -> tuple[Path, str]:
    gitrepo.init(path)
    commit(path, "2026-03-01T10:00:00Z", "Add money()", {"money.py": BUGGY})
    fix = commit(
        path,
        "2026-03-11T10:00:00Z",
        "Format money in the reader's locale",
        {"money.py": FIXED, "tests/test_money.py": TEST},
    )
    return path, fix


@pytest.fixture()
def contents(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[list[str]]:
    """Debian bookworm's index of package contents on loopback: the line of locales-all that
    holds en_US's locale (bookworm's own); the paths asked."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    line = f"{'usr/lib/locale/en_US.utf8/LC_CTYPE':<56}localization/locales-all\n"
    files = {
        "/debian/dists/bookworm/main/Contents-amd64.gz": gzip.compress(line.encode()),
        "/debian/dists/bookworm/main/Contents-all.gz": gzip.compress(b""),
    }
    asked: list[str] = []

    async def serve(request: Request) -> Response:
        asked.append(request.url.path)
        body = files.get(request.url.path)
        return Response(body, 200) if body is not None else Response("Not Found", 404)

    with serving(Starlette(routes=[Route("/{path:path}", serve)])) as url:
        monkeypatch.setenv("REPLAY_DEBIAN_CONTENTS", f"{url}/debian")
        yield asked


def test_a_locale_the_tests_lack_is_added_and_the_fix_measured(
    tmp_path: Path, contents: list[str]
) -> None:
    if architecture() != "amd64":
        pytest.skip("the loopback index is amd64's")
    repo, fix = german(tmp_path / "money")
    source = FixSource(
        repo=repo,
        fix=fix,
        repo_name="acme/money",
        ticket_title="money() ignores the locale",
        ticket_body="In German, money(1234.5) should read 1.234,50.",
        ticket_created=datetime.fromisoformat("2026-03-11T09:00:00Z"),
        setup=SETUP,
        registry_index=REGISTRY,
    )
    said: list[str] = []
    runtime = get_runtime("docker")
    try:
        path, lists = create_case("money-de", source, tmp_path / "cases", runtime, say=said.append)
    finally:
        runtime.close()
    assert lists.fail_to_pass == ["tests/test_money.py::test_money_in_german"]
    environment = load_case(path).environment
    assert environment.packages == ["locales-all"]
    assert environment.toolchains == []  # a locale needs no compiler
    assert environment.base_image.startswith("replay-base:bookworm-deb.")
    assert any(
        "the tests looked for what the image lacks" in s
        and "a locale (unsupported locale setting): locales-all" in s
        for s in said
    ), said
    assert "/debian/dists/bookworm/main/Contents-amd64.gz" in contents


def test_a_package_that_does_not_show_the_fix_is_not_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """psutil 2023 (eighth held-out corpus): its tests lacked ``ps``, ``free`` and ``vmstat``;
    with procps added the fix still did not show. The case file is put back as it was, and a
    line says what was tried (the stop then names the first measurement's causes)."""
    from types import SimpleNamespace

    from replay.casebuild import create
    from replay.casebuild.casedir import write_case_dir
    from replay.casebuild.create import spec_from_fix
    from replay.casebuild.testlists import TestLists
    from replay.images.system import Lacking
    from tests.casebuild.repos import shapes_repo, shapes_source

    repo, _, fix = shapes_repo(tmp_path / "shapes")
    path, _ = write_case_dir(spec_from_fix("shapes", shapes_source(repo, fix)), tmp_path / "c")
    before = path.read_text()
    none = TestLists(fail_to_pass=[], pass_to_pass=[], flaky=[])
    said_by_tests = "FileNotFoundError: [Errno 2] No such file or directory: 'ps'"
    run = SimpleNamespace(outputs=[said_by_tests])
    measured = SimpleNamespace(lists=none, before=run, after=run)
    seen: list[list[str]] = []

    def measure(case_path: Path, runtime: object, repeats: int) -> object:
        seen.append(load_case(case_path).environment.packages)
        return measured

    monkeypatch.setattr(create, "measure", measure)
    monkeypatch.setattr(
        create, "system_packages", lambda needs, release, say, image: {needs[0]: "procps"}
    )
    said: list[str] = []
    got = create._with_what_the_tests_lack(path, measured, None, 3, said.append)  # type: ignore[arg-type]
    assert got is None
    assert seen == [["procps"]]  # measured again with it
    assert path.read_text() == before  # and put back
    assert said == [
        "the tests looked for what the image lacks, which Debian bookworm's index of package "
        "contents names (ps (a command): procps): added to the base image "
        "(replay-base:bookworm-deb.fb1ea41b), and the tests measured again; the fix still does "
        "not show, so the case is as it was without them"
    ]
    assert [str(n) for n in create.lacking(said_by_tests)] == [str(Lacking("command", "ps"))]
