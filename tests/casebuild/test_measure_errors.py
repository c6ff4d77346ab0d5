"""Measuring a case's test lists says what went wrong (issue 16): a setup command that fails
is named with the end of its output, kept in the case's logs directory."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from replay.casebuild.swebench import import_instances
from replay.casebuild.testlists import measure
from replay.runtime import get_runtime
from replay.runtime.base import SandboxError
from tests.casebuild.repos import REGISTRY, shapes_repo
from tests.casebuild.test_swebench import _instance


def test_a_failing_setup_command_is_named_with_its_output(tmp_path: Path) -> None:
    clones = tmp_path / "clones"
    clone, base, fix = shapes_repo(clones / "acme__shapes")
    file = tmp_path / "instances.jsonl"
    file.write_text(json.dumps(_instance(clone, base, fix)) + "\n")
    # More output than the message keeps: its start is only in the log.
    setup = (
        "echo replay-setup-$((40 + 2))-began; head -c 5000 /dev/zero | tr '\\0' x; echo;"
        " echo replay-measure-setup-said-this; exit 4"
    )
    (path,) = import_instances(
        file, clones, tmp_path / "cases", setup=[setup], registry_index=REGISTRY
    )
    runtime = get_runtime("docker")
    try:
        with pytest.raises(SandboxError) as exc:
            measure(path, runtime)
    finally:
        runtime.close()
    text = str(exc.value)
    assert f"environment setup {setup!r} exited 4" in text
    assert "replay-measure-setup-said-this" in text
    log = path.parent / "logs" / "setup-error.log"
    assert text.endswith(f"log: {log}")
    assert "replay-measure-setup-said-this" in log.read_text()
    assert "replay-setup-42-began" not in text and "replay-setup-42-began" in log.read_text()


def _junit(**cases: str) -> bytes:
    body = "".join(
        f'<testcase classname="tests.test_x" name="{name}">'
        + {"failed": "<failure message='x'/>", "error": "<error message='x'/>"}.get(status, "")
        + "</testcase>"
        for name, status in cases.items()
    )
    return f'<testsuites><testsuite name="pytest">{body}</testsuite></testsuites>'.encode()


def _side(reports: list[bytes | None], codes: list[int]) -> object:
    from types import SimpleNamespace

    verdict = SimpleNamespace(exit_codes=codes)
    return SimpleNamespace(reports=reports, verdict=verdict, outputs=["out"], stopped=None)


@pytest.mark.parametrize(
    ("before", "after", "codes", "says"),
    [
        ([_junit(test_a="passed")], [_junit(test_a="passed")], [0], "pass before it too"),
        ([None], [None], [5], "pytest collected no test from the fix's test files"),
        ([None], [None], [1], "ran no test on either side"),
        (
            [_junit(test_a="failed", test_b="failed")],
            [_junit(test_a="failed", test_b="passed")],
            [1],
            "still fail after it",
        ),
        # pyyaml 2021 (fourth corpus): its tests run through its own runner; under pytest
        # they only error (a Python 2 exec statement, a fixture pytest does not have).
        (
            [_junit(test_a="error", test_b="error")],
            [_junit(test_a="error", test_b="error")],
            [1],
            "pytest cannot run the fix's tests here: on both sides they only error",
        ),
        # six 2020 (fourth corpus): a Python 2 fix; an unrelated test fails on both sides.
        (
            [_junit(test_a="failed", test_b="passed")],
            [_junit(test_a="failed", test_b="passed")],
            [1],
            "no test's result changes with the fix: the same 1 test(s) fail on both sides "
            "(tests/test_x.py::test_a)",
        ),
    ],
)
def test_an_empty_measurement_says_what_it_means_for_the_fix(
    before: list[bytes | None], after: list[bytes | None], codes: list[int], says: str
) -> None:
    """Found by the held-out corpus: 19 of its stops said only "no test fails before the gold
    patch and passes after it"; the line now says what the two sides mean for the fix (typo
    fixes, type-checker files, an environment that cannot run the tests) in the project's
    terms, and what would change it."""
    from replay.casebuild.testlists import Measurement, TestLists

    lists = TestLists(fail_to_pass=[], pass_to_pass=[], flaky=[])
    m = Measurement(lists, _side(before, codes), _side(after, codes))  # type: ignore[arg-type]
    first = m.explain("python -m pytest").splitlines()[0]
    assert first.startswith("no test fails before the gold patch and passes after it: ")
    assert says in first


@pytest.mark.parametrize(
    ("output", "cause"),
    [
        # dateutil 2019: setuptools as of T on Python 3.9 (in pip's isolated build).
        (
            "  Getting requirements to build wheel: finished with status 'error'\n"
            "  ERROR: Command errored out with exit status 1:\n"
            "   command: /usr/bin/python /tmp/x/_in_process.py get_requires_for_build_wheel\n"
            "  Traceback (most recent call last):\n"
            "  AttributeError: 'HTMLParser' object has no attribute 'unescape'\n"
            "WARNING: Discarding file:///workspace/repo. Command errored out with exit status 1\n"
            "ERROR: Command errored out with exit status 1: /usr/bin/python ...\n",
            "AttributeError: 'HTMLParser' object has no attribute 'unescape'",
        ),
        # colorama 2020: cffi built from source without libffi's headers.
        (
            "    c/_cffi_backend.c:15:10: fatal error: ffi.h: No such file or directory\n"
            "    error: command '/usr/bin/x86_64-linux-gnu-gcc' failed with exit code 1\n",
            "fatal error: ffi.h: No such file or directory",
        ),
        # yarl 2019 (third corpus): typed-ast as of T does not compile on Python 3.9; the
        # stop's line showed a gcc command line.
        (
            "  Running setup.py install for typed-ast ... error\n"
            "    ERROR: Command errored out with exit status 1:\n"
            "     command: /usr/bin/python -u -c 'import sys; sys.argv[0] = '\"'\"'/tmp/pip-install"
            "-145alwnr/typed-ast_bc731db7b5844d35b3c1a05a990eeb98/setup.py'\n"
            "    x86_64-linux-gnu-gcc -pthread -Wno-unused-result -c ast3/Python/ast.c\n"
            "    ast3/Python/ast.c: In function 'decode_bytes_with_escapes':\n"
            "    ast3/Python/ast.c:4534:24: error: too many arguments to function "
            "'_PyBytes_DecodeEscape'\n"
            "    error: command '/usr/bin/x86_64-linux-gnu-gcc' failed with exit code 1\n",
            "building typed-ast: ast3/Python/ast.c:4534:24: error: too many arguments to "
            "function '_PyBytes_DecodeEscape'",
        ),
        (
            "ERROR: Could not find a version that satisfies the requirement x\n"
            "ERROR: No matching distribution found for x\n",
            "ERROR: Could not find a version that satisfies the requirement x",
        ),
        ("setting up\nall went wrong quietly\n", None),
    ],
)
def test_a_failed_setup_says_its_cause_first(output: str, cause: str | None) -> None:
    """Found by the corpus: a stop's one line ended with whatever 20 characters the output's
    last 3000 began with ("le:///workspace/repo"); it now leads with the line that says why."""
    from replay.images.env import cause_line

    assert cause_line(output) == cause


def test_an_image_audit_stop_is_made_again_on_the_clean_base_image(monkeypatch, tmp_path) -> None:
    """Issue 34 (msgpack 2019): the image audit found the fix's lines in bullseye's image (its
    pip wheel vendors a later msgpack) and proposed bookworm, which holds none of them; case
    create stopped and said so, and the user had to run it again with --python. When case
    create chose the interpreter itself it now makes the case again on the proposed release;
    an interpreter the user named is kept and the stop stands."""
    import dataclasses

    from replay.casebuild import create
    from replay.casebuild.environment import Wanted
    from replay.casebuild.testlists import TestLists
    from tests.casebuild.repos import shapes_repo, shapes_source

    repo, _, fix = shapes_repo(tmp_path / "shapes")
    src = dataclasses.replace(shapes_source(repo, fix), wanted=Wanted(requires=("pytest",)))
    made: list[str | None] = []

    def environment(spec, given, out, runtime):
        made.append(given.wanted.python)
        return out / "case.yaml"

    def audit(path, runtime):
        if made[-1] is None:  # the release chosen from T: bullseye's image holds the answer
            raise create.LeakError("LEAK ...", "replay-base:bullseye", "replay-base:bookworm")

    lists = TestLists(fail_to_pass=["tests/test_shapes.py::test_area"], pass_to_pass=[], flaky=[])
    measured = type("Measured", (), {"lists": lists})()
    monkeypatch.setattr(create, "_create_with_environment", environment)
    monkeypatch.setattr(create, "measure", lambda path, runtime, repeats: measured)
    monkeypatch.setattr(create, "named_tests", lambda path, found: (found, []))
    monkeypatch.setattr(create, "write_lists", lambda path, found: None)
    monkeypatch.setattr(create, "_check_images", audit)
    said: list[str] = []
    _, got = create.create_case("shapes-area", src, tmp_path / "case", None, say=said.append)
    assert made == [None, "3.11"]
    assert got == lists
    assert said[-1] == (
        "the image audit found the answer in replay-base:bullseye; replay-base:bookworm holds "
        "none of it: making the case again on Debian bookworm (Python 3.11), as --python 3.11 "
        "would"
    )
    made.clear()

    def always(path, runtime):
        raise create.LeakError("LEAK ...", "replay-base:bullseye", "replay-base:bookworm")

    monkeypatch.setattr(create, "_check_images", always)
    named = dataclasses.replace(src, wanted=Wanted(requires=("pytest",), python="3.9"))
    with pytest.raises(create.LeakError):
        create.create_case("shapes-area", named, tmp_path / "case", None, say=said.append)
    assert made == ["3.9"]  # made once, on the interpreter the user named


def test_a_module_the_tests_cannot_import_is_named() -> None:
    """Found by the fourth held-out corpus (starlette 2019-2025: httpx; anyio 2019: curio):
    the declared test requirements did not install a module the tests import, and the stop
    said only that the environment lacked something. It now names the module and what to
    give."""
    from types import SimpleNamespace

    from replay.casebuild.testlists import Measurement, TestLists

    out = (
        "ImportError while loading conftest '/workspace/repo/tests/conftest.py'.\n"
        "    import httpx\nE   ModuleNotFoundError: No module named 'httpx'\n"
    )
    side = SimpleNamespace(
        reports=[None], verdict=SimpleNamespace(exit_codes=[4]), outputs=[out], stopped=None
    )
    lists = TestLists(fail_to_pass=[], pass_to_pass=[], flaky=[])
    said = Measurement(lists, side, side).diagnosis()  # type: ignore[arg-type]
    assert said.startswith("the tests cannot import httpx (ModuleNotFoundError, or an error")
    assert "--requires, --extra" in said
    # A missing module of another test file says nothing when the fix's tests pass before it.
    passing = SimpleNamespace(
        reports=[_junit(test_a="passed")],
        verdict=SimpleNamespace(exit_codes=[1]),
        outputs=[out],
        stopped=None,
    )
    said = Measurement(lists, passing, passing).diagnosis()  # type: ignore[arg-type]
    assert said.startswith("the fix's tests pass before it too")


def test_an_error_saying_what_to_pip_install_names_the_module() -> None:
    """Found by rebuilding the fourth corpus (starlette 2025): the project raises its own
    error in place of the ImportError, saying what to install; the module is read from it."""
    from types import SimpleNamespace

    from replay.casebuild.testlists import Measurement, TestLists

    out = (
        "ImportError while loading conftest '/workspace/repo/tests/conftest.py'.\n"
        "tests/conftest.py:8: in <module>\n"
        "    from starlette.testclient import TestClient\n"
        "E   RuntimeError: The starlette.testclient module requires the httpx package to be "
        "installed.\nE   You can install this with:\nE       $ pip install httpx\n"
    )
    side = SimpleNamespace(
        reports=[None], verdict=SimpleNamespace(exit_codes=[4]), outputs=[out], stopped=None
    )
    lists = TestLists(fail_to_pass=[], pass_to_pass=[], flaky=[])
    measured = Measurement(lists, side, side)  # type: ignore[arg-type]
    assert measured.missing_modules() == ["httpx"]
    # Prose that names pip install in passing is not read as a hint.
    said = out.replace("E       $ pip install httpx", "E   run pip install httpx first, then")
    side.outputs = [said]
    assert measured.missing_modules() == []


def test_tests_measured_but_all_left_out_are_told_as_such(monkeypatch, tmp_path) -> None:
    """Found by the fifth held-out corpus (asn1crypto 2022): 3 tests failed before the fix and
    passed after it, but their ids named no file of the tree and were left out, and the stop
    said "the tests that fail before the fix still fail after it". It now says which tests
    were measured and why they were left out."""
    import dataclasses

    from replay.casebuild import create
    from replay.casebuild.environment import Wanted
    from replay.casebuild.testlists import MeasureError, TestLists
    from tests.casebuild.repos import shapes_repo, shapes_source

    repo, _, fix = shapes_repo(tmp_path / "shapes")
    src = dataclasses.replace(shapes_source(repo, fix), wanted=Wanted(requires=("pytest",)))
    moved = ["test_shapes.py::test_area_multiplies"]
    measured = TestLists(fail_to_pass=moved, pass_to_pass=[], flaky=[])
    none = TestLists(fail_to_pass=[], pass_to_pass=[], flaky=[])

    class Measured:
        lists = measured

        def missing_modules(self) -> list[str]:
            return []

        def unknown_options(self) -> list[str]:
            return []

        def fails_with_gold(self) -> bool:
            return False

        def write_logs(self, directory):
            return directory

    monkeypatch.setattr(create, "_create_with_environment", lambda s, g, out, r: out / "c.yaml")
    monkeypatch.setattr(create, "measure", lambda path, runtime, repeats: Measured())
    monkeypatch.setattr(create, "named_tests", lambda path, lists: (none, moved))
    monkeypatch.setattr(create, "_on_the_fallback", lambda *a: None)
    monkeypatch.setattr(create, "_with_what_the_tests_lack", lambda *a: None)
    with pytest.raises(MeasureError) as exc:
        create.create_case("shapes-area", src, tmp_path / "case", None, say=lambda _: None)
    assert "(test_shapes.py::test_area_multiplies...) name no test function of the tree" in str(
        exc.value
    )


def test_an_addopts_option_of_a_missing_plugin_names_the_plugin(tmp_path: Path) -> None:
    """Found by the seventh held-out corpus (tinydb 2022 and 2025): ``pytest.ini`` adds
    ``--cov`` and nothing the project declares for its tests installs pytest-cov, so no test
    ran on either side. Real pytest's refusal (pytest-cov is not installed here) is read back
    as the options it refused and the plugin that adds them; ``case create`` then makes the
    case again with it (replay/casebuild/create.py), as the project's developers ran it."""
    import subprocess
    import sys
    from types import SimpleNamespace

    from replay.casebuild.testlists import Measurement, TestLists, plugins_for

    (tmp_path / "pytest.ini").write_text(
        "[pytest]\naddopts = --cov-append --cov-report= --cov tiny\n"
    )
    (tmp_path / "test_tiny.py").write_text("def test_one():\n    assert True\n")
    ran = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:randomly", "test_tiny.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert ran.returncode == 4, ran.stdout + ran.stderr
    side = SimpleNamespace(
        reports=[None],
        verdict=SimpleNamespace(exit_codes=[4]),
        outputs=[ran.stdout + ran.stderr],
        stopped=None,
    )
    lists = TestLists(fail_to_pass=[], pass_to_pass=[], flaky=[])
    measured = Measurement(lists, side, side)  # type: ignore[arg-type]
    assert measured.unknown_options()[:3] == ["--cov-append", "--cov-report=", "--cov"]
    assert plugins_for(measured.unknown_options()) == ["pytest-cov"]
    assert plugins_for(["-n", "4", "--timeout=30", "--unheard-of"]) == [
        "pytest-xdist",
        "pytest-timeout",
    ]
    # A test that ran says the options were understood: nothing to add.
    passed = SimpleNamespace(**{**vars(side), "reports": [_junit(test_one="passed")]})
    assert Measurement(lists, passed, passed).unknown_options() == []  # type: ignore[arg-type]
