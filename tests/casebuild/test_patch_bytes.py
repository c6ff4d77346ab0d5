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
