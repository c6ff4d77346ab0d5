"""A fix whose test data holds a bare carriage return (tomli's 1759a41 adds such a file) stays
a patch that applies: read, split and written byte for byte, never newline-translated."""

from __future__ import annotations

from pathlib import Path

from replay.base import gitrepo
from replay.base.case import read_patch
from replay.casebuild.patches import file_diffs, split_fix
from tests.casebuild.repos import commit

DATA = 's="""a bare\rcarriage return"""\n'


def test_a_carriage_return_in_a_test_file_survives_the_split(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    repo.mkdir()
    gitrepo.run(repo, "init", "-q", "-b", "main")
    base = commit(repo, "2021-07-30T08:00:00+00:00", "base", {"lib.py": "X = 1\n"})
    fix = commit(
        repo,
        "2021-07-30T09:00:00+00:00",
        "fix",
        {
            "lib.py": "X = 2\n",
            "tests/data/cr.toml": DATA,
            "tests/test_x.py": "def test_x(): pass\n",
        },
    )
    diff = gitrepo.run_exact(repo, "diff", "--binary", "--full-index", base, fix)
    assert "\r" in diff
    assert [d.path for d in file_diffs(diff)] == ["lib.py", "tests/data/cr.toml", "tests/test_x.py"]
    gold, tests = split_fix(diff)
    patch = tmp_path / "hidden_tests.patch"
    patch.write_bytes(tests.encode())
    assert read_patch(patch) == tests and "\r" in tests
    gitrepo.run(repo, "checkout", "-q", base)
    gitrepo.run(repo, "apply", "--check", str(patch))
    gitrepo.run(repo, "apply", str(patch))
    assert (repo / "tests/data/cr.toml").read_bytes() == DATA.encode()
    assert gold.startswith("diff --git a/lib.py")


def _diff(*paths: str) -> str:
    return "".join(
        f"diff --git a/{p} b/{p}\n--- a/{p}\n+++ b/{p}\n@@ -1 +1 @@\n-a\n+b\n" for p in paths
    )


def test_a_fixture_change_runs_its_whole_test_directory() -> None:
    """Found by the third held-out corpus (mistune 2019): the fix's new cases are lines of
    ``tests/fixtures/table.txt``, read by ``tests/test_syntax.py``, which the fix does not
    touch; the command ran only the changed ``tests/test_directive.py``, the new cases never
    ran, and case create stopped at measure ("the fix's tests pass before it too")."""
    from replay.casebuild.patches import test_targets

    assert test_targets(_diff("tests/test_directive.py", "mistune/table.py")) == [
        "tests/test_directive.py"
    ]
    mistune = _diff("tests/fixtures/table.txt", "tests/test_directive.py", "mistune/table.py")
    assert test_targets(mistune) == ["tests"]
    nested = _diff("src/pkg/tests/data/x.json", "test/test_a.py")
    assert test_targets(nested) == ["test/test_a.py", "src/pkg/tests"]


def test_a_python_sample_under_a_data_directory_is_data_and_runs_the_suite(
    tmp_path: Path,
) -> None:
    """Found by the fourth held-out corpus (pycodestyle 2023-2025): the fix adds a line to
    ``testing/data/python36.py``, a sample the checker reads from ``tests/test_data.py``;
    the command ran that sample as a test module, which does not import (``NameError``), and
    case create stopped at measure. A ``.py`` file pytest does not collect is data; its
    directory holds no test module, so the command runs the whole suite."""
    from replay.casebuild.casedir import DEFAULT_COMMAND
    from replay.casebuild.create import FixSource, spec_from_fix
    from replay.casebuild.patches import test_targets

    pycodestyle = _diff("testing/data/python36.py", "pycodestyle.py")
    assert test_targets(pycodestyle, lambda d: d != "testing") == []
    assert test_targets(pycodestyle) == ["testing"]  # a directory that holds tests: run it
    both = _diff("tests/test_api.py", "tests/conftest.py", "tests/samples/bad.py", "x.py")
    assert test_targets(both) == ["tests"]

    repo = gitrepo.init(tmp_path / "repo")
    commit(repo, "2026-03-01T10:00:00Z", "base", {
        "checker.py": "def check(line):\n    return []\n",
        "testing/data/python36.py": "#: E999\nf'{hello}'\n",
        "tests/test_data.py": "def test_samples():\n    assert True\n",
    })  # fmt: skip
    commit(repo, "2026-03-02T10:00:00Z", "fix a false positive", {
        "checker.py": "def check(line):\n    return list(line)\n",
        "testing/data/python36.py": "#: E999\nf'{hello}'\n#: Okay\nf'{x}'\n",
    })  # fmt: skip
    source = FixSource(repo, "HEAD", "o/sample", "A false positive", "It flags f'{x}'.")
    assert spec_from_fix("sample", source).command == DEFAULT_COMMAND


def test_a_conftest_change_runs_its_directory() -> None:
    """Found by the fifth held-out corpus (rfc3986 2019): the fix's only test change adds IPv4
    hosts to ``tests/conftest.py``'s parameters; the command ran that file, which holds no
    test ("pytest collected no test"). A changed conftest runs its directory; a top-level one
    the whole suite."""
    from replay.casebuild.patches import test_targets

    assert test_targets(_diff("tests/conftest.py", "src/rfc3986/abnf_regexp.py")) == ["tests"]
    both = _diff("tests/test_uri.py", "tests/unit/conftest.py", "src/x.py")
    assert test_targets(both) == ["tests/test_uri.py", "tests/unit"]
    assert test_targets(_diff("conftest.py", "tests/test_uri.py", "src/x.py")) == []


def test_a_test_module_named_outside_pytests_pattern_is_named_itself() -> None:
    """Found by the seventh held-out corpus (voluptuous 2019): the fix adds test functions to
    ``voluptuous/tests/tests.py``, which nose collected and pytest's default ``python_files``
    does not match; it was taken for data in a directory holding no test module, the command
    named no path, pytest collected nothing (exit 5) and case create stopped at measure. A
    file whose diff adds or changes test functions is a test module whatever its name, and
    pytest collects it when given its path; a sample without tests stays data."""
    from replay.casebuild.patches import test_targets

    added = (
        "diff --git a/voluptuous/tests/tests.py b/voluptuous/tests/tests.py\n"
        "--- a/voluptuous/tests/tests.py\n+++ b/voluptuous/tests/tests.py\n"
        "@@ -1,2 +1,6 @@ import copy\n+\n+def test_any_required():\n+    assert True\n"
    )
    gold = _diff("voluptuous/validators.py")
    assert test_targets(added + gold, lambda d: False) == ["voluptuous/tests/tests.py"]
    changed = (
        "diff --git a/tests/checks.py b/tests/checks.py\n--- a/tests/checks.py\n"
        "+++ b/tests/checks.py\n@@ -10,2 +10,2 @@ def test_parse(self):\n-    a\n+    b\n"
    )
    assert test_targets(changed + gold, lambda d: False) == ["tests/checks.py"]
    sample = _diff("testing/data/python36.py")  # no test function: data, as before
    assert test_targets(sample + gold, lambda d: d != "testing") == []


def test_a_test_module_the_fix_deletes_is_not_run() -> None:
    """Found by the eighth held-out corpus (python-rsa 2022): the fix removes
    ``tests/test_compat.py``; the command named it, pytest stopped ("file or directory not
    found", exit 4) on both sides, and case create stopped at measure."""
    from replay.casebuild.patches import file_diffs, test_files, test_targets

    deleted = (
        "diff --git a/tests/test_compat.py b/tests/test_compat.py\ndeleted file mode 100644\n"
        "index 1111111..0000000\n--- a/tests/test_compat.py\n+++ /dev/null\n"
        "@@ -1,2 +0,0 @@\n-def test_byte():\n-    assert True\n"
    )
    patch = _diff("tests/test_pkcs1.py") + deleted + _diff("rsa/pkcs1.py")
    assert [d.deleted for d in file_diffs(patch)] == [False, True, False]
    assert test_files(patch) == ["tests/test_pkcs1.py"]
    assert test_targets(patch) == ["tests/test_pkcs1.py"]
