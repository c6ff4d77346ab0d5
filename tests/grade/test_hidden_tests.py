"""What grading puts back before the hidden tests run: the plan from two listings of the tree,
and the shell that lists and restores, run here on a real git repository (no Docker)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from replay.grade.hidden_tests import (
    APPLY,
    MANIFEST,
    PREPARE,
    RESTORE,
    hidden_test_dirs,
    parse_manifest,
    parse_tree,
    plan_restore,
    read_tar,
    restore_lists,
)
from replay.grade.model import Restored

HIDDEN = ["tests/test_caret.py"]
COMMAND = "python -m pytest -p no:cacheprovider -q --junitxml={junit} tests"
BASE_TREE = {
    "pyproject.toml": "blob",
    "README.md": "blob",
    "src": "tree",
    "src/semverkit": "tree",
    "src/semverkit/__init__.py": "blob",
    "src/semverkit/ranges.py": "blob",
    "tests": "tree",
    "tests/test_ranges.py": "blob",
}
BEFORE = {p: f"f:{p}" for p, kind in BASE_TREE.items() if kind == "blob"} | {
    "src/semverkit.egg-info/PKG-INFO": "f:made by pip install -e",
}


def plan(after: dict[str, str], importable: frozenset[str] = frozenset()) -> dict[str, Restored]:
    found = plan_restore(BEFORE, after, BASE_TREE, HIDDEN, COMMAND, importable)
    return {r.path: r for r in found}


def test_the_fix_itself_is_never_touched() -> None:
    after = BEFORE | {
        "src/semverkit/ranges.py": "f:fixed",
        "src/semverkit/caret.py": "f:new module of the fix",
        "README.md": "f:documented",
        "docs/caret.md": "f:new page",
    }
    assert plan(after, frozenset({"json", "pytest"})) == {}


def test_every_spoof_vector_is_restored_or_removed_and_named() -> None:
    after = BEFORE | {
        "conftest.py": "f:hook",
        "tests/conftest.py": "f:hook",
        "pyproject.toml": "f:addopts = -p spoofplugin",
        "pytest.ini": "f:[pytest]",
        "setup.cfg": "f:[tool:pytest]",
        "tox.ini": "f:[pytest]",
        "src/usercustomize.py": "f:patch",
        "src/sitecustomize.py": "f:patch",
        "src/sitecustomize/__init__.py": "f:patch",
        "src/zz.pth": "f:import spoof",
        "src/semverkit/__pycache__/ranges.cpython-311.pyc": "f:unchecked hash pyc",
        ".pytest_cache/v/cache/lastfailed": "f:{}",
        "src/spoof.dist-info/entry_points.txt": "f:[pytest11]",
        "src/semverkit.egg-info/PKG-INFO": "f:changed",
        "tests/test_ranges.py": "f:weakened",
        "tests/test_caret.py": "f:the agent's own version of a hidden file",
        "tests/test_mine.py": "f:imports and patches pytest at collection",
    }
    got = plan(after)
    assert set(got) == set(after) - set(BEFORE) | {
        "pyproject.toml",
        "src/semverkit.egg-info/PKG-INFO",
        "tests/test_ranges.py",
    }
    assert got["pyproject.toml"].action == "restored"
    assert got["tests/test_ranges.py"].action == "restored"
    assert got["conftest.py"] == Restored(
        path="conftest.py", action="removed", reason="pytest conftest"
    )
    assert got["tests/test_caret.py"].reason == "hidden test file"
    assert got["tests/test_mine.py"].reason == "in a directory of the hidden tests"
    assert got["src/usercustomize.py"].reason == "interpreter start-up hook"
    assert got["src/zz.pth"].reason == "path configuration file (.pth)"
    assert got["src/spoof.dist-info/entry_points.txt"].reason.startswith("package metadata")
    # Made by the environment's setup, not in the base commit: removed, not restored.
    assert got["src/semverkit.egg-info/PKG-INFO"].action == "removed"


def test_new_top_level_modules_that_shadow_the_interpreters_are_removed() -> None:
    importable = frozenset({"pytest", "_pytest", "pluggy", "json", "semverkit"})
    after = BEFORE | {
        "pytest.py": "f:fake runner",
        "_pytest/__init__.py": "f:fake",
        "_pytest/runner.py": "f:fake",
        "src/pluggy/__init__.py": "f:fake",
        "src/json.py": "f:fake",
        "tests/pytest.py": "f:fake",
        "src/semverkit/json.py": "f:a submodule: semverkit.json, shadows nothing",
        "src/semverkit/ranges.py": "f:the fix; semverkit is installed too, but was there",
        "spoofplugin.py": "f:inert once the configuration is the case's",
    }
    got = plan(after, importable)
    assert got["pytest.py"].reason == "shadows the module 'pytest' of the interpreter"
    assert got["_pytest/runner.py"].reason == "shadows the module '_pytest' of the interpreter"
    assert got["src/pluggy/__init__.py"].reason == (
        "shadows the module 'pluggy' of the interpreter"
    )
    assert got["src/json.py"].action == "removed"
    assert got["tests/pytest.py"].reason == "in a directory of the hidden tests"
    assert "src/semverkit/json.py" not in got
    assert "src/semverkit/ranges.py" not in got
    assert "spoofplugin.py" not in got


def test_a_test_directory_replaced_by_a_link_is_put_back_whole() -> None:
    after = {p: s for p, s in BEFORE.items() if not p.startswith("tests/")}
    after["tests"] = "l:/tmp/replay-grade"
    got = plan(after)
    assert got["tests"] == Restored(
        path="tests", action="restored", reason="in a directory of the hidden tests"
    )
    assert got["tests/test_ranges.py"].action == "restored"


def test_test_dirs_come_from_the_hidden_patch_and_the_command() -> None:
    base = {"tests": "tree", "tests/unit": "tree", "integration": "tree", "src": "tree"}
    assert hidden_test_dirs(
        ["tests/unit/test_a.py", "test_root.py"], "pytest integration", base
    ) == [
        "integration",
        "tests/unit",
    ]
    assert hidden_test_dirs(["tests/unit/test_a.py"], "pytest tests -k caret", base) == ["tests"]
    assert hidden_test_dirs([], "pytest . --junitxml=x", base) == []


# ----------------------------------------------------------------------------- the shell, here


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=repo,
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def apply(repo: Path, base: str, grade: Path, diff: str) -> dict[str, bytes | None]:
    """PREPARE (as the grading container runs it before the diff exists), then APPLY with the
    diff on its standard input: the files of the tar it writes to its standard output."""
    scripts = [
        script.format(
            workdir=repo,
            base=base,
            diff=grade / "agent.diff",
            grade=grade,
            manifest=MANIFEST.format(grade=grade),
        )
        for script in (PREPARE, APPLY)
    ]
    subprocess.run(["bash", "-c", scripts[0]], capture_output=True, text=True, check=True)
    done = subprocess.run(
        ["bash", "-c", scripts[1]], input=diff.encode(), capture_output=True, check=True
    )
    return read_tar(done.stdout)


def test_listing_applying_and_restoring_in_a_real_repository(tmp_path: Path) -> None:
    repo, grade = tmp_path / "repo", tmp_path / "grade"
    grade.mkdir()
    (repo / "tests").mkdir(parents=True)
    (repo / "src" / "pkg").mkdir(parents=True)
    (repo / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    (repo / "src" / "pkg" / "__init__.py").write_text("X = 1\n")
    (repo / "tests" / "test_a.py").write_text("def test_a():\n    pass\n")
    (repo / ".gitignore").write_text("*.egg-info/\n")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    base = git(repo, "rev-parse", "HEAD").strip()
    (repo / "src" / "pkg.egg-info").mkdir()
    (repo / "src" / "pkg.egg-info" / "PKG-INFO").write_text("made by the image\n")
    # The agent's work, as a diff: a fix, a conftest, a config change, a start-up hook and a
    # name with a newline in it; the test directory replaced by a link out of the repository.
    git(repo, "checkout", "-q", "-b", "agent")
    (repo / "src" / "pkg" / "__init__.py").write_text("X = 2\n")
    (repo / "conftest.py").write_text("# hook\n")
    (repo / "pyproject.toml").write_text("[tool.pytest.ini_options]\naddopts = '-p x'\n")
    (repo / "src" / "usercustomize.py").write_text("# patch\n")
    (repo / "src" / "odd\nname.pth").write_text("import x\n")
    subprocess.run(["rm", "-r", str(repo / "tests")], check=True)
    (repo / "tests").symlink_to(grade)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "agent")
    diff = git(repo, "diff", "--binary", base, "HEAD")
    git(repo, "checkout", "-q", "--detach", base)
    hidden = (
        "diff --git a/tests/test_b.py b/tests/test_b.py\nnew file mode 100644\n"
        "--- /dev/null\n+++ b/tests/test_b.py\n@@ -0,0 +1 @@\n+def test_b(): pass\n"
    )
    (grade / "hidden.patch").write_text(hidden)
    (grade / "keep").write_text("the grader's own file\n")

    read = apply(repo, base, grade, diff)
    assert read["applied"] == b"apply\n"
    assert (grade / "agent.diff").read_text() == diff, "the diff from standard input, whole"
    before = parse_manifest(read["before.files"], read["before.links"], read["before.other"])
    after = parse_manifest(read["after.files"], read["after.links"], read["after.other"])
    assert "src/pkg.egg-info/PKG-INFO" in before and after["tests"] == f"l:{grade}"
    tree = parse_tree(read["base.tree"])
    assert tree["tests"] == "tree" and tree["tests/test_a.py"] == "blob"
    got = plan_restore(before, after, tree, ["tests/test_b.py"], "pytest tests")
    assert {r.path: r.action for r in got} == {
        "conftest.py": "removed",
        "pyproject.toml": "restored",
        "src/usercustomize.py": "removed",
        "src/odd\nname.pth": "removed",
        "tests": "restored",
        "tests/test_a.py": "restored",
    }

    remove = sorted((r.path for r in got), key=lambda p: (p.count("/"), p))
    checkout = [r.path for r in got if r.action == "restored"]
    restore = RESTORE.format(workdir=repo, base=base, grade=grade, hidden=grade / "hidden.patch")
    lists = restore_lists(remove, checkout)
    subprocess.run(["bash", "-c", restore], input=lists, capture_output=True, check=True)
    assert (repo / "tests").is_dir() and not (repo / "tests").is_symlink()
    assert (repo / "tests" / "test_a.py").read_text() == "def test_a():\n    pass\n"
    assert (repo / "tests" / "test_b.py").exists(), "the hidden tests went in"
    assert (repo / "pyproject.toml").read_text() == "[tool.pytest.ini_options]\n"
    assert not (repo / "conftest.py").exists() and not (repo / "src" / "usercustomize.py").exists()
    assert not (repo / "src" / "odd\nname.pth").exists()
    assert (repo / "src" / "pkg" / "__init__.py").read_text() == "X = 2\n", "the fix stays"
    assert (grade / "keep").exists(), "nothing outside the repository was touched"
    assert (repo / "src" / "pkg.egg-info" / "PKG-INFO").exists()


def test_the_fuzzy_fallback_cannot_write_into_the_repositorys_git_dir(tmp_path: Path) -> None:
    repo, grade = tmp_path / "repo", tmp_path / "grade"
    grade.mkdir()
    repo.mkdir()
    (repo / "a.txt").write_text("a\n")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    base = git(repo, "rev-parse", "HEAD").strip()
    # git apply refuses a .git path (so the whole diff falls through to patch(1)), and
    # patch(1) alone would write it: a core.fsmonitor here runs at the grader's next git call.
    evil = (
        "--- a/.git/config\n+++ b/.git/config\n@@ -0,0 +1,2 @@\n+[core]\n"
        "+\tfsmonitor = touch /tmp/owned\n"
        "--- a/b.txt\n+++ b/b.txt\n@@ -0,0 +1 @@\n+b\n"
    )
    assert apply(repo, base, grade, evil)["applied"] == b"fuzz\n"
    assert (repo / "b.txt").read_text() == "b\n", "the rest of the diff went in"
    assert "fsmonitor" not in (repo / ".git" / "config").read_text()
    assert git(repo, "rev-parse", "HEAD").strip() == base
    assert not (grade / "dotgit").exists()


def test_the_interpreters_own_modules_are_listed_and_the_repositorys_are_not(
    tmp_path: Path,
) -> None:
    import sys

    from replay.grade.hidden_tests import IMPORTABLE

    (tmp_path / "pytest.py").write_text("raise SystemExit('the repository ran')\n")
    (tmp_path / "mine.py").write_text("")
    (tmp_path / "sitecustomize.py").write_text("raise SystemExit('the repository ran')\n")
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", IMPORTABLE, str(tmp_path)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(tmp_path)},
    )
    names = set(done.stdout.split())
    assert {"pytest", "_pytest", "pluggy", "json", "sys", "os"} <= names
    assert "mine" not in names


def test_runner_missing_reads_the_shell_and_python() -> None:
    from replay.grade.hidden_tests import runner_missing

    cmd = "python -m pytest -q --junitxml={junit} tests"
    assert runner_missing(cmd, [1, 1], ["/usr/bin/python: No module named pytest\n"] * 2)
    assert runner_missing("tox -e py", [127], ["bash: line 1: tox: command not found"])
    # Another module missing (a plugin, the project itself) is the tests' own failure.
    assert not runner_missing(cmd, [4], ["ImportError: No module named 'no_such_plugin'"])
    assert not runner_missing(cmd, [1, 1], ["No module named pytest", "1 failed"])
    assert not runner_missing(cmd, [], [])


def test_the_file_of_a_listed_test_is_put_back_even_outside_the_hidden_patch() -> None:
    # The hidden patch adds a data file; the test that reads it lives in a file it does not
    # touch, which the diff rewrote to swallow failures.
    tree = {"tests": "tree", "tests/test_extras.py": "blob", "tests/data": "tree"}
    before = {"tests/test_extras.py": "f:base"}
    after = {"tests/test_extras.py": "f:swallowing", "src/fix.py": "f:fix"}
    hidden = ["tests/data/invalid/case.toml"]
    listed = ["tests/test_extras.py::test_invalid[case]"]
    got = plan_restore(before, after, tree, hidden, "pytest", listed=listed)
    assert [(r.path, r.action, r.reason) for r in got] == [
        ("tests/test_extras.py", "restored", "file of a listed test")
    ]
    assert plan_restore(before, after, tree, hidden, "pytest") == [], "not listed: the agent's"


def test_a_configuration_that_stops_at_failures_runs_every_test(tmp_path: Path) -> None:
    """Found by the third held-out corpus (cerberus 2020): its pytest configuration says
    ``--maxfail=2``; the honeypots' planned failures stopped the run and the gold patch was
    graded "missing" on the listed tests after them. The grader's own options come after
    the project's, so every test runs. The run script is run here as the grader runs it."""
    import os
    import shlex
    import sys
    from xml.etree import ElementTree

    from replay.grade.hidden_tests import NO_FAILURE_LIMIT, TEST_RUN

    work = tmp_path / "repo"
    (work / "tests").mkdir(parents=True)
    (work / "setup.cfg").write_text("[tool:pytest]\naddopts = --maxfail=1 -x\n")
    (work / "tests" / "test_a.py").write_text(
        "def test_1():\n    assert False\n\ndef test_2():\n    assert False\n\n"
        "def test_3():\n    pass\n"
    )
    grade = tmp_path / "grade"
    (grade / "guard").mkdir(parents=True)
    (grade / "guard" / "noop_guard.py").write_text("")
    junit = tmp_path / "junit.xml"
    command = f"{shlex.quote(sys.executable)} -m pytest -q -p no:cacheprovider --junitxml={junit}"
    script = TEST_RUN.format(
        dir=tmp_path / "out",
        junit=junit,
        grade=grade,
        guard="noop_guard",
        no_limit=NO_FAILURE_LIMIT,
        command=shlex.quote(f"{command} tests"),
        plant=0,
        workdir=work,
        home=tmp_path / "home",
        owner=f"{os.getuid()}:{os.getgid()}",
        switch="",  # the grader's is setpriv to uid 1000 (tests/grade/test_grading_user.py)
        name="agent",
    )
    done = subprocess.run(["bash", "-c", f"cd {work} && {script}"], capture_output=True, text=True)
    report = tmp_path / "out" / "junit.xml"
    assert report.exists(), done.stderr
    names = [c.get("name") for c in ElementTree.parse(report).getroot().iter("testcase")]
    assert names == ["test_1", "test_2", "test_3"]
